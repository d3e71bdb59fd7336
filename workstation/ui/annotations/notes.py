"""``NotesEditor``: the notes of one annotation, edited in an overlay inside the main window.

E on the chart opens it with the focus in the text. Enter starts a new line and Tab types a
tab, as in any text; Ctrl+Enter saves, Esc cancels, and either gives the keyboard back to the
chart. Being an overlay (``overlay.Overlay``), not a dialog window, it takes the keyboard with
or without a window manager. It stays open while the focus is elsewhere (a click on the chart
loses nothing typed).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from ..overlay import Overlay

SAVE_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)


class _NotesText(QPlainTextEdit):
    """Ctrl+Enter saves and Esc cancels; every other key is the text's."""

    def __init__(self, editor: NotesEditor):
        super().__init__()
        self.editor = editor
        self.setTabChangesFocus(False)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        ctrl = event.modifiers() & Qt.KeyboardModifier.ControlModifier
        if event.key() in SAVE_KEYS and ctrl:
            self.editor.save()
            return
        if event.key() == Qt.Key.Key_Escape:
            self.editor.cancel()
            return
        super().keyPressEvent(event)


class NotesEditor(Overlay):
    """``edit(title, text, on_save)`` opens it; ``on_save(text)`` runs on Ctrl+Enter (or Save)
    when the text changed."""

    closes_on_focus_loss = False

    def __init__(self, window: QWidget):
        super().__init__(window, "annotationNotesEditor")
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.text = _NotesText(self)
        self.text.setObjectName("annotationNotesText")
        hint = QLabel("Ctrl+Enter saves · Esc cancels · Enter: new line")
        hint.setObjectName("notesHint")
        self.save_button = QPushButton("Save")
        self.cancel_button = QPushButton("Cancel")
        for button in (self.save_button, self.cancel_button):
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab stays in the text
        self.save_button.clicked.connect(self.save)
        self.cancel_button.clicked.connect(self.cancel)
        buttons = QHBoxLayout()
        buttons.addWidget(hint, 1)
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.addWidget(self.title)
        layout.addWidget(self.text, 1)
        layout.addLayout(buttons)
        self.focus_widget = self.text
        self._on_save: Callable[[str], None] | None = None
        self._original = ""

    def wanted_size(self) -> QSize:
        return QSize(520, 300)

    def edit(self, title: str, text: str, on_save: Callable[[str], None]) -> None:
        self.title.setText(title)
        self.text.setPlainText(text)
        self.text.moveCursor(self.text.textCursor().MoveOperation.End)
        self._original = text
        self._on_save = on_save
        self.open()

    def save(self) -> None:
        text, on_save = self.text.toPlainText(), self._on_save
        self._on_save = None
        self.close_overlay()
        if on_save is not None and text != self._original:
            on_save(text)

    def cancel(self) -> None:
        self._on_save = None
        self.close_overlay()
