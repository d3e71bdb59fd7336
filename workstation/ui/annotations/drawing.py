"""How annotations look on the chart's price pane.

- A trade: a ▲ under its entry price and a ▼ over its exit price, green for a long and red
  for a short (the chart's up and down colours), joined by a dashed segment (solid when more
  than ``MAX_DASHED`` trades are on screen), with its P&L % beside the exit marker (green for
  a profit, red for a loss).
- A region: a shaded band over its candles (uptrend green, downtrend red, range grey, any
  other label violet) with its label at the top.
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
than ``MIN_BAND_PX``, point notes as packed as such trades. A text is drawn only where there
is room for it, and for at most ``MAX_TEXTS`` annotations per frame.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import QtCore, QtGui
from pyqtgraph.Qt.internals import PrimitiveArray

from ...annotations.model import Annotation, Direction, Point, Region, RegionLabel, Trade
from ...market.candles import Candles
from ..chart.axis import axis_font
from ..chart.candle_item import RectBatch, device_scale
from ..chart.overlays import MARKER_SIZE, marker_sprite
from .tools import AnnotationTools

PENDING_GROUP = "annotations.pending"
DENSE_SPACING_PX = 8.0  # trades (and notes) closer than this on average become ticks
MIN_BAND_PX = 4  # regions narrower than this on screen are drawn in their lane
STRIP_PX = 6  # the height of a lane along the top of the pane
REGION_LANE, TRADE_LANE, POINT_LANE = range(3)
TEXT_SPACING_PX = 48.0  # P&L texts are drawn while trades are at least this far apart
MAX_TEXTS = 300
MAX_DASHED = 64  # with more trades on screen, their segments are solid (dashing costs)
SHADE_ALPHA = 0.19  # how much of a region's colour shows over the background
POINT_COLOR = "#f0b90b"
RANGE_COLOR = "#787b86"
CUSTOM_COLOR = "#7e57c2"
_LABEL_CODES = {RegionLabel.UPTREND.value: 0, RegionLabel.DOWNTREND.value: 1,
                RegionLabel.RANGE.value: 2}
_CUSTOM_CODE = 3


def pnl_text(pnl_pct: float) -> str:
    return f"{pnl_pct:+.2f}%"


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


_COLUMNS = {Trade: ("trades", _trade_columns), Region: ("regions", _region_columns),
            Point: ("points", _point_columns)}


def candle_x(candles: Candles, ts: np.ndarray) -> np.ndarray:
    """The chart's x (candle index, fractional inside a candle) of epoch-ms times; inside a
    gap a time stays at the edge of the candle before it, and before or after the series it
    is extrapolated on the timeframe grid."""
    cts = candles.ts
    tf = candles.timeframe.ms
    ts = np.asarray(ts, dtype=np.int64)
    idx = np.searchsorted(cts, ts, side="right") - 1
    before = idx < 0
    idx = np.maximum(idx, 0)
    x = idx + (ts - cts[idx]) / tf
    return np.where(~before & (idx < len(cts) - 1), np.minimum(x, idx + 1.0), x)


def candle_ts(candles: Candles, x: float) -> int:
    """The epoch-ms time at chart x (the inverse of ``candle_x`` outside gaps)."""
    n = len(candles)
    i = min(max(int(math.floor(x)), 0), n - 1)
    return int(candles.ts[i] + (x - i) * candles.timeframe.ms)


class _PaneItem(pg.GraphicsObject):
    """An item as large as the price pane's view; ``paint_fn(p, exposed, bounds)`` paints
    the exposed part."""

    def __init__(self, view: pg.ViewBox, paint_fn, z: float):
        super().__init__()
        self._view = view
        self._paint_fn = paint_fn
        self._bounds = QtCore.QRectF()
        self.setFlag(self.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self.setZValue(z)
        view.addItem(self, ignoreBounds=True)
        view.sigRangeChanged.connect(self._sync_bounds)
        view.sigResized.connect(self._sync_bounds)
        self._sync_bounds()

    def _sync_bounds(self, *args) -> None:
        rect = self._view.viewRect()
        if rect != self._bounds:
            self.prepareGeometryChange()
            self._bounds = QtCore.QRectF(rect)

    def boundingRect(self) -> QtCore.QRectF:
        return self._bounds

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        if self._bounds.isNull():
            return
        exposed = option.exposedRect.intersected(self._bounds)
        self._paint_fn(p, self._bounds if exposed.isEmpty() else exposed, self._bounds)


class _Frame:
    """What one paint needs: the candles, the time window exposed and the item-to-device
    scale (``x_px = sx * x + dx``), and the pane's top and bottom in device pixels."""

    def __init__(self, candles: Candles, p: QtGui.QPainter, exposed: QtCore.QRectF,
                 bounds: QtCore.QRectF, xs):
        self.candles = candles
        self.xs = xs  # xs(table, column) -> the chart x of every row's time
        self.t_lo = candle_ts(candles, exposed.left() - 1)
        self.t_hi = candle_ts(candles, exposed.right() + 1)
        self.sx, self.dx, self.sy, self.dy = device_scale(p)
        self.top, self.bottom = sorted((self.sy * bounds.top() + self.dy,
                                        self.sy * bounds.bottom() + self.dy))
        self.left_px, self.right_px = sorted((self.sx * bounds.left() + self.dx,
                                              self.sx * bounds.right() + self.dx))
        self.width_px = self.right_px - self.left_px

    def lane(self, index: int) -> float:
        """The top pixel of lane ``index`` along the top of the pane."""
        return self.top + index * (STRIP_PX + 1)

    def coverage(self, left: np.ndarray, width: np.ndarray) -> tuple[int, np.ndarray]:
        """``(origin, covered)``: which device pixel columns of the pane (from ``origin``)
        bands ``left``, ``width`` cover together, however many bands there are."""
        origin = math.floor(self.left_px)
        size = int(math.ceil(self.right_px)) - origin + 1
        lo = np.clip(left - origin, 0, size).astype(np.int64)
        hi = np.clip(left + width - origin, 0, size).astype(np.int64)
        covered = np.cumsum(np.bincount(lo, minlength=size + 1)
                            - np.bincount(hi, minlength=size + 1))[:size] > 0
        return origin, covered

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
        self._font = axis_font()
        self._metrics = QtGui.QFontMetricsF(self._font)
        self._widths: dict[str, float] = {}  # region label -> pixels
        self._rects = RectBatch()
        self._fragments = PrimitiveArray(QtGui.QPainter.PixmapFragment, 10)
        self._x_cache: dict[tuple[int, str], tuple[tuple, np.ndarray]] = {}
        view = chart.price_view
        self.shades = _PaneItem(view, self._paint_shades, chart.price_grid.zValue() - 0.5)
        self.marks = _PaneItem(view, self._paint_marks, chart.overlays.item.zValue() - 0.5)

    # -- content ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.trades) + len(self.regions) + len(self.points)

    def update(self) -> None:
        self.shades.update()
        self.marks.update()

    def set_visible(self, visible: bool) -> None:
        self.shades.setVisible(visible)
        self.marks.setVisible(visible)

    def set_annotations(self, annotations: list[Annotation]) -> None:
        """Show exactly these annotations."""
        for cls, (name, to_columns) in _COLUMNS.items():
            group = [a for a in annotations if type(a) is cls]
            getattr(self, name).set_all([a.id for a in group], to_columns(group))
        if self.selected is not None and not self._has(self.selected.id):
            self.selected = None
        self.update()

    def put(self, ann: Annotation) -> None:
        """Show a new or changed annotation."""
        name, to_columns = _COLUMNS[type(ann)]
        getattr(self, name).put(ann.id, [column[0] for column in to_columns([ann])])
        if self.selected is not None and self.selected.id == ann.id:
            self.selected = ann
        self.update()

    def remove(self, ann_id: str) -> None:
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

    def _has(self, ann_id: str) -> bool:
        return any(ann_id in t for t in (self.trades, self.regions, self.points))

    # -- painting --------------------------------------------------------------------------
    def _frame(self, p, exposed, bounds) -> _Frame | None:
        c = self._chart.candles
        if c is None or not len(c):
            return None
        return _Frame(c, p, exposed, bounds, self._xs)

    def _xs(self, table: _Columns, column: str) -> np.ndarray:
        """The chart x of ``column`` of every row, kept until the rows or the series change
        (a forming candle's update changes neither)."""
        c = self._chart.candles
        key = (id(table), column)
        stamp = (id(c), len(c), int(c.ts[0]), int(c.ts[-1]), table.version)
        cached = self._x_cache.get(key)
        if cached is None or cached[0] != stamp:
            cached = (stamp, candle_x(c, table.col(column)))
            self._x_cache[key] = cached
        return cached[1]

    def _palette(self) -> tuple[QtGui.QColor, ...]:
        """Colours of uptrend, downtrend, range and custom regions."""
        colors = self._chart.colors
        return tuple(pg.mkColor(x) for x in (colors.up, colors.down, RANGE_COLOR, CUSTOM_COLOR))

    def _visible_regions(self, f: _Frame) -> np.ndarray:
        r = self.regions
        return np.flatnonzero((r.col("start_ts") <= f.t_hi) & (r.col("end_ts") >= f.t_lo))

    def _paint_shades(self, p, exposed, bounds) -> None:
        if self.selected is None and not len(self.regions):
            return
        f = self._frame(p, exposed, bounds)
        if f is None:
            return
        background = self._chart.colors.background
        p.save()
        p.resetTransform()
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        idx = self._visible_regions(f) if len(self.regions) else np.empty(0, dtype=np.intp)
        if idx.size:
            r = self.regions
            left, width = f.band(f.xs(r, "start_ts")[idx], f.xs(r, "end_ts")[idx])
            codes = r.col("code")[idx]
            palette = self._palette()
            thin = width < MIN_BAND_PX
            for code in np.unique(codes).tolist():
                wide = (codes == code) & ~thin
                if wide.any():
                    p.setBrush(mixed(palette[code], background, SHADE_ALPHA))
                    self._rects.draw(p, left[wide], f.top, width[wide], f.bottom - f.top)
                narrow = (codes == code) & thin
                if narrow.any():
                    p.setBrush(palette[code])
                    self._draw_lane(p, f, REGION_LANE, left[narrow], width[narrow])
        if self.selected is not None:
            x0, x1 = candle_x(f.candles, np.array(self.selected.span))
            left, width = f.band(x0, x1)
            p.setBrush(mixed(self._chart.colors.cursor_band, background, 1.0))
            self._rects.draw(p, left, f.top, width, f.bottom - f.top)
        p.restore()

    def _paint_marks(self, p, exposed, bounds) -> None:
        if not len(self):
            return
        f = self._frame(p, exposed, bounds)
        if f is None:
            return
        colors = self._chart.colors
        up, down = pg.mkColor(colors.up), pg.mkColor(colors.down)
        p.save()
        p.resetTransform()
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        p.setFont(self._font)
        if len(self.regions):
            self._paint_region_labels(p, f)
        if len(self.trades):
            self._paint_trades(p, f, up, down)
        if len(self.points):
            self._paint_points(p, f)
        p.restore()

    def _paint_region_labels(self, p, f: _Frame) -> None:
        idx = self._visible_regions(f)
        if not idx.size or idx.size > MAX_TEXTS:
            return
        r = self.regions
        left, width = f.band(f.xs(r, "start_ts")[idx], f.xs(r, "end_ts")[idx])
        labels = r.col("label")[idx]
        codes = r.col("code")[idx]
        palette = self._palette()
        baseline = f.top + self._metrics.ascent() + 4
        for i in range(idx.size):
            text = labels[i]
            if width[i] < self._text_width(text) + 8:
                continue
            p.setPen(palette[codes[i]])
            p.drawText(QtCore.QPointF(max(left[i], 0.0) + 4, baseline), text)

    def _paint_trades(self, p, f: _Frame, up, down) -> None:
        t = self.trades
        entry_ts, exit_ts = t.col("entry_ts"), t.col("exit_ts")
        idx = np.flatnonzero((entry_ts <= f.t_hi) & (exit_ts >= f.t_lo))
        if not idx.size:
            return
        xe = f.x_px(f.xs(t, "entry_ts")[idx]) + 0.5
        xx = f.x_px(f.xs(t, "exit_ts")[idx]) + 0.5
        long = t.col("long")[idx]
        if idx.size * DENSE_SPACING_PX > f.width_px:
            self._paint_trade_lane(p, f, xe, xx, long, up, down)
            return
        ye = f.y_px(t.col("entry_price")[idx])
        yx = f.y_px(t.col("exit_price")[idx])
        half = MARKER_SIZE / 2
        for is_long, color in ((True, up), (False, down)):
            sel = long == is_long
            if not sel.any():
                continue
            pen = QtGui.QPen(color, 1.2, QtCore.Qt.PenStyle.DashLine if idx.size <= MAX_DASHED
                             else QtCore.Qt.PenStyle.SolidLine)
            pen.setCosmetic(True)
            xs = np.column_stack((xe[sel], xx[sel])).ravel()
            ys = np.column_stack((ye[sel], yx[sel])).ravel()
            p.strokePath(pg.arrayToQPath(xs, ys, connect="pairs"), pen)
            self._draw_sprites(p, marker_sprite(True, color), xe[sel], ye[sel] + 1 + half)
            self._draw_sprites(p, marker_sprite(False, color), xx[sel], yx[sel] - 1 - half)
        if idx.size * TEXT_SPACING_PX <= f.width_px and idx.size <= MAX_TEXTS:
            pnl = t.col("pnl")[idx]
            rise = yx <= ye  # the exit is drawn above the entry: put the text over the marker
            for i in range(idx.size):
                text = pnl_text(float(pnl[i]))
                w = self._metrics.horizontalAdvance(text)
                y = (yx[i] - MARKER_SIZE - 4 if rise[i]
                     else yx[i] + self._metrics.ascent() + 2)
                p.setPen(up if pnl[i] >= 0 else down)
                p.drawText(QtCore.QPointF(xx[i] - w / 2, y), text)

    def _text_width(self, text: str) -> float:
        """The width of a region label (few distinct ones, so they are kept)."""
        width = self._widths.get(text)
        if width is None:
            width = self._widths[text] = self._metrics.horizontalAdvance(text)
        return width

    def _draw_sprites(self, p, pix: QtGui.QPixmap, cx: np.ndarray, cy: np.ndarray) -> None:
        """``pix`` centred on each ``(cx, cy)``, in one call."""
        self._fragments.resize(cx.size)
        frags = self._fragments.ndarray()
        frags[:, 0] = cx
        frags[:, 1] = cy
        frags[:, 2:6] = (0, 0, MARKER_SIZE, MARKER_SIZE)
        frags[:, 6:10] = (1.0, 1.0, 0.0, 1.0)
        p.drawPixmapFragments(*self._fragments.drawargs(), pix)

    def _paint_trade_lane(self, p, f: _Frame, xe, xx, long, up, down) -> None:
        """Longs in the upper half of the trades' lane, shorts in the lower half."""
        left = np.minimum(xe, xx) - 0.5
        width = np.maximum(np.abs(xx - xe), 1.0)
        half = STRIP_PX // 2
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        for is_long, color in ((True, up), (False, down)):
            sel = long == is_long
            if sel.any():
                p.setBrush(color)
                self._draw_lane(p, f, TRADE_LANE, left[sel], width[sel],
                                offset=0 if is_long else half, height=half)

    def _draw_lane(self, p, f: _Frame, lane: int, left: np.ndarray, width: np.ndarray,
                   offset: int = 0, height: int = STRIP_PX) -> None:
        """Ticks in ``lane`` over the pixels the bands cover, in the painter's brush colour:
        one image, drawn unscaled (one draw call, however many ticks)."""
        origin, covered = f.coverage(left, width)
        if not covered.any():
            return
        row = np.where(covered, np.uint32(p.brush().color().rgba()), np.uint32(0))
        pixels = np.ascontiguousarray(np.broadcast_to(row, (int(height), row.size)))
        image = QtGui.QImage(pixels.data, row.size, int(height), row.size * 4,
                             QtGui.QImage.Format.Format_ARGB32)
        p.drawImage(QtCore.QPointF(origin, f.lane(lane) + offset), image)

    def _paint_points(self, p, f: _Frame) -> None:
        pts = self.points
        ts = pts.col("ts")
        idx = np.flatnonzero((ts >= f.t_lo) & (ts <= f.t_hi))
        if not idx.size:
            return
        x = f.x_px(f.xs(pts, "ts")[idx])
        color = pg.mkColor(POINT_COLOR)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        p.setBrush(color)
        if idx.size * DENSE_SPACING_PX > f.width_px:
            self._draw_lane(p, f, POINT_LANE, x, np.ones_like(x))
            return
        c = f.candles
        price = pts.col("price")[idx]
        missing = np.isnan(price)
        if missing.any():
            i = np.clip(np.searchsorted(c.ts, ts[idx][missing], side="right") - 1, 0, len(c) - 1)
            price[missing] = c.close[i]
        y = f.y_px(price)
        self._rects.draw(p, x - 2, y - 2, 5, 5)
        if idx.size * TEXT_SPACING_PX <= f.width_px and idx.size <= MAX_TEXTS:
            p.setPen(color)
            texts = pts.col("text")[idx]
            for i in range(idx.size):
                if texts[i]:
                    p.drawText(QtCore.QPointF(x[i] + 6, y[i] - 4), texts[i])



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
                               "3 range", group=PENDING_GROUP)

    def clear(self) -> None:
        self._chart.overlays.clear(PENDING_GROUP)
