"""How annotations look on the chart's price pane.

- A trade: a ▲ under its entry price and a ▼ over its exit price, green for a long and red
  for a short (the chart's up and down colours), joined by a dashed segment, with its P&L %
  under the exit marker (green for a profit, red for a loss).
- A region: a shaded band over its candles (uptrend green, downtrend red, range grey, any
  other label violet) with its label at the top.
- A point note: a small yellow square at its price (or the candle's close) with its notes.
- The annotation selected in the list: a faint band over its time span.
- While the tool works: the pending entry as a marker reading LONG / SHORT with a dashed line
  to the cursor candle and the P&L a close there would make, and the mark as a band from the
  mark to the cursor (``PreviewOverlays``, in the chart's overlay group ``annotations.pending``).

``AnnotationItem`` holds the series' annotations as numpy columns (an annotation added,
changed or removed touches one row) and paints, in device pixels, only those that overlap
the exposed part of the view. When trades are packed tighter than a marker's width, each is
drawn as one translucent bar spanning its time and prices (markers, segments and texts
would only pile up); texts are drawn for at most ``MAX_TEXTS`` annotations per frame.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import QtCore, QtGui

from ...annotations.model import Annotation, Direction, Point, Region, RegionLabel, Trade
from ...market.candles import Candles
from ..chart.axis import axis_font
from ..chart.candle_item import RectBatch, device_scale
from .tools import AnnotationTools

PENDING_GROUP = "annotations.pending"
MARKER_SIZE = 11  # px, the width and height of a marker triangle
DENSE_SPACING_PX = 8.0  # trades closer than this on average are drawn as bars
MAX_TEXTS = 300
SHADE_ALPHA = 48
POINT_COLOR = "#f0b90b"
RANGE_COLOR = "#787b86"
CUSTOM_COLOR = "#7e57c2"
_LABEL_CODES = {RegionLabel.UPTREND: 0, RegionLabel.DOWNTREND: 1, RegionLabel.RANGE: 2,
                RegionLabel.CUSTOM: 3}


def pnl_text(pnl_pct: float) -> str:
    return f"{pnl_pct:+.2f}%"


class _Columns:
    """Rows of numpy columns addressed by annotation id; adding, replacing and removing a
    row is O(1) (a removed row is filled by the last one)."""

    def __init__(self, **dtypes):
        self._dtypes = dtypes
        self.ids: list[str] = []
        self._row: dict[str, int] = {}
        self._cols = {name: np.empty(16, dtype=dt) for name, dt in dtypes.items()}

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, ann_id: str) -> bool:
        return ann_id in self._row

    def col(self, name: str) -> np.ndarray:
        return self._cols[name][: len(self.ids)]

    def set_all(self, ids: list[str], values: dict[str, list]) -> None:
        self.ids = list(ids)
        self._row = {ann_id: i for i, ann_id in enumerate(self.ids)}
        size = max(16, len(ids))
        for name, dt in self._dtypes.items():
            col = np.empty(size, dtype=dt)
            col[: len(ids)] = values[name] if ids else []
            self._cols[name] = col

    def put(self, ann_id: str, row: dict) -> None:
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
        for name, value in row.items():
            self._cols[name][i] = value

    def remove(self, ann_id: str) -> bool:
        i = self._row.pop(ann_id, None)
        if i is None:
            return False
        last = len(self.ids) - 1
        if i != last:
            moved = self.ids[last]
            self.ids[i] = moved
            self._row[moved] = i
            for col in self._cols.values():
                col[i] = col[last]
        self.ids.pop()
        return True


def _trade_row(t: Trade) -> dict:
    return {"entry_ts": t.entry_ts, "exit_ts": t.exit_ts, "entry_price": t.entry_price,
            "exit_price": t.exit_price, "long": t.direction is Direction.LONG, "pnl": t.pnl_pct}


def _region_row(r: Region) -> dict:
    return {"start_ts": r.start_ts, "end_ts": r.end_ts, "code": _LABEL_CODES[r.label_kind],
            "label": r.label}


def _point_row(p: Point) -> dict:
    return {"ts": p.ts, "price": math.nan if p.price is None else p.price,
            "text": p.notes.splitlines()[0][:40] if p.notes else ""}


_ROWS = {Trade: ("trades", _trade_row), Region: ("regions", _region_row),
         Point: ("points", _point_row)}


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


class AnnotationItem(pg.GraphicsObject):
    """Paints one series' trades, regions and point notes on a chart's price pane."""

    def __init__(self, chart):
        super().__init__()
        self._chart = chart
        self._view = chart.price_view
        self._bounds = QtCore.QRectF()
        self.trades = _Columns(entry_ts=np.int64, exit_ts=np.int64, entry_price=np.float64,
                               exit_price=np.float64, long=bool, pnl=np.float64)
        self.regions = _Columns(start_ts=np.int64, end_ts=np.int64, code=np.int8, label=object)
        self.points = _Columns(ts=np.int64, price=np.float64, text=object)
        self.selected: Annotation | None = None
        self._font = axis_font()
        self._metrics = QtGui.QFontMetricsF(self._font)
        self._rects = RectBatch()
        self._sprites: dict[tuple[bool, int], QtGui.QPixmap] = {}
        self.setFlag(self.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self.setZValue(chart.overlays.item.zValue() - 0.5)
        self._view.addItem(self, ignoreBounds=True)
        self._view.sigRangeChanged.connect(self._sync_bounds)
        self._view.sigResized.connect(self._sync_bounds)
        self._sync_bounds()

    # -- content ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.trades) + len(self.regions) + len(self.points)

    def set_annotations(self, annotations: list[Annotation]) -> None:
        """Show exactly these annotations."""
        for cls, (name, to_row) in _ROWS.items():
            group = [a for a in annotations if type(a) is cls]
            rows = [to_row(a) for a in group]
            table: _Columns = getattr(self, name)
            keys = table._dtypes
            table.set_all([a.id for a in group], {k: [r[k] for r in rows] for k in keys})
        if self.selected is not None and not self._has(self.selected.id):
            self.selected = None
        self.update()

    def put(self, ann: Annotation) -> None:
        """Show a new or changed annotation."""
        name, to_row = _ROWS[type(ann)]
        getattr(self, name).put(ann.id, to_row(ann))
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

    # -- geometry --------------------------------------------------------------------------
    def _sync_bounds(self, *args) -> None:
        rect = self._view.viewRect()
        if rect != self._bounds:
            self.prepareGeometryChange()
            self._bounds = QtCore.QRectF(rect)

    def boundingRect(self) -> QtCore.QRectF:
        return self._bounds

    # -- painting --------------------------------------------------------------------------
    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        c = self._chart.candles
        if c is None or not len(c) or self._bounds.isNull() or not len(self):
            return
        exposed = option.exposedRect.intersected(self._bounds)
        if exposed.isEmpty():
            exposed = self._bounds
        t_lo = candle_ts(c, exposed.left() - 1)
        t_hi = candle_ts(c, exposed.right() + 1)
        sx, dx, sy, dy = device_scale(p)
        top, bottom = sorted((sy * self._bounds.top() + dy, sy * self._bounds.bottom() + dy))
        colors = self._chart.colors
        up, down = pg.mkColor(colors.up), pg.mkColor(colors.down)
        p.save()
        p.resetTransform()
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        p.setFont(self._font)
        scale = (sx, dx, sy, dy, top, bottom)
        if self.selected is not None:
            self._paint_selection(p, c, scale)
        if len(self.regions):
            self._paint_regions(p, c, t_lo, t_hi, scale, up, down)
        if len(self.trades):
            self._paint_trades(p, c, t_lo, t_hi, scale, up, down)
        if len(self.points):
            self._paint_points(p, c, t_lo, t_hi, scale)
        p.restore()

    def _band(self, c: Candles, ts0: np.ndarray, ts1: np.ndarray, sx: float, dx: float):
        """Pixel left edges and widths of bands covering the candles from ``ts0`` to ``ts1``."""
        xa = np.floor(sx * (candle_x(c, ts0) - 0.5) + dx)
        xb = np.floor(sx * (candle_x(c, ts1) + 0.5) + dx)
        left = np.maximum(np.minimum(xa, xb), -1.0)
        right = np.minimum(np.maximum(xa, xb), 1e6)
        return left, np.maximum(right - left, 1.0)

    def _paint_selection(self, p, c, scale) -> None:
        sx, dx, _, _, top, bottom = scale
        start, end = self.selected.span
        left, width = self._band(c, np.array([start]), np.array([end]), sx, dx)
        color = pg.mkColor(self._chart.colors.cursor_band)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        p.setBrush(color)
        self._rects.draw(p, left, top, width, bottom - top)

    def _paint_regions(self, p, c, t_lo, t_hi, scale, up, down) -> None:
        sx, dx, _, _, top, bottom = scale
        r = self.regions
        start, end = r.col("start_ts"), r.col("end_ts")
        idx = np.flatnonzero((start <= t_hi) & (end >= t_lo))
        if not idx.size:
            return
        left, width = self._band(c, start[idx], end[idx], sx, dx)
        codes = r.col("code")[idx]
        palette = (up, down, pg.mkColor(RANGE_COLOR), pg.mkColor(CUSTOM_COLOR))
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        for code in np.unique(codes).tolist():
            sel = codes == code
            fill = QtGui.QColor(palette[code])
            fill.setAlpha(SHADE_ALPHA)
            p.setBrush(fill)
            self._rects.draw(p, left[sel], top, width[sel], bottom - top)
        if idx.size <= MAX_TEXTS:
            labels = r.col("label")[idx]
            baseline = top + self._metrics.ascent() + 4
            for i in range(idx.size):
                text = labels[i]
                if width[i] < self._metrics.horizontalAdvance(text) + 8:
                    continue
                p.setPen(palette[codes[i]])
                p.drawText(QtCore.QPointF(max(left[i], 0.0) + 4, baseline), text)

    def _paint_trades(self, p, c, t_lo, t_hi, scale, up, down) -> None:
        sx, dx, sy, dy, _, _ = scale
        t = self.trades
        entry_ts, exit_ts = t.col("entry_ts"), t.col("exit_ts")
        idx = np.flatnonzero((entry_ts <= t_hi) & (exit_ts >= t_lo))
        if not idx.size:
            return
        xe = np.floor(sx * candle_x(c, entry_ts[idx]) + dx) + 0.5
        xx = np.floor(sx * candle_x(c, exit_ts[idx]) + dx) + 0.5
        ye = np.rint(sy * t.col("entry_price")[idx] + dy)
        yx = np.rint(sy * t.col("exit_price")[idx] + dy)
        long = t.col("long")[idx]
        width_px = abs(self._bounds.width() * sx)
        if idx.size * DENSE_SPACING_PX > width_px:
            self._paint_trade_bars(p, xe, xx, ye, yx, long, up, down)
            return
        half = MARKER_SIZE / 2
        for is_long, color in ((True, up), (False, down)):
            sel = long == is_long
            if not sel.any():
                continue
            pen = QtGui.QPen(color, 1.2, QtCore.Qt.PenStyle.DashLine)
            pen.setCosmetic(True)
            xs = np.column_stack((xe[sel], xx[sel])).ravel()
            ys = np.column_stack((ye[sel], yx[sel])).ravel()
            p.strokePath(pg.arrayToQPath(xs, ys, connect="pairs"), pen)
            entry_sprite = self._sprite(True, color)
            exit_sprite = self._sprite(False, color)
            for x, y in zip((xe[sel] - half).tolist(), (ye[sel] + 1).tolist()):
                p.drawPixmap(QtCore.QPointF(x, y), entry_sprite)
            for x, y in zip((xx[sel] - half).tolist(), (yx[sel] - 1 - MARKER_SIZE).tolist()):
                p.drawPixmap(QtCore.QPointF(x, y), exit_sprite)
        if idx.size <= MAX_TEXTS:
            pnl = t.col("pnl")[idx]
            rise = yx <= ye  # the exit is drawn above the entry: put the text over the marker
            for i in range(idx.size):
                text = pnl_text(float(pnl[i]))
                w = self._metrics.horizontalAdvance(text)
                y = (yx[i] - MARKER_SIZE - 4 if rise[i]
                     else yx[i] + self._metrics.ascent() + 2)
                p.setPen(up if pnl[i] >= 0 else down)
                p.drawText(QtCore.QPointF(xx[i] - w / 2, y), text)

    def _paint_trade_bars(self, p, xe, xx, ye, yx, long, up, down) -> None:
        left = np.minimum(xe, xx) - 0.5
        width = np.maximum(np.abs(xx - xe), 1.0)
        top = np.minimum(ye, yx)
        height = np.maximum(np.abs(yx - ye), 2.0)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        for is_long, color in ((True, up), (False, down)):
            sel = long == is_long
            if sel.any():
                fill = QtGui.QColor(color)
                fill.setAlpha(160)
                p.setBrush(fill)
                self._rects.draw(p, left[sel], top[sel], width[sel], height[sel])

    def _paint_points(self, p, c, t_lo, t_hi, scale) -> None:
        sx, dx, sy, dy, _, _ = scale
        pts = self.points
        ts = pts.col("ts")
        idx = np.flatnonzero((ts >= t_lo) & (ts <= t_hi))
        if not idx.size:
            return
        price = pts.col("price")[idx]
        missing = np.isnan(price)
        if missing.any():
            i = np.clip(np.searchsorted(c.ts, ts[idx][missing], side="right") - 1, 0, len(c) - 1)
            price[missing] = c.close[i]
        x = np.floor(sx * candle_x(c, ts[idx]) + dx)
        y = np.rint(sy * price + dy)
        color = pg.mkColor(POINT_COLOR)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        p.setBrush(color)
        self._rects.draw(p, x - 2, y - 2, 5, 5)
        if idx.size <= MAX_TEXTS:
            p.setPen(color)
            texts = pts.col("text")[idx]
            for i in range(idx.size):
                if texts[i]:
                    p.drawText(QtCore.QPointF(x[i] + 6, y[i] - 4), texts[i])

    def _sprite(self, up: bool, color: QtGui.QColor) -> QtGui.QPixmap:
        """A ▲ (``up``) or ▼ of ``color``, ``MARKER_SIZE`` pixels square."""
        key = (up, color.rgba())
        pix = self._sprites.get(key)
        if pix is None:
            s = MARKER_SIZE
            pix = QtGui.QPixmap(s, s)
            pix.fill(QtCore.Qt.GlobalColor.transparent)
            painter = QtGui.QPainter(pix)
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
            painter.setPen(QtCore.Qt.PenStyle.NoPen)
            painter.setBrush(color)
            if up:
                points = [QtCore.QPointF(s / 2, 0), QtCore.QPointF(s, s), QtCore.QPointF(0, s)]
            else:
                points = [QtCore.QPointF(0, 0), QtCore.QPointF(s, 0), QtCore.QPointF(s / 2, s)]
            painter.drawPolygon(QtGui.QPolygonF(points))
            painter.end()
            self._sprites[key] = pix
        return pix


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
