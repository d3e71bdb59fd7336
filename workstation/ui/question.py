"""``Question``: a yes-or-no question inside the main window, answered from the keyboard.

An ``Overlay`` (not a ``QMessageBox``: a separate window gets no keyboard without a window
manager) with one paragraph and two buttons: Enter or Y answers with the affirmative (Enter
on the focused button answers with it), Esc or N cancels, Tab moves between the buttons. It
stays until answered, emits ``answered(bool)`` once, and the focus goes back to the chart.
``ask`` makes one, asks, and lets it go after the answer.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from .overlay import Overlay

_YES_KEYS = (Qt.Key.Key_Y,)
_NO_KEYS = (Qt.Key.Key_N, Qt.Key.Key_Escape)
_ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)
_TAB_KEYS = (Qt.Key.Key_Tab, Qt.Key.Key_Backtab)
WIDTH = 520  # px: the paragraph wraps to this


class Question(Overlay):
    """See the module docstring."""

    answered = Signal(bool)
    closes_on_focus_loss = False  # a question is answered, never dismissed by a click

    def __init__(self, window: QWidget, name: str = "question"):
        super().__init__(window, name)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setObjectName(f"{name}Text")
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.yes = QPushButton()
        self.no = QPushButton()
        for button, answer in ((self.yes, True), (self.no, False)):
            button.clicked.connect(lambda _checked=False, answer=answer: self.answer(answer))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.yes)
        buttons.addWidget(self.no)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 12)
        layout.addWidget(self.text)
        layout.addLayout(buttons)
        self.focus_widget = self.yes
        self._open = False

    def ask(self, text: str, yes: str, no: str = "Cancel") -> None:
        """Show ``text`` with the buttons ``yes`` (Enter / Y) and ``no`` (Esc / N)."""
        self.text.setText(text)
        self.yes.setText(f"{yes} (Y)")
        self.no.setText(f"{no} (N)")
        self._open = True
        self.open()

    def answer(self, yes: bool) -> None:
        """Close with this answer (once per question)."""
        if not self._open:
            return
        self._open = False
        self.close_overlay()
        self.answered.emit(yes)

    def wanted_size(self) -> QSize:
        height = self.text.heightForWidth(WIDTH - 32)
        return QSize(WIDTH, max(height, 20) + self.yes.sizeHint().height() + 48)

    # -- keys ------------------------------------------------------------------------------
    def _answers(self, key: int) -> bool:
        return key in _YES_KEYS + _NO_KEYS + _ENTER_KEYS + _TAB_KEYS

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent) \
                and self._answers(event.key()):
            event.accept()  # Y, N, Enter, Esc and Tab are the question's, not a command's
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in _YES_KEYS:
            self.answer(True)
        elif key in _NO_KEYS:
            self.answer(False)
        elif key in _ENTER_KEYS:
            self.answer(not self.no.hasFocus())
        else:
            super().keyPressEvent(event)

    def focusNextPrevChild(self, _next: bool) -> bool:
        """Tab and Shift+Tab move between the two buttons, never out of the question."""
        (self.no if self.yes.hasFocus() else self.yes).setFocus(Qt.FocusReason.TabFocusReason)
        return True


def ask(window: QWidget, text: str, yes: str, on_answer: Callable[[bool], None], *,
        no: str = "Cancel", name: str = "question") -> Question:
    """Ask ``text`` in a new ``Question`` over ``window``; ``on_answer(yes)`` hears the
    answer, after which the question is deleted."""
    question = Question(window, name)
    question.answered.connect(on_answer)
    question.answered.connect(question.deleteLater)
    question.ask(text, yes, no)
    return question
