"""Overlays other features draw on the price pane: markers, segments, text labels, shaded time
ranges, a translucent "ghost" candle (a predicted next candle) and a badge (a boxed text in
the pane's top right corner, below the annotation lanes, e.g. a suggested position).

Overlays are placed by time (epoch ms) and price, and belong to a ``group`` (a string), so a
feature can redraw its own overlays with ``clear(group)`` and leave the others alone. Each
``add_*`` returns a handle for ``remove``. A time is drawn where a candle opening then has its
centre (``TimeMap.centre_x`` of the chart's view model).

Kept as numpy arrays sorted by time (rebuilt once after a change, not per frame); a frame draws
only what lies in the visible range, and markers are thinned to one per pixel column, kind and
colour, so 10,000 of them stay cheap at any zoom. Markers are sprites drawn with one
``drawPixmapFragments`` call per kind and colour; segments one ``arrayToQPath`` path per
colour and style.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
import shiboken6
from pyqtgraph.Qt import QtCore, QtGui

from ...viewmodel import ChartViewModel, TimeMap
from .axis import axis_font
from .candle_item import RectBatch, ViewSizedItem, device_scale

DEFAULT_GROUP = "default"
MARKER_SIZE = 11  # px, width of a marker triangle
MAX_TEXTS = 300  # texts drawn per frame at most; denser views show the markers only
BADGE_TOP_PX = 48  # the badge's distance from the pane's top: under the annotation lanes
BADGE_MARGIN_PX = 8  # from the pane's right edge
_UP_COLOR = "#2962ff"
_DOWN_COLOR = "#ff6d00"


def _color(value) -> QtGui.QColor:
    return pg.mkColor(value)


def _key(color: QtGui.QColor) -> int:
    return color.rgba()


_SPRITES: dict[tuple[bool, int], QtGui.QPixmap] = {}


def marker_sprite(up: bool, color: QtGui.QColor) -> QtGui.QPixmap:
    """A ▲ (``up``) or ▼ of ``color``, ``MARKER_SIZE`` pixels square, made once per colour."""
    key = (up, _key(color))
    pix = _SPRITES.get(key)
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
        _SPRITES[key] = pix
    return pix


@dataclass(frozen=True)
class Marker:
    ts: int
    price: float
    up: bool
    color: QtGui.QColor
    text: str | None
    group: str


@dataclass(frozen=True)
class Segment:
    ts0: int
    p0: float
    ts1: int
    p1: float
    color: QtGui.QColor
    dashed: bool
    group: str


@dataclass(frozen=True)
class Label:
    ts: int
    price: float
    text: str
    color: QtGui.QColor
    group: str


@dataclass(frozen=True)
class TimeRange:
    ts0: int
    ts1: int
    color: QtGui.QColor
    label: str | None
    group: str


@dataclass(frozen=True)
class Badge:
    text: str
    color: QtGui.QColor
    group: str


@dataclass(frozen=True)
class Ghost:
    ts: int
    open: float
    high: float
    low: float
    close: float
    color: QtGui.QColor


class _Table:
    """Records of one kind by handle, with sorted numpy columns built on demand."""

    def __init__(self, time_field: str):
        self.records: dict[int, object] = {}
        self._time_field = time_field
        self._columns: dict[str, np.ndarray] | None = None
        self._x: tuple | None = None

    def add(self, handle: int, record) -> None:
        self.records[handle] = record
        self._columns = None

    def remove(self, handle: int) -> bool:
        if self.records.pop(handle, None) is None:
            return False
        self._columns = None
        return True

    def clear(self, group: str | None) -> int:
        doomed = [h for h, r in self.records.items() if group is None or r.group == group]
        for h in doomed:
            del self.records[h]
        if doomed:
            self._columns = None
        return len(doomed)

    def columns(self) -> dict[str, np.ndarray]:
        """Every field as an array (``object`` for text and colours), sorted by time; colours
        also as ``color_index`` into ``palette``, texts also as ``has_text``."""
        if self._columns is None:
            recs = list(self.records.values())
            times = np.fromiter((getattr(r, self._time_field) for r in recs), dtype=np.int64,
                                count=len(recs))
            order = np.argsort(times, kind="stable")
            cols: dict[str, np.ndarray] = {"order_time": times[order]}
            fields = recs[0].__dataclass_fields__ if recs else {}
            for name in fields:
                values = [getattr(recs[i], name) for i in order]
                if name in ("ts", "ts0", "ts1"):
                    cols[name] = np.array(values, dtype=np.int64)
                elif name in ("price", "p0", "p1"):
                    cols[name] = np.array(values, dtype=np.float64)
                elif name in ("up", "dashed"):
                    cols[name] = np.array(values, dtype=bool)
                elif name == "color":
                    keys = np.array([_key(c) for c in values], dtype=np.int64)
                    _, first, index = np.unique(keys, return_index=True,
                                                     return_inverse=True)
                    cols["color_index"] = index.reshape(-1)
                    cols["palette"] = np.array([values[i] for i in first], dtype=object)
                else:
                    cols[name] = np.array(values, dtype=object)
                    cols[f"has_{name}"] = np.array([bool(v) for v in values], dtype=bool)
            self._columns = cols
            self._x = None
        return self._columns

    def x(self, time_map: TimeMap, field: str) -> np.ndarray:
        """The x of every record's ``field`` time, kept until the records or the time map
        (the series) change."""
        cols = self.columns()
        if self._x is None or self._x[0] is not time_map or self._x[1] != field:
            self._x = (time_map, field, time_map.centre_x(cols[field]))
        return self._x[2]

    def __len__(self) -> int:
        return len(self.records)


class OverlayItem(ViewSizedItem):
    """Paints the overlays of a ``ChartOverlays`` for the visible range."""

    def __init__(self, overlays: ChartOverlays, view_model: ChartViewModel):
        super().__init__()
        self._overlays = overlays
        self._view_model = view_model
        self._font = axis_font()
        self._metrics = QtGui.QFontMetricsF(self._font)
        self._rects = RectBatch()
        # QPainter.PixmapFragment is ten doubles: x, y, source left, top, width, height,
        # scale x, scale y, rotation, opacity.
        self._fragments = np.empty((0, 10))
        self.setZValue(5)

    def x_of(self, ts):
        """The x at which times (a number or an array) are drawn."""
        return self._view_model.time_map.centre_x(ts)

    # -- painting -----------------------------------------------------------------------
    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        time_map = self._view_model.time_map
        if not len(time_map) or self._bounds.isNull():
            return
        sx, dx, sy, dy = device_scale(p)
        r = self._bounds
        # The times drawn (at x_of + 0.5) up to a candle beyond the bounds.
        t_lo, t_hi = time_map.ts_of(r.left() - 1.5), time_map.ts_of(r.right() + 0.5)
        o = self._overlays
        p.save()
        p.resetTransform()
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        top, bottom = sorted((sy * r.top() + dy, sy * r.bottom() + dy))
        if len(o.ranges):
            self._paint_ranges(p, o.ranges.columns(), t_lo, t_hi, sx, dx, top, bottom)
        if len(o.segments):
            self._paint_segments(p, o.segments.columns(), t_lo, t_hi, sx, dx, sy, dy)
        if o.ghost is not None:
            self._paint_ghost(p, o.ghost, sx, dx, sy, dy)
        if len(o.markers):
            self._paint_markers(p, o.markers.columns(), t_lo, t_hi, sx, dx, sy, dy)
        if len(o.labels):
            self._paint_labels(p, o.labels.columns(), t_lo, t_hi, sx, dx, sy, dy)
        if o.badge is not None:
            self._paint_badge(p, o.badge, max(sx * r.left() + dx, sx * r.right() + dx), top)
        p.restore()

    @staticmethod
    def _window(cols: dict, t_lo: int, t_hi: int) -> slice:
        times = cols["order_time"]
        return slice(int(np.searchsorted(times, t_lo)),
                     int(np.searchsorted(times, t_hi, side="right")))

    def _paint_ranges(self, p, cols, t_lo, t_hi, sx, dx, top, bottom) -> None:
        show = (cols["ts0"] <= t_hi) & (cols["ts1"] >= t_lo)
        if not show.any():
            return
        idx = np.flatnonzero(show)
        xa = np.floor(sx * self.x_of(cols["ts0"][idx]) + dx)
        xb = np.floor(sx * self.x_of(cols["ts1"][idx]) + dx)
        left = np.maximum(np.minimum(xa, xb), -1.0)
        right = np.minimum(np.maximum(xa, xb), 1e6)
        colors = cols["color_index"][idx]
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        for ci in np.unique(colors):
            sel = colors == ci
            p.setBrush(cols["palette"][ci])
            self._rects.draw(p, left[sel], top, np.maximum(right[sel] - left[sel], 1.0),
                             bottom - top)
        labelled = idx[cols["has_label"][idx]]
        if labelled.size and labelled.size <= MAX_TEXTS:
            p.setFont(self._font)
            for i, xl in zip(labelled.tolist(),
                             np.floor(sx * self.x_of(cols["ts0"][labelled]) + dx)):
                color = QtGui.QColor(cols["palette"][cols["color_index"][i]])
                color.setAlpha(255)
                p.setPen(color)
                p.drawText(QtCore.QPointF(max(xl, 0) + 4, top + self._metrics.ascent() + 4),
                           cols["label"][i])

    def _paint_segments(self, p, cols, t_lo, t_hi, sx, dx, sy, dy) -> None:
        lo = np.minimum(cols["ts0"], cols["ts1"])
        hi = np.maximum(cols["ts0"], cols["ts1"])
        idx = np.flatnonzero((lo <= t_hi) & (hi >= t_lo))
        if not idx.size:
            return
        xa = sx * self.x_of(cols["ts0"][idx]) + dx
        xb = sx * self.x_of(cols["ts1"][idx]) + dx
        ya = sy * cols["p0"][idx] + dy
        yb = sy * cols["p1"][idx] + dy
        keys = cols["color_index"][idx] * 2 + cols["dashed"][idx]
        for key in np.unique(keys):
            sel = keys == key
            pen = QtGui.QPen(cols["palette"][key // 2], 1,
                             QtCore.Qt.PenStyle.DashLine if key % 2
                             else QtCore.Qt.PenStyle.SolidLine)
            pen.setCosmetic(True)
            xs = np.column_stack((xa[sel], xb[sel])).ravel()
            ys = np.column_stack((ya[sel], yb[sel])).ravel()
            p.strokePath(pg.arrayToQPath(xs, ys, connect="pairs"), pen)

    def _paint_ghost(self, p, ghost: Ghost, sx, dx, sy, dy) -> None:
        cx = math.floor(sx * self.x_of(ghost.ts) + dx)
        half = max(1, int(abs(sx) * 0.35))
        y = {k: round(sy * getattr(ghost, k) + dy) for k in ("open", "high", "low", "close")}
        fill = QtGui.QColor(ghost.color)
        fill.setAlpha(min(fill.alpha(), 90))
        edge = QtGui.QColor(ghost.color)
        edge.setAlpha(200)
        pen = QtGui.QPen(edge, 1, QtCore.Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        p.setPen(pen)
        p.drawLine(QtCore.QPointF(cx + 0.5, y["high"]), QtCore.QPointF(cx + 0.5, y["low"]))
        top = min(y["open"], y["close"])
        height = max(abs(y["open"] - y["close"]), 1)
        p.setBrush(fill)
        p.drawRect(QtCore.QRectF(cx - half + 0.5, top + 0.5, 2 * half, height))

    def _paint_badge(self, p, badge: Badge, right: float, top: float) -> None:
        """``badge``'s text and frame in its colour on a dark box of it, at the pane's top
        right corner."""
        w = self._metrics.horizontalAdvance(badge.text) + 12
        h = self._metrics.height() + 6
        box = QtCore.QRectF(round(right) - BADGE_MARGIN_PX - w, round(top) + BADGE_TOP_PX,
                            round(w), round(h))
        fill = badge.color.darker(300)  # opaque: the candles behind do not blur the text
        p.setPen(QtGui.QPen(badge.color, 1))
        p.setBrush(fill)
        p.drawRect(box)
        p.setFont(self._font)
        p.drawText(box, QtCore.Qt.AlignmentFlag.AlignCenter, badge.text)

    def _paint_markers(self, p, cols, t_lo, t_hi, sx, dx, sy, dy) -> None:
        win = self._window(cols, t_lo, t_hi)
        if win.stop <= win.start:
            return
        xs = self._overlays.markers.x(self._view_model.time_map, "ts")
        px = np.floor(sx * xs[win] + dx)
        py = np.rint(sy * cols["price"][win] + dy)
        up = cols["up"][win]
        colors = cols["color_index"][win]
        # An up marker sits under its price pointing up at it; a down marker above, pointing down.
        half = MARKER_SIZE / 2
        cy = np.where(up, py + half + 1, py - half - 1)
        ncol = len(cols["palette"])
        style = up * ncol + colors  # kind and colour, one sprite each
        if px.size > self._bounds_px_width(sx):
            # Denser than the pixels: keep one marker per 3x3 pixel cell, kind and colour.
            cell = (np.floor_divide(px, 3).astype(np.int64) * 8192
                    + np.floor_divide(cy, 3).astype(np.int64) % 8192)
            keep = np.sort(np.unique(cell * (2 * ncol) + style, return_index=True)[1])
        else:
            keep = np.arange(px.size)
        kept_style = style[keep]
        for st in np.unique(kept_style):
            sel = keep[kept_style == st]
            pix = marker_sprite(bool(st // ncol), cols["palette"][st % ncol])
            if len(self._fragments) < sel.size:
                self._fragments = np.empty((max(sel.size, 2 * len(self._fragments)), 10))
            frags = self._fragments[:sel.size]
            frags[:, 0] = px[sel] + 0.5
            frags[:, 1] = cy[sel]
            frags[:, 2:6] = (0, 0, MARKER_SIZE, MARKER_SIZE)
            frags[:, 6:10] = (1.0, 1.0, 0.0, 1.0)
            first = shiboken6.wrapInstance(frags.ctypes.data, QtGui.QPainter.PixmapFragment)
            p.drawPixmapFragments(first, sel.size, pix)
        with_text = keep[cols["has_text"][win][keep]]
        if with_text.size and with_text.size <= MAX_TEXTS:
            texts = cols["text"][win]
            p.setFont(self._font)
            for i in with_text.tolist():
                p.setPen(cols["palette"][colors[i]])
                y = cy[i] + (half + self._metrics.ascent() + 1 if up[i] else -half - 3)
                w = self._metrics.horizontalAdvance(texts[i])
                p.drawText(QtCore.QPointF(px[i] + 0.5 - w / 2, y), texts[i])

    def _bounds_px_width(self, sx: float) -> float:
        return abs(self._bounds.width() * sx)

    def _paint_labels(self, p, cols, t_lo, t_hi, sx, dx, sy, dy) -> None:
        win = self._window(cols, t_lo, t_hi)
        ts = cols["ts"][win]
        if not ts.size or ts.size > MAX_TEXTS:
            return
        px = sx * self.x_of(ts) + dx
        py = sy * cols["price"][win] + dy
        p.setFont(self._font)
        palette, colors = cols["palette"], cols["color_index"][win]
        for i in range(ts.size):
            p.setPen(palette[colors[i]])
            p.drawText(QtCore.QPointF(px[i] + 4, py[i] - 4), cols["text"][win][i])


class ChartOverlays:
    """The overlay API of a chart (``chart.overlays``), placed by its ``view_model``'s time
    map; see the module docstring."""

    def __init__(self, view_model: ChartViewModel):
        self.markers = _Table("ts")
        self.segments = _Table("ts0")
        self.labels = _Table("ts")
        self.ranges = _Table("ts0")
        self.ghost: Ghost | None = None
        self.badge: Badge | None = None
        self.item = OverlayItem(self, view_model)
        self.item.setVisible(False)
        self._handles = itertools.count(1)

    def _tables(self):
        return (self.markers, self.segments, self.labels, self.ranges)

    def _changed(self) -> None:
        """Repaint; an overlay layer with nothing to draw is hidden, so frames skip it."""
        self.item.setVisible(self.ghost is not None or self.badge is not None
                             or any(len(t) for t in self._tables()))
        self.item.update()

    def _add(self, table: _Table, record) -> int:
        handle = next(self._handles)
        table.add(handle, record)
        self._changed()
        return handle

    def add_marker(self, ts: int, price: float, kind: str = "up", color=None,
                   text: str | None = None, group: str = DEFAULT_GROUP) -> int:
        """A ▲ (``kind="up"``, under ``price``) or ▼ (``"down"``, above it) at candle time
        ``ts``."""
        if kind not in ("up", "down"):
            raise ValueError(f"marker kind must be 'up' or 'down', not {kind!r}")
        up = kind == "up"
        col = _color(color if color is not None else (_UP_COLOR if up else _DOWN_COLOR))
        return self._add(self.markers, Marker(int(ts), float(price), up, col, text, group))

    def add_segment(self, ts0: int, p0: float, ts1: int, p1: float, color,
                    dashed: bool = True, group: str = DEFAULT_GROUP) -> int:
        """A straight line from ``(ts0, p0)`` to ``(ts1, p1)``."""
        return self._add(self.segments, Segment(int(ts0), float(p0), int(ts1), float(p1),
                                                _color(color), bool(dashed), group))

    def add_label(self, ts: int, price: float, text: str, color,
                  group: str = DEFAULT_GROUP) -> int:
        """Text whose baseline starts just right of ``(ts, price)``."""
        return self._add(self.labels, Label(int(ts), float(price), str(text), _color(color),
                                            group))

    def add_range(self, ts0: int, ts1: int, color, label: str | None = None,
                  group: str = DEFAULT_GROUP) -> int:
        """A shaded band over the times ``[ts0, ts1]`` (use a translucent colour)."""
        lo, hi = sorted((int(ts0), int(ts1)))
        return self._add(self.ranges, TimeRange(lo, hi, _color(color), label, group))

    def set_ghost(self, ts: int, o: float, h: float, l: float, c: float, color) -> None:
        """Show one translucent candle at ``ts`` (typically the next candle's time)."""
        self.ghost = Ghost(int(ts), float(o), float(h), float(l), float(c), _color(color))
        self._changed()

    def clear_ghost(self) -> None:
        if self.ghost is not None:
            self.ghost = None
            self._changed()

    def set_badge(self, text: str, color, group: str = DEFAULT_GROUP) -> None:
        """Show ``text`` boxed in ``color`` at the pane's top right corner (one badge: it
        replaces the previous one, and goes with ``clear`` of its group)."""
        self.badge = Badge(str(text), _color(color), group)
        self._changed()

    def remove(self, handle: int) -> bool:
        """Remove one overlay; False if the handle is unknown (already removed)."""
        for table in self._tables():
            if table.remove(handle):
                self._changed()
                return True
        return False

    def clear(self, group: str | None = None) -> int:
        """Remove every overlay of ``group`` (all groups, and the ghost, with ``None``);
        returns how many were removed."""
        removed = sum(table.clear(group) for table in self._tables())
        if group is None and self.ghost is not None:
            self.ghost = None
            removed += 1
        if self.badge is not None and group in (None, self.badge.group):
            self.badge = None
            removed += 1
        if removed:
            self._changed()
        return removed

    def count(self, group: str | None = None) -> int:
        return sum(1 for table in self._tables() for r in table.records.values()
                   if group is None or r.group == group)
