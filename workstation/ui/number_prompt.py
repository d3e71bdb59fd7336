"""``NumberPrompt``: one number asked inside the main window (an overlay: it has the keyboard
with or without a window manager). Enter gives the number to the caller, Esc cancels; a text
that is not a number in the range says so and stays."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QLabel, QLineEdit, QVBoxLayout, QWidget

from .overlay import Overlay

WIDTH = 460


class NumberPrompt(Overlay):
    """See the module docstring."""

    def __init__(self, window: QWidget, name: str = "numberPrompt"):
        super().__init__(window, name)
        self.question = QLabel()
        self.question.setWordWrap(True)
        self.field = QLineEdit()
        self.field.setObjectName(f"{name}Field")
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 12)
        for widget in (self.question, self.field, self.hint):
            layout.addWidget(widget)
        self.focus_widget = self.field
        self.field.returnPressed.connect(self._entered)
        self._range = (0.0, 1.0)
        self._on_number: Callable[[float], None] | None = None

    def ask(self, question: str, value: float, low: float, high: float,
            on_number: Callable[[float], None]) -> None:
        """Ask for a number in ``[low, high]``, ``value`` typed in and selected."""
        self.question.setText(question)
        self.hint.setText(f"Enter: set · Esc: cancel ({low:g} to {high:g})")
        self.field.setText(f"{value:g}")
        self.field.selectAll()
        self._range, self._on_number = (low, high), on_number
        self.open()

    def wanted_size(self) -> QSize:
        return QSize(WIDTH, self.question.heightForWidth(WIDTH - 32) + 90)

    def _entered(self) -> None:
        text = self.field.text().strip().rstrip("%").strip()
        low, high = self._range
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not low <= value <= high:
            self.hint.setText(f"“{self.field.text()}” is not a number from {low:g} to "
                              f"{high:g}: type one, or Esc")
            return
        on_number = self._on_number
        self.close_overlay()
        if on_number is not None:
            on_number(value)
