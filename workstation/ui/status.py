"""The status bar: data provenance, connection state, latency, last-candle age, device.

A source that is not live (a file, the cache, a finished replay) says so where the age would
tick ("file · 3,256 candles, last 2024-05-01 12:00"); texts that do not fit are elided in the
middle, whole in their tooltips (``elided.ElidedLabel``).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar

from .. import display
from ..errors import WorkstationError
from ..market.sources import parse_source
from ..timeparse import format_minute
from .elided import ElidedLabel
from .live_data import LiveData

_STATE_COLORS = {"live": "#26a69a", "replay": "#42a5f5", "static": "#b2b5be",
                 "connecting": "#f5a623", "reconnecting": "#f5a623", "polling": "#f5a623",
                 "loading": "#f5a623", "offline": "#ef5350", "failed": "#ef5350",
                 "closed": "#5d606b"}
TICKING_STATES = ("live", "replay", "polling", "reconnecting", "offline")  # a feed updates
_NOT_LIVE = {"file": "file", "cache": "cache"}  # else a static series is a finished replay


def not_live_text(spec: str | None, candles: int, last_ts: int | None) -> str:
    """What a series nothing updates is: ``"file · 3,256 candles, last 2024-05-01 12:00"``."""
    try:
        kind = _NOT_LIVE.get(parse_source(spec or "").kind, "replay finished")
    except WorkstationError:
        kind = "not live"
    last = display.NO_DATA if last_ts is None else format_minute(last_ts)
    return f"{kind} · {display.number(candles, ',.0f')} candles, last {last}"


class StatusPanel:
    """Fills a window's status bar from a ``LiveData`` and keeps the ages fresh (1 s timer)."""

    def __init__(self, bar: QStatusBar, live: LiveData):
        self.live = live
        self.replay_text: str | None = None
        self.provenance = ElidedLabel("no data", "Where the candles on screen come from")
        self.connection = QLabel("closed")
        self.connection.setToolTip("Feed state")
        self.latency = QLabel(f"latency {display.NO_DATA}")
        self.latency.setToolTip("Last exchange round trip")
        self.age = ElidedLabel(f"last update {display.NO_DATA}",
                               "Time since the last candle update, or what a series nothing "
                               "updates is")
        self.device = ElidedLabel(f"device {display.NO_DATA}", "Training device")
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

    def show_replay(self, text: str | None) -> None:
        """A blind replay's ``REPLAY <clock> · <speed> · blind`` where the feed state shows
        (None: the replay ended)."""
        self.replay_text = text
        if text:
            self.connection.setText(text)
            self.connection.setStyleSheet(f"color: {_STATE_COLORS['replay']}; font-weight: bold")
            self.connection.setToolTip("Blind replay: nothing after the replay clock is shown")
        else:
            self.show_state(self.live.state, self.live.detail)

    def show_state(self, state: str, detail: str) -> None:
        if not self.replay_text:  # a replay's own text stays until it ends
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
        if live.state == "static":
            c = live.candles
            self.age.setText(not_live_text(live.spec, len(c), int(c.ts[-1]) if len(c) else None))
            return
        age = None if live.last_update_wall is None or live.state not in TICKING_STATES \
            else time.monotonic() - live.last_update_wall
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
