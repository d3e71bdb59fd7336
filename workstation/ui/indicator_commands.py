"""``IndicatorCommands``: the Indicators commands of the window, and each chart's indicators kept
in the settings.

I (or "Indicators…" in the palette and the View menu) opens the ``IndicatorEditor`` on the
active chart; "Add EMA…", "Add RSI…" and the others open it with that kind's usual settings
typed and its number selected, so typing a period and Enter adds it; "Remove all indicators"
empties the active chart. The keys act on the chart that has the keyboard, like the chart's
own keys. Every chart of the layout keeps its list (``charts/indicators_N``, the specs as
typed) across restarts; a setting that no longer reads as an indicator is left out with a log
line naming it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from ..indicators import IndicatorKind, IndicatorSpec, IndicatorSpecError, parse_spec
from ..indicators.anchored import check_anchorable
from .chart.chart_widget import ChartWidget
from .chart_area import ChartArea
from .command_registry import create_command_actions
from .indicator_editor import IndicatorEditor

log = logging.getLogger(__name__)


def setting_name(index: int) -> str:
    return f"charts/indicators_{index + 1}"


class IndicatorCommands(QObject):
    """See the module docstring."""

    def __init__(self, window: QWidget, area: ChartArea, settings: QSettings | None,
                 say: Callable[[str], None]):
        super().__init__(window)
        self.area = area
        self.say = say
        self.feed_inputs: Callable[[list[str]], None] | None = None  # the training form's
        self.settings = settings
        self.editor = IndicatorEditor(window)
        for index, chart in enumerate(area.charts):
            chart.indicators.set_specs(self._saved(index))
            chart.indicators.changed.connect(self._saver(index))
        handlers = {
            "indicators.edit": lambda: self.edit(),
            **{f"indicators.add_{kind.value}": self._adder(kind) for kind in IndicatorKind},
            "indicators.clear": lambda: self.area.active_chart.indicators.set_specs([]),
            "indicators.as_inputs": self.as_inputs,
        }
        self.command_actions: dict[str, QAction] = create_command_actions(area.primary,
                                                                          handlers)
        for chart in area.charts[1:]:  # the keys act on whichever chart has the keyboard
            chart.addActions(list(self.command_actions.values()))

    def edit(self, typed: str = "") -> None:
        """Open the editor on the active chart (``typed`` in its field)."""
        chart = self.area.active_chart
        self.editor.edit(chart, self._title(chart), typed)

    def as_inputs(self) -> None:
        """Chart 1's indicators into the training form (those that can be inputs)."""
        fed, left = [], []
        for spec in self.area.primary.indicators.specs:
            try:
                check_anchorable(spec)
                fed.append(spec.text)
            except IndicatorSpecError:
                left.append(spec.label)
        if self.feed_inputs is not None:
            self.feed_inputs(fed)
        note = f" ({', '.join(left)}: not an input)" if left else ""
        self.say(f"Indicator inputs: {', '.join(fed) or 'none'}{note}; the next run reads them")

    def _title(self, chart: ChartWidget) -> str:
        n = self.area.charts.index(chart) + 1
        tf = chart.candles.timeframe.name if chart.candles is not None else "no candles"
        return f"Indicators on chart {n} ({tf})"

    def _adder(self, kind: IndicatorKind):
        return lambda: self.edit(IndicatorSpec.default(kind).text)

    # -- settings ----------------------------------------------------------------------
    def _saved(self, index: int) -> list[IndicatorSpec]:
        value = None if self.settings is None else self.settings.value(setting_name(index))
        if value is None:
            return []
        texts = value if isinstance(value, (list, tuple)) else [value]
        specs = []
        for text in texts:
            if not str(text).strip():
                continue
            try:
                specs.append(parse_spec(str(text)))
            except IndicatorSpecError as exc:
                log.warning("chart %d: indicator setting %r left out: %s", index + 1, text, exc)
        return specs

    def _saver(self, index: int):
        def save() -> None:
            if self.settings is not None:
                specs = self.area.charts[index].indicators.specs
                self.settings.setValue(setting_name(index), [s.text for s in specs] or "")
        return save
