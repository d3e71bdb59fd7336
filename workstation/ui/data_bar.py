"""The data bar: which source, symbol and timeframe the chart shows, and a DEMO badge.

Choosing a source fills the symbol box with the symbol that source opens with (the one last
used with it, else the core's default: ``LiveData.symbol_for``); the symbols last used are kept
per source in the window's settings (``data/symbols``), so they survive a restart.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QSettings, Signal
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QToolBar, QWidget

from ..market.timeframes import SUPPORTED, parse_timeframe
from .live_data import OPENED_STATES, LiveData

SOURCES = ("demo", "binance", "bybit", "okx", "kraken", "coinbase", "cache")
SYMBOLS_SETTING = "data/symbols"  # JSON: {source: symbol last opened with it}


class DataBar(QToolBar):
    """Emits ``open_requested(source, symbol, timeframe)``; shows the DEMO badge for demo data.

    The source box is editable: any ccxt exchange id, ``cache``, ``cache:NAME`` or
    ``csv:FILE`` works, as on the command line."""

    open_requested = Signal(str, str, str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Data", parent)
        self.setObjectName("dataBar")
        self.live: LiveData | None = None
        self._source_shown = ""  # the source whose symbol the symbol box holds
        self.settings: QSettings | None = None
        self.source = QComboBox()
        self.source.setEditable(True)
        self.source.addItems(SOURCES)
        self.source.setToolTip("Data source: demo, an exchange id (ccxt), cache, cache:NAME or "
                               "csv:FILE (choosing one fills in its symbol)")
        self.source.setMinimumContentsLength(10)
        self.symbol = QLineEdit()
        self.symbol.setPlaceholderText("ETH/USDT")
        self.symbol.setToolTip("Market symbol (empty: the one last used with the source)")
        self.symbol.setMaximumWidth(130)
        self.timeframe = QComboBox()
        self.timeframe.addItems(SUPPORTED)
        self.timeframe.setToolTip("Timeframe")
        self.open_button = QPushButton("Open")
        self.open_button.setToolTip("Load this source (Enter in the source or symbol box)")
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
        self.source.textActivated.connect(self.source_chosen)
        source_edit = self.source.lineEdit()
        if source_edit is not None:  # after the box's own Enter (which fills in)
            source_edit.returnPressed.connect(self.request_open)

    def attach(self, live: LiveData, settings: QSettings) -> None:
        """Follow ``live`` (what it opens shows here; the symbols it opened are remembered in
        ``settings``) and give it the symbols remembered so far."""
        self.live, self.settings = live, settings
        try:
            saved = json.loads(str(settings.value(SYMBOLS_SETTING, "{}")))
        except ValueError:
            saved = {}
        if isinstance(saved, dict):
            live.remembered.update({str(k): str(v) for k, v in saved.items() if v})
        live.opening.connect(self.set_values)
        live.state_changed.connect(self._state_changed)

    def _state_changed(self, state: str, _detail: str) -> None:
        if state in OPENED_STATES and self.live is not None and self.settings is not None:
            self.settings.setValue(SYMBOLS_SETTING, json.dumps(self.live.remembered))

    def source_chosen(self, source: str) -> None:
        """A source was picked (or typed and Enter pressed): its symbol goes in the box."""
        if self.live is None or source.strip() == self._source_shown:
            return  # the same source again: the symbol typed for it stays
        self._source_shown = source.strip()
        symbol = self.live.symbol_for(source, parse_timeframe(self.timeframe.currentText()))
        if symbol:
            self.symbol.setText(symbol)

    def set_values(self, source: str, symbol: str, timeframe: str) -> None:
        self._source_shown = source.strip()
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
