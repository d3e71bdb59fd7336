"""Guides drawn over the candles: the mouse crosshair, the keyboard's cursor candle and the
last-price line.

Each repaints only the strips it leaves and enters (``update(rect)``), so moving the mouse or
ticking the forming candle does not repaint the whole pane.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from pyqtgraph.Qt import QtCore, QtGui

from .candle_item import ViewSizedItem, device_scale


def pixel_size(view: pg.ViewBox) -> tuple[float, float]:
    """Size of one screen pixel in view units ``(x, y)``."""
    (x0, x1), (y0, y1) = view.viewRange()
    w = max(view.width(), 1.0)
    h = max(view.height(), 1.0)
    return (x1 - x0) / w, (y1 - y0) / h


class _Guide(ViewSizedItem):
    def __init__(self, view: pg.ViewBox):
        super().__init__()
        self._view = view

    def _strip_x(self, x: float, half_width: float) -> QtCore.QRectF:
        px, _ = pixel_size(self._view)
        r = self._bounds
        pad = half_width + 3 * px
        return QtCore.QRectF(x - pad, r.top(), 2 * pad, r.height())

    def _strip_y(self, y: float) -> QtCore.QRectF:
        _, py = pixel_size(self._view)
        r = self._bounds
        return QtCore.QRectF(r.left(), y - 3 * py, r.width(), 6 * py)


class CrosshairItem(_Guide):
    """A dashed vertical line at a candle and, optionally, a horizontal one at a price."""

    def __init__(self, view: pg.ViewBox, color: QtGui.QColor):
        super().__init__(view)
        self._pen = QtGui.QPen(color, 1, QtCore.Qt.PenStyle.DashLine)
        self._pen.setCosmetic(True)
        self.data_x: float | None = None
        self.data_y: float | None = None
        self.setZValue(20)
        self.setVisible(False)

    def set_color(self, color: QtGui.QColor) -> None:
        self._pen.setColor(color)
        self.update()

    def set_position(self, x: float | None, y: float | None) -> None:
        """Show the lines at ``x`` and ``y`` (``None``: no such line; both: hidden)."""
        self.setVisible(x is not None or y is not None)
        if x != self.data_x:
            if self.data_x is not None:
                self.update(self._strip_x(self.data_x, 0))
            if x is not None:
                self.update(self._strip_x(x, 0))
            self.data_x = x
        if y != self.data_y:
            if self.data_y is not None:
                self.update(self._strip_y(self.data_y))
            if y is not None:
                self.update(self._strip_y(y))
            self.data_y = y

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        if self.data_x is None and self.data_y is None:
            return
        sx, dx, sy, dy = device_scale(p)
        r = self._bounds
        left, right = sorted((sx * r.left() + dx, sx * r.right() + dx))
        top, bottom = sorted((sy * r.top() + dy, sy * r.bottom() + dy))
        p.save()
        p.resetTransform()
        p.setPen(self._pen)
        if self.data_x is not None:
            x = math.floor(sx * self.data_x + dx) + 0.5
            p.drawLine(QtCore.QPointF(x, top), QtCore.QPointF(x, bottom))
        if self.data_y is not None:
            y = round(sy * self.data_y + dy) + 0.5
            p.drawLine(QtCore.QPointF(left, y), QtCore.QPointF(right, y))
        p.restore()


class CursorItem(_Guide):
    """The keyboard's cursor candle: a translucent band over its column and, in the price pane,
    an outline around the candle from low to high."""

    def __init__(self, view: pg.ViewBox, band: QtGui.QColor, outline: QtGui.QColor | None):
        super().__init__(view)
        self._band = QtGui.QBrush(band)
        self._pen = QtGui.QPen(outline) if outline is not None else None
        if self._pen is not None:
            self._pen.setCosmetic(True)
        self.data_x: float | None = None
        self.low = self.high = math.nan
        self.setZValue(-5)

    def set_colors(self, band: QtGui.QColor, outline: QtGui.QColor | None) -> None:
        self._band = QtGui.QBrush(band)
        if self._pen is not None and outline is not None:
            self._pen.setColor(outline)
        self.update()

    def set_candle(self, x: float | None, low: float = math.nan, high: float = math.nan) -> None:
        if (x, low, high) == (self.data_x, self.low, self.high):
            return
        if self.data_x is not None:
            self.update(self._strip_x(self.data_x, 0.5))
        self.data_x, self.low, self.high = x, low, high
        if x is not None:
            self.update(self._strip_x(x, 0.5))

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        if self.data_x is None:
            return
        sx, dx, sy, dy = device_scale(p)
        r = self._bounds
        top, bottom = sorted((sy * r.top() + dy, sy * r.bottom() + dy))
        half = max(1.0, abs(sx) * 0.5)
        centre = math.floor(sx * self.data_x + dx)
        left = math.floor(centre - half + 0.5)
        right = math.floor(centre + half + 0.5)
        if right - left < 3:
            left, right = centre - 1, centre + 2
        p.save()
        p.resetTransform()
        p.fillRect(QtCore.QRectF(left, top, right - left, bottom - top), self._band)
        if self._pen is not None and math.isfinite(self.low) and math.isfinite(self.high):
            y_high = round(sy * self.high + dy) - 2
            y_low = round(sy * self.low + dy) + 2
            p.setPen(self._pen)
            p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
            p.drawRect(QtCore.QRectF(left - 0.5, y_high - 0.5, right - left, y_low - y_high))
        p.restore()


class PriceLineItem(_Guide):
    """A dotted horizontal line at the last close, coloured by the last candle's direction."""

    def __init__(self, view: pg.ViewBox):
        super().__init__(view)
        self._pen = QtGui.QPen(QtGui.QColor("white"), 1, QtCore.Qt.PenStyle.DotLine)
        self._pen.setCosmetic(True)
        self.price: float | None = None
        self.setZValue(10)

    def set_price(self, price: float | None, color: QtGui.QColor) -> None:
        """Move the line; a move within its pixel row (most ticks) repaints nothing."""
        if color == self._pen.color() and self._row(price) == self._row(self.price):
            self.price = price
            return
        if self.price is not None:
            self.update(self._strip_y(self.price))
        self.price = price
        self._pen.setColor(color)
        if price is not None:
            self.update(self._strip_y(price))

    def _row(self, price: float | None) -> int | None:
        """The screen row of ``price`` in the view as it is now."""
        if price is None:
            return None
        _, (_, top) = self._view.viewRange()
        return round((top - price) / pixel_size(self._view)[1])

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        if self.price is None:
            return
        sx, dx, sy, dy = device_scale(p)
        r = self._bounds
        left, right = sorted((sx * r.left() + dx, sx * r.right() + dx))
        y = round(sy * self.price + dy) + 0.5
        p.save()
        p.resetTransform()
        p.setPen(self._pen)
        p.drawLine(QtCore.QPointF(left, y), QtCore.QPointF(right, y))
        p.restore()
