"""Where the keyboard goes: a predictable Tab order across the window's areas.

Tab walks the areas as they sit on screen, each area's own widgets in their own order: the
tool bars (the data bar), the docks on the left, the centre (the chart), the tabs of docks
that share a place, the docks on the right, at the top, at the bottom (the log). Widgets of a
hidden dock (a tab behind another) are skipped, as Qt skips every hidden widget; a dock moved
to another side takes its place in the order there (``keep_tab_order``).
The charts' keys, ``Ctrl+1`` .. ``Ctrl+4`` ("Focus chart N", ``chart.focus`` and the
chart area's), bring the keyboard back to that chart from anywhere, so its keys act again.
The wheel over a form's choice or number scrolls the form until that widget has the keyboard
(``wheel_only_when_focused``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QComboBox,
    QDockWidget,
    QLineEdit,
    QMainWindow,
    QPlainTextEdit,
    QTabBar,
    QTextEdit,
    QToolBar,
    QWidget,
)


class _WheelGuard(QObject):
    """Turns the wheel over an unfocused choice or number into a scroll of its scroll area."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget) or \
                watched.hasFocus():
            return False
        parent = watched.parentWidget()
        while parent is not None and not isinstance(parent, QAbstractScrollArea):
            parent = parent.parentWidget()
        if parent is not None:
            QCoreApplication.sendEvent(parent.viewport(), event)
        return True


def wheel_only_when_focused(root: QWidget) -> None:
    """The wheel changes the choices and numbers under ``root`` only once one has the keyboard
    (a click or Tab): before, it scrolls the pane they sit in, so scrolling a form past a
    choice never changes it."""
    guard = _WheelGuard(root)
    for widget in root.findChildren(QComboBox) + root.findChildren(QAbstractSpinBox):
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        widget.installEventFilter(guard)


def to_front(window: QWidget, activate: bool = True) -> None:
    """Show ``window`` above the others, where the platform has windows to raise (the
    offscreen and minimal platforms have none, and warn), and give it the keyboard."""
    window.show()
    if QGuiApplication.platformName() not in ("offscreen", "minimal"):
        window.raise_()
    if activate:
        window.activateWindow()


def types_text(widget: QWidget | None) -> bool:
    """Whether keys typed into ``widget`` become text (a chart key there would type)."""
    if isinstance(widget, QComboBox):
        return widget.isEditable()
    if isinstance(widget, (QLineEdit, QAbstractSpinBox, QTextEdit, QPlainTextEdit)):
        return not widget.isReadOnly()
    return False


def focus_chain(window: QWidget) -> list[QWidget]:
    """Every widget of ``window``'s focus chain, in order, starting after the window."""
    out: list[QWidget] = []
    widget = window.nextInFocusChain()
    while widget is not window and widget is not None and len(out) < 100_000:
        out.append(widget)
        widget = widget.nextInFocusChain()
    return out


def tab_stops(area: QWidget, chain: Sequence[QWidget]) -> list[QWidget]:
    """``area``'s widgets that take Tab, in the chain's order; disabled ones too (Qt's Tab
    skips them while they are: left out of the order, they would be left behind where it
    was chained, and Tab would jump over them once they are enabled)."""
    return [w for w in chain if (w is area or area.isAncestorOf(w))
            and w.focusPolicy() & Qt.FocusPolicy.TabFocus]


def set_tab_order(areas: Sequence[QWidget]) -> list[QWidget]:
    """Chain the Tab stops of ``areas`` (widgets of one window) area after area; returns the
    chain set."""
    if not areas:
        return []
    chain = focus_chain(areas[0].window())
    stops = [w for area in areas for w in tab_stops(area, chain)]
    for first, second in pairwise(stops):
        QWidget.setTabOrder(first, second)
    return stops


_DOCK_ORDER = (Qt.DockWidgetArea.LeftDockWidgetArea, None, Qt.DockWidgetArea.RightDockWidgetArea,
               Qt.DockWidgetArea.TopDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea)


def window_areas(window: QMainWindow) -> list[QWidget]:
    """The areas of a main window in the order Tab visits them (see the module docstring)."""
    bars = [b for b in window.findChildren(QToolBar) if b.parentWidget() is window]
    docks = [d for d in window.findChildren(QDockWidget) if d.parentWidget() is window]
    areas: list[QWidget] = list(bars)
    for place in _DOCK_ORDER:
        if place is None:
            central = window.centralWidget()
            if central is not None:
                areas.append(central)
            areas += [t for t in window.findChildren(QTabBar) if t.parentWidget() is window]
            continue
        areas += [d for d in docks if not d.isFloating() and window.dockWidgetArea(d) == place]
    return areas + [d for d in docks if d.isFloating()]


def keep_tab_order(window: QMainWindow) -> None:
    """Chain ``window``'s Tab order by its areas now, and again whenever a dock moves; Tab
    leaves every list and table (the arrows move inside them) instead of walking its cells."""
    for view in window.findChildren(QAbstractItemView):
        view.setTabKeyNavigation(False)
    set_tab_order(window_areas(window))
    for dock in window.findChildren(QDockWidget):
        dock.dockLocationChanged.connect(lambda *_: set_tab_order(window_areas(window)))
        dock.topLevelChanged.connect(lambda *_: set_tab_order(window_areas(window)))
