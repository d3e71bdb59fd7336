"""The log dock: the application log as it happens, with a level and text filter."""

from __future__ import annotations

import logging
from collections import deque

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from ..logs import FORMAT
from ..redact import RedactingFilter

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
_KEEP = 5000


class _Bridge(QObject):
    """Carries records from any thread to the GUI thread (a queued signal to a QObject slot)."""

    record = Signal(int, str)


class QtLogHandler(logging.Handler):
    """A logging handler that forwards formatted records, every secret masked, through a Qt
    signal."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.bridge = _Bridge()
        self.setFormatter(logging.Formatter(FORMAT))
        self.addFilter(RedactingFilter())

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)
            return
        self.bridge.record.emit(record.levelno, text)


class LogDock(QDockWidget):
    """Shows records at or above the chosen level that contain the filter text."""

    def __init__(self, parent=None):
        super().__init__("Log", parent)
        self.setObjectName("logDock")
        self._records: deque[tuple[int, str]] = deque(maxlen=_KEEP)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        self.level = QComboBox()
        self.level.addItems(LEVELS)
        self.level.setCurrentText("INFO")
        self.level.setToolTip("Lowest level shown")
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter…")
        self.filter.setClearButtonEnabled(True)
        bar.addWidget(self.level)
        bar.addWidget(self.filter, 1)
        layout.addLayout(bar)
        self.view = QPlainTextEdit()
        self.view.setReadOnly(True)
        self.view.setMaximumBlockCount(_KEEP)
        self.view.setFont(QFont("monospace", 9))
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        layout.addWidget(self.view)
        self.setWidget(body)
        self.handler = QtLogHandler()
        self.handler.bridge.record.connect(self.add_record, Qt.ConnectionType.QueuedConnection)
        self.level.currentTextChanged.connect(self._refilter)
        self.filter.textChanged.connect(self._refilter)

    def attach(self, logger: logging.Logger | None = None) -> None:
        (logger or logging.getLogger()).addHandler(self.handler)

    def detach(self, logger: logging.Logger | None = None) -> None:
        (logger or logging.getLogger()).removeHandler(self.handler)

    def _shown(self, level: int, text: str) -> bool:
        wanted = logging.getLevelName(self.level.currentText())
        needle = self.filter.text().strip().lower()
        return level >= wanted and (not needle or needle in text.lower())

    @Slot(int, str)
    def add_record(self, level: int, text: str) -> None:
        self._records.append((level, text))
        if self._shown(level, text):
            self.view.appendPlainText(text)

    def _refilter(self) -> None:
        self.view.setPlainText("\n".join(t for lv, t in self._records if self._shown(lv, t)))
        self.view.moveCursor(self.view.textCursor().MoveOperation.End)

    def visible_text(self) -> str:
        return self.view.toPlainText()
