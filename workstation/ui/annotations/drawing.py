"""How annotations look on the chart's price pane.

- A trade: a ▲ under its entry price and a ▼ over its exit price, green for a long and red
  for a short (the chart's up and down colours), joined by a dashed segment (solid when more
  than ``MAX_DASHED`` trades are on screen), with its P&L % by the exit marker (green for
  a profit, red for a loss). Trades that exit on one candle of the chart (1m trades on an
  hourly chart) share one label there, "3 trades +1.20%" (``viewmodel.trade_labels``), whose
  tooltip lists each trade.
- A region: a shaded band over its candles (uptrend green, downtrend red, range grey,
  reviewed blue and fainter, beneath the others; any other label violet) with its label at
  the top.
- A point note: a small yellow square at its price (or the candle's close) with its notes.
- The annotation selected in the list: a faint band over its time span.
- While the tool works: the pending entry as a marker reading LONG / SHORT with a dashed line
  to the cursor candle and the P&L a close there would make, and the mark as a band from the
  mark to the cursor (``PreviewOverlays``, in the chart's overlay group ``annotations.pending``).

``AnnotationGraphics`` holds the series' annotations as numpy columns (an annotation added,
changed or removed touches one row) and paints, in device pixels, only those that overlap
the exposed part of the view. Shades are painted beneath the grid and candles in opaque
colours mixed with the chart's background: the same look as a translucent band, but Qt
fills them on its fast path (blending a tall thin band costs time per scan line). Where
they would only pile up, annotations become ticks in three lanes along the top of the pane
(regions, trades, notes): trades packed tighter than a marker's width, regions narrower
than ``MIN_BAND_PX``, point notes as packed as such trades. Below them, what the trainer
learns (``labels.TrainerLabels``): a thin blue band over the candles it counts as reviewed
and, with the training labels shown, a lane of positions (flat grey, long green, short red)
and one of regimes (uptrend green, downtrend red, range grey). All lanes are one image,
drawn over the candles in one call (a few wide bands alone are filled as rectangles); a
tooltip over them says what each shows. A text is drawn only where there is room for it,
never over another one (left to right, a P&L text that would cover one kept is left out),
and for at most ``MAX_TEXTS`` annotations per frame. A frame costs a fixed handful of draw
calls (markers come from one sprite sheet, segments are one ``drawLines`` per colour) and
colours, pens and laid-out texts are made once, so panning with 10,000 annotations on
screen costs little more than panning without them (``workstation bench
chart-annotations``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import QtCore, QtGui, QtWidgets
from pyqtgraph.Qt.internals import PrimitiveArray

from ...annotations.editing import AnnotationTools
from ...annotations.horizon import Horizon
from ...annotations.model import Annotation, Direction, Point, Region, RegionLabel, Trade
from ...annotations.targets import DEFAULT_REVIEW_MARGIN
from ...market.candles import Candles
from ...viewmodel import TimeMap
from ...viewmodel.trade_labels import pnl_text, trade_labels, trade_lines
from ..chart.axis import axis_font
from ..chart.candle_item import RectBatch, device_scale
from ..chart.overlays import MARKER_SIZE, marker_sprite
from ..chart.pane_item import PaneItem
from ..chart.text import TextCache
from .labels import LabelRuns, Runs

PENDING_GROUP = "annotations.pending"
DENSE_SPACING_PX = 8.0  # trades (and notes) closer than this on average become ticks
MIN_BAND_PX = 4  # regions narrower than this on screen are drawn in their lane
MAX_LANE_RECTS = 16  # a lane's bands, all wide, are filled one by one up to this many
STRIP_PX = 6  # the height of a lane along the top of the pane
REVIEWED_PX = 3  # the reviewed band: thinner than a lane
REGION_LANE, TRADE_LANE, POINT_LANE, REVIEWED_LANE, POSITION_LANE, REGIME_LANE = range(6)
LANES_PX = REGIME_LANE * (STRIP_PX + 1) + STRIP_PX  # every lane, in device pixels
TEXT_SPACING_PX = 48.0  # P&L texts are drawn while trades are at least this far apart
MAX_TEXTS = 300
MAX_DASHED = 64  # with more trades on screen, their segments are solid (dashing costs)
SHADE_ALPHA = 0.19  # how much of a region's colour shows over the background
REVIEWED_SHADE_ALPHA = 0.1  # a reviewed region's: it spans much, the regimes stand out on it
POINT_COLOR = "#f0b90b"
RANGE_COLOR = "#787b86"
CUSTOM_COLOR = "#7e57c2"
REVIEWED_COLOR = "#29b6f6"
# region codes in painting order: a reviewed region's shade lies under the others
_LABEL_CODES = {RegionLabel.REVIEWED.value: 0, RegionLabel.UPTREND.value: 1,
                RegionLabel.DOWNTREND.value: 2, RegionLabel.RANGE.value: 3}
_CUSTOM_CODE = 4
LANES_TIP = (
    "Lanes along the top of the chart:\n"
    "• regions too narrow to shade, trades and notes too packed to draw (ticks)\n"
    f"• blue band: candles the trainer counts as reviewed (reviewed regions, and each trade "
    f"± {DEFAULT_REVIEW_MARGIN} candles of its timeframe); there it learns flat, long or short")
LABELS_TIP = ("\n• training labels (Annotate ▸ Show training labels): the position it learns "
              "(grey flat, green long, red short) and, below, the regime (green uptrend, red "
              "downtrend, grey range)")


def mixed(color, background, alpha: float) -> QtGui.QColor:
    """The opaque colour ``color`` at ``alpha`` looks like over ``background``."""
    c, b = pg.mkColor(color), pg.mkColor(background)
    alpha *= c.alphaF()
    return QtGui.QColor.fromRgbF(*(alpha * x + (1 - alpha) * y for x, y in
                                   ((c.redF(), b.redF()), (c.greenF(), b.greenF()),
                                    (c.blueF(), b.blueF()))))


class _Columns:
    """Rows of numpy columns addressed by annotation id; adding, replacing and removing a
    row is O(1) (a removed row is filled by the last one)."""

    def __init__(self, **dtypes):
        self._dtypes = dtypes
        self.version = 0  # changes with every change of the rows
        self.ids: list[str] = []
        self._row: dict[str, int] = {}
        self._cols = {name: np.empty(16, dtype=dt) for name, dt in dtypes.items()}

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, ann_id: str) -> bool:
        return ann_id in self._row

    def col(self, name: str) -> np.ndarray:
        return self._cols[name][: len(self.ids)]

    def set_all(self, ids: list[str], columns: list[list]) -> None:
        """Exactly these rows, given as one list per column (in the columns' order)."""
        self.version += 1
        self.ids = list(ids)
        self._row = {ann_id: i for i, ann_id in enumerate(self.ids)}
        size = max(16, len(ids))
        for (name, dt), values in zip(self._dtypes.items(), columns):
            col = np.empty(size, dtype=dt)
            col[: len(ids)] = values
            self._cols[name] = col

    def put(self, ann_id: str, row: list) -> None:
        self.version += 1
        i = self._row.get(ann_id)
        if i is None:
            i = len(self.ids)
            if i == len(next(iter(self._cols.values()))):
                for name, col in self._cols.items():
                    bigger = np.empty(2 * len(col), dtype=col.dtype)
                    bigger[:i] = col[:i]
                    self._cols[name] = bigger
            self.ids.append(ann_id)
            self._row[ann_id] = i
        for col, value in zip(self._cols.values(), row):
            col[i] = value

    def remove(self, ann_id: str) -> bool:
        i = self._row.pop(ann_id, None)
        if i is None:
            return False
        self.version += 1
        last = len(self.ids) - 1
        if i != last:
            moved = self.ids[last]
            self.ids[i] = moved
            self._row[moved] = i
            for col in self._cols.values():
                col[i] = col[last]
        self.ids.pop()
        return True


def _trade_columns(trades: list[Trade]) -> list[list]:
    return [[t.entry_ts for t in trades], [t.exit_ts for t in trades],
            [t.entry_price for t in trades], [t.exit_price for t in trades],
            [t.direction is Direction.LONG for t in trades], [t.pnl_pct for t in trades]]


def _region_columns(regions: list[Region]) -> list[list]:
    return [[r.start_ts for r in regions], [r.end_ts for r in regions],
            [_LABEL_CODES.get(r.label, _CUSTOM_CODE) for r in regions],
            [r.label for r in regions]]


def _point_columns(points: list[Point]) -> list[list]:
    return [[p.ts for p in points],
            [math.nan if p.price is None else p.price for p in points],
            [p.notes.splitlines()[0][:40] if p.notes else "" for p in points]]


# each annotation class: its table's attribute, and its columns (of annotations of that class)
_COLUMNS: dict[type, tuple[str, Callable[[list[Any]], list[list]]]] = {
    Trade: ("trades", _trade_columns), Region: ("regions", _region_columns),
    Point: ("points", _point_columns)}


class _Frame:
    """What one paint needs: the candles, the time window exposed and the item-to-device
    scale (``x_px = sx * x + dx``), the pane's top and bottom in device pixels, and what is
    worked out once for both items (``cache``)."""

    def __init__(self, candles: Candles, scale: tuple[float, float, float, float],
                 exposed: QtCore.QRectF, bounds: QtCore.QRectF, xs):
        self.candles = candles
        self.xs = xs  # xs(table, column) -> the chart x of every row's time
        self.cache: dict[str, tuple] = {}
        time_map = TimeMap.of(candles)  # a candle's open time at its centre: centre_x
        self.t_lo = time_map.ts_of(exposed.left() - 1.5)
        self.t_hi = time_map.ts_of(exposed.right() + 0.5)
        self.sx, self.dx, self.sy, self.dy = scale
        self.top, self.bottom = sorted((self.sy * bounds.top() + self.dy,
                                        self.sy * bounds.bottom() + self.dy))
        self.left_px, self.right_px = sorted((self.sx * bounds.left() + self.dx,
                                              self.sx * bounds.right() + self.dx))
        self.width_px = self.right_px - self.left_px
        self.first = math.floor(exposed.left()) - 1  # candles around the exposed ones
        self.last = math.ceil(exposed.right()) + 1

    def coverage(self, lefts: list[np.ndarray],
                 widths: list[np.ndarray]) -> tuple[int, np.ndarray]:
        """``(origin, covered)``: for each group of bands ``lefts[g]``, ``widths[g]``, which
        device pixel columns of the pane (from ``origin``) its bands cover together,
        however many there are (``covered[g]``; one pass for all groups)."""
        origin = math.floor(self.left_px)
        size = int(math.ceil(self.right_px)) - origin + 1
        group = np.repeat(np.arange(len(lefts)) * (size + 1), [len(x) for x in lefts])
        left = np.concatenate(lefts) - origin
        right = left + np.concatenate(widths)
        span = len(lefts) * (size + 1)
        edges = (np.bincount(group + np.clip(left, 0, size).astype(np.int64), minlength=span)
                 - np.bincount(group + np.clip(right, 0, size).astype(np.int64),
                               minlength=span))
        return origin, np.cumsum(edges.reshape(len(lefts), size + 1), axis=1)[:, :size] > 0

    def x_px(self, x: np.ndarray) -> np.ndarray:
        return np.floor(self.sx * x + self.dx)

    def y_px(self, price: np.ndarray) -> np.ndarray:
        return np.rint(self.sy * price + self.dy)

    def band(self, x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixel left edges and widths of bands over the candles from x ``x0`` to ``x1``."""
        sx, dx = self.sx, self.dx
        xa = np.floor(sx * (x0 - 0.5) + dx)
        xb = np.floor(sx * (x1 + 0.5) + dx)
        left = np.maximum(np.minimum(xa, xb), -1.0)
        right = np.minimum(np.maximum(xa, xb), 1e6)
        return left, np.maximum(right - left, 1.0)


class _Lanes:
    """Ticks in the lanes along the top of the pane, gathered during one paint and drawn as
    one unscaled image: one draw call, however many ticks. A group of a few bands that are
    all wide (the reviewed stretches when zoomed in) is filled band by band instead (cheaper
    than an image for so few), so that a view without ticks makes no image."""

    def __init__(self, f: _Frame):
        self._f = f
        self._groups: list[tuple[int, int, QtGui.QColor, np.ndarray, np.ndarray]] = []

    def add(self, lane: int, color: QtGui.QColor, left: np.ndarray, width: np.ndarray,
            offset: int = 0, height: int = STRIP_PX) -> None:
        """Ticks of an opaque ``color`` over the pixels that bands ``left``, ``width`` cover,
        ``height`` rows from ``offset`` rows into ``lane``."""
        self._groups.append((lane * (STRIP_PX + 1) + offset, height, color, left, width))

    def draw(self, p: QtGui.QPainter) -> None:
        ticks = []
        for group in self._groups:
            top, height, color, left, width = group
            if len(left) > MAX_LANE_RECTS or width.min() < MIN_BAND_PX:
                ticks.append(group)
                continue
            y = round(self._f.top) + top
            for x, w in zip(left.tolist(), width.tolist()):
                p.fillRect(int(x), y, int(w), height, color)
        if not ticks:
            return
        origin, covered = self._f.coverage([g[3] for g in ticks], [g[4] for g in ticks])
        first = min(top for top, *_ in ticks)  # the image starts at the first row used
        rows = max(top + height for top, height, *_ in ticks) - first
        pixels = np.zeros((rows, covered.shape[1]), dtype=np.uint32)
        for (top, height, color, _, _), cover in zip(ticks, covered):
            top -= first
            pixels[top: top + height] = np.where(cover, np.uint32(color.rgba()), pixels[top])
        image = QtGui.QImage(pixels.data, pixels.shape[1], rows, pixels.shape[1] * 4,
                             QtGui.QImage.Format.Format_ARGB32_Premultiplied)
        p.drawImage(QtCore.QPointF(origin, self._f.top + first), image)


_SPRITES = ((True, True), (False, True), (True, False), (False, False))
"""The marker sheet, left to right: (▲?, long?): a long's entry and exit, a short's."""


class _Style:
    """The colours, pens and marker sprites of one chart colour scheme, made once."""

    def __init__(self, colors):
        self.colors = colors
        self.up, self.down = pg.mkColor(colors.up), pg.mkColor(colors.down)
        grey, self.reviewed = pg.mkColor(RANGE_COLOR), pg.mkColor(REVIEWED_COLOR)
        self.palette = (self.reviewed, self.up, self.down, grey, pg.mkColor(CUSTOM_COLOR))
        """Colours of reviewed, uptrend, downtrend, range and custom regions."""
        self.shades = tuple(mixed(c, colors.background, REVIEWED_SHADE_ALPHA if code == 0
                                  else SHADE_ALPHA) for code, c in enumerate(self.palette))
        self.positions = (grey, self.up, self.down)  # flat, long, short
        self.regimes = (self.up, self.down, grey)  # uptrend, downtrend, range
        self.selection = mixed(colors.cursor_band, colors.background, 1.0)
        self.point = pg.mkColor(POINT_COLOR)
        self.pens: dict[tuple[bool, bool], QtGui.QPen] = {}  # (long?, dashed?) -> pen
        for is_long, color in ((True, self.up), (False, self.down)):
            for dashed in (True, False):
                pen = QtGui.QPen(color, 1.2, QtCore.Qt.PenStyle.DashLine if dashed
                                 else QtCore.Qt.PenStyle.SolidLine)
                pen.setCosmetic(True)
                self.pens[is_long, dashed] = pen
        s = MARKER_SIZE
        self.sprites = QtGui.QPixmap(len(_SPRITES) * s, s)
        self.sprites.fill(QtCore.Qt.GlobalColor.transparent)
        painter = QtGui.QPainter(self.sprites)
        for k, (up, is_long) in enumerate(_SPRITES):
            painter.drawPixmap(k * s, 0, marker_sprite(up, self.up if is_long else self.down))
        painter.end()


class AnnotationGraphics:
    """One series' trades, regions and point notes on a chart's price pane, painted by two
    items: ``shades`` under the grid and candles, ``marks`` over the candles."""

    def __init__(self, chart):
        self._chart = chart
        self.trades = _Columns(entry_ts=np.int64, exit_ts=np.int64, entry_price=np.float64,
                               exit_price=np.float64, long=bool, pnl=np.float64)
        self.regions = _Columns(start_ts=np.int64, end_ts=np.int64, code=np.int8, label=object)
        self.points = _Columns(ts=np.int64, price=np.float64, text=object)
        self.selected: Annotation | None = None
        self.labels: LabelRuns | None = None
        self.horizon = Horizon()  # a replay clock holds back the marks it has not passed
        self._text = TextCache(axis_font())
        self._style_now: _Style | None = None
        self._rects = RectBatch()
        self._lines = PrimitiveArray(QtCore.QLineF, 4)
        self._fragments = PrimitiveArray(QtGui.QPainter.PixmapFragment, 10)
        self._x_cache: dict[tuple[int, str], tuple[tuple, np.ndarray]] = {}
        self._last_frame: tuple[tuple, _Frame] | None = None
        # the trade labels last painted: the frame's scale, then (device rect, trade rows)
        self.label_tips: tuple[tuple[float, float, float, float],
                               list[tuple[QtCore.QRectF, np.ndarray]]] = ((1, 0, 1, 0), [])
        view = chart.price_view
        self.shades = PaneItem(view, self._paint_shades, chart.price_grid.zValue() - 0.5)
        self.marks = PaneItem(view, self._paint_marks, chart.overlays.item.zValue() - 0.5,
                               self.tip_at)
        self.legend = _LaneLegend(chart)

    # -- content ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.trades) + len(self.regions) + len(self.points)

    def update(self) -> None:
        self.shades.update()
        self.marks.update()

    def set_visible(self, visible: bool) -> None:
        for item in (self.shades, self.marks, self.legend):
            item.setVisible(visible)

    def set_annotations(self, annotations: list[Annotation]) -> None:
        """Show exactly these annotations (those a replay clock has passed)."""
        annotations = self.horizon.split(annotations)
        for cls, (name, to_columns) in _COLUMNS.items():
            group = [a for a in annotations if type(a) is cls]
            getattr(self, name).set_all([a.id for a in group], to_columns(group))
        if self.selected is not None and not self._has(self.selected.id):
            self.selected = None
        self.update()

    def put(self, ann: Annotation) -> None:
        """Show a new or changed annotation (held back while a replay clock hides its end)."""
        if not self.horizon.admit(ann):
            self._drop(ann.id)
            return
        name, to_columns = _COLUMNS[type(ann)]
        getattr(self, name).put(ann.id, [column[0] for column in to_columns([ann])])
        if self.selected is not None and self.selected.id == ann.id:
            self.selected = ann
        self.update()

    def remove(self, ann_id: str) -> None:
        self.horizon.forget(ann_id)
        self._drop(ann_id)

    def set_clock(self, clock: int | None) -> None:
        """Follow the replay clock (None: no replay): the marks it passes appear; the
        trainer's lanes (labels read from marks the clock may hide) show only without it."""
        for ann in self.horizon.set_clock(clock):
            self.put(ann)
        self.marks.update()

    def _drop(self, ann_id: str) -> None:
        for table in (self.trades, self.regions, self.points):
            if table.remove(ann_id):
                break
        if self.selected is not None and self.selected.id == ann_id:
            self.selected = None
        self.update()

    def set_selected(self, ann: Annotation | None) -> None:
        if ann != self.selected:
            self.selected = ann
            self.update()

    def set_labels(self, labels: LabelRuns | None) -> None:
        """Show the trainer's labels (``labels.TrainerLabels``) in the lanes."""
        self.labels = labels
        tip = LANES_TIP + (LABELS_TIP if labels is not None and labels.position is not None
                           else "")
        if labels is not None and labels.problem:
            tip += f"\n\nNothing is labelled: {labels.problem}"
        self.legend.setToolTip(tip)
        self.marks.update()

    def tip_at(self, pos: QtCore.QPointF) -> str:
        """The trades of the label painted at item position ``pos``, one per line ("")."""
        (sx, dx, sy, dy), tips = self.label_tips
        point = QtCore.QPointF(sx * pos.x() + dx, sy * pos.y() + dy)
        t = self.trades
        for rect, rows in tips:
            if rect.contains(point) and rows.max() < len(t):
                return trade_lines(t.col("long")[rows], t.col("entry_ts")[rows],
                                   t.col("exit_ts")[rows], t.col("pnl")[rows])
        return ""

    def _has(self, ann_id: str) -> bool:
        return any(ann_id in t for t in (self.trades, self.regions, self.points))

    # -- painting --------------------------------------------------------------------------
    def _frame(self, p, exposed, bounds) -> _Frame | None:
        """This paint's frame; the two items share it while nothing it depends on changes."""
        c = self._chart.candles
        if c is None or not len(c):
            return None
        scale = device_scale(p)
        key = (id(c), len(c), int(c.ts[-1]), scale, exposed.getRect(), bounds.getRect(),
               self.regions.version, self.trades.version, self.points.version)
        if self._last_frame is None or self._last_frame[0] != key:
            self._last_frame = (key, _Frame(c, scale, exposed, bounds, self._xs))
        return self._last_frame[1]

    def _xs(self, table: _Columns, column: str) -> np.ndarray:
        """The chart x of ``column`` of every row, kept until the rows or the series change
        (a forming candle's update changes neither)."""
        c = self._chart.candles
        key = (id(table), column)
        stamp = (id(c), len(c), int(c.ts[0]), int(c.ts[-1]), table.version)
        cached = self._x_cache.get(key)
        if cached is None or cached[0] != stamp:
            cached = (stamp, TimeMap.of(c).centre_x(table.col(column)))
            self._x_cache[key] = cached
        return cached[1]

    def _style(self) -> _Style:
        colors = self._chart.colors
        if self._style_now is None or self._style_now.colors is not colors:
            self._style_now = _Style(colors)
        return self._style_now

    def _region_bands(self, f: _Frame) -> tuple[np.ndarray, ...]:
        """``(rows, left, width, codes)`` of the regions over the exposed time, their bands
        in device pixels."""
        bands = f.cache.get("regions")
        if bands is None:
            r = self.regions
            idx = np.flatnonzero((r.col("start_ts") <= f.t_hi) & (r.col("end_ts") >= f.t_lo))
            left, width = f.band(f.xs(r, "start_ts")[idx], f.xs(r, "end_ts")[idx])
            bands = f.cache["regions"] = (idx, left, width, r.col("code")[idx])
        return bands

    def _paint_shades(self, p, exposed, bounds) -> None:
        if self.selected is None and not len(self.regions):
            return
        f = self._frame(p, exposed, bounds)
        if f is None:
            return
        _, left, width, codes = self._region_bands(f)
        wide = width >= MIN_BAND_PX
        if self.selected is None and not wide.any():
            return
        style = self._style()
        p.save()
        p.resetTransform()
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        for code in np.unique(codes[wide]).tolist():
            sel = wide & (codes == code)
            p.setBrush(style.shades[code])
            self._rects.draw(p, left[sel], f.top, width[sel], f.bottom - f.top)
        if self.selected is not None:
            x0, x1 = TimeMap.of(f.candles).centre_x(np.array(self.selected.span))
            left, width = f.band(x0, x1)
            p.setBrush(style.selection)
            self._rects.draw(p, left, f.top, width, f.bottom - f.top)
        p.restore()

    def _paint_marks(self, p, exposed, bounds) -> None:
        if not len(self) and self.labels is None:
            return
        f = self._frame(p, exposed, bounds)
        if f is None:
            return
        style = self._style()
        p.save()
        p.resetTransform()
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        p.setFont(self._text.font)
        lanes = _Lanes(f)
        self.label_tips = ((f.sx, f.dx, f.sy, f.dy), [])
        if len(self.regions):
            _, left, width, codes = self._region_bands(f)
            thin = width < MIN_BAND_PX
            for code in np.unique(codes[thin]).tolist():
                sel = thin & (codes == code)
                lanes.add(REGION_LANE, style.palette[code], left[sel], width[sel])
        if len(self.trades):
            self._paint_trades(p, f, style, lanes)
        if len(self.points):
            self._paint_points(p, f, style, lanes)
        if self.labels is not None and self.horizon.clock is None \
                and self.labels.fits(f.candles.ts):
            self._paint_trainer_lanes(f, style, self.labels, lanes)
        lanes.draw(p)
        if len(self.regions):
            self._paint_region_labels(p, f, style)
        p.restore()

    def _paint_region_labels(self, p, f: _Frame, style: _Style) -> None:
        idx, left, width, codes = self._region_bands(f)
        if not idx.size or idx.size > MAX_TEXTS:
            return
        labels = self.regions.col("label")[idx]
        for i in np.flatnonzero(width > 8).tolist():
            text = labels[i]
            if width[i] < self._text.width(text) + 8:
                continue
            p.setPen(style.palette[codes[i]])
            self._text.draw(p, max(left[i], 0.0) + 4, f.top + 4, text)

    def _paint_trainer_lanes(self, f: _Frame, style: _Style, labels: LabelRuns,
                            lanes: _Lanes) -> None:
        """The trainer's labels of the exposed candles in their lanes."""
        first, last = f.first, min(f.last, labels.candles - 1)
        shown: list[tuple[int, Runs | None, tuple, int]] = [
            (REVIEWED_LANE, labels.reviewed, (style.reviewed,), REVIEWED_PX),
            (POSITION_LANE, labels.position, style.positions, STRIP_PX),
            (REGIME_LANE, labels.regime, style.regimes, STRIP_PX)]
        for lane, runs, colors, height in shown:
            if runs is None:
                continue
            seen = runs.between(first, last)
            if not len(seen):
                continue
            left, width = f.band(seen.start, seen.stop)
            if len(colors) == 1:
                lanes.add(lane, colors[0], left, width, height=height)
                continue
            for code in np.unique(seen.code).tolist():
                sel = seen.code == code
                lanes.add(lane, colors[code], left[sel], width[sel], height=height)

    def _paint_trades(self, p, f: _Frame, style: _Style, lanes: _Lanes) -> None:
        t = self.trades
        entry_ts, exit_ts = t.col("entry_ts"), t.col("exit_ts")
        idx = np.flatnonzero((entry_ts <= f.t_hi) & (exit_ts >= f.t_lo))
        if not idx.size:
            return
        xe = f.x_px(f.xs(t, "entry_ts")[idx]) + 0.5
        xx = f.x_px(f.xs(t, "exit_ts")[idx]) + 0.5
        long = t.col("long")[idx]
        if idx.size * DENSE_SPACING_PX > f.width_px:
            # packed: longs in the upper half of the trades' lane, shorts in the lower half
            left = np.minimum(xe, xx) - 0.5
            width = np.maximum(np.abs(xx - xe), 1.0)
            half_lane = STRIP_PX // 2
            for is_long, color, offset in ((True, style.up, 0), (False, style.down, half_lane)):
                sel = long == is_long
                if sel.any():
                    lanes.add(TRADE_LANE, color, left[sel], width[sel], offset, half_lane)
            return
        ye = f.y_px(t.col("entry_price")[idx])
        yx = f.y_px(t.col("exit_price")[idx])
        dashed = idx.size <= MAX_DASHED
        # a segment no longer than a marker lies under its two markers: it is not drawn
        seen = np.hypot(xx - xe, yx - ye) > MARKER_SIZE
        for is_long in (True, False):
            sel = seen & (long == is_long)
            if sel.any():
                self._draw_lines(p, style.pens[is_long, dashed], xe[sel], ye[sel], xx[sel],
                                 yx[sel])
        half = MARKER_SIZE / 2
        entry = np.where(long, 0, 2)  # the sheet's columns: see _SPRITES
        self._draw_sprites(p, style.sprites, np.concatenate((xe, xx)),
                           np.concatenate((ye + 1 + half, yx - 1 - half)),
                           np.concatenate((entry, entry + 1)))
        self._paint_trade_labels(p, f, style, idx, xx, ye, yx)

    def _paint_trade_labels(self, p, f: _Frame, style: _Style, idx: np.ndarray,
                            xx: np.ndarray, ye: np.ndarray, yx: np.ndarray) -> None:
        """One P&L label per candle the trades ``idx`` exit on (their exits drawn at ``xx``,
        ``yx``; entries at height ``ye``): a lone trade's over its exit marker when it rose
        (else under it), several trades' over the highest of their exit markers."""
        if idx.size > MAX_TEXTS:
            return
        t = self.trades
        exit_ts = t.col("exit_ts")[idx]
        candle = np.searchsorted(f.candles.ts, exit_ts, side="right") - 1
        labels = trade_labels(candle, exit_ts, t.col("pnl")[idx])
        if len(labels) * TEXT_SPACING_PX > f.width_px:
            return
        ascent, height = self._text.metrics.ascent(), self._text.metrics.height()
        above = yx - MARKER_SIZE - 4 - ascent
        centre = np.array([(xx[k].min() + xx[k].max()) / 2 for k in (a.rows for a in labels)])
        tops = np.array([above[a.rows].min() if len(a.rows) > 1
                         else (above if yx[a.rows[0]] <= ye[a.rows[0]] else yx + 2)[a.rows[0]]
                         for a in labels])
        texts = [a.text for a in labels]
        widths = np.array([self._text.width(text) for text in texts])
        for i in _clear_of_each_other(centre, tops, widths, height):
            p.setPen(style.up if labels[i].pnl >= 0 else style.down)
            self._text.draw(p, centre[i], tops[i], texts[i], centred=True)
            self.label_tips[1].append((QtCore.QRectF(centre[i] - widths[i] / 2, tops[i],
                                                     widths[i], height), idx[labels[i].rows]))

    def _draw_lines(self, p, pen: QtGui.QPen, x0, y0, x1, y1) -> None:
        """Segments from ``(x0, y0)`` to ``(x1, y1)``, in one call."""
        self._lines.resize(x0.size)
        lines = self._lines.ndarray()
        lines[:, 0], lines[:, 1], lines[:, 2], lines[:, 3] = x0, y0, x1, y1
        p.setPen(pen)
        p.drawLines(*self._lines.drawargs())

    def _draw_sprites(self, p, sheet: QtGui.QPixmap, cx: np.ndarray, cy: np.ndarray,
                      column: np.ndarray) -> None:
        """Sprite ``column`` of ``sheet`` centred on each ``(cx, cy)``, in one call."""
        self._fragments.resize(cx.size)
        frags = self._fragments.ndarray()
        frags[:, 0] = cx
        frags[:, 1] = cy
        frags[:, 2] = column * MARKER_SIZE
        frags[:, 3:6] = (0, MARKER_SIZE, MARKER_SIZE)
        frags[:, 6:10] = (1.0, 1.0, 0.0, 1.0)
        p.drawPixmapFragments(*self._fragments.drawargs(), sheet)

    def _paint_points(self, p, f: _Frame, style: _Style, lanes: _Lanes) -> None:
        pts = self.points
        ts = pts.col("ts")
        idx = np.flatnonzero((ts >= f.t_lo) & (ts <= f.t_hi))
        if not idx.size:
            return
        x = f.x_px(f.xs(pts, "ts")[idx])
        if idx.size * DENSE_SPACING_PX > f.width_px:
            lanes.add(POINT_LANE, style.point, x, np.ones_like(x))
            return
        c = f.candles
        price = pts.col("price")[idx]
        missing = np.isnan(price)
        if missing.any():
            i = np.clip(np.searchsorted(c.ts, ts[idx][missing], side="right") - 1, 0, len(c) - 1)
            price[missing] = c.close[i]
        y = f.y_px(price)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        p.setBrush(style.point)
        self._rects.draw(p, x - 2, y - 2, 5, 5)
        if idx.size * TEXT_SPACING_PX <= f.width_px and idx.size <= MAX_TEXTS:
            p.setPen(style.point)
            texts = pts.col("text")[idx]
            ascent = self._text.metrics.ascent()
            for i in range(idx.size):
                if texts[i]:
                    self._text.draw(p, x[i] + 6, y[i] - 4 - ascent, texts[i])


def _clear_of_each_other(centre: np.ndarray, top: np.ndarray, width: np.ndarray,
                         height: float) -> list[int]:
    """The texts (centred at ``centre``, ``width`` wide, from ``top``) to draw so that none
    covers another: left to right, each one clear of those kept (trades minutes apart on an
    hourly chart exit on one candle: their P&L would be drawn over each other)."""
    kept: list[int] = []
    widest = float(width.max()) if width.size else 0.0
    for i in np.argsort(centre, kind="stable").tolist():
        left, right = centre[i] - width[i] / 2, centre[i] + width[i] / 2
        clear = True
        for j in reversed(kept):
            if centre[j] + widest / 2 <= left:
                break  # every earlier one ends further left
            if (centre[j] + width[j] / 2 > left and centre[j] - width[j] / 2 < right
                    and abs(top[j] - top[i]) < height):
                clear = False
                break
        if clear:
            kept.append(i)
    return kept


class _LaneLegend(QtWidgets.QGraphicsRectItem):
    """An invisible strip over the lanes, on the top edge of the price pane, whose tooltip
    says what each lane shows (set by ``AnnotationGraphics.set_labels``)."""

    def __init__(self, chart):
        super().__init__()
        self._chart = chart
        self.setFlag(self.GraphicsItemFlag.ItemHasNoContents)  # a tooltip, nothing to paint
        self.setAcceptedMouseButtons(QtCore.Qt.MouseButton.NoButton)
        self.setZValue(1e6)
        self.setToolTip(LANES_TIP)
        chart.price_view.scene().addItem(self)
        chart.price_view.sigResized.connect(self._sync)
        self._sync()

    def _sync(self, *args) -> None:
        pane = self._chart.price_view.sceneBoundingRect()
        ratio = self._chart.view.devicePixelRatioF() or 1.0
        self.setRect(QtCore.QRectF(pane.left(), pane.top(), pane.width(), LANES_PX / ratio))


class PreviewOverlays:
    """The tool's work in progress (pending entry, mark) as chart overlays, redrawn when the
    cursor moves."""

    def __init__(self, chart):
        self._chart = chart

    def show(self, tools: AnnotationTools, candles: Candles | None, cursor: int) -> None:
        overlays = self._chart.overlays
        overlays.clear(PENDING_GROUP)
        if candles is None or not len(candles):
            return
        cursor = min(max(cursor, 0), len(candles) - 1)
        ts, close = int(candles.ts[cursor]), float(candles.close[cursor])
        colors = self._chart.colors
        pending = tools.pending
        if pending is not None:
            color = colors.up if pending.direction is Direction.LONG else colors.down
            overlays.add_marker(pending.ts, pending.price, "up", color,
                                pending.direction.value.upper(), group=PENDING_GROUP)
            if ts > pending.ts:
                overlays.add_segment(pending.ts, pending.price, ts, close, color, dashed=True,
                                     group=PENDING_GROUP)
                pnl = (close - pending.price) / pending.price * 100.0 * pending.direction.sign
                overlays.add_label(ts, close, f"{pnl_text(pnl)} if closed here", color,
                                   group=PENDING_GROUP)
        if tools.mark is not None:
            half = candles.timeframe.ms // 2
            lo, hi = sorted((tools.mark.ts, ts))
            band = QtGui.QColor(pg.mkColor(colors.cursor))
            band.setAlpha(40)
            overlays.add_range(lo - half, hi + half - 1, band, "mark → cursor: 1 up, 2 down, "
                               "3 range, 4 reviewed", group=PENDING_GROUP)

    def clear(self) -> None:
        self._chart.overlays.clear(PENDING_GROUP)
