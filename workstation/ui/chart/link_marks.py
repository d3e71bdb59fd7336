"""``LinkMarksItem``: what linked charts mark on this one, beneath the candles.

- the visible windows of lower-timeframe charts: faint bands over the times they show;
- another chart's crosshair: a band with dashed edges over the span of this chart's candle
  that contains its time.

Times go through the chart's ``TimeMap``, so gaps and every timeframe map alike. New marks
that cover the same pixels as those drawn (a 1m chart's window on a 1d chart, moved by
minutes) repaint nothing.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from pyqtgraph.Qt import QtCore, QtGui

from ...viewmodel import TimeMap
from .candle_item import ViewSizedItem, device_scale

WINDOW_COLOR = "#2962ff24"  # #rrggbbaa, as pyqtgraph.mkColor reads it
SPAN_COLOR = "#9598a12e"
SPAN_EDGE = "#9598a1"


class LinkMarksItem(ViewSizedItem):
    """See the module docstring; ``time_map()`` gives the chart's mapping when painting."""

    def __init__(self, time_map):
        super().__init__()
        self._time_map = time_map
        self.windows: list[tuple[int, int]] = []
        self.span: tuple[int, int] | None = None
        self._window_brush = QtGui.QBrush(pg.mkColor(WINDOW_COLOR))
        self._span_brush = QtGui.QBrush(pg.mkColor(SPAN_COLOR))
        self._edge = QtGui.QPen(pg.mkColor(SPAN_EDGE), 1, QtCore.Qt.PenStyle.DashLine)
        self._edge.setCosmetic(True)
        self.pixels: tuple | None = None  # where the marks last set fell (``_pixels``)

    def set_marks(self, span: tuple[int, int] | None, windows: list[tuple[int, int]]) -> None:
        """Mark ``span`` (another chart's crosshair) and ``windows`` (lower timeframes')."""
        if span == self.span and windows == self.windows:
            return
        shown = self._pixels()  # the marks the view shows (or shows once it repaints)
        self.span, self.windows = span, list(windows)
        self.pixels = self._pixels()
        if shown is None or self.pixels != shown:
            self.update()

    def _pixels(self) -> tuple | None:
        """Where the marks fall in the pixels ``paint`` snaps them to (the painter's, without
        the device pixel ratio) with the view as it is (None: not on a view), with the
        mapping itself: equal means painting them again changes nothing."""
        scene = self.scene()
        views = scene.views() if scene is not None else []
        if not views:
            return None
        t = self.deviceTransform(views[0].viewportTransform())
        sx, dx = t.m11(), t.dx()
        time_map: TimeMap = self._time_map()

        def columns(t0: int, t1: int) -> tuple[int, int]:
            return (math.floor(sx * time_map.x_of(t0) + dx),
                    math.ceil(sx * time_map.x_of(t1) + dx))

        return (sx, dx, self._bounds.top(), self._bounds.bottom(),
                None if self.span is None else columns(*self.span),
                tuple(columns(*w) for w in self.windows))

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        if not self.windows and self.span is None:
            return
        time_map: TimeMap = self._time_map()
        sx, dx, sy, dy = device_scale(p)
        r = self._bounds
        top, bottom = sorted((sy * r.top() + dy, sy * r.bottom() + dy))
        p.save()
        p.resetTransform()
        p.setPen(QtCore.Qt.PenStyle.NoPen)

        def columns(t0: int, t1: int) -> tuple[float, float]:
            x0, x1 = time_map.x_of(t0), time_map.x_of(t1)
            return math.floor(sx * x0 + dx), math.ceil(sx * x1 + dx)

        for t0, t1 in self.windows:
            left, right = columns(t0, t1)
            p.fillRect(QtCore.QRectF(left, top, max(right - left, 1), bottom - top),
                       self._window_brush)
        if self.span is not None:
            left, right = columns(*self.span)
            p.fillRect(QtCore.QRectF(left, top, max(right - left, 1), bottom - top),
                       self._span_brush)
            p.setPen(self._edge)
            for x in (left + 0.5, right - 0.5):
                p.drawLine(QtCore.QPointF(x, top), QtCore.QPointF(x, bottom))
        p.restore()
