"""``IndicatorEditor``: add, change and remove one chart's indicators from the keyboard.

An overlay inside the main window (it takes the keyboard with or without a window manager):
a field where the trader types an indicator as ``indicators.parse_spec`` reads it (``ema 50``,
``bb 20 2.5``, ``rsi``), and the chart's list under it, ending with "add new". Up / Down choose a
row: an indicator's row puts its text in the field, so Enter changes it to what was typed; on
"add new" Enter adds. Ctrl+Del (or Shift+Del) removes the chosen indicator; Esc closes. A text
that names no indicator says why in one line and changes nothing.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QLabel, QLineEdit, QListWidget, QVBoxLayout, QWidget

from ..indicators import IndicatorSpec, IndicatorSpecError, parse_spec
from .chart.chart_widget import ChartWidget
from .overlay import Overlay

ADD_NEW = "＋ add new"
HINT = ("Enter adds or changes the chosen one · ↑ ↓ choose · Ctrl+Del removes it · "
        "Esc closes")
EXAMPLES = "ema 20, sma 200, bb 20 2, rsi 14, atr 14, vwap, vp 24"
_REMOVE_KEYS = (Qt.Key.Key_Delete,)


def describe(spec: IndicatorSpec) -> str:
    where = "own pane" if spec.own_pane else "over prices"
    return f"{spec.label}  —  {spec.info.title} ({where})"


class _Field(QLineEdit):
    """The editor's text: Up / Down choose a row, Ctrl+Del or Shift+Del removes it."""

    def __init__(self, editor: IndicatorEditor):
        super().__init__()
        self.editor = editor

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, mods = event.key(), event.modifiers()
        if key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            self.editor.choose(self.editor.list.currentRow() + (1 if key == Qt.Key.Key_Down
                                                                else -1))
            return
        if key in _REMOVE_KEYS and mods & (Qt.KeyboardModifier.ControlModifier
                                            | Qt.KeyboardModifier.ShiftModifier):
            self.editor.remove_chosen()
            return
        super().keyPressEvent(event)


class IndicatorEditor(Overlay):
    """See the module docstring; ``edit(chart, title)`` opens it on a chart."""

    top = 60

    def __init__(self, window: QWidget):
        super().__init__(window, "indicatorEditor")
        self.title = QLabel()
        self.title.setObjectName("indicatorEditorTitle")
        self.field = _Field(self)
        self.field.setObjectName("indicatorField")
        self.field.setPlaceholderText(f"Type an indicator: {EXAMPLES}")
        self.list = QListWidget()
        self.list.setObjectName("indicatorList")
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the field keeps the keyboard
        self.list.itemClicked.connect(lambda item: self.choose(self.list.row(item)))
        self.hint = QLabel(HINT)
        self.hint.setObjectName("indicatorHint")
        self.hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.addWidget(self.title)
        layout.addWidget(self.field)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.hint)
        self.focus_widget = self.field
        self.field.returnPressed.connect(self.apply)
        self.chart: ChartWidget | None = None

    def wanted_size(self) -> QSize:
        return QSize(620, 380)

    def edit(self, chart: ChartWidget, title: str, typed: str = "") -> None:
        """Open on ``chart`` with "add new" chosen and ``typed`` in the field (its number
        selected, so typing replaces it)."""
        if self.chart is not None and self.chart is not chart:
            self.chart.indicators.changed.disconnect(self._fill)
        if self.chart is not chart:
            chart.indicators.changed.connect(self._fill)
        self.chart = chart
        self.title.setText(title)
        self._fill()
        self.choose(self.list.count() - 1)
        self.field.setText(typed)
        number = re.search(r"[0-9.]+", typed)
        if number:
            self.field.setSelection(number.start(), number.end() - number.start())
        self.open()

    # -- rows ------------------------------------------------------------------------------
    def specs(self) -> list[IndicatorSpec]:
        return [] if self.chart is None else list(self.chart.indicators.specs)

    def rows(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def _fill(self) -> None:
        row = self.list.currentRow()
        self.list.clear()
        for spec in self.specs():
            self.list.addItem(describe(spec))
        self.list.addItem(ADD_NEW)
        self.list.setCurrentRow(min(max(row, 0), self.list.count() - 1))

    def choose(self, row: int) -> None:
        """Choose a row (kept inside the list): an indicator's text goes into the field."""
        row = min(max(row, 0), self.list.count() - 1)
        self.list.setCurrentRow(row)
        specs = self.specs()
        self.field.setText(specs[row].text if row < len(specs) else "")
        self.field.selectAll()
        self.hint.setText(HINT)

    def _say(self, text: str) -> None:
        self.hint.setText(text)

    # -- changes ---------------------------------------------------------------------------
    def apply(self) -> None:
        """Enter: change the chosen indicator to the typed one, or add it on "add new"."""
        if self.chart is None:
            return
        try:
            spec = parse_spec(self.field.text())
        except IndicatorSpecError as exc:
            self._say(str(exc))  # the text stays, to be put right
            return
        layer, row = self.chart.indicators, self.list.currentRow()
        if row < len(layer.specs):
            if spec == layer.specs[row]:
                self._say(f"{spec.label} is unchanged")
                return
            if not layer.replace(row, spec):
                self._say(f"{spec.label} is on this chart already")
                return
            self._say(f"changed to {spec.label}")
        else:
            if not layer.add(spec):
                self._say(f"{spec.label} is on this chart already" if spec in layer.specs
                          else "this chart shows as many indicators as it can: remove one")
                return
            self._say(f"added {spec.label} · {HINT}")
        self.choose(self.list.count() - 1)

    def remove_chosen(self) -> None:
        if self.chart is None:
            return
        row, layer = self.list.currentRow(), self.chart.indicators
        if row >= len(layer.specs):
            self._say("choose an indicator with ↑ ↓ to remove it")
            return
        label = layer.specs[row].label
        layer.remove(row)
        self.choose(row)
        self._say(f"removed {label}")

