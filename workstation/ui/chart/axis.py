"""Light axes for the chart: a price axis (right of a pane), a time axis (under the panes) and
the grid lines they imply.

pyqtgraph's ``AxisItem`` re-measures every label on every range change, which alone costs
several milliseconds a frame; these draw a handful of cached labels. Both axes also carry
*tags*: boxed values such as the last price or the crosshair's price and time.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import QtCore, QtGui, QtWidgets
from pyqtgraph.Qt.internals import PrimitiveArray

from .candle_item import ViewSizedItem, device_scale
from .ticks import TimeTick, price_ticks

AXIS_FONT_PX = 11
PRICE_AXIS_WIDTH = 76
TIME_AXIS_HEIGHT = 22
_TICK_LEN = 4


def axis_font() -> QtGui.QFont:
    font = QtGui.QFont()
    font.setPixelSize(AXIS_FONT_PX)
    return font


class Tag(NamedTuple):
    value: float  # price, or x in candle-index units
    text: str
    background: QtGui.QColor
    foreground: QtGui.QColor


class _Axis(pg.GraphicsWidget):
    """Shared parts: the view it follows, colours, font and tags."""

    def __init__(self, view: pg.ViewBox, text_color: QtGui.QColor, line_color: QtGui.QColor):
        super().__init__()
        self._view = view
        self._font = axis_font()
        self._metrics = QtGui.QFontMetricsF(self._font)
        self._text_pen = QtGui.QPen(text_color)
        self._line_pen = QtGui.QPen(line_color)
        self._line_pen.setCosmetic(True)
        self._tags: dict[str, Tag] = {}

    def set_colors(self, text_color: QtGui.QColor, line_color: QtGui.QColor) -> None:
        self._text_pen.setColor(text_color)
        self._line_pen.setColor(line_color)
        self.update()

    def _view_to_local(self) -> QtGui.QTransform:
        return self._view.childGroup.itemTransform(self)[0]

    def _tag_rect(self, tag: Tag) -> QtCore.QRectF:
        raise NotImplementedError

    def set_tag(self, name: str, tag: Tag | None) -> None:
        """Show (or with ``None`` remove) the tag ``name``; repaints only where it was/is."""
        old = self._tags.get(name)
        if tag == old:
            return
        if old is not None:
            self.update(self._tag_rect(old))
        if tag is None:
            self._tags.pop(name, None)
        else:
            self._tags[name] = tag
            self.update(self._tag_rect(tag))

    def tag(self, name: str) -> Tag | None:
        return self._tags.get(name)

    def _paint_tags(self, p: QtGui.QPainter) -> None:
        for tag in self._tags.values():
            rect = self._tag_rect(tag)
            p.fillRect(rect, tag.background)
            p.setPen(tag.foreground)
            p.drawText(rect, QtCore.Qt.AlignmentFlag.AlignCenter, tag.text)


class PriceAxis(_Axis):
    """Price labels to the right of a pane, at round levels at least 44 px apart."""

    def __init__(self, view: pg.ViewBox, text_color, line_color, formatter=None):
        super().__init__(view, text_color, line_color)
        self.setMinimumWidth(PRICE_AXIS_WIDTH)
        self.setMaximumWidth(PRICE_AXIS_WIDTH)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Fixed,
                           QtWidgets.QSizePolicy.Policy.Expanding)
        self.values = np.empty(0)
        self.decimals = 0
        self._formatter = formatter
        view.sigYRangeChanged.connect(self.refresh)
        view.sigResized.connect(self.refresh)

    def refresh(self, *args) -> None:
        """Recompute the ticks for the view's current y range."""
        lo, hi = self._view.viewRange()[1]
        self.values, self.decimals = price_ticks(lo, hi, self._view.height())
        self.update()

    def label(self, value: float) -> str:
        if self._formatter is not None:
            return self._formatter(value)
        return f"{value:.{self.decimals}f}"

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(0, 0, self.size().width(), self.size().height())

    def _tag_rect(self, tag: Tag) -> QtCore.QRectF:
        tr = self._view_to_local()
        y = tr.m22() * tag.value + tr.dy()
        h = self._metrics.height() + 4
        return QtCore.QRectF(0, round(y - h / 2), self.size().width(), h)

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        w = self.size().width()
        h = self.size().height()
        p.setPen(self._line_pen)
        p.drawLine(QtCore.QPointF(0.5, 0), QtCore.QPointF(0.5, h))
        if len(self.values):
            tr = self._view_to_local()
            ys = np.rint(tr.m22() * self.values + tr.dy())
            p.setFont(self._font)
            text_h = self._metrics.height()
            for value, y in zip(self.values.tolist(), ys.tolist()):
                if y < text_h / 2 or y > h - text_h / 2:
                    continue
                p.setPen(self._line_pen)
                p.drawLine(QtCore.QPointF(0, y + 0.5), QtCore.QPointF(_TICK_LEN, y + 0.5))
                p.setPen(self._text_pen)
                p.drawText(QtCore.QRectF(_TICK_LEN + 3, y - text_h / 2, w - _TICK_LEN - 3, text_h),
                           QtCore.Qt.AlignmentFlag.AlignVCenter, self.label(value))
        p.setFont(self._font)
        self._paint_tags(p)


class TimeAxis(_Axis):
    """Time labels under the panes; the chart hands it ticks (it knows the candles)."""

    def __init__(self, view: pg.ViewBox, text_color, line_color):
        super().__init__(view, text_color, line_color)
        self.setMinimumHeight(TIME_AXIS_HEIGHT)
        self.setMaximumHeight(TIME_AXIS_HEIGHT)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding,
                           QtWidgets.QSizePolicy.Policy.Fixed)
        self.ticks: list[TimeTick] = []

    def set_ticks(self, ticks: list[TimeTick]) -> None:
        if ticks != self.ticks:
            self.ticks = ticks
            self.update()

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(0, 0, self.size().width(), self.size().height())

    def _tag_rect(self, tag: Tag) -> QtCore.QRectF:
        tr = self._view_to_local()
        x = tr.m11() * tag.value + tr.dx()
        w = self._metrics.horizontalAdvance(tag.text) + 12
        return QtCore.QRectF(round(x - w / 2), 0, w, self.size().height())

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        w = self.size().width()
        p.setPen(self._line_pen)
        p.drawLine(QtCore.QPointF(0, 0.5), QtCore.QPointF(w, 0.5))
        tr = self._view_to_local()
        p.setFont(self._font)
        text_h = self._metrics.height()
        for tick in self.ticks:
            x = round(tr.m11() * tick.x + tr.dx())
            if x < 0 or x > w:
                continue
            p.setPen(self._line_pen)
            p.drawLine(QtCore.QPointF(x + 0.5, 0), QtCore.QPointF(x + 0.5, _TICK_LEN))
            p.setPen(self._text_pen)
            p.drawText(QtCore.QRectF(x - 60, _TICK_LEN + 1, 120, text_h),
                       QtCore.Qt.AlignmentFlag.AlignHCenter, tick.label)
        self._paint_tags(p)


class LineBatch:
    """A reusable numpy-backed array of ``QLineF`` drawn with one ``QPainter.drawLines``."""

    def __init__(self):
        self._lines = PrimitiveArray(QtCore.QLineF, 4)

    def draw(self, painter: QtGui.QPainter, x0, y0, x1, y1) -> None:
        n = int(np.broadcast(x0, y0, x1, y1).size)
        if not n:
            return
        self._lines.resize(n)
        out = self._lines.ndarray()
        out[:, 0] = x0
        out[:, 1] = y0
        out[:, 2] = x1
        out[:, 3] = y1
        painter.drawLines(*self._lines.drawargs())


class GridItem(ViewSizedItem):
    """Grid lines of a pane at the time ticks (vertical) and price ticks (horizontal)."""

    def __init__(self, color: QtGui.QColor):
        super().__init__()
        self._pen = QtGui.QPen(color)
        self._pen.setCosmetic(True)
        self._xs = np.empty(0)
        self._ys = np.empty(0)
        self._batch = LineBatch()

    def set_color(self, color: QtGui.QColor) -> None:
        self._pen.setColor(color)
        self.update()

    def set_lines(self, xs: np.ndarray, ys: np.ndarray) -> None:
        if not (np.array_equal(xs, self._xs) and np.array_equal(ys, self._ys)):
            self._xs = np.asarray(xs, dtype=np.float64)
            self._ys = np.asarray(ys, dtype=np.float64)
            self.update()

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        rect = self._bounds
        if rect.isNull():
            return
        sx, dx, sy, dy = device_scale(p)
        left, right = sorted((sx * rect.left() + dx, sx * rect.right() + dx))
        top, bottom = sorted((sy * rect.top() + dy, sy * rect.bottom() + dy))
        p.save()
        p.resetTransform()
        p.setPen(self._pen)
        if len(self._xs):
            x = np.floor(sx * self._xs + dx) + 0.5
            self._batch.draw(p, x, top, x, bottom)
        if len(self._ys):
            y = np.rint(sy * self._ys + dy) + 0.5
            self._batch.draw(p, left, y, right, y)
        p.restore()
