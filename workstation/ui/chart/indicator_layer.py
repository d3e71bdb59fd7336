"""``ChartIndicators``: the indicators one chart shows, kept live with its candles.

Each spec (``indicators.IndicatorSpec``) gets its ``IndicatorValues`` from the core, synced
from the first changed candle on every tick, append and reset (so a tick costs O(period) at
most), and is drawn by the items of ``indicator_items``: moving averages, VWAP and Bollinger
bands over the prices, RSI and ATR each in a pane of its own under the volume (sharing the
chart's time axis and cursor), the volume profile of what is on screen at the price pane's right
edge. A legend line above the plot reads out every indicator at the candle the readout shows.
``changed`` says the list of specs changed (the chart area keeps it in the settings).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import QtCore

from ...indicators import IndicatorKind, IndicatorSpec, IndicatorValues
from ...market.candles import Candles
from .axis import GridItem, PriceAxis
from .colors import ChartColors
from .guides import CursorItem
from .indicator_items import (
    IndicatorLinesItem,
    LegendLine,
    LevelsItem,
    VolumeProfileItem,
    cosmetic_pen,
)
from .visible import VisibleCandles, empty_visible

if TYPE_CHECKING:
    from .chart_widget import ChartWidget

LINE_COLORS = ("#2962ff", "#ff9800", "#e040fb", "#00bcd4", "#cddc39", "#f06292")
PROFILE_COLORS = ("#787b8655", "#5c6bc0aa", "#ffca28")  # rows, value area, point of control
RSI_LEVELS = (30.0, 70.0)
MAX_INDICATORS = 12


class IndicatorPane:
    """A pane of its own under the volume for one indicator (RSI, ATR): its lines, guides,
    price axis, grid and the keyboard cursor's band."""

    def __init__(self, spec: IndicatorSpec, lines: IndicatorLinesItem, colors: ChartColors):
        from .chart_widget import ChartViewBox  # the chart's view box; it imports this module

        self.spec = spec
        self.view = ChartViewBox()
        self.view.setMouseEnabled(x=False, y=False)
        self.axis = PriceAxis(self.view, pg.mkColor(colors.axis_text),
                              pg.mkColor(colors.axis_line))
        self.grid = GridItem(pg.mkColor(colors.grid))
        self.cursor = CursorItem(self.view, pg.mkColor(colors.cursor_band), None)
        self.levels = LevelsItem(RSI_LEVELS if spec.kind is IndicatorKind.RSI else (),
                                 colors.axis_line)
        self.lines = lines
        self.items = (self.grid, self.cursor, self.levels, self.lines)
        for z, item in enumerate(self.items):
            item.setZValue(z)
            self.view.addItem(item, ignoreBounds=True)
        self.view.sigYRangeChanged.connect(self._on_y)
        self.view.sigResized.connect(self._on_y)
        self._grid_xs = np.empty(0)

    def fit(self, x0: float, x1: float) -> None:
        """Show the chart's times ``[x0, x1]`` and the drawn values' range."""
        if self.spec.kind is IndicatorKind.RSI:
            lo, hi = 0.0, 100.0
        else:
            lo, hi = self.lines.value_range()
            if not math.isfinite(lo):
                lo, hi = 0.0, 1.0
            pad = (hi - lo) * 0.08 or abs(hi) * 0.05 or 1.0
            lo, hi = lo - pad, hi + pad
        self.view.setRange(xRange=(x0, x1), yRange=(lo, hi), padding=0)
        self._on_y()

    def refit_if_outside(self) -> None:
        if self.spec.kind is IndicatorKind.RSI:
            return
        lo, hi = self.lines.value_range()
        (x0, x1), (y0, y1) = self.view.viewRange()
        if math.isfinite(lo) and (lo < y0 or hi > y1):
            self.fit(x0, x1)

    def set_grid_xs(self, xs: np.ndarray) -> None:
        self._grid_xs = xs
        self.grid.set_lines(xs, self.axis.values)

    def _on_y(self, *args) -> None:
        rect = self.view.viewRect()
        for item in self.items:
            item.set_view_rect(rect)
        self.axis.refresh()
        if self.levels.levels:  # an RSI's axis reads its guides, whatever the pane's height
            self.axis.values, self.axis.decimals = np.array(self.levels.levels), 0
        self.grid.set_lines(self._grid_xs, self.axis.values)


class ChartIndicators(QtCore.QObject):
    """See the module docstring."""

    changed = QtCore.Signal()

    def __init__(self, chart: ChartWidget):
        super().__init__(chart)
        self.chart = chart
        self.specs: list[IndicatorSpec] = []
        self.values: list[IndicatorValues | None] = []  # None: a volume profile
        self.price_lines = IndicatorLinesItem()
        self.profiles: list[VolumeProfileItem] = []
        self.panes: list[IndicatorPane] = []
        self.legend = LegendLine()
        self.legend.setObjectName("indicatorLegend")
        self.legend.hide()
        self._candles: Candles | None = None
        self._frame: VisibleCandles = empty_visible()
        self._shown: int | None = None

    # -- the list ----------------------------------------------------------------------
    def set_specs(self, specs: list[IndicatorSpec]) -> None:
        """Show exactly ``specs`` (duplicates and those past ``MAX_INDICATORS`` dropped)."""
        unique: list[IndicatorSpec] = []
        for spec in specs:
            if spec not in unique and len(unique) < MAX_INDICATORS:
                unique.append(spec)
        if unique == self.specs:
            return
        self.specs = unique
        self._rebuild()
        self.changed.emit()

    def add(self, spec: IndicatorSpec) -> bool:
        """Add ``spec``; False if the chart shows it already or is full."""
        if spec in self.specs or len(self.specs) >= MAX_INDICATORS:
            return False
        self.set_specs([*self.specs, spec])
        return True

    def replace(self, index: int, spec: IndicatorSpec) -> bool:
        if spec in self.specs:
            return False
        specs = list(self.specs)
        specs[index] = spec
        self.set_specs(specs)
        return True

    def remove(self, index: int) -> None:
        self.set_specs([s for i, s in enumerate(self.specs) if i != index])

    # -- candles and frames (the chart calls these) --------------------------------------
    def set_candles(self, candles: Candles | None) -> None:
        """A new series (or one replaced): every indicator from scratch."""
        self._candles = candles
        for values in self.values:
            if values is not None and candles is not None:
                values.reset(candles)

    def sync(self, changed_from: int) -> None:
        """Candles from ``changed_from`` on changed (a tick, an append)."""
        c = self._candles
        if c is None:
            return
        for values in self.values:
            if values is not None:
                values.sync(c, changed_from)

    def set_frame(self, frame: VisibleCandles, x0: float, x1: float) -> None:
        self._frame = frame
        self.price_lines.set_frame(frame)
        for item in self.profiles:
            item.set_frame(frame)
        for pane in self.panes:
            pane.lines.set_frame(frame)
            pane.fit(x0, x1)

    def forming_changed(self) -> None:
        """The last unit on screen was refreshed for a tick: repaint only its strips."""
        self.price_lines.update_last()
        width = self.chart.price_view.width()
        for item in self.profiles:
            item.refresh_last(self._frame, width)
        for pane in self.panes:
            pane.lines.update_last()
            pane.refit_if_outside()
        if self._shown is not None and self._candles is not None \
                and self._shown >= len(self._candles) - 1:
            self.show_values(self._shown)

    def set_cursor(self, index: float | None) -> None:
        for pane in self.panes:
            pane.cursor.set_candle(index)

    def set_grid_xs(self, xs: np.ndarray) -> None:
        for pane in self.panes:
            pane.set_grid_xs(xs)

    def set_colors(self, colors: ChartColors) -> None:
        self.legend.set_colors(colors.background, colors.readout_text)
        self._rebuild()

    # -- the legend --------------------------------------------------------------------
    def show_values(self, index: int | None) -> None:
        """Read every indicator out at candle ``index`` (None: no candle)."""
        self._shown = index
        if not self.specs:
            self.legend.hide()
            return
        self.legend.set_pieces(tuple(
            (spec.label, LINE_COLORS[n % len(LINE_COLORS)], self._value_text(spec, values, index))
            for n, (spec, values) in enumerate(zip(self.specs, self.values))))
        self.legend.show()

    def _value_text(self, spec: IndicatorSpec, values: IndicatorValues | None,
                    index: int | None) -> str:
        if values is None:  # a profile: its point of control
            prof = self.profiles[self._profile_index(spec)].profile if self.profiles else None
            if prof is None:
                return "—"
            middle = (prof.edges[prof.poc] + prof.edges[prof.poc + 1]) / 2
            return f"POC {self.chart.format_price(middle)}"
        if index is None or index >= len(values):
            return "—"
        texts = []
        for name in spec.lines:
            v = float(values.line(name)[index])
            if not math.isfinite(v):
                texts.append("—")
            elif spec.kind is IndicatorKind.RSI:
                texts.append(f"{v:.1f}")
            else:
                texts.append(self.chart.format_price(v))
        return " ".join(texts)

    def _profile_index(self, spec: IndicatorSpec) -> int:
        return [s for s in self.specs if s.kind is IndicatorKind.VOLUME_PROFILE].index(spec)

    # -- building the items ------------------------------------------------------------
    def _rebuild(self) -> None:
        chart = self.chart
        colors = chart.colors
        for item in self.profiles:
            chart.price_view.removeItem(item)
        for pane in self.panes:
            chart.grid.removeItem(pane.view)
            chart.grid.removeItem(pane.axis)
        kept = {v.spec: v for v in self.values if v is not None}  # computed: not again
        self.profiles, self.panes, self.values = [], [], []
        price_lines = []
        for n, spec in enumerate(self.specs):
            color = LINE_COLORS[n % len(LINE_COLORS)]
            if spec.kind is IndicatorKind.VOLUME_PROFILE:
                self.values.append(None)
                item = VolumeProfileItem(spec.period, *PROFILE_COLORS)
                item.setZValue(chart.candle_item.zValue() - 0.5)  # behind the candles
                chart.price_view.addItem(item, ignoreBounds=True)
                item.set_view_rect(chart.price_view.viewRect())
                self.profiles.append(item)
                continue
            values = kept.get(spec) or IndicatorValues(spec)
            if self._candles is not None:
                values.sync(self._candles)  # a kept one: only candles it has not seen
            self.values.append(values)
            lines = [(self._line(values, name),
                      # the bands' middle fainter, not dashed: a dashed stroke costs 3x
                      cosmetic_pen(color + ("88" if name == "middle" else ""), 1.0))
                     for name in spec.lines]
            if spec.own_pane:
                pane_lines = IndicatorLinesItem()
                pane_lines.set_lines(lines)
                self.panes.append(IndicatorPane(spec, pane_lines, colors))
            else:
                price_lines.extend(lines)
        self.price_lines.set_lines(price_lines)
        self._place_panes()
        chart.refresh_indicators()
        self.show_values(self._shown)

    @staticmethod
    def _line(values: IndicatorValues, name: str):
        return lambda: values.line(name)

    def _place_panes(self) -> None:
        """Panes go under the volume, in the order added; the time axis under them all."""
        grid = self.chart.grid
        grid.removeItem(self.chart.time_axis)
        for row in range(2, grid.layout.rowCount()):  # the rows of panes removed
            grid.layout.setRowStretchFactor(row, 0)
        for row, pane in enumerate(self.panes, start=2):
            grid.addItem(pane.view, row, 0)
            grid.addItem(pane.axis, row, 1)
            grid.layout.setRowStretchFactor(row, 1)
        last = 2 + len(self.panes)
        grid.addItem(self.chart.time_axis, last, 0)
        grid.layout.setRowStretchFactor(last, 0)
