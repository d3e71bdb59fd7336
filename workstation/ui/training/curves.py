"""Training and live curves (pyqtgraph) and the numbers beside them.

Training (the Curves tab, a 3 x 3 grid): loss (train per logged batch, raw and faint, with
its TensorBoard-style smoothed line; validation per epoch), the accuracy of each class head
(train and validation) beside two labelled dashed lines, its best baseline on validation (the
best of majority, volatility, logistic and persistence, named) and its majority baseline,
learning rate, gradient norm (before clipping), samples per second and device memory
(allocated, reserved, peak). The x axis is the optimizer step or the wall time since the run
began (``set_x_axis``); ``set_smoothing`` re-smooths the training loss (the raw line does not
change). Live (its own tab): per-candle loss and the running candle and trend accuracy of
matured predictions beside their majority baselines, against the candle count.

Every plot has a legend naming its lines above it (the plot's own area is never covered),
axis labels that never overlap (``TickAxis``), and a readout of the values under the mouse:
a vertical cursor in every plot of the tab and, in the plot under the mouse, each line's
value at the nearest point.

A metric without data is left out of a curve and shown as "—" in the numbers; it is never
drawn or written as 0.

Each plot is its own view, and new points reach the screen one plot per ``REDRAW_MS`` tick
(only plots on screen): repainting every plot at once costs 30-40 ms on a slow CPU, more
while training competes for it, and would stall the GUI thread.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...ml.events import BatchEnd, EpochEnd, RunStarted
from ...ml.scoring import describe
from ...ml.targets import CLASS_HEADS

REDRAW_MS = 100  # one plot per tick: each of the nine is redrawn at most once a second
AXIS_WIDTH, AXIS_HEIGHT = 52, 24  # px
DEFAULT_SMOOTHING = 0.6  # TensorBoard's default weight of the past
MAX_SMOOTHING = 0.99
X_AXES = {"step": "step", "time": "wall time"}
NO_DATA = "—"
NO_DATA_TEXT = "no data yet"
_COLORS = {"train": "#42a5f5", "smooth": "#1e88e5", "val": "#ff7043", "lr": "#ab47bc",
           "rate": "#26a69a", "live": "#ffca28", "trend": "#66bb6a", "best": "#ffd54f",
           "majority": "#9e9e9e", "grad": "#ec407a", "allocated": "#42a5f5",
           "reserved": "#ab47bc", "peak": "#ef5350", "compare": "#bdbdbd"}
_GLYPHS = {"solid": "━", "faint": "─", "dash": "╍", "dot": "┄", "marker": "●"}
_PEN_STYLES = {"dash": Qt.PenStyle.DashLine, "dot": Qt.PenStyle.DotLine}


def fmt(value: float | None, spec: str = ".4f") -> str:
    """``value`` formatted, or "—" when there is no value (None or not finite)."""
    if value is None or not math.isfinite(value):
        return NO_DATA
    return format(value, spec)


def pct(value: float | None) -> str:
    return NO_DATA if value is None or not math.isfinite(value) else f"{value * 100:.1f}%"


def smooth(values, weight: float) -> np.ndarray:
    """TensorBoard's smoothing: an exponential moving average with ``weight`` on the past,
    debiased so that the first points are not pulled towards 0 (weight 0: the values)."""
    out = np.empty(len(values), dtype=np.float64)
    state = Smoother(weight)
    for i, value in enumerate(values):
        out[i] = state.add(float(value))
    return out


class Smoother:
    """``smooth`` one value at a time (what a new point's smoothed value is)."""

    def __init__(self, weight: float):
        self.weight = float(weight)
        self._last = 0.0
        self._n = 0

    def add(self, value: float) -> float:
        self._n += 1
        self._last = self.weight * self._last + (1.0 - self.weight) * value
        debias = 1.0 - self.weight ** self._n
        return self._last / debias if debias > 0 else value


# -- what the curves draw: from events as they arrive, or from a run's recorded history ------------
@dataclass(frozen=True)
class BatchPoint:
    """One logged batch: the training metrics at ``step``; ``wall``: s of the run's wall time
    (None: unknown). A value without data is None."""

    step: int
    wall: float | None
    loss: float | None
    accuracy: dict[str, float | None]
    lr: float | None
    grad_norm: float | None
    samples_per_s: float | None
    allocated_mb: float | None = None
    reserved_mb: float | None = None
    peak_mb: float | None = None


@dataclass(frozen=True)
class EpochPoint:
    """One validation: its loss and per-head accuracy, each head's best baseline (name,
    accuracy) and majority baseline."""

    step: int
    wall: float | None
    loss: float | None
    accuracy: dict[str, float | None]
    best: dict[str, tuple[str | None, float | None]]
    majority: dict[str, float | None]


def batch_point(event: BatchEnd, wall: float | None) -> BatchPoint:
    m, memory = event.metrics, event.memory
    return BatchPoint(event.step, wall, m.loss, {h: m.accuracy(h) for h in CLASS_HEADS},
                      event.lr, event.grad_norm, event.samples_per_s,
                      *((memory.allocated_mb, memory.reserved_mb, memory.peak_mb)
                        if memory is not None else (None, None, None)))


def epoch_point(event: EpochEnd, wall: float | None) -> EpochPoint:
    v = event.val
    scores = {h: v.heads[h] for h in CLASS_HEADS if h in v.heads}
    return EpochPoint(event.step, wall, v.loss, {h: v.accuracy(h) for h in CLASS_HEADS},
                      {h: (s.best_baseline, s.best_baseline_accuracy) for h, s in scores.items()},
                      {h: s.baselines.get("majority") for h, s in scores.items()})


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def history_points(history) -> tuple[list[BatchPoint], list[EpochPoint], float]:
    """The points of a run's recorded history (``ml.history.History``), and the wall time it
    has recorded in all (where a resumed run's curves continue)."""
    batches = []
    for r in history.batches:
        memory = r.get("memory") or {}
        accuracy = r.get("accuracy") or {}
        batches.append(BatchPoint(
            r["step"], _number(r.get("wall_s")), _number(r.get("loss")),
            {h: _number(accuracy.get(h)) for h in CLASS_HEADS}, _number(r.get("lr")),
            _number(r.get("grad_norm")), _number(r.get("samples_per_s")),
            _number(memory.get("allocated_mb")), _number(memory.get("reserved_mb")),
            _number(memory.get("peak_mb"))))
    epochs = []
    for r in history.epochs:
        val = r.get("val") or {}
        heads = {h: s for h, s in (val.get("heads") or {}).items() if isinstance(s, dict)}
        epochs.append(EpochPoint(
            r["step"], _number(r.get("wall_s")), _number(val.get("loss")),
            {h: _number((heads.get(h) or {}).get("accuracy")) for h in CLASS_HEADS},
            {h: (s.get("best_baseline"), _number(s.get("best_baseline_accuracy")))
             for h, s in heads.items()},
            {h: _number((s.get("baselines") or {}).get("majority")) for h, s in heads.items()}))
    walls = [w for w in (_number(r.get("wall_s")) for r in
                         [*history.batches, *history.epochs, *history.markers])
             if w is not None]
    return batches, epochs, max(walls, default=0.0)


# -- axes ---------------------------------------------------------------------------------------
def tick_text(value: float, spacing: float) -> str:
    """A short label for a tick ``spacing`` apart from its neighbours: as many decimals as
    the spacing needs, thousands as "k" from 10k, scientific for tiny or huge numbers."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else ""
    places = max(0, math.ceil(-math.log10(spacing))) if spacing > 0 else 0
    magnitude = abs(value)
    if magnitude >= 1e7 or places > 4:
        digits = max(0, int(math.floor(math.log10(magnitude)) - math.floor(math.log10(spacing))))
        mantissa, exponent = f"{value:.{min(digits, 3)}e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    if magnitude >= 10_000 and spacing >= 100:
        return f"{value / 1000:.{0 if spacing >= 1000 else 1}f}k"
    return f"{value:.{places}f}"


def elapsed_text(seconds: float, spacing: float = 1.0) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour), with tenths when ticks are under a second apart."""
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    if spacing < 1:
        whole, tenths = divmod(round(seconds * 10), 10)
        minutes, secs = divmod(int(whole), 60)
        return f"{sign}{minutes}:{secs:02d}.{tenths}"
    total = int(round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours}:{minutes:02d}:{secs:02d}" if hours else f"{sign}{minutes}:{secs:02d}"


_TIME_SPACINGS = (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
                  7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400)
_TIME_LABEL_PX = 64  # room one "h:mm:ss" label needs


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
        most = max(1.0, size / _TIME_LABEL_PX)
        major = next((s for s in _TIME_SPACINGS if span / s <= most), None)
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

    def __init__(self, key: str, title: str, parent=None):
        super().__init__(parent)
        self.key = key
        self.title = title
        self.series: list[Series] = []
        self.levels: list[Level] = []
        self._styles: list[tuple[object, str, str]] = []  # (series or level, color, style)
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
        self.cursor = pg.InfiniteLine(angle=90, movable=False,
                                      pen=pg.mkPen("#787b86", width=1, style=Qt.DotLine))
        self.cursor.setVisible(False)
        self.plot.addItem(self.cursor, ignoreBounds=True)
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
        pen = pg.mkPen(pen_color, width=width, style=_PEN_STYLES.get(style, Qt.SolidLine))
        item = self.plot.plot([], [], pen=pen, **kwargs)
        series = Series(self, item, label)
        self.series.append(series)
        self._styles.append((series, color, "marker" if symbol else style))
        self.update_legend()
        return series

    def add_level(self, title: str, color: str) -> Level:
        item = self.plot.plot([], [], pen=pg.mkPen(color, width=1, style=Qt.DashLine))
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
            self.cursor.setVisible(False)
        else:
            self.cursor.setValue(x)
            self.cursor.setVisible(True)

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
            lines.append(f"{series.label}: {_value_text(value)}{where}")
        for level in self.levels:
            if level.value is not None:
                lines.append(f"{level.label}: {level.value * 100:.1f}")
        return snapped, "\n".join(lines)


def _value_text(value: float) -> str:
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-3 or magnitude >= 1e6):
        return f"{value:.3e}"
    return f"{value:.4g}" if magnitude >= 100 else f"{value:.4f}"


# -- all the curves ----------------------------------------------------------------------------
_HEAD_TITLES = {"candle": "Candle accuracy %", "trend": "Trend accuracy %",
                "position": "Position accuracy %", "regime": "Regime accuracy %"}


class TrainingCurves(QWidget):
    """The curves of one training run (and of live mode), with the x-axis and smoothing
    controls; ``reset()`` for a new run, ``add_events`` for a delivery of events."""

    x_axis_changed = Signal(str)
    smoothing_changed = Signal(float)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self.series: dict[str, Series] = {}
        self.baselines: dict[str, Level] = {}
        self.plots: dict[str, CurvePlot] = {}
        self._tab_of: dict[str, QWidget] = {}
        self._order: list[CurvePlot] = []  # redraw order
        self._next = 0
        self.x_axis = "step"
        self.smoothing = DEFAULT_SMOOTHING
        self._smoother = Smoother(self.smoothing)
        self.run_id: str | None = None  # the run whose curves are shown
        self._wall_offset = 0.0  # wall time the run recorded before this session
        self._session_t0: float | None = None  # when this session's first event arrived
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._redraw_one)
        self._build_controls()

        page, grid = self._tab("Curves")
        self.curves_page = page
        loss = self._plot(grid, "loss", "Loss", 0, 0)
        self._add(loss, "loss_train", "train (raw)", _COLORS["train"], width=1, alpha=80,
                  style="faint")
        self._add(loss, "loss_smooth", "train (smoothed)", _COLORS["smooth"])
        self._add(loss, "loss_val", "validation", _COLORS["val"], symbol="o")
        for i, head in enumerate(CLASS_HEADS):
            row, col = divmod(i + 1, 3)
            plot = self._plot(grid, head, _HEAD_TITLES.get(head, f"{head} accuracy %"), row, col)
            self._add(plot, f"{head}_train", "train", _COLORS["train"], width=1)
            self._add(plot, f"{head}_val", "validation", _COLORS["val"], symbol="o")
            self.baselines[f"{head}_best"] = plot.add_level("best", _COLORS["best"])
            self.baselines[f"{head}_majority"] = plot.add_level("majority", _COLORS["majority"])
        lr = self._plot(grid, "lr", "Learning rate", 1, 2)
        self._add(lr, "lr", "learning rate", _COLORS["lr"])
        grad = self._plot(grid, "grad_norm", "Gradient norm", 2, 0)
        self._add(grad, "grad_norm", "before clipping", _COLORS["grad"])
        rate = self._plot(grid, "rate", "Samples/s", 2, 1)
        self._add(rate, "samples_per_s", "windows/s", _COLORS["rate"])
        memory = self._plot(grid, "memory", "Device memory, MiB", 2, 2)
        self._add(memory, "mem_allocated", "allocated", _COLORS["allocated"])
        self._add(memory, "mem_reserved", "reserved", _COLORS["reserved"], width=1)
        self._add(memory, "mem_peak", "peak", _COLORS["peak"], width=1, style="dot")
        for r in range(3):
            grid.setRowStretch(r, 1)
            grid.setColumnStretch(r, 1)

        page, grid = self._tab("Live")
        self.live_page = page
        live_loss = self._plot(grid, "live_loss", "Per-candle loss", 0, 0)
        self._add(live_loss, "live_loss", "training step", _COLORS["live"], width=1)
        live_acc = self._plot(grid, "live_acc", "Live accuracy % (matured predictions)", 1, 0)
        self._add(live_acc, "live_candle_acc", "candle", _COLORS["train"])
        self._add(live_acc, "live_trend_acc", "trend", _COLORS["trend"])
        self.baselines["live_candle"] = live_acc.add_level("majority (candle)", _COLORS["train"])
        self.baselines["live_trend"] = live_acc.add_level("majority (trend)", _COLORS["trend"])
        self.tabs.currentChanged.connect(self._tab_changed)
        self._compare: list[Series] = []
        self._compare_raw: Series | None = None
        self._compare_smooth: Series | None = None
        self.compare_run: str | None = None  # the run drawn beside the one shown
        self.compare_label: str | None = None

    def _build_controls(self) -> None:
        corner = QWidget()
        row = QHBoxLayout(corner)
        row.setContentsMargins(4, 0, 4, 0)
        row.setSpacing(4)
        self.x_axis_box = QComboBox()
        for key, text in X_AXES.items():
            self.x_axis_box.addItem(f"x: {text}", key)
        self.x_axis_box.setToolTip("The training curves' x axis: the optimizer step, or the "
                                   "wall time since the run began")
        self.smoothing_box = QDoubleSpinBox()
        self.smoothing_box.setRange(0.0, MAX_SMOOTHING)
        self.smoothing_box.setSingleStep(0.05)
        self.smoothing_box.setDecimals(2)
        self.smoothing_box.setPrefix("smoothing ")
        self.smoothing_box.setValue(self.smoothing)
        self.smoothing_box.setToolTip("Weight of the past in the smoothed training loss "
                                      "(TensorBoard's exponential moving average; 0: none). "
                                      "The raw loss is drawn faint behind it.")
        row.addWidget(self.x_axis_box)
        row.addWidget(self.smoothing_box)
        self.tabs.setCornerWidget(corner, Qt.Corner.TopRightCorner)
        self.x_axis_box.currentIndexChanged.connect(
            lambda _i: self.set_x_axis(self.x_axis_box.currentData()))
        self.smoothing_box.valueChanged.connect(self.set_smoothing)

    def _tab(self, title: str) -> tuple[QWidget, QGridLayout]:
        page = QWidget()
        grid = QGridLayout(page)
        grid.setContentsMargins(2, 2, 2, 2)
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(4)
        self.tabs.addTab(page, title)
        return page, grid

    def _plot(self, grid: QGridLayout, key: str, title: str, row: int, col: int) -> CurvePlot:
        plot = CurvePlot(key, title)
        grid.addWidget(plot, row, col)
        plot.hovered.connect(self._hovered)
        plot.left.connect(self._left)
        self.plots[key] = plot
        self._tab_of[key] = grid.parentWidget()
        self._order.append(plot)
        return plot

    def _add(self, plot: CurvePlot, name: str, label: str, color: str, **kwargs) -> None:
        self.series[name] = plot.add_series(label, color, **kwargs)

    def plots_on(self, page: QWidget) -> list[CurvePlot]:
        return [p for k, p in self.plots.items() if self._tab_of[k] is page]

    # -- controls ------------------------------------------------------------------------------
    def set_x_axis(self, axis: str) -> None:
        """``step`` or ``time`` (wall time since the run began) for the training curves."""
        if axis not in X_AXES:
            raise ValueError(f"unknown x axis {axis!r}; use one of {tuple(X_AXES)}")
        if self.x_axis_box.currentData() != axis:
            self.x_axis_box.setCurrentIndex(self.x_axis_box.findData(axis))
            return  # the box's signal comes back here
        if axis == self.x_axis:
            return
        self.x_axis = axis
        for plot in self.plots_on(self.curves_page):
            plot.bottom_axis.set_time_mode(axis == "time")
            plot.mark_dirty()
            plot.plot.enableAutoRange()
            plot.show_cursor(None)
            plot.show_tip("", None)
        self.redraw()
        self.x_axis_changed.emit(axis)

    def set_smoothing(self, weight: float) -> None:
        """Re-smooth the training loss with ``weight`` (0 to ``MAX_SMOOTHING``); the raw
        line is left as it is."""
        weight = min(max(float(weight), 0.0), MAX_SMOOTHING)
        if abs(self.smoothing_box.value() - weight) > 1e-9:
            self.smoothing_box.setValue(weight)
            return
        if weight == self.smoothing:
            return
        self.smoothing = weight
        raw, smoothed = self.series["loss_train"], self.series["loss_smooth"]
        self._smoother = Smoother(weight)
        smoothed.set_y(np.asarray([self._smoother.add(float(v)) for v in raw.y],
                                  dtype=np.float64))
        if self._compare_raw is not None and self._compare_smooth is not None:
            self._compare_smooth.set_y(smooth(self._compare_raw.y, weight))
        self.redraw()
        self.smoothing_changed.emit(weight)

    # -- training ----------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget the curves of the previous run (and of live mode)."""
        for series in self.series.values():
            series.clear()
        for baseline in self.baselines.values():
            baseline.clear()
        self._smoother = Smoother(self.smoothing)
        self._wall_offset = 0.0
        self._session_t0 = None
        self.run_id = None
        self.clear_compare()
        self.redraw()

    def _wall(self, stamp: float) -> float:
        """The run's wall time of an event that arrived at ``stamp``: what the run recorded
        before this session (a resumed run), plus the time since this session began."""
        if self._session_t0 is None:
            self._session_t0 = stamp
        return self._wall_offset + stamp - self._session_t0

    def add_events(self, events, stamp: float | None = None) -> None:
        """Add the training events of one delivery (drawn by the next ticks). ``stamp``: the
        wall time they arrived (s since the epoch; now if not given), for the time axis."""
        stamp = time.time() if stamp is None else stamp
        for event in events:
            if isinstance(event, RunStarted):
                self.run_id = event.run_id
                self._session_t0 = stamp
                if event.start_step:
                    self.rewind_to(event.start_step)
            elif isinstance(event, BatchEnd):
                self.add_batch(batch_point(event, self._wall(stamp)))
            elif isinstance(event, EpochEnd):
                self.add_epoch(epoch_point(event, self._wall(stamp)))
        self.redraw()

    def add_batch(self, point: BatchPoint) -> None:
        s, step, wall = self.series, point.step, point.wall
        if s["loss_train"].add(step, wall, point.loss):
            s["loss_smooth"].add(step, wall, self._smoother.add(float(point.loss)))
        for head in CLASS_HEADS:
            s[f"{head}_train"].add(step, wall, _percent(point.accuracy.get(head)))
        s["lr"].add(step, wall, point.lr)
        s["grad_norm"].add(step, wall, point.grad_norm)
        s["samples_per_s"].add(step, wall, point.samples_per_s)
        s["mem_allocated"].add(step, wall, point.allocated_mb)
        s["mem_reserved"].add(step, wall, point.reserved_mb)
        s["mem_peak"].add(step, wall, point.peak_mb)

    def add_epoch(self, point: EpochPoint) -> None:
        s, step, wall = self.series, point.step, point.wall
        s["loss_val"].add(step, wall, point.loss)
        for head in CLASS_HEADS:
            s[f"{head}_val"].add(step, wall, _percent(point.accuracy.get(head)))
            if head in point.best:
                name, value = point.best[head]
                self.baselines[f"{head}_best"].set(value, name)
                self.baselines[f"{head}_majority"].set(point.majority.get(head), "majority")

    def show_history(self, run_id: str, history) -> None:
        """The recorded curves of run ``run_id`` (``ml.history.History``), in place of what
        is shown; a resumed run's new points continue them (``add_events``)."""
        self.reset()
        self.run_id = run_id
        batches, epochs, wall = history_points(history)
        for point in batches:
            self.add_batch(point)
        for point in epochs:
            self.add_epoch(point)
        self._wall_offset = wall
        self.redraw()

    def rewind_to(self, step: int) -> None:
        """Drop the points after ``step`` (a run resumed from a checkpoint older than its
        last recorded points continues from there)."""
        for name, series in self.series.items():
            if not name.startswith("live_"):
                series.truncate_after(step)
        raw = self.series["loss_train"]
        self._smoother = Smoother(self.smoothing)
        self.series["loss_smooth"].set_y(np.asarray([self._smoother.add(float(v))
                                                     for v in raw.y], dtype=np.float64))

    # -- another run beside this one --------------------------------------------------------
    def compare_with(self, run_id: str, history) -> None:
        """Draw run ``run_id`` (its recorded ``ml.history.History``) beside the one shown:
        its smoothed training loss, validation loss and validation accuracies as grey dashed
        lines named "run <its last four characters>"."""
        self.clear_compare()
        label = f"run {run_id[-4:]}"
        self.compare_run, self.compare_label = run_id, label
        batches, epochs, _wall = history_points(history)
        raw = Series(self.plots["loss"], pg.PlotDataItem(), "raw")
        for point in batches:
            raw.add(point.step, point.wall, point.loss)
        self._compare_raw = raw
        smoothed = self._compare_line("loss", f"{label} train (smoothed)")
        for step, wall, y in zip(raw.steps, raw.times, smooth(raw.y, self.smoothing),
                                 strict=True):
            smoothed.add(step, None if math.isnan(wall) else wall, y)
        self._compare_smooth = smoothed
        val = self._compare_line("loss", f"{label} validation", symbol="t")
        heads = {head: self._compare_line(head, f"{label} validation", symbol="t")
                 for head in CLASS_HEADS}
        for point in epochs:
            val.add(point.step, point.wall, point.loss)
            for head, series in heads.items():
                series.add(point.step, point.wall, _percent(point.accuracy.get(head)))
        self.redraw()

    def _compare_line(self, plot_key: str, label: str, symbol: str | None = None) -> Series:
        series = self.plots[plot_key].add_series(label, _COLORS["compare"], width=1,
                                                 style="dash", symbol=symbol)
        self._compare.append(series)
        return series

    def clear_compare(self) -> None:
        for series in self._compare:
            series.owner.remove_series(series)
        self._compare = []
        self._compare_raw = self._compare_smooth = None
        self.compare_run = self.compare_label = None

    @property
    def compare_series(self) -> list[Series]:
        return list(self._compare)

    # -- live ---------------------------------------------------------------------------------
    def add_live(self, index: int, loss: float | None, candle_acc: float | None,
                 trend_acc: float | None, candle_baseline: float | None,
                 trend_baseline: float | None) -> None:
        """One closed candle in live mode: its training step's loss (None without training)
        and the running accuracies of matured predictions with their baselines."""
        s = self.series
        s["live_loss"].add(index, None, loss)
        s["live_candle_acc"].add(index, None, _percent(candle_acc))
        s["live_trend_acc"].add(index, None, _percent(trend_acc))
        self.baselines["live_candle"].set(candle_baseline, "majority")
        self.baselines["live_trend"].set(trend_baseline, "majority")
        self.redraw()

    def clear_live(self) -> None:
        for name in ("live_loss", "live_candle_acc", "live_trend_acc"):
            self.series[name].clear()
        self.baselines["live_candle"].clear()
        self.baselines["live_trend"].clear()

    # -- hover --------------------------------------------------------------------------------
    def _axis_of(self, plot: CurvePlot) -> str:
        return self.x_axis if self._tab_of[plot.key] is self.curves_page else "step"

    @Slot(object, float)
    def _hovered(self, plot: CurvePlot, x: float) -> None:
        axis = self._axis_of(plot)
        snapped, text = plot.readout(x, axis)
        page = self._tab_of[plot.key]
        for other in self.plots_on(page):
            other.show_cursor(snapped)
            if other is not plot:
                other.show_tip("", None)
        plot.show_tip(text, snapped)

    @Slot(object)
    def _left(self, plot: CurvePlot) -> None:
        for other in self.plots_on(self._tab_of[plot.key]):
            other.show_cursor(None)
            other.show_tip("", None)

    # -- drawing ------------------------------------------------------------------------------
    def _tab_changed(self, _index: int) -> None:
        self.redraw()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.redraw()  # what arrived while hidden

    def redraw(self, *_args) -> None:
        """Show new points soon: one plot per tick, the plots on screen only."""
        if not self._timer.isActive() and self._dirty_plot(advance=False) is not None:
            self._timer.start()

    def redraw_now(self) -> None:
        """Show every new point at once (all tabs)."""
        self._timer.stop()
        for plot in self._order:
            plot.redraw(self._axis_of(plot))

    def _dirty_plot(self, advance: bool = True) -> CurvePlot | None:
        n = len(self._order)
        for k in range(n):
            i = (self._next + k) % n
            plot = self._order[i]
            if plot.dirty and plot.isVisible():
                if advance:
                    self._next = (i + 1) % n
                return plot
        return None

    def _redraw_one(self) -> None:
        plot = self._dirty_plot()
        if plot is None:
            self._timer.stop()
            return
        plot.redraw(self._axis_of(plot))


def _percent(value: float | None) -> float | None:
    return None if value is None else value * 100.0


class MetricReadout(QWidget):
    """The latest numbers as text: "—" for anything without data. Each head's accuracy
    stands beside its best baseline (on validation: with the margin's interval and whether
    it shows an edge), in the words ``ml.scoring.describe`` gives the CLI too."""

    ROWS = (("epoch", "Epoch"), ("step", "Step"), ("loss", "Train loss"),
            ("val_loss", "Validation loss"), ("candle", "Candle accuracy"),
            ("trend", "Trend accuracy"), ("position", "Position accuracy"),
            ("regime", "Regime accuracy"), ("lr", "Learning rate"),
            ("grad_norm", "Gradient norm"), ("rate", "Samples/s"), ("live", "Live"))

    def __init__(self, parent=None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(1)
        self.values: dict[str, QLabel] = {}
        for row, (key, title) in enumerate(self.ROWS):
            name = QLabel(title)
            name.setStyleSheet("color: palette(mid)")
            name.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            value = QLabel(NO_DATA)
            value.setWordWrap(True)
            value.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            value.setTextInteractionFlags(Qt.TextSelectableByMouse)
            grid.addWidget(name, row, 0)
            grid.addWidget(value, row, 1)
            self.values[key] = value
        grid.setColumnStretch(1, 1)
        self._epochs: int | None = None
        self._train: dict = {}
        self._val: dict = {}

    def text(self, key: str) -> str:
        return self.values[key].text()

    def reset(self, epochs: int | None = None) -> None:
        for label in self.values.values():
            label.setText(NO_DATA)
        self._epochs = epochs
        self._train = {}
        self._val = {}

    def add_events(self, events) -> None:
        v = self.values
        for event in events:
            if isinstance(event, RunStarted):
                self._epochs = int(event.train_config.get("epochs") or 0) or None
            elif isinstance(event, BatchEnd):
                m = event.metrics
                v["epoch"].setText(self._epoch_text(event.epoch + 1, event.batch,
                                                    event.batches_per_epoch))
                v["step"].setText(str(event.step))
                v["loss"].setText(fmt(m.loss))
                v["lr"].setText(fmt(event.lr, ".2e"))
                v["grad_norm"].setText(fmt(event.grad_norm, ".3g"))
                v["rate"].setText(fmt(event.samples_per_s, ".0f"))
                self._train = dict(m.heads)
                self._accuracies()
            elif isinstance(event, EpochEnd):
                v["val_loss"].setText(fmt(event.val.loss))
                self._val = dict(event.val.heads)
                self._accuracies()

    def show_recorded(self, history) -> None:
        """The last recorded numbers of a run opened from its history (``ml.history``)."""
        self.reset()
        batches, epochs, _wall = history_points(history)
        v = self.values
        if history.batches:
            last = history.batches[-1]
            point = batches[-1]
            epochs_total = ((history.markers[0].get("train_config") or {}).get("epochs")
                            if history.markers else None)
            self._epochs = epochs_total if isinstance(epochs_total, int) else None
            v["epoch"].setText(self._epoch_text(int(last.get("epoch", 0)) + 1,
                                                int(last.get("batch") or 0),
                                                int(last.get("batches_per_epoch") or 0)))
            v["step"].setText(str(point.step))
            v["loss"].setText(fmt(point.loss))
            v["lr"].setText(fmt(point.lr, ".2e"))
            v["grad_norm"].setText(fmt(point.grad_norm, ".3g"))
            v["rate"].setText(fmt(point.samples_per_s, ".0f"))
        if epochs:
            point = epochs[-1]
            v["val_loss"].setText(fmt(point.loss))
            for head in CLASS_HEADS:
                accuracy = point.accuracy.get(head)
                if accuracy is None:
                    continue
                name, best = point.best.get(head, (None, None))
                parts = [f"val {pct(accuracy)}"]
                if name is not None:
                    parts.append(f"best baseline {name} {pct(best)}")
                parts.append(f"majority {pct(point.majority.get(head))}")
                v[head].setText(f"{parts[0]} ({'; '.join(parts[1:])}) · recorded")

    def _epoch_text(self, epoch: int, batch: int, batches: int) -> str:
        total = f"/{self._epochs}" if self._epochs else ""
        return f"{epoch}{total} (batch {batch}/{batches})"

    def _accuracies(self) -> None:
        for head in CLASS_HEADS:
            parts = [describe(split, scores[head]) for split, scores in
                     (("train", self._train), ("val", self._val))
                     if head in scores and scores[head].accuracy is not None]
            self.values[head].setText("; ".join(parts) if parts else NO_DATA)

    def set_live(self, text: str) -> None:
        self.values["live"].setText(text or NO_DATA)
