"""``Overlay``: a panel drawn inside the main window, above its docks, that takes the keyboard.

A separate top-level window (a dialog, a popup) never gets keyboard focus on a display without
a window manager (Xvfb, some kiosk and remote sessions); a child widget of the main window
does, wherever it runs. The command palette, the cheat sheet and the notes editor are
overlays: ``open()`` shows one over the window (fitted inside it, re-fitted when the window
is resized), gives its ``focus_widget`` the focus and remembers where the focus was; Esc
closes it and gives the focus to the active chart when the charts are on screen (else back
where it was). An overlay that
``closes_on_focus_loss`` closes as soon as the focus goes to a widget outside it (a click on
the chart, Ctrl+1).
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QFrame, QWidget

MARGIN = 16  # px kept free between an overlay and the window's edges


def fitted(window: QRect, wanted: QSize, top: int | None = None) -> QRect:
    """The rectangle of an overlay that wants ``wanted`` inside ``window`` (minus
    ``MARGIN`` on every side): never larger than the room, centred across, and centred down
    unless ``top`` (px from the window's top) is given."""
    room = window.adjusted(MARGIN, MARGIN, -MARGIN, -MARGIN)
    width = max(1, min(wanted.width(), room.width()))
    height = max(1, min(wanted.height(), room.height()))
    x = room.left() + (room.width() - width) // 2
    y = room.top() + (room.height() - height) // 2 if top is None else room.top() + top
    y = max(room.top(), min(y, room.bottom() + 1 - height))
    return QRect(x, y, width, height)


class Overlay(QFrame):
    """See the module docstring. Subclasses fill the frame, set ``focus_widget`` and may
    override ``wanted_size`` and ``top``."""

    closed = Signal()
    closes_on_focus_loss = True
    top: int | None = None  # px from the window's top; None: centred

    def __init__(self, window: QWidget, name: str):
        super().__init__(window)
        self.window_ = window
        self.setObjectName(name)
        self.setProperty("overlay", True)  # the style sheets draw every overlay alike
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.focus_widget: QWidget = self
        self._return_to: QWidget | None = None
        self.hide()
        window.installEventFilter(self)
        app = QApplication.instance()
        if isinstance(app, QApplication):  # a widget's application always is one
            app.focusChanged.connect(self._focus_changed)

    # -- opening and closing ---------------------------------------------------------------
    def wanted_size(self) -> QSize:
        return self.sizeHint()

    def is_open(self) -> bool:
        return self.isVisible()

    def open(self) -> None:
        """Show over the window with the focus in ``focus_widget``."""
        focus = QApplication.focusWidget()
        if not self.isVisible():  # opened again while open: the focus goes back as before
            outside = focus is not None and focus is not self and not self.isAncestorOf(focus)
            self._return_to = focus if outside else None
        self.fit()
        self.show()
        self.raise_()
        self.window_.activateWindow()
        self.focus_widget.setFocus(Qt.FocusReason.PopupFocusReason)

    def toggle(self) -> None:
        if self.is_open():
            self.close_overlay()
        else:
            self.open()

    def close_overlay(self, *, give_focus_back: bool = True) -> None:
        """Hide; the focus goes back where it was before ``open()`` (else to the chart)."""
        if not self.isVisible():
            return
        self.hide()
        if give_focus_back:
            self.focus_back()
        self.closed.emit()

    def focus_back(self) -> None:
        """The active chart takes the keyboard when the charts are on screen (the window's
        ``focus_home``); else the widget that had it before, unless that one is gone."""
        target = self._return_to
        self._return_to = None
        home = getattr(self.window_, "focus_home", None)
        if home is not None and home():
            return
        if target is None or not shiboken6.isValid(target) or not target.isVisible():
            target = getattr(getattr(self.window_, "chart", None), "view", None)
        if target is not None:
            target.setFocus(Qt.FocusReason.OtherFocusReason)

    def fit(self) -> None:
        self.setGeometry(fitted(self.window_.rect(), self.wanted_size(), self.top))

    # -- events ----------------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close_overlay()
            return
        super().keyPressEvent(event)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.window_ and event.type() == QEvent.Type.Resize and self.isVisible():
            self.fit()
        return False

    def _focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if (self.closes_on_focus_loss and new is not None and self.isVisible()
                and new is not self and not self.isAncestorOf(new)):
            self.close_overlay(give_focus_back=False)
