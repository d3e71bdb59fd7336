"""Where the training workspace lives: a tab beside the chart in the main window's centre, or
a window of its own, as the trader chooses (remembered in the app's settings as
``training/workspace``: ``tab`` or ``window``; the window's place and size too).

- Tab: the Training tab sits next to the Chart tab in the main window's centre; F8 switches
  between them.
- Window: the centre has no Training tab; the training panel sits in a window of
  its own (a child window of the main one: it closes with it, and the menus, the keys and
  the command palette reach its commands). F8 brings it forward; closing it puts the
  panel back in its tab.

A run that starts, an evaluation, or a failure brings the workspace forward (its tab, or its
window); live mode does not, as its predictions are drawn on the chart.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSettings, Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QMainWindow, QTabWidget, QVBoxLayout, QWidget

from ...errors import WorkstationError
from ..command_registry import create_command_actions
from ..focus import to_front
from ..keymap import TRAINING_TABS

if TYPE_CHECKING:
    from .panel import TrainingPanel

MODES = ("tab", "window")
MODE_KEY = "training/workspace"
GEOMETRY_KEY = "training/window_geometry"
CURVES_KEY = "training/curves"  # [x axis, smoothing]
WINDOW_SIZE = (1400, 860)
FORWARD_STATES = ("compiling", "training", "evaluating", "failed")


class TrainingWindow(QWidget):
    """The workspace's own window. Closing it (by the user) sends ``closed``."""

    closed = Signal()

    def __init__(self, parent: QWidget):
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("trainingWindow")
        self.setWindowTitle("Workstation — Training")
        self.content = QVBoxLayout(self)
        self.content.setContentsMargins(0, 0, 0, 0)
        self.resize(*WINDOW_SIZE)

    def closeEvent(self, event: QCloseEvent) -> None:
        event.accept()
        self.closed.emit()


class TrainingWorkspace(QObject):
    """See the module docstring. ``tabs`` is the main window's central tab widget whose first
    tab is the chart; ``panel`` the training panel; ``settings`` the app's QSettings.
    ``command_actions`` (command id -> QAction) for the View menu; ``mode``; ``set_mode``;
    ``bring_forward(state)``; ``close()`` at shutdown."""

    mode_changed = Signal(str)

    def __init__(self, window: QMainWindow, tabs: QTabWidget, panel: TrainingPanel,
                 settings: QSettings):
        super().__init__(window)
        self.main_window = window
        self.tabs = tabs
        self.panel = panel
        self.settings = settings
        self.page = QWidget()
        self.page.setObjectName("trainingPage")
        self.page_layout = QVBoxLayout(self.page)
        self.page_layout.setContentsMargins(0, 0, 0, 0)
        self.window: TrainingWindow | None = None
        self._shared: list = []  # the main window's window-wide actions, shared with its own
        self.focus_chart = None
        self.mode = ""
        self._closing = False
        self.command_actions = create_command_actions(window, {
            "view.training": self.toggle,
            "view.training_window": self._window_toggled,
            **{f"view.training_{tab.lower()}": partial(self.show_tab, tab)
               for tab in TRAINING_TABS},
            "train.report": self.show_report,
            "review.rank": self.show_review,
        }, Qt.ShortcutContext.WindowShortcut)
        self.command_actions["view.training_window"].setCheckable(True)
        mode = settings.value(MODE_KEY, "tab")
        self._shown = False
        self.set_mode(mode if mode in MODES else "tab")
        window.installEventFilter(self)
        self._restore_curves()

    # -- placing ----------------------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        """``tab`` or ``window`` (remembered)."""
        if mode not in MODES:
            raise ValueError(f"unknown workspace mode {mode!r}; use one of {MODES}")
        if mode == self.mode:
            return
        self.mode = mode
        if mode == "tab":
            self._close_window()
            self.page_layout.addWidget(self.panel)
            if self.tabs.indexOf(self.page) < 0:
                self.tabs.insertTab(1, self.page, "Training")  # next to the chart
        else:
            index = self.tabs.indexOf(self.page)
            if index >= 0:
                self.tabs.removeTab(index)
            window = self._open_window()
            window.content.addWidget(self.panel)
            if self._shown:
                window.show()
        self.panel.show()
        self.tabs.tabBar().setVisible(self.tabs.count() > 1)
        action = self.command_actions["view.training_window"]
        action.blockSignals(True)
        action.setChecked(mode == "window")
        action.blockSignals(False)
        self.settings.setValue(MODE_KEY, mode)
        self.mode_changed.emit(mode)

    def _window_toggled(self) -> None:
        self.set_mode("window" if self.command_actions["view.training_window"].isChecked()
                      else "tab")

    def _open_window(self) -> TrainingWindow:
        window = TrainingWindow(self.main_window)
        geometry = self.settings.value(GEOMETRY_KEY)
        if geometry is not None:
            window.restoreGeometry(geometry)
        window.addActions(list(self.command_actions.values()) + self._shared)
        window.closed.connect(self._window_closed)
        self.window = window
        return window

    def share(self, actions, focus_chart) -> None:
        """The main window's window-wide ``actions`` (Ctrl+1, the cheat sheet, the palette
        ...) work in the workspace's own window too; ``focus_chart()`` gives the chart the
        keyboard when F8 goes back to it."""
        self._shared = list(actions)
        self.focus_chart = focus_chart
        if self.window is not None:
            self.window.addActions(self._shared)

    def _close_window(self) -> None:
        window, self.window = self.window, None
        if window is None:
            return
        self.settings.setValue(GEOMETRY_KEY, window.saveGeometry())
        self.panel.setParent(None)  # taken back before the window goes
        window.closed.disconnect(self._window_closed)
        window.hide()
        window.deleteLater()

    def _window_closed(self) -> None:
        if not self._closing:
            self.set_mode("tab")

    # -- showing ----------------------------------------------------------------------------
    @property
    def visible(self) -> bool:
        """The workspace is on screen (its tab current, or its window shown)."""
        if self.mode == "window":
            return self.window is not None and self.window.isVisible()
        return self.tabs.currentWidget() is self.page and self.page.isVisible()

    def show_workspace(self) -> None:
        if self.mode == "window" and self.window is not None:
            to_front(self.window)
        else:
            self.tabs.setCurrentWidget(self.page)

    def show_tab(self, title: str) -> None:
        """Bring the workspace forward on its tab ``title`` (``keymap.TRAINING_TABS``), the
        keyboard on that tab's bar (Ctrl+Tab walks on, Tab goes into the tab)."""
        self.show_workspace()
        tabs = self.panel.curves.tabs
        for index in range(tabs.count()):
            if tabs.tabText(index) == title:
                tabs.setCurrentIndex(index)
                tabs.tabBar().setFocus(Qt.FocusReason.ShortcutFocusReason)
                return
        raise WorkstationError(f"the training workspace has no {title} tab")

    def show_report(self) -> None:
        """Shift+F7: the Report tab, reporting on the run shown."""
        self.show_tab("Report")
        self.panel.report.refresh()

    def show_review(self) -> None:
        """Shift+F8: the Review tab, ranking with the run shown."""
        self.show_tab("Review")
        self.panel.review.rank()

    def show_chart(self) -> None:
        if self.mode == "window":
            to_front(self.main_window)
        self.tabs.setCurrentIndex(0)
        if self.focus_chart is not None:
            self.focus_chart()
        elif (chart := self.tabs.widget(0)) is not None:
            chart.setFocus()

    def toggle(self) -> None:
        """F8: the chart or the workspace, whichever is not in front."""
        in_front = self.visible and (self.mode == "tab" or (
            self.window is not None and self.window.isActiveWindow()))
        if in_front:
            self.show_chart()
        else:
            self.show_workspace()

    def bring_forward(self, state: str) -> None:
        """A run that starts (or fails) brings the workspace forward (see the docstring)."""
        if state in FORWARD_STATES:
            if self.mode == "window" and self.window is not None:
                to_front(self.window, activate=False)  # the keys stay where they were
            else:
                self.tabs.setCurrentWidget(self.page)

    def eventFilter(self, watched, event) -> bool:
        if watched is self.main_window and event.type() == QEvent.Type.Show and not self._shown:
            self._shown = True  # the window mode's window appears with the main window
            if self.mode == "window" and self.window is not None:
                self.window.show()
        return False

    # -- the curves' controls, remembered too ------------------------------------------------------
    def _restore_curves(self) -> None:
        curves = getattr(self.panel, "curves", None)
        if curves is None:
            return
        saved = self.settings.value(CURVES_KEY)
        if isinstance(saved, list) and len(saved) == 2:
            try:
                curves.set_x_axis(str(saved[0]))
                curves.set_smoothing(float(saved[1]))
            except ValueError:
                pass  # a value this version does not know: the defaults stay
        curves.x_axis_changed.connect(self._save_curves)
        curves.smoothing_changed.connect(self._save_curves)

    def _save_curves(self, *_args) -> None:
        curves = self.panel.curves
        self.settings.setValue(CURVES_KEY, [curves.x_axis, curves.smoothing])

    def close(self) -> None:
        """At shutdown: remember the window's place; the mode stays as chosen."""
        self._closing = True
        if self.window is not None:
            self.settings.setValue(GEOMETRY_KEY, self.window.saveGeometry())
            self.window.hide()
