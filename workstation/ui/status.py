"""The status bar: data provenance, connection state, latency, last-candle age, device."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar

from .. import display
from .live_data import LiveData

_STATE_COLORS = {"live": "#26a69a", "replay": "#42a5f5", "static": "#b2b5be",
                 "connecting": "#f5a623", "reconnecting": "#f5a623", "polling": "#f5a623",
                 "loading": "#f5a623", "offline": "#ef5350", "failed": "#ef5350",
                 "closed": "#5d606b"}


class StatusPanel:
    """Fills a window's status bar from a ``LiveData`` and keeps the ages fresh (1 s timer)."""

    def __init__(self, bar: QStatusBar, live: LiveData):
        self.live = live
        self.provenance = QLabel("no data")
        self.connection = QLabel("closed")
        self.latency = QLabel(f"latency {display.NO_DATA}")
        self.age = QLabel(f"last update {display.NO_DATA}")
        self.device = QLabel(f"device {display.NO_DATA}")
        for widget, tip in ((self.provenance, "Where the candles on screen come from"),
                            (self.connection, "Feed state"),
                            (self.latency, "Last exchange round trip"),
                            (self.age, "Time since the last candle update"),
                            (self.device, "Training device")):
            widget.setToolTip(tip)
        self.import_progress = QProgressBar()  # a file being imported into the cache
        self.import_progress.setObjectName("importProgress")
        self.import_progress.setRange(0, 1000)
        self.import_progress.setMaximumWidth(360)
        self.import_progress.setTextVisible(True)
        self.import_progress.hide()
        bar.addWidget(self.provenance, 1)
        bar.addWidget(self.import_progress)
        for widget in (self.connection, self.latency, self.age, self.device):
            bar.addPermanentWidget(widget)
        live.state_changed.connect(self.show_state)
        live.progress.connect(self.show_progress)
        self.timer = QTimer(bar)
        self.timer.setInterval(1000)
        self.timer.timeout.connect(self.refresh)
        self.timer.start()

    def show_state(self, state: str, detail: str) -> None:
        color = _STATE_COLORS.get(state, "#b2b5be")
        self.connection.setText(state)
        self.connection.setStyleSheet(f"color: {color}; font-weight: bold")
        self.connection.setToolTip(detail or state)
        key = self.live.key
        self.provenance.setText(key.provenance if key else detail)
        self.refresh()

    def refresh(self) -> None:
        live = self.live
        self.latency.setText(f"latency {display.number(live.latency_ms, '.0f', ' ms')}")
        age = None if live.last_update_wall is None else time.monotonic() - live.last_update_wall
        self.age.setText(f"last update {display.age(age)}")

    def show_progress(self, done: float, what: str) -> None:
        """A file import's progress; 1.0 (done) hides the bar."""
        if done >= 1.0:
            self.import_progress.hide()
            return
        self.import_progress.setValue(int(done * 1000))
        self.import_progress.setFormat(f"{what}  %p%" if what else "%p%")
        self.import_progress.show()

    def show_device(self, text: str) -> None:
        self.device.setText(text)
