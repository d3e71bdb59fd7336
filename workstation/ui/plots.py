"""A plot kit on pyqtgraph, for any view that draws curves against a step or a time.

``CurvePlot`` is one plot: a legend naming its lines above it (the plot's own area is never
covered), axis labels that never overlap (``TickAxis``), a vertical cursor and a readout of
the values under the mouse; ``Series`` holds one curve's points (step, wall time, value),
``Level`` one labelled dashed baseline. ``COLORS`` are the curves' colours by role.

A value without data (None, not finite) is left out of a curve, never drawn as 0.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal, Slot
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from ..viewmodel.curve_math import elapsed_text, tick_text, time_spacing, value_text

AXIS_WIDTH, AXIS_HEIGHT = 52, 24  # px
NO_DATA_TEXT = "no data yet"
COLORS = {"train": "#42a5f5", "smooth": "#1e88e5", "val": "#ff7043", "lr": "#ab47bc",
          "rate": "#26a69a", "live": "#ffca28", "trend": "#66bb6a", "best": "#ffd54f",
          "majority": "#9e9e9e", "grad": "#ec407a", "allocated": "#42a5f5",
          "reserved": "#ab47bc", "peak": "#ef5350", "compare": "#bdbdbd"}
_GLYPHS = {"solid": "━", "faint": "─", "dash": "╍", "dot": "┄", "marker": "●"}
_PEN_STYLES = {"dash": Qt.PenStyle.DashLine, "dot": Qt.PenStyle.DotLine}
_TIME_LABEL_PX = 64  # room one "h:mm:ss" label needs


# -- axes ---------------------------------------------------------------------------------------
class TickAxis(pg.AxisItem):
    """An axis whose tick labels are short (``tick_text``; ``elapsed_text`` in time mode)
    and never overlap: a label that would touch another, or reach outside the axis (into the
    neighbouring axis at a corner), is not drawn; major ticks are placed first."""

    GAP = 3.0  # px kept free between two labels

    def __init__(self, orientation: str, **kwargs):
        super().__init__(orientation, **kwargs)
        self.time_mode = False

    def set_time_mode(self, on: bool) -> None:
        if on != self.time_mode:
            self.time_mode = on
            self.picture = None
            self.update()

    def tickStrings(self, values, scale, spacing):
        if self.time_mode:
            return [elapsed_text(v * scale, spacing * scale) for v in values]
        return [tick_text(v * scale, spacing * scale) for v in values]

    def tickSpacing(self, minVal, maxVal, size):  # noqa: N803 - pyqtgraph's names
        if not self.time_mode or size <= 0:
            return super().tickSpacing(minVal, maxVal, size)
        span = abs(maxVal - minVal)
        if span == 0:
            return []
        major = time_spacing(span, max(1.0, size / _TIME_LABEL_PX))
        if major is None:  # weeks: pyqtgraph's decimal spacing of days
            return super().tickSpacing(minVal, maxVal, size)
        return [(major, 0)]

    def generateDrawSpecs(self, p):
        specs = super().generateDrawSpecs(p)
        if specs is None:
            return None
        axis_spec, tick_specs, text_specs = specs
        return axis_spec, tick_specs, self.separate(text_specs)

    def separate(self, text_specs) -> list:
        """The labels of ``text_specs`` that stay inside this axis and ``GAP`` px apart from
        every label kept before them."""
        own = self.mapRectFromParent(self.geometry()).adjusted(-0.5, -0.5, 0.5, 0.5)
        kept: list = []
        for spec in text_specs:
            rect = spec[0]
            if not own.contains(rect):
                continue
            grown = rect.adjusted(-self.GAP, -self.GAP, self.GAP, self.GAP)
            if any(grown.intersects(other[0]) for other in kept):
                continue
            kept.append(spec)
        return kept

    def label_rects(self) -> list[QRectF]:
        """Where the labels are drawn now, in scene coordinates (for checks)."""
        from PySide6.QtGui import QImage, QPainter

        image = QImage(4, 4, QImage.Format.Format_ARGB32)
        painter = QPainter(image)
        try:
            painter.setFont(self.style["tickFont"] or self.font())
            specs = self.generateDrawSpecs(painter)
        finally:
            painter.end()
        if specs is None:
            return []
        return [self.mapRectToScene(spec[0]) for spec in specs[2]]


# -- one plot --------------------------------------------------------------------------------
class Series:
    """The points of one curve: (optimizer step, wall time in s since the run began, value);
    ``None``/non-finite values are skipped, never drawn as 0."""

    def __init__(self, owner: CurvePlot, item: pg.PlotDataItem, label: str):
        self.owner = owner
        self.item = item
        self.label = label
        self._data = np.empty((3, 64), dtype=np.float64)
        self.n = 0
        self.dirty = False

    def add(self, step: float, wall: float | None, y: float | None) -> bool:
        if y is None or not math.isfinite(y):
            return False
        if self.n == self._data.shape[1]:
            self._data = np.concatenate([self._data, np.empty_like(self._data)], axis=1)
        self._data[:, self.n] = (step, np.nan if wall is None else wall, y)
        self.n += 1
        self.dirty = True
        return True

    @property
    def steps(self) -> np.ndarray:
        return self._data[0, :self.n]

    @property
    def times(self) -> np.ndarray:
        return self._data[1, :self.n]

    @property
    def y(self) -> np.ndarray:
        return self._data[2, :self.n]

    def set_y(self, values: np.ndarray) -> None:
        self._data[2, :self.n] = values
        self.dirty = True

    def truncate_after(self, step: float) -> None:
        keep = int(np.searchsorted(self.steps, step, side="right"))
        if keep < self.n:
            self.n = keep
            self.dirty = True

    def xs(self, axis: str) -> np.ndarray:
        return self.times if axis == "time" else self.steps

    def clear(self) -> None:
        self.n = 0
        self.item.setData([], [])
        self.dirty = True  # its plot says "no data yet" at its next redraw

    def redraw(self, axis: str) -> None:
        x, y = self.xs(axis), self.y
        if axis == "time":
            known = np.isfinite(x)
            x, y = x[known], y[known]
        self.item.setData(x, y)
        self.dirty = False

    def nearest(self, x: float, axis: str) -> tuple[float, float] | None:
        """The point whose x is nearest ``x``: (its x, its value), or None without points."""
        xs = self.xs(axis)
        if not self.n or not self.item.isVisible():
            return None
        known = np.flatnonzero(np.isfinite(xs))
        if not len(known):
            return None
        i = known[int(np.argmin(np.abs(xs[known] - x)))]
        return float(xs[i]), float(self.y[i])

    def __len__(self) -> int:
        return self.n


class Level:
    """A baseline: a dashed horizontal line at its accuracy across the plot's data, named in
    the legend ("best: logistic", "majority"); hidden while unknown."""

    def __init__(self, owner: CurvePlot, item: pg.PlotDataItem, title: str):
        self.owner = owner
        self.item = item
        self.title = title
        self.name: str | None = None
        self.value: float | None = None  # a fraction (0.523)
        self.dirty = False
        item.setVisible(False)

    @property
    def label(self) -> str:
        if self.title == "best":
            return f"best baseline: {self.name}" if self.name else "best baseline"
        return self.title

    def set(self, value: float | None, name: str | None = "majority") -> None:
        if value is not None and not math.isfinite(value):
            value = None
        if (value, name) == (self.value, self.name):
            return
        renamed = name != self.name
        self.value, self.name = value, name
        self.item.setVisible(value is not None)
        self.dirty = True
        if renamed:
            self.owner.update_legend()

    def clear(self) -> None:
        self.set(None, None)

    def redraw(self, span: tuple[float, float] | None) -> None:
        self.dirty = False
        if self.value is None or span is None:
            self.item.setData([], [])
            return
        y = self.value * 100.0
        self.item.setData([span[0], span[1]], [y, y])

    @property
    def visible(self) -> bool:
        return self.value is not None and self.item.isVisible()


class CurvePlot(QWidget):
    """One plot: its title and legend above (a label naming each line in its colour and
    style), the pyqtgraph view, a vertical cursor and the hover readout."""

    hovered = Signal(object, float)  # (this plot, x in data coordinates)
    left = Signal(object)
    hover_line: pg.InfiniteLine  # the vertical line at the step under the mouse

    def __init__(self, key: str, title: str, parent=None):
        super().__init__(parent)
        self.key = key
        self.title = title
        self.series: list[Series] = []
        self.levels: list[Level] = []
        self._styles: list[tuple[Series | Level, str, str]] = []  # (series or level, color, style)
        self.legend = QLabel()
        self.legend.setObjectName(f"legend_{key}")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.legend.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.legend.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        # two lines, unless its names need more (another run overlaid): a baseline renamed at
        # a validation must not re-layout the grid
        self._line = self.legend.fontMetrics().lineSpacing()
        self.legend.setFixedHeight(2 * self._line + 2)
        axes = {"left": TickAxis("left"), "bottom": TickAxis("bottom")}
        self.view = pg.PlotWidget(axisItems=axes)
        self.view.setObjectName(f"plot_{key}")
        self.view.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # no key acts on a plot: no Tab stop
        self.view.setMinimumHeight(120)
        self.plot: pg.PlotItem = self.view.getPlotItem()
        self.plot.setClipToView(True)  # no grid: its translucent lines double the paint time
        self.plot.setDownsampling(auto=True, mode="peak")
        self.plot.setMenuEnabled(False)
        # fixed axis sizes: new tick labels then repaint the plot, not re-layout it
        self.left_axis: TickAxis = axes["left"]
        self.bottom_axis: TickAxis = axes["bottom"]
        self.left_axis.setWidth(AXIS_WIDTH)
        self.bottom_axis.setHeight(AXIS_HEIGHT)
        self.hover_line = pg.InfiniteLine(angle=90, movable=False,
                                      pen=pg.mkPen("#787b86", width=1, style=Qt.PenStyle.DotLine))
        self.hover_line.setVisible(False)
        self.plot.addItem(self.hover_line, ignoreBounds=True)
        self.tip = pg.TextItem(anchor=(0, 0), color="#e0e3eb", fill=pg.mkBrush(19, 23, 34, 220),
                               border=pg.mkPen("#434651"))
        self.tip.setZValue(100)
        self.tip.setVisible(False)
        self.plot.addItem(self.tip, ignoreBounds=True)
        self.empty = pg.TextItem(NO_DATA_TEXT, color="#787b86", anchor=(0.5, 0.5))
        self.empty.setPos(0.5, 0.5)  # the middle of an empty view (0..1)
        self.plot.addItem(self.empty, ignoreBounds=True)
        self.hover_text = ""
        self._least_y_span = 0.0
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.legend)
        layout.addWidget(self.view, 1)
        self.view.scene().sigMouseMoved.connect(self._mouse_moved)
        self.update_legend()

    def add_series(self, label: str, color: str, *, width: float = 2, style: str = "solid",
                   alpha: int = 255, symbol: str | None = None) -> Series:
        pen_color = pg.mkColor(color)
        pen_color.setAlpha(alpha)
        kwargs = {"symbol": symbol, "symbolSize": 5, "symbolBrush": color,
                  "symbolPen": None} if symbol else {}
        pen = pg.mkPen(pen_color, width=width, style=_PEN_STYLES.get(style, Qt.PenStyle.SolidLine))
        item = self.plot.plot([], [], pen=pen, **kwargs)
        series = Series(self, item, label)
        self.series.append(series)
        self._styles.append((series, color, "marker" if symbol else style))
        self.update_legend()
        return series

    def add_level(self, title: str, color: str) -> Level:
        item = self.plot.plot([], [], pen=pg.mkPen(color, width=1, style=Qt.PenStyle.DashLine))
        level = Level(self, item, title)
        self.levels.append(level)
        self._styles.append((level, color, "dash"))
        self.update_legend()
        return level

    def remove_series(self, series: Series) -> None:
        self.plot.removeItem(series.item)
        self.series.remove(series)
        self._styles = [s for s in self._styles if s[0] is not series]
        self.update_legend()

    def legend_names(self) -> list[str]:
        """The legend's entries, in order (every line of the plot is named)."""
        return [line.label for line, _, _ in self._styles]

    def update_legend(self) -> None:
        entries = [f"<b>{self.title}</b>"]
        for line, color, style in self._styles:
            glyph = _GLYPHS.get(style, _GLYPHS["solid"])
            entries.append(f'<span style="color:{color}">{glyph}</span>&nbsp;{line.label}')
        self.legend.setText("&nbsp;&nbsp; ".join(entries))
        self._fit_legend()

    def _fit_legend(self) -> None:
        width = self.legend.width()
        if width > 1:
            lines = -(-(self.legend.heightForWidth(width) - 2) // self._line)
            self.legend.setFixedHeight(max(2, lines) * self._line + 2)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_legend()

    # -- drawing ---------------------------------------------------------------------------
    @property
    def dirty(self) -> bool:
        return any(s.dirty for s in self.series) or any(lv.dirty for lv in self.levels)

    def redraw(self, axis: str) -> None:
        for series in self.series:
            if series.dirty:
                series.redraw(axis)
        self._keep_y_span()
        span = self.span(axis)
        self.empty.setVisible(span is None)
        for level in self.levels:
            level.redraw(span)

    def _keep_y_span(self) -> None:
        """A y range at least 0.2 % of the values' size: a nearly flat line of big numbers
        (20,480 MiB) gets ticks whose labels fit the axis, not "20480.01" too wide to show."""
        biggest = max((float(np.nanmax(np.abs(s.y))) for s in self.series
                       if len(s) and np.isfinite(s.y).any()), default=0.0)
        least = biggest * 2e-3
        if least > 0 and least != self._least_y_span:
            self._least_y_span = least
            self.plot.getViewBox().setLimits(minYRange=least)

    def mark_dirty(self) -> None:
        for series in self.series:
            series.dirty = True
        for level in self.levels:
            level.dirty = True

    def span(self, axis: str) -> tuple[float, float] | None:
        """The x range of this plot's points (what a baseline line spans)."""
        lows, highs = [], []
        for series in self.series:
            xs = series.xs(axis)
            xs = xs[np.isfinite(xs)]
            if len(xs):
                lows.append(float(xs.min()))
                highs.append(float(xs.max()))
        if not lows:
            return None
        low, high = min(lows), max(highs)
        return (low, high) if high > low else (low - 0.5, high + 0.5)

    # -- hover --------------------------------------------------------------------------------
    @Slot(object)
    def _mouse_moved(self, scene_pos) -> None:
        box = self.plot.vb.sceneBoundingRect()
        if not box.contains(scene_pos):
            self.left.emit(self)
            return
        self.hovered.emit(self, float(self.plot.vb.mapSceneToView(scene_pos).x()))

    def show_cursor(self, x: float | None) -> None:
        if x is None:
            self.hover_line.setVisible(False)
        else:
            self.hover_line.setValue(x)
            self.hover_line.setVisible(True)

    def show_tip(self, text: str, x: float | None) -> None:
        self.hover_text = text
        if not text or x is None:
            self.tip.setVisible(False)
            return
        self.tip.setText(text)
        (x0, x1), (_y0, y1) = self.plot.vb.viewRange()
        right_half = x > (x0 + x1) / 2
        self.tip.setAnchor((1, 0) if right_half else (0, 0))
        pad = (x1 - x0) * 0.02
        self.tip.setPos(QPointF(x - pad if right_half else x + pad, y1))
        self.tip.setVisible(True)

    def readout(self, x: float, axis: str) -> tuple[float | None, str]:
        """(the x snapped to the nearest point, the values of each line there, as text)."""
        nearest = [(s, s.nearest(x, axis)) for s in self.series]
        points = [(s, p) for s, p in nearest if p is not None]
        if not points:
            return None, ""
        snapped = min((p[0] for _, p in points), key=lambda px: abs(px - x))
        lines = [elapsed_text(snapped) if axis == "time" else f"step {snapped:,.0f}"]
        for series, (px, value) in points:
            where = ""
            if abs(px - snapped) > 1e-9:
                where = f" ({elapsed_text(px)})" if axis == "time" else f" (step {px:,.0f})"
            lines.append(f"{series.label}: {value_text(value)}{where}")
        for level in self.levels:
            if level.value is not None:
                lines.append(f"{level.label}: {level.value * 100:.1f}")
        return snapped, "\n".join(lines)
