"""The data bar: which source, symbol and timeframe the chart shows, and a DEMO badge."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QToolBar, QWidget

from ..market.timeframes import SUPPORTED

SOURCES = ("demo", "binance", "bybit", "okx", "kraken", "coinbase", "cache")


class DataBar(QToolBar):
    """Emits ``open_requested(source, symbol, timeframe)``; shows the DEMO badge for demo data.

    The source box is editable: any ccxt exchange id, ``cache``, ``cache:NAME`` or
    ``csv:FILE`` works, as on the command line."""

    open_requested = Signal(str, str, str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Data", parent)
        self.setObjectName("dataBar")
        self.source = QComboBox()
        self.source.setEditable(True)
        self.source.addItems(SOURCES)
        self.source.setToolTip("Data source: demo, an exchange id (ccxt), cache, cache:NAME or "
                               "csv:FILE")
        self.source.setMinimumContentsLength(10)
        self.symbol = QLineEdit()
        self.symbol.setPlaceholderText("ETH/USDT")
        self.symbol.setToolTip("Market symbol")
        self.symbol.setMaximumWidth(130)
        self.timeframe = QComboBox()
        self.timeframe.addItems(SUPPORTED)
        self.timeframe.setToolTip("Timeframe")
        self.open_button = QPushButton("Open")
        self.open_button.setToolTip("Load this source (Enter in the symbol box)")
        self.badge = QLabel("DEMO")
        self.badge.setObjectName("demoBadge")
        self.badge.setToolTip("Simulated market data: not a real exchange")
        for label, widget in (("Source", self.source), ("Symbol", self.symbol),
                              ("Timeframe", self.timeframe)):
            self.addWidget(QLabel(f" {label} "))
            self.addWidget(widget)
        self.addWidget(self.open_button)
        self.addSeparator()
        self._badge_action = self.addWidget(self.badge)  # a toolbar shows widgets by action
        self._badge_action.setVisible(False)
        self.open_button.clicked.connect(self.request_open)
        self.symbol.returnPressed.connect(self.request_open)

    def set_values(self, source: str, symbol: str, timeframe: str) -> None:
        self.source.setCurrentText(source)
        self.symbol.setText(symbol)
        self.timeframe.setCurrentText(timeframe)

    def values(self) -> tuple[str, str, str]:
        return (self.source.currentText().strip(), self.symbol.text().strip(),
                self.timeframe.currentText())

    def request_open(self) -> None:
        self.open_requested.emit(*self.values())

    def show_demo(self, is_demo: bool) -> None:
        self._badge_action.setVisible(is_demo)

    def demo_shown(self) -> bool:
        return self._badge_action.isVisible()
