"""The banner above the chart when it is not live: an exchange that cannot be reached
("Offline: ... cannot be reached (no network ...)"), or a source that failed ("Not live: ...",
an exchange's error, a file that cannot be read). It says so in words and offers the other
ways to work (the cached candles stay on screen; the demo market; an import; retry). Nothing
is switched until the user chooses."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton


class OfflineBanner(QFrame):
    retry_requested = Signal()
    demo_requested = Signal()
    import_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("offlineBanner")
        self.setStyleSheet("QFrame#offlineBanner { background: #5c1f1f; border-radius: 3px; }"
                           "QFrame#offlineBanner QLabel { background: transparent; "
                           "color: #ffdad6; }")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        self.message = QLabel()
        self.message.setWordWrap(True)
        layout.addWidget(self.message, 1)
        self.buttons = {}
        for key, text, signal in (("retry", "Retry", self.retry_requested),
                                  ("demo", "Open the demo market", self.demo_requested),
                                  ("import", "Import a file…", self.import_requested)):
            button = QPushButton(text)
            button.clicked.connect(signal.emit)
            layout.addWidget(button)
            self.buttons[key] = button
        self.hide()

    def show_offline(self, text: str) -> None:
        self.show_problem("offline", text)

    def show_problem(self, state: str, text: str) -> None:
        """``state`` "offline" (cannot be reached) or "failed" (anything else)."""
        self.message.setText(f"{'Offline' if state == 'offline' else 'Not live'}: {text}")
        self.show()
