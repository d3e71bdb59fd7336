"""Overlays other features draw on the price pane: markers, segments, text labels, shaded time
ranges, a translucent "ghost" candle (a predicted next candle), badges (boxed texts stacked
in the pane's top right corner, below the annotation lanes, one per group, e.g. a suggested
position and a paper account), lane
marks (one ▲ ◆ ▼ per candle along the bottom of the pane, as wide as most of a candle and
never under ``LANE_MARK_PX[0]`` px, each with its colour, opacity and a filled or hollow body,
e.g. live predictions) and a legend (text rows, each with sample glyphs) in a strip above the
plot (``LegendStrip``, the chart's ``overlays.legend_strip``), never over the candles.

Overlays are placed by time (epoch ms) and price, and belong to a ``group`` (a string), so a
feature can redraw its own overlays with ``clear(group)`` and leave the others alone. Each
``add_*`` returns a handle for ``remove``. A time is drawn where a candle opening then has its
centre (``TimeMap.centre_x`` of the chart's view model).

Kept as numpy arrays sorted by time (rebuilt once after a change, not per frame); a frame draws
only what lies in the visible range, and markers are thinned to one per pixel column, kind and
colour, so 10,000 of them stay cheap at any zoom. Markers are sprites drawn with one
``drawPixmapFragments`` call per kind and colour; segments one ``arrayToQPath`` path per
colour and style. Lane marks are kept as arrays as given (``set_lane_marks``, one set per
group) and drawn with one ``drawPixmapFragments`` call per group from one image of every
glyph, colour and body.

Nothing is cut by the axes: markers, their texts, labels and lane marks of a candle that is
partly visible are drawn wholly inside the pane (shifted in from an edge when they would
cross it), and a text whose anchor lies in the pane stays in it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np
import pyqtgraph as pg
import shiboken6
from pyqtgraph.Qt import QtCore, QtGui, QtWidgets

from ...viewmodel import ChartViewModel, TimeMap
from .axis import axis_font
from .candle_item import RectBatch, ViewSizedItem, device_scale

DEFAULT_GROUP = "default"
MARKER_SIZE = 11  # px, width of a marker triangle
MAX_TEXTS = 300  # texts drawn per frame at most; denser views show the markers only
BADGE_TOP_PX = 48  # the badge's distance from the pane's top: under the annotation lanes
BADGE_MARGIN_PX = 8  # from the pane's right edge
BADGE_GAP_PX = 4  # between stacked badges
LANE_SHAPES = ("down", "flat", "up")  # lane mark glyphs: ▼ ◆ ▲
LANE_MARK_PX = (9, 15)  # a lane mark's smallest and largest size (it follows the candle width)
LANE_BOTTOM_PX = 3  # the lane marks' distance from the pane's bottom
LEGEND_PAD_PX = 4  # the legend strip's margins
LEGEND_GAP_PX = 16  # between the legend's rows, laid out left to right
LEGEND_GLYPH_PX = 9
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


def _glyph_points(shape: int, x: float, y: float, s: float) -> list[QtCore.QPointF]:
    """The corners of lane glyph ``shape`` (an index of ``LANE_SHAPES``) in the ``s``-pixel
    square at ``(x, y)``."""
    a, b, m = 0.5, s - 0.5, s / 2
    corners = {0: ((a, a), (b, a), (m, b)),              # ▼ down
               1: ((m, a), (b, m), (m, b), (a, m)),      # ◆ flat
               2: ((m, a), (b, b), (a, b))}[shape]       # ▲ up
    return [QtCore.QPointF(x + cx, y + cy) for cx, cy in corners]


def _draw_glyph(painter: QtGui.QPainter, shape: int, color: QtGui.QColor, hollow: bool,
                x: float, y: float, s: int) -> None:
    painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
    if hollow:
        pen = QtGui.QPen(color, 1.5)
        pen.setJoinStyle(QtCore.Qt.PenJoinStyle.MiterJoin)
        painter.setPen(pen)
        painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        inset = 0.75
        pts = _glyph_points(shape, x + inset, y + inset, s - 2 * inset)
    else:
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        painter.setBrush(color)
        pts = _glyph_points(shape, x, y, s)
    painter.drawPolygon(QtGui.QPolygonF(pts))


_ATLASES: dict[tuple[int, tuple[int, ...]], QtGui.QPixmap] = {}


def lane_atlas(size: int, palette: tuple[QtGui.QColor, ...]) -> QtGui.QPixmap:
    """Every lane glyph of ``size`` pixels in one image: column ``2 * shape + hollow``, row
    the colour's index in ``palette``; made once per size and palette."""
    key = (size, tuple(_key(c) for c in palette))
    pix = _ATLASES.get(key)
    if pix is None:
        if len(_ATLASES) > 64:
            _ATLASES.clear()
        pix = QtGui.QPixmap(size * 2 * len(LANE_SHAPES), size * max(len(palette), 1))
        pix.fill(QtCore.Qt.GlobalColor.transparent)
        painter = QtGui.QPainter(pix)
        for row, color in enumerate(palette):
            for shape in range(len(LANE_SHAPES)):
                for hollow in (False, True):
                    _draw_glyph(painter, shape, color, hollow, (2 * shape + hollow) * size,
                                row * size, size)
        painter.end()
        _ATLASES[key] = pix
    return pix


def lane_mark_px(px_per_candle: float) -> int:
    """A lane mark's size at a zoom: about 85 % of a candle, odd, within ``LANE_MARK_PX``."""
    lo, hi = LANE_MARK_PX
    s = int(min(max(round(abs(px_per_candle) * 0.85), lo), hi))
    return s if s % 2 else s - 1


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


@dataclass(frozen=True, eq=False)
class LaneMarks:
    """One group's lane marks, sorted by time: ``shape`` indexes ``LANE_SHAPES``,
    ``color_index`` indexes ``palette``."""

    ts: np.ndarray
    shape: np.ndarray
    color_index: np.ndarray
    palette: tuple[QtGui.QColor, ...]
    opacity: np.ndarray
    hollow: np.ndarray
    group: str

    def __len__(self) -> int:
        return len(self.ts)


@dataclass(frozen=True)
class LegendRow:
    """A legend row: sample ``glyphs`` (``(shape, colour, hollow)``, shape a name of
    ``LANE_SHAPES``), then ``text`` in ``color`` (None: the legend's text colour)."""

    text: str
    color: object = None
    glyphs: tuple[tuple[str, object, bool], ...] = ()


@dataclass(frozen=True, eq=False)
class Legend:
    rows: tuple[LegendRow, ...]
    group: str


@dataclass(frozen=True)
class Ghost:
    ts: int
    open: float
    high: float
    low: float
    close: float
    color: QtGui.QColor


class _Record(Protocol):
    """What a table holds: one of the record dataclasses above."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def group(self) -> str: ...


class _Table:
    """Records of one kind by handle, with sorted numpy columns built on demand."""

    def __init__(self, time_field: str):
        self.records: dict[int, _Record] = {}
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
        self._pane = (0.0, 0.0, 0.0, 0.0)  # left, right, top, bottom in device pixels
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
        self._pane = (*sorted((sx * r.left() + dx, sx * r.right() + dx)), top, bottom)
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
        for lane in o.lanes.values():
            self._paint_lane(p, lane, t_lo, t_hi, sx, dx)
        y = top + BADGE_TOP_PX
        for badge in o.badges.values():
            y += self._paint_badge(p, badge, self._pane[1], y) + BADGE_GAP_PX
        p.restore()

    def _shown(self, xs: np.ndarray) -> np.ndarray:
        """Which of the candle centres ``xs`` (data x) belong to a candle at least partly in
        the pane."""
        r = self._bounds
        return (xs > r.left() - 0.5) & (xs < r.right() + 0.5)

    def _inside_x(self, px: np.ndarray, half: int) -> np.ndarray:
        """Pixel columns ``px`` of things ``half`` columns wide either side of them, moved in
        from the pane's left and right edges where they would cross them."""
        left, right = round(self._pane[0]), round(self._pane[1])
        return np.minimum(np.maximum(px, left + half), max(left + half, right - 1 - half))

    def _text_at(self, x: float, baseline: float, width: float, anchored_y: float,
                 shown: bool = True) -> QtCore.QPointF:
        """Where a text of ``width`` meant to start at ``(x, baseline)`` is drawn so that it
        stays in the pane when its anchor does: moved in from the left and right edges when
        its candle is ``shown`` (at least partly in the pane), and from the top and bottom
        when its anchor's height ``anchored_y`` lies in the pane."""
        left, right, top, bottom = self._pane
        if shown:
            x = min(max(x, left + 2), max(left + 2, right - width - 2))
        if top <= anchored_y <= bottom:
            baseline = min(max(baseline, top + self._metrics.ascent() + 1),
                           bottom - self._metrics.descent() - 1)
        return QtCore.QPointF(x, baseline)

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

    def _paint_badge(self, p, badge: Badge, right: float, top: float) -> int:
        """``badge``'s text and frame in its colour on a dark box of it, its top at ``top``
        by the pane's right edge; returns its height."""
        w = self._metrics.horizontalAdvance(badge.text) + 12
        h = round(self._metrics.height() + 6)
        box = QtCore.QRectF(round(right) - BADGE_MARGIN_PX - w, round(top), round(w), h)
        fill = badge.color.darker(300)  # opaque: the candles behind do not blur the text
        p.setPen(QtGui.QPen(badge.color, 1))
        p.setBrush(fill)
        p.drawRect(box)
        p.setFont(self._font)
        p.drawText(box, QtCore.Qt.AlignmentFlag.AlignCenter, badge.text)
        return h

    def _paint_markers(self, p, cols, t_lo, t_hi, sx, dx, sy, dy) -> None:
        win = self._window(cols, t_lo, t_hi)
        if win.stop <= win.start:
            return
        xs = self._overlays.markers.x(self._view_model.time_map, "ts")[win]
        half = MARKER_SIZE / 2
        # The marker of a candle partly in the pane is wholly in it (moved in from the edge).
        px = np.where(self._shown(xs), self._inside_x(np.floor(sx * xs + dx),
                                                      (MARKER_SIZE - 1) // 2),
                      np.floor(sx * xs + dx))
        py = np.rint(sy * cols["price"][win] + dy)
        up = cols["up"][win]
        colors = cols["color_index"][win]
        # An up marker sits under its price pointing up at it; a down marker above, pointing down.
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
            shown = self._shown(xs)
            p.setFont(self._font)
            for i in with_text.tolist():
                p.setPen(cols["palette"][colors[i]])
                y = cy[i] + (half + self._metrics.ascent() + 1 if up[i] else -half - 3)
                w = self._metrics.horizontalAdvance(texts[i])
                p.drawText(self._text_at(px[i] + 0.5 - w / 2, y, w, py[i], bool(shown[i])),
                           texts[i])

    def _bounds_px_width(self, sx: float) -> float:
        return abs(self._bounds.width() * sx)

    def _paint_labels(self, p, cols, t_lo, t_hi, sx, dx, sy, dy) -> None:
        win = self._window(cols, t_lo, t_hi)
        ts = cols["ts"][win]
        if not ts.size or ts.size > MAX_TEXTS:
            return
        xs = self.x_of(ts)
        px = sx * xs + dx
        py = sy * cols["price"][win] + dy
        shown = self._shown(xs)
        p.setFont(self._font)
        palette, colors = cols["palette"], cols["color_index"][win]
        texts = cols["text"][win]
        for i in range(ts.size):
            p.setPen(palette[colors[i]])
            w = self._metrics.horizontalAdvance(texts[i])
            p.drawText(self._text_at(px[i] + 4, py[i] - 4, w, py[i], bool(shown[i])),
                       texts[i])


    def _paint_lane(self, p, lane: LaneMarks, t_lo, t_hi, sx, dx) -> None:
        """The lane marks of candles in the pane: one glyph per pixel cell of a mark's size
        (the newest wins), all from one image in one call."""
        lo = int(np.searchsorted(lane.ts, t_lo))
        hi = int(np.searchsorted(lane.ts, t_hi, side="right"))
        if hi <= lo:
            return
        xs = self._view_model.time_map.centre_x(lane.ts[lo:hi])
        idx = np.flatnonzero(self._shown(xs)) + lo
        if not idx.size:
            return
        s = lane_mark_px(sx)
        px = self._inside_x(np.floor(sx * xs[idx - lo] + dx), (s - 1) // 2)
        if abs(sx) < s and idx.size > 1:
            # Candles narrower than the marks: one per cell of their width, the newest.
            cell = np.floor_divide(px - self._pane[0], s).astype(np.int64)
            last = np.flatnonzero(np.append(cell[1:] != cell[:-1], True))
            idx, px = idx[last], px[last]
        n = idx.size
        if len(self._fragments) < n:
            self._fragments = np.empty((max(n, 2 * len(self._fragments)), 10))
        frags = self._fragments[:n]
        frags[:, 0] = px + 0.5
        frags[:, 1] = round(self._pane[3]) - LANE_BOTTOM_PX - s / 2
        frags[:, 2] = (2 * lane.shape[idx] + lane.hollow[idx]) * s
        frags[:, 3] = lane.color_index[idx] * s
        frags[:, 4:6] = s
        frags[:, 6:9] = (1.0, 1.0, 0.0)
        frags[:, 9] = lane.opacity[idx]
        first = shiboken6.wrapInstance(frags.ctypes.data, QtGui.QPainter.PixmapFragment)
        p.drawPixmapFragments(first, n, lane_atlas(s, lane.palette))


class LegendStrip(QtWidgets.QWidget):
    """The legend: its rows (sample glyphs, then text) left to right in a strip above the
    plot, wrapping onto as many lines as its width needs; hidden without a legend."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("legendStrip")
        self.legend: Legend | None = None
        self._font = axis_font()
        self._metrics = QtGui.QFontMetricsF(self._font)
        self._background = QtGui.QColor("#131722")
        self._text = QtGui.QColor("#d1d4dc")
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored,
                           QtWidgets.QSizePolicy.Policy.Fixed)
        self.hide()

    def set_colors(self, background, text) -> None:
        self._background, self._text = _color(background), _color(text)
        self.update()

    def set_legend(self, legend: Legend | None) -> None:
        self.legend = legend
        self.setVisible(legend is not None and self.parent() is not None)  # once laid out
        self._fit()
        self.update()

    def _row_height(self) -> float:
        return max(self._metrics.height(), LEGEND_GLYPH_PX) + 2

    def _row_width(self, row: LegendRow) -> float:
        glyphs = len(row.glyphs) * (LEGEND_GLYPH_PX + 2) + (2 if row.glyphs else 0)
        return glyphs + self._metrics.horizontalAdvance(row.text)

    def placed(self, width: float) -> list[tuple[float, float, LegendRow]]:
        """Where each row goes at ``width``: ``(x, y, row)``, left to right, wrapping."""
        rows = self.legend.rows if self.legend is not None else ()
        x = y = float(LEGEND_PAD_PX)
        out = []
        for row in rows:
            w = self._row_width(row)
            if x > LEGEND_PAD_PX and x + w > width - LEGEND_PAD_PX:
                x, y = float(LEGEND_PAD_PX), y + self._row_height()
            out.append((x, y, row))
            x += w + LEGEND_GAP_PX
        return out

    def _fit(self) -> None:
        placed = self.placed(self.width())
        lines = len({y for _, y, _ in placed}) or 1
        height = math.ceil(lines * self._row_height()) + 2 * LEGEND_PAD_PX
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def paintEvent(self, event) -> None:
        painter = QtGui.QPainter(self)
        painter.fillRect(self.rect(), self._background)
        painter.setFont(self._font)
        m, g, row_h = self._metrics, LEGEND_GLYPH_PX, self._row_height()
        for x, y, row in self.placed(self.width()):
            for shape, color, hollow in row.glyphs:
                _draw_glyph(painter, LANE_SHAPES.index(shape), _color(color), hollow, x,
                            y + (row_h - g) / 2, g)
                x += g + 2
            x += 2 if row.glyphs else 0
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
            painter.setPen(_color(row.color) if row.color is not None else self._text)
            painter.drawText(QtCore.QPointF(x, y + (row_h + m.ascent() - m.descent()) / 2),
                             row.text)
        painter.end()


class ChartOverlays:
    """The overlay API of a chart (``chart.overlays``), placed by its ``view_model``'s time
    map; see the module docstring."""

    def __init__(self, view_model: ChartViewModel):
        self.markers = _Table("ts")
        self.segments = _Table("ts0")
        self.labels = _Table("ts")
        self.ranges = _Table("ts0")
        self.ghost: Ghost | None = None
        self.badges: dict[str, Badge] = {}  # by group, stacked top down in this order
        self.lanes: dict[str, LaneMarks] = {}
        self.legend: Legend | None = None
        self.legend_strip = LegendStrip()  # the chart lays it out above the plot
        self.item = OverlayItem(self, view_model)
        self.item.setVisible(False)
        self._handles = itertools.count(1)

    def _tables(self):
        return (self.markers, self.segments, self.labels, self.ranges)

    def _changed(self) -> None:
        """Repaint; an overlay layer with nothing to draw is hidden, so frames skip it."""
        self.item.setVisible(self.ghost is not None or bool(self.badges) or bool(self.lanes)
                             or any(len(t) for t in self._tables()))
        if self.legend_strip.legend is not self.legend:
            self.legend_strip.set_legend(self.legend)
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

    @property
    def badge(self) -> Badge | None:
        """The top badge (None without one)."""
        return next(iter(self.badges.values()), None)

    def set_badge(self, text: str, color, group: str = DEFAULT_GROUP) -> None:
        """Show ``text`` boxed in ``color`` at the pane's top right corner: one badge per
        group (it replaces the group's previous one, in its place; a new group's goes below
        the others) that goes with ``clear`` of its group."""
        self.badges[group] = Badge(str(text), _color(color), group)
        self._changed()

    def set_lane_marks(self, ts, shapes, color_index, palette, opacity=None, hollow=None,
                       group: str = DEFAULT_GROUP) -> None:
        """Show ``group``'s lane marks (replacing the ones it had; none removes them): one
        glyph per time ``ts`` (candle open times, drawn at their candle) along the bottom of
        the pane. ``shapes``: indexes of ``LANE_SHAPES`` (0 ▼, 1 ◆, 2 ▲); ``color_index``:
        indexes of ``palette`` (colours); ``opacity`` 0..1 (default 1) and ``hollow``
        (default filled) per mark."""
        ts = np.asarray(ts, dtype=np.int64).reshape(-1)
        n = ts.size
        if not n:
            if self.lanes.pop(group, None) is not None:
                self._changed()
            return
        shape = np.asarray(shapes, dtype=np.int64).reshape(-1)
        colors = np.asarray(color_index, dtype=np.int64).reshape(-1)
        cols = tuple(_color(c) for c in palette)
        alpha = (np.ones(n) if opacity is None
                 else np.clip(np.asarray(opacity, dtype=np.float64).reshape(-1), 0.0, 1.0))
        body = (np.zeros(n, dtype=bool) if hollow is None
                else np.asarray(hollow, dtype=bool).reshape(-1))
        if not all(a.size == n for a in (shape, colors, alpha, body)):
            raise ValueError("lane marks need one shape, colour, opacity and body per time")
        if shape.min() < 0 or shape.max() >= len(LANE_SHAPES):
            raise ValueError(f"lane mark shapes index {LANE_SHAPES}")
        if colors.min() < 0 or colors.max() >= len(cols):
            raise ValueError("lane mark colours index the palette")
        order = np.argsort(ts, kind="stable")
        self.lanes[group] = LaneMarks(ts[order], shape[order], colors[order], cols,
                                      alpha[order], body[order], group)
        self._changed()

    def set_legend(self, rows, group: str = DEFAULT_GROUP) -> None:
        """Show a legend of ``rows`` (``LegendRow``s) in the strip above the plot (one
        legend: it replaces the previous one, and goes with ``clear`` of its group); no rows
        remove it."""
        rows = tuple(rows)
        if not rows:
            if self.legend is not None and self.legend.group == group:
                self.legend = None
                self._changed()
            return
        self.legend = Legend(rows, group)
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
        for name in [g for g in self.badges if group in (None, g)]:
            del self.badges[name]
            removed += 1
        if self.legend is not None and group in (None, self.legend.group):
            self.legend = None
            removed += 1
        for name in [g for g in self.lanes if group in (None, g)]:
            removed += len(self.lanes.pop(name))
        if removed:
            self._changed()
        return removed

    def count(self, group: str | None = None) -> int:
        """Markers, segments, labels, ranges and lane marks (of ``group``)."""
        return (sum(1 for table in self._tables() for r in table.records.values()
                    if group is None or r.group == group)
                + sum(len(lane) for g, lane in self.lanes.items() if group in (None, g)))
