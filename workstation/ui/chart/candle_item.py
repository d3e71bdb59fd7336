"""The graphics items that paint candles and volume from a ``VisibleCandles``.

Both paint in device pixels: the numpy columns are mapped through the painter's
scale-and-translate transform, snapped to whole pixels and handed to Qt as arrays of
rectangles (one ``drawRects`` call per colour), so a frame costs O(units on screen) with no
per-candle Python. Only units inside the exposed rectangle are painted, so a repaint of the
forming candle or of a moving line touches a handful of units.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import shiboken6
from pyqtgraph.Qt import QtCore, QtGui, QtWidgets

from .visible import VisibleCandles, empty_visible

BODY_FRACTION = 0.75
"""Body width as a fraction of the candle spacing."""
_FAR = float(1 << 24)


class RectBatch:
    """Whole-pixel rectangles from numpy columns, drawn with one ``QPainter.drawRects``.

    The rectangles are laid out in memory as an array of ``QRect`` (four int32: left, top,
    right, bottom, inclusive) and handed to Qt's pointer-and-count overload, which fills
    integer rectangles on its fast path (about 3x faster than ``QRectF`` for thin bars)."""

    def __init__(self):
        self._buf = np.empty((0, 4), dtype=np.int32)

    def draw(self, painter: QtGui.QPainter, x, y, w, h) -> None:
        """Fill rectangles at device pixels ``x, y`` of size ``w x h`` (arrays or scalars;
        sizes of at least 1) with the painter's brush."""
        n = int(np.broadcast(x, y, w, h).size)
        if not n:
            return
        if len(self._buf) < n:
            self._buf = np.empty((max(n, 2 * len(self._buf)), 4), dtype=np.int32)
        out = self._buf[:n]
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        # Far off-screen coordinates are clipped so they fit in int32 (Qt clips the rest).
        out[:, 0] = np.minimum(np.maximum(x, -_FAR), _FAR)
        out[:, 1] = np.minimum(np.maximum(y, -_FAR), _FAR)
        out[:, 2] = np.minimum(np.maximum(x + w - 1, -_FAR), _FAR)
        out[:, 3] = np.minimum(np.maximum(y + h - 1, -_FAR), _FAR)
        painter.drawRects(shiboken6.wrapInstance(out.ctypes.data, QtCore.QRect), n)


def device_scale(painter: QtGui.QPainter) -> tuple[float, float, float, float]:
    """``(sx, dx, sy, dy)`` of the painter's item-to-device transform (scale + translate)."""
    tr = painter.transform()
    return tr.m11(), tr.dx(), tr.m22(), tr.dy()


class ViewSizedItem(pg.GraphicsObject):
    """An item whose bounding rectangle is the view rectangle it is told about; it paints in
    device pixels and honours the exposed rectangle."""

    def __init__(self):
        super().__init__()
        self._bounds = QtCore.QRectF()
        self.setFlag(QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)

    def set_view_rect(self, rect: QtCore.QRectF) -> None:
        if rect != self._bounds:
            self.prepareGeometryChange()
            self._bounds = QtCore.QRectF(rect)

    def boundingRect(self) -> QtCore.QRectF:
        return self._bounds


def _body_width(px_per_candle: float) -> int:
    """Odd body width in pixels, so the wick sits in the middle."""
    w = max(1, int(round(px_per_candle * BODY_FRACTION)))
    return w if w % 2 else w - 1


def _exposed(frame: VisibleCandles, rect: QtCore.QRectF, sx: float, sy: float,
             y_bottom_is_zero: bool):
    """Index (slice or array) of the units that intersect ``rect`` (item coordinates)."""
    n = len(frame)
    if rect.isNull() or not n:
        return slice(0, n)
    margin_x = frame.unit_width + 2.0 / abs(sx)
    x = frame.x
    left = int(np.searchsorted(x, rect.left() - margin_x))
    right = int(np.searchsorted(x, rect.right() + margin_x, side="right"))
    if y_bottom_is_zero:
        return slice(left, right)
    margin_y = 2.0 / abs(sy)
    low = frame.low[left:right]
    high = frame.high[left:right]
    hit = (high >= rect.top() - margin_y) & (low <= rect.bottom() + margin_y)
    if hit.all():
        return slice(left, right)
    return np.flatnonzero(hit) + left


class _FrameItem(ViewSizedItem):
    """Paints the current ``VisibleCandles`` frame in an up and a down colour; a subclass
    draws the exposed part (``_draw``)."""

    volume_pane = False  # exposure is judged on high/low, or on volume from zero

    def __init__(self, up: QtGui.QColor, down: QtGui.QColor):
        super().__init__()
        self.frame: VisibleCandles = empty_visible()
        self.set_colors(up, down)
        self._batch = RectBatch()

    def set_colors(self, up: QtGui.QColor, down: QtGui.QColor) -> None:
        self._brushes = (QtGui.QBrush(up), QtGui.QBrush(down))
        self.update()

    def set_frame(self, frame: VisibleCandles) -> None:
        self.frame = frame
        self.update()

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        """The exposed candles (or columns), in device pixels, without antialiasing."""
        f = self.frame
        if not len(f):
            return
        sx, dx, sy, dy = device_scale(p)
        sel = _exposed(f, option.exposedRect, sx, sy, self.volume_pane)
        if not len(f.x[sel]):
            return
        cx = np.floor(sx * f.x[sel] + dx)
        up = f.close[sel] >= f.open[sel]
        p.save()
        p.resetTransform()
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        self._draw(p, f, sel, cx, up, sx, sy, dy)
        p.restore()

    def _draw(self, p, f: VisibleCandles, sel, cx, up, sx, sy, dy) -> None:
        raise NotImplementedError


class CandleItem(_FrameItem):
    """Wicks and bodies (or per-pixel-column high-low bars) in up and down colours."""

    def _draw(self, p, f: VisibleCandles, sel, cx, up, sx, sy, dy) -> None:
        y_high = np.rint(sy * f.high[sel] + dy)
        wick_h = np.rint(sy * f.low[sel] + dy) - y_high + 1.0
        if f.columns or sx < 3.0:
            for mask, brush in zip((up, ~up), self._brushes):
                p.setBrush(brush)
                self._batch.draw(p, cx[mask], y_high[mask], 1.0, wick_h[mask])
            return
        bw = _body_width(sx)
        y_open = np.rint(sy * f.open[sel] + dy)
        y_close = np.rint(sy * f.close[sel] + dy)
        body_top = np.minimum(y_open, y_close)
        body_h = np.abs(y_open - y_close) + 1.0
        for mask, brush in zip((up, ~up), self._brushes):
            m = int(mask.sum())
            p.setBrush(brush)
            bx = np.concatenate((cx[mask], cx[mask] - bw // 2))
            by = np.concatenate((y_high[mask], body_top[mask]))
            bwidth = np.concatenate((np.ones(m), np.full(m, float(bw))))
            bh = np.concatenate((wick_h[mask], body_h[mask]))
            self._batch.draw(p, bx, by, bwidth, bh)


class VolumeItem(_FrameItem):
    """Volume bars from zero, coloured by the direction of their candle (or column)."""

    volume_pane = True

    def _draw(self, p, f: VisibleCandles, sel, cx, up, sx, sy, dy) -> None:
        y_top = np.rint(sy * f.volume[sel] + dy)
        height = np.maximum(np.rint(dy) - y_top, 1.0)
        if f.columns or sx < 3.0:
            width, left = 1.0, cx
        else:
            bw = _body_width(sx)
            width, left = float(bw), cx - bw // 2
        for mask, brush in zip((up, ~up), self._brushes):
            p.setBrush(brush)
            self._batch.draw(p, left[mask], y_top[mask], width, height[mask])
