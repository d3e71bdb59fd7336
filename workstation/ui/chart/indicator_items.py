"""The graphics items that draw indicators: lines over a frame's units, level guides and the
visible range's volume profile.

``IndicatorLinesItem`` draws each line through the units on screen: a candle, or (zoomed out)
a pixel column, which shows the value at its last candle, as its close does. The points are
mapped in numpy and handed to Qt as one path per line (NaN, the warm-up, breaks it), so a frame
costs O(units on screen). A tick repaints the last two units' strip only, and only
between the values drawn there.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import QtCore, QtGui, QtWidgets

from ...indicators import VolumeProfile, volume_profile
from .candle_item import ViewSizedItem, device_scale
from .guides import pixel_size
from .visible import VisibleCandles, empty_visible

PROFILE_WIDTH = 0.25  # of the pane's width, at the right edge, for the longest row


def cosmetic_pen(color: str, width: float = 1.0, dashed: bool = False) -> QtGui.QPen:
    pen = QtGui.QPen(pg.mkColor(color), width)
    pen.setCosmetic(True)
    if dashed:
        pen.setStyle(QtCore.Qt.PenStyle.DashLine)
    return pen


class IndicatorLinesItem(ViewSizedItem):
    """Lines ``(values, pen)`` (``values()`` gives the line's array over the candles) drawn
    through the units of the frame it is given."""

    def __init__(self):
        super().__init__()
        self.lines: list[tuple[Callable[[], np.ndarray], QtGui.QPen]] = []
        self.frame: VisibleCandles = empty_visible()
        self._drawn_tail = np.empty(0)  # the values last drawn at the last two units

    def set_lines(self, lines: list[tuple[Callable[[], np.ndarray], QtGui.QPen]]) -> None:
        self.lines = lines
        self._drawn_tail = self._tail_values()
        self.update()

    def set_frame(self, frame: VisibleCandles) -> None:
        """A new view: drawn directly (a pixmap of its own would be drawn again anyway)."""
        self.frame = frame
        self._drawn_tail = self._tail_values()
        self._cache(QtWidgets.QGraphicsItem.CacheMode.NoCache)
        self.update()

    def _cache(self, mode: QtWidgets.QGraphicsItem.CacheMode) -> None:
        if self.cacheMode() != mode:  # setting it again would throw the pixmap away
            self.setCacheMode(mode)

    def unit_values(self, line: Callable[[], np.ndarray]) -> np.ndarray:
        """The line's value at each unit's last candle."""
        values = line()
        stop = self.frame.stop
        if not len(stop) or len(values) < int(stop[-1]):
            return np.full(len(stop), np.nan)
        return values[stop - 1]

    def value_range(self) -> tuple[float, float]:
        """The lowest and highest value drawn (NaN, NaN when none)."""
        lo, hi = math.inf, -math.inf
        for line, _pen in self.lines:
            v = self.unit_values(line)
            v = v[np.isfinite(v)]
            if len(v):
                lo, hi = min(lo, float(v.min())), max(hi, float(v.max()))
        return (lo, hi) if lo <= hi else (math.nan, math.nan)

    def _tail_values(self) -> np.ndarray:
        """Every line's values at the last two units."""
        f = self.frame
        if not len(f) or not self.lines:
            return np.empty(0)
        return np.concatenate([self.unit_values(line)[-2:] for line, _pen in self.lines])

    def update_last(self) -> None:
        """The forming candle changed: for each line whose last two units moved by half a
        pixel or more since they were drawn, repaint their strip from the lowest to the
        highest value drawn there before and now; a line that moved less repaints nothing
        (what is drawn is unchanged) and keeps its drawn values to compare with."""
        f = self.frame
        view = self.getViewBox()
        if not len(f) or not self.lines or view is None:
            return
        # Ticks come many to a view: from the first, the lines live in a pixmap of their
        # own, so the repaints other items cause (the last-price row, the forming candle)
        # copy them instead of stroking every line again.
        self._cache(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        now = self._tail_values()
        if len(self._drawn_tail) != len(now):
            self._drawn_tail = np.full(len(now), np.nan)
        px, py = pixel_size(view)
        x0 = float(f.x[max(len(f) - 2, 0)]) - f.unit_width - 2 * px
        x1 = float(f.x[-1]) + f.unit_width + 2 * px
        step = min(len(f), 2)  # values per line
        for k in range(0, len(now), step):
            old, new = self._drawn_tail[k:k + step], now[k:k + step]
            same_nan = np.array_equal(np.isnan(old), np.isnan(new))
            if same_nan and not (np.abs(np.nan_to_num(new - old)) >= 0.5 * py).any():
                continue
            self._drawn_tail[k:k + step] = new
            ys = np.concatenate((old, new))
            ys = ys[np.isfinite(ys)]
            if len(ys):
                lo, hi = float(ys.min()) - 3 * py, float(ys.max()) + 3 * py
                self.update(QtCore.QRectF(x0, lo, x1 - x0, hi - lo))

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        f = self.frame
        if not len(f) or not self.lines:
            return
        sx, dx, sy, dy = device_scale(p)
        exposed = option.exposedRect
        sel = slice(0, len(f))
        if not exposed.isNull():
            margin = 2 * f.unit_width
            sel = slice(max(int(np.searchsorted(f.x, exposed.left() - margin)) - 1, 0),
                        int(np.searchsorted(f.x, exposed.right() + margin, side="right")) + 1)
        # the exposed rows, in device pixels (a tick exposes a thin row: the last price)
        top, bottom = sorted((sy * exposed.top() + dy, sy * exposed.bottom() + dy))
        x = sx * f.x[sel] + dx
        p.save()
        p.resetTransform()
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        for line, pen in self.lines:
            points = _segments_within(x, sy * self.unit_values(line)[sel] + dy,
                                      top - 2.0, bottom + 2.0, exposed.isNull())
            if points is not None:
                p.setPen(pen)
                p.drawPath(pg.arrayToQPath(*points))
        p.restore()


def _segments_within(x: np.ndarray, y: np.ndarray, top: float, bottom: float, everything: bool):
    """The points of a line's segments that reach the rows ``top .. bottom`` (every segment
    when ``everything``) as ``(x, y, connect)`` for ``arrayToQPath``; None if none. A point
    joins the next only where both are drawn: no warm-up (NaN) lies between them."""
    finite = np.isfinite(y)
    segment = finite[:-1] & finite[1:]
    if not everything:
        lo, hi = np.fmin(y[:-1], y[1:]), np.fmax(y[:-1], y[1:])
        segment &= (hi >= top) & (lo <= bottom)
    if not segment.any():
        return None
    keep = np.zeros(len(y), dtype=bool)
    keep[:-1] |= segment
    keep[1:] |= segment
    idx = np.flatnonzero(keep)
    connect = np.append(segment, False)[idx]
    return x[idx], y[idx], connect


class LegendLine(QtWidgets.QWidget):
    """One line of ``(name, colour, value)`` pieces, each name in its indicator's colour,
    painted directly (no rich-text layout): a tick that changes a value repaints this strip
    and nothing else, and a tick that changes nothing it shows repaints nothing."""

    GAP = "  ·  "

    def __init__(self):
        super().__init__()
        self.pieces: tuple[tuple[str, str, str], ...] = ()
        self._text_color = QtGui.QColor("#d1d4dc")
        self._background = QtGui.QColor("#131722")
        height = self.fontMetrics().height() + 2
        self.setFixedHeight(height)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored,
                           QtWidgets.QSizePolicy.Policy.Fixed)

    def set_colors(self, background: str, text: str) -> None:
        self._background, self._text_color = pg.mkColor(background), pg.mkColor(text)
        self.update()

    def set_pieces(self, pieces: tuple[tuple[str, str, str], ...]) -> None:
        if pieces != self.pieces:
            self.pieces = pieces
            self.update()

    def text(self) -> str:
        return self.GAP.join(f"{name} {value}" for name, _color, value in self.pieces)

    def paintEvent(self, event) -> None:
        p = QtGui.QPainter(self)
        p.fillRect(event.rect(), self._background)
        metrics = self.fontMetrics()
        x, baseline = 8, metrics.ascent() + 1
        for n, (name, color, value) in enumerate(self.pieces):
            if n:
                p.setPen(self._text_color)
                p.drawText(x, baseline, self.GAP)
                x += metrics.horizontalAdvance(self.GAP)
            p.setPen(pg.mkColor(color))
            p.drawText(x, baseline, name)
            x += metrics.horizontalAdvance(name + " ")
            p.setPen(self._text_color)
            p.drawText(x, baseline, value)
            x += metrics.horizontalAdvance(value)
        p.end()


class LevelsItem(ViewSizedItem):
    """Dashed horizontal guides across a pane (an RSI's 30 and 70)."""

    def __init__(self, levels: tuple[float, ...], color: str):
        super().__init__()
        self.levels = levels
        self.pen = cosmetic_pen(color, 1.0, dashed=True)

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        rect = self._bounds
        if rect.isNull() or not self.levels:
            return
        p.save()
        p.setPen(self.pen)
        for level in self.levels:
            p.drawLine(QtCore.QLineF(rect.left(), level, rect.right(), level))
        p.restore()


class VolumeProfileItem(ViewSizedItem):
    """Volume at each price over the units on screen: rows from the pane's right edge, the
    value area stronger, the point of control outlined."""

    def __init__(self, rows: int, color: str, value_color: str, poc_color: str):
        super().__init__()
        self.rows = rows
        self.profile: VolumeProfile | None = None
        self._colors = (pg.mkColor(color), pg.mkColor(value_color))
        self._poc_pen = cosmetic_pen(poc_color, 1.0)

    def set_frame(self, frame: VisibleCandles) -> None:
        self._compute(frame)
        self.update()

    def refresh_last(self, frame: VisibleCandles, width_px: float) -> None:
        """The forming candle changed: recompute; repaint only if a row moved a pixel."""
        old = self.profile
        self._compute(frame)
        new = self.profile
        if old is None or new is None:
            if old is not new:
                self.update()
            return

        def lengths(prof: VolumeProfile) -> np.ndarray:
            return np.rint(prof.volume / prof.volume.max() * width_px * PROFILE_WIDTH)

        if not (np.array_equal(old.edges, new.edges)
                and (old.poc, old.value_low, old.value_high)
                == (new.poc, new.value_low, new.value_high)
                and np.array_equal(lengths(old), lengths(new))):
            self.update()

    def _compute(self, frame: VisibleCandles) -> None:
        self.profile = (volume_profile(frame.low, frame.high, frame.volume, self.rows)
                        if len(frame) else None)

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        prof, rect = self.profile, self._bounds
        if prof is None or rect.isNull():
            return
        sx, dx, sy, dy = device_scale(p)
        right = sx * rect.right() + dx
        width = abs(sx * rect.width()) * PROFILE_WIDTH
        length = prof.volume / prof.volume.max() * width
        y = sy * prof.edges + dy
        p.save()
        p.resetTransform()
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        for row in range(prof.rows):
            top, bottom = sorted((y[row], y[row + 1]))
            inside = prof.value_low <= row <= prof.value_high
            p.setBrush(self._colors[1 if inside else 0])
            p.drawRect(QtCore.QRectF(right - length[row], top + 0.5, length[row],
                                     max(bottom - top - 1.0, 1.0)))
        mid = (y[prof.poc] + y[prof.poc + 1]) / 2
        p.setPen(self._poc_pen)
        p.drawLine(QtCore.QLineF(right - width * 1.1, mid, right, mid))
        p.restore()
