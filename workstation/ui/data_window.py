"""A minimal window that shows which data is loaded and where it came from."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QMainWindow, QVBoxLayout, QWidget

from .. import __version__
from ..errors import WorkstationError
from ..market.sources import load_series
from ..timeparse import format_ms


class DataWindow(QMainWindow):
    """Loads a series and shows its provenance (DEMO badge), size and last candle."""

    def __init__(self, source: str, symbol: str | None, timeframe: str):
        super().__init__()
        self.setWindowTitle(f"Workstation {__version__}")
        body = QWidget()
        layout = QVBoxLayout(body)
        self.badge = QLabel()
        self.summary = QLabel()
        layout.addWidget(self.badge)
        layout.addWidget(self.summary)
        layout.addStretch(1)
        self.setCentralWidget(body)
        self.resize(640, 240)
        try:
            candles, key = load_series(source, symbol, timeframe)
        except WorkstationError as exc:
            self.badge.setText("No data")
            self.summary.setText(str(exc))
            return
        self.badge.setText("DEMO — simulated market" if key.is_demo else key.source)
        if key.is_demo:
            self.badge.setStyleSheet("background:#f5a623;color:black;font-weight:bold;padding:4px")
        last = candles.row(-1)
        self.summary.setText(f"{key.provenance}: {len(candles)} candles, last "
                             f"{format_ms(last.ts)} close {last.close:.2f}")
