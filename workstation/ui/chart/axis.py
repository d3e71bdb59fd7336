"""Light axes for the chart: a price axis (right of a pane), a time axis (under the panes) and
the grid lines they imply.

pyqtgraph's ``AxisItem`` re-measures every label on every range change, which alone costs
several milliseconds a frame; these draw a handful of cached labels. Both axes also carry
*tags*: boxed values such as the last price or the crosshair's price and time.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import QtCore, QtGui, QtWidgets

from .candle_item import RectBatch, ViewSizedItem, device_scale
from .text import TextCache
from .ticks import TimeTick, axis_labels, price_ticks

AXIS_FONT_PX = 11
PRICE_AXIS_WIDTH = 76
TIME_AXIS_HEIGHT = 22
_TICK_LEN = 4
_TAG_GAP = 4  # px kept free between a tag and the time labels beside it
_LABEL_GAP = 8  # px kept free between two time labels


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
        self.setFlag(QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self._view = view
        self._font = axis_font()
        self._metrics = QtGui.QFontMetricsF(self._font)
        self._text_pen = QtGui.QPen(text_color)
        self._line_pen = QtGui.QPen(line_color)
        self._line_pen.setCosmetic(True)
        self._tags: dict[str, Tag] = {}
        self._text = TextCache(self._font)

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
            self.update(self._around(self._tag_rect(old)))
        if tag is None:
            self._tags.pop(name, None)
        else:
            self._tags[name] = tag
            self.update(self._around(self._tag_rect(tag)))

    def _around(self, rect: QtCore.QRectF) -> QtCore.QRectF:
        """``rect`` and a text line on each side: the labels a tag hides (or shows again as
        it moves away) are repainted whole, never cut at the tag's edge."""
        line = self._metrics.height() + 2
        return rect.adjusted(-line, -line, line, line)

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
        self._ticks = RectBatch()
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
        h = self.size().height()
        p.setPen(self._line_pen)
        p.drawLine(QtCore.QPointF(0.5, 0), QtCore.QPointF(0.5, h))
        p.setFont(self._font)
        if len(self.values):
            tr = self._view_to_local()
            ys = np.rint(tr.m22() * self.values + tr.dy())
            text_h = self._metrics.height()
            exposed = option.exposedRect
            shown = ((ys >= text_h / 2) & (ys <= h - text_h / 2)
                     & (ys >= exposed.top() - text_h) & (ys <= exposed.bottom() + text_h))
            for tag in self._tags.values():  # a tag hides the labels it would overlap
                r = self._tag_rect(tag)
                shown &= (ys < r.top() - text_h / 2) | (ys > r.bottom() + text_h / 2)
            p.setPen(self._text_pen)
            for value, y in zip(self.values[shown].tolist(), ys[shown].tolist()):
                self._text.draw(p, _TICK_LEN + 3, y - text_h / 2, self.label(value))
            p.setPen(QtCore.Qt.PenStyle.NoPen)
            p.setBrush(self._line_pen.color())
            self._ticks.draw(p, 0, ys[shown], _TICK_LEN, 1)
        self._paint_tags(p)


class TimeAxis(_Axis):
    """Time labels under the panes; the chart hands it ticks (it knows the candles). Each
    label is drawn whole and apart from the next, the first with the date
    (``ticks.axis_labels``)."""

    def __init__(self, view: pg.ViewBox, text_color, line_color):
        super().__init__(view, text_color, line_color)
        self.setMinimumHeight(TIME_AXIS_HEIGHT)
        self.setMaximumHeight(TIME_AXIS_HEIGHT)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding,
                           QtWidgets.QSizePolicy.Policy.Fixed)
        self.ticks: list[TimeTick] = []
        self._marks = RectBatch()
        self._painted_at: tuple[float, float] | None = None  # the x transform painted with

    def set_ticks(self, ticks: list[TimeTick]) -> None:
        if ticks != self.ticks:
            self.ticks = ticks
            self.update()

    def follow_view(self) -> None:
        """The view's x transform may have changed (a pan, a zoom, a resize): repaint if the
        labels moved. The ticks are in candles, so a pan can leave them equal; left as they
        were, the labels would stay at their old pixels until a tag repainted a part."""
        tr = self._view_to_local()
        if (tr.m11(), tr.dx()) != self._painted_at:
            self.update()

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(0, 0, self.size().width(), self.size().height())

    def _tag_rect(self, tag: Tag) -> QtCore.QRectF:
        tr = self._view_to_local()
        x = tr.m11() * tag.value + tr.dx()
        w = self._metrics.horizontalAdvance(tag.text) + 12
        return QtCore.QRectF(round(x - w / 2), 0, w, self.size().height())

    def _around(self, rect: QtCore.QRectF) -> QtCore.QRectF:
        """``rect`` and the widest label on each side (see ``_Axis._around``)."""
        widest = max((self._text.width(t.lead) for t in self.ticks), default=0.0)
        pad = widest + _TAG_GAP
        return rect.adjusted(-pad, 0, pad, 0)

    def shown_ticks(self, tr: QtGui.QTransform | None = None) -> list[tuple[int, str]]:
        """The labels drawn (pixel x of their centre, text) with the view's transform ``tr``
        (default: now): ``ticks.axis_labels`` (whole, apart, the first with the date), less
        those a tag would touch: a tag hides the labels within ``_TAG_GAP`` of it and
        changes no other."""
        if tr is None:
            tr = self._view_to_local()
        xs = [math.floor(tr.m11() * tick.x + tr.dx()) for tick in self.ticks]
        shown = axis_labels(self.ticks, xs, self._text.width, self.size().width(), _LABEL_GAP)
        tags = [self._tag_rect(tag) for tag in self._tags.values()]
        if not tags:
            return shown
        kept = []
        for x, label in shown:
            half = self._text.width(label) / 2 + _TAG_GAP
            if not any(r.left() - half < x < r.right() + half for r in tags):
                kept.append((x, label))
        return kept

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        w = self.size().width()
        p.setPen(self._line_pen)
        p.drawLine(QtCore.QPointF(0, 0.5), QtCore.QPointF(w, 0.5))
        p.setFont(self._font)
        p.setPen(self._text_pen)
        tr = self._view_to_local()
        self._painted_at = (tr.m11(), tr.dx())
        shown = self.shown_ticks(tr)
        for x, label in shown:
            self._text.draw(p, x, _TICK_LEN + 1, label, centred=True)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        p.setBrush(self._line_pen.color())
        self._marks.draw(p, np.array([x for x, _ in shown], dtype=np.float64), 0, 1, _TICK_LEN)
        self._paint_tags(p)


class GridItem(ViewSizedItem):
    """Grid lines of a pane at the time ticks (vertical) and price ticks (horizontal)."""

    def __init__(self, color: QtGui.QColor):
        super().__init__()
        self._brush = QtGui.QBrush(color)
        self._xs = np.empty(0)
        self._ys = np.empty(0)
        self._batch = RectBatch()

    def set_color(self, color: QtGui.QColor) -> None:
        self._brush = QtGui.QBrush(color)
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
        left, right = sorted((math.floor(sx * rect.left() + dx), math.ceil(sx * rect.right() + dx)))
        top, bottom = sorted((math.floor(sy * rect.top() + dy), math.ceil(sy * rect.bottom() + dy)))
        xs = np.floor(sx * self._xs + dx)
        ys = np.rint(sy * self._ys + dy)
        p.save()
        p.resetTransform()
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        p.setBrush(self._brush)
        nx = len(xs)
        self._batch.draw(p, np.concatenate((xs, np.full(len(ys), left))),
                         np.concatenate((np.full(nx, top), ys)),
                         np.concatenate((np.ones(nx), np.full(len(ys), right - left))),
                         np.concatenate((np.full(nx, bottom - top), np.ones(len(ys)))))
        p.restore()
