"""The data bar: which source, symbol and timeframe the chart shows, and a DEMO badge.

Choosing a source fills the symbol box with the symbol that source opens with (the one last
used with it, else the core's default: ``LiveData.symbol_for``); the symbols last used are kept
per source in the window's settings (``data/symbols``), so they survive a restart.

The bar takes the keyboard only on its own keys (``Ctrl+L`` source, ``Ctrl+Shift+S`` symbol,
``Ctrl+Shift+I`` timeframe, or a click): Tab walks its three fields, Enter opens what they
say and Esc puts back what is shown; either way the keyboard goes back to the chart
(``handed_back``). A source longer than its field reads with its folders elided while the
field is not being edited (``csv:/home/tr…/ethusdt_1m.csv.gz``: the file's name whole), the
whole text in its tooltip.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QEvent, QObject, QSettings, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QToolBar, QWidget

from ..market.timeframes import SUPPORTED, parse_timeframe
from .command_registry import create_command_actions
from .elided import elided_path
from .live_data import OPENED_STATES, LiveData

SOURCES = ("demo", "binance", "bybit", "okx", "kraken", "coinbase", "cache")
SYMBOLS_SETTING = "data/symbols"  # JSON: {source: symbol last opened with it}
SOURCE_TIP = ("Data source: demo, an exchange id (ccxt), cache, cache:NAME or csv:FILE "
              "(choosing one fills in its symbol; Ctrl+L)")


class DataBar(QToolBar):
    """Emits ``open_requested(source, symbol, timeframe)``; shows the DEMO badge for demo data;
    ``handed_back`` when the keyboard is to go back to the chart (Enter, Esc).

    The source box is editable: any ccxt exchange id, ``cache``, ``cache:NAME`` or
    ``csv:FILE`` works, as on the command line."""

    open_requested = Signal(str, str, str)
    handed_back = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Data", parent)
        self.setObjectName("dataBar")
        self.live: LiveData | None = None
        self._source_shown = ""  # the source whose symbol the symbol box holds
        self._shown: tuple[str, str, str] | None = None  # the values of what is shown
        self.settings: QSettings | None = None
        self.source = QComboBox()
        self.source.setEditable(True)
        self.source.addItems(SOURCES)
        self.source.setToolTip(SOURCE_TIP)
        self.source.setMinimumContentsLength(22)
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
        assert source_edit is not None  # the box is editable
        self.source_edit = source_edit
        source_edit.returnPressed.connect(self.request_open)  # after the box's own Enter
        self._source_full = ""  # the source's whole text while the field shows it elided
        self.fields: tuple[QWidget, ...] = (self.source, self.symbol, self.timeframe)
        for part in (*self.fields, source_edit, self.open_button):
            part.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # not on the chart's Tab walk
            part.installEventFilter(self)
        self.command_actions = create_command_actions(parent or self, {
            "data.source": lambda: self.edit(self.source),
            "data.symbol": lambda: self.edit(self.symbol),
            "data.timeframe": lambda: self.edit(self.timeframe),
        }, Qt.ShortcutContext.WindowShortcut)

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
        self._shown = (source, symbol, timeframe)
        self._source_full = ""
        self.source.setCurrentText(source)
        self.symbol.setText(symbol)
        self.timeframe.setCurrentText(timeframe)
        if not self.source_edit.hasFocus():
            self._elide_source()

    def values(self) -> tuple[str, str, str]:
        source = self._source_full or self.source.currentText()
        return source.strip(), self.symbol.text().strip(), self.timeframe.currentText()

    def request_open(self) -> None:
        self.open_requested.emit(*self.values())
        self.handed_back.emit()

    # -- the keyboard ----------------------------------------------------------------------
    def edit(self, field: QWidget) -> None:
        """Give ``field`` the keyboard (the data bar's keys), showing the bar if hidden."""
        self.show()
        target = self.source_edit if field is self.source else field
        target.setFocus(Qt.FocusReason.ShortcutFocusReason)
        if isinstance(target, QLineEdit):
            target.selectAll()

    def cancel(self) -> None:
        """Esc: put back the values of what is shown, and hand the keyboard back."""
        if self._shown is not None:
            self.set_values(*self._shown)
        self.handed_back.emit()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if obj is self.source and kind == QEvent.Type.FocusIn and self._source_full:
            self.source.setCurrentText(self._source_full)  # edit the whole text
            self._source_full = ""
            self.source_edit.selectAll()
        elif obj is self.source and kind in (QEvent.Type.FocusOut, QEvent.Type.Resize):
            self._elide_source()
        elif kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            key = event.key()
            if key == Qt.Key.Key_Escape:
                self.cancel()
                return True
            if key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
                self._next_field(-1 if key == Qt.Key.Key_Backtab else 1, obj)
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and obj is not self.source_edit \
                    and obj is not self.symbol:  # those two open on their returnPressed
                self.request_open()
                return True
        return False

    def _next_field(self, step: int, obj: QObject) -> None:
        index = next((i for i, f in enumerate(self.fields)
                      if obj is f or (isinstance(obj, QWidget) and f.isAncestorOf(obj))), 0)
        self.edit(self.fields[(index + step) % len(self.fields)])

    def _elide_source(self) -> None:
        """Show a source too long for its field elided in the middle, whole in the tooltip."""
        if self.source_edit.hasFocus():
            return
        full = self._source_full or self.source.currentText()
        room = self.source_edit.width() - 8
        shown = elided_path(full, self.source_edit.fontMetrics(), max(room, 20))
        self._source_full = full if shown != full else ""
        if self.source.currentText() != shown:
            self.source.setCurrentText(shown)
        self.source.setToolTip(f"{full}\n\n{SOURCE_TIP}" if full else SOURCE_TIP)

    def show_demo(self, is_demo: bool) -> None:
        self._badge_action.setVisible(is_demo)

    def demo_shown(self) -> bool:
        return self._badge_action.isVisible()
