"""``ChartDrawings``: the drawings one chart shows, painted over its candles.

A level spans the pane at its price, with the price in a tag at the right edge; a trend line
joins its two points; a vertical line crosses the pane at its candle; a box is a translucent
rectangle; a measure is one too (green up, red down) with its change, percent, candles and time
written under it (unless it spans only a few pixels, as on a much longer timeframe). Points sit
at the centre of the candle that opens at their time on this chart's timeframe
(``TimeMap.centre_x``), so a drawing made on another timeframe lies where its times fall here. A
level with an alert reads "alert ·" before its price. The selected drawing is drawn thicker with
a handle at each point (hollow when it is locked); the one being placed is dashed, with its
pending point ringed and named (the candle value the magnet holds it on). A few hundred drawings
cost a few draw calls each; those wholly outside the visible time or prices are skipped.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from pyqtgraph.Qt import QtCore, QtGui

from ...annotations.drawing_tool import PendingPoint
from ...annotations.drawings import Drawing, Shape, measured
from ..annotations.list_model import format_duration
from ..chart.axis import axis_font
from ..chart.candle_item import device_scale
from ..chart.pane_item import PaneItem

LINE_COLOR = "#2962ff"
BOX_ALPHA = 0.16
HANDLE_PX = 7
HIT_PX = 6  # a click this close to a drawing selects it
TAG_PAD_PX = 3
MIN_LABEL_PX = 6  # a measure narrower than this on screen (a longer timeframe) goes unlabelled


def measure_text(d: Drawing, format_price) -> str:
    """``"+12.50 (+1.25 %) · 45 candles · 3h 45m"``."""
    m = measured(d)
    sign = "+" if m.change >= 0 else "−"
    return (f"{sign}{format_price(abs(m.change))} ({m.percent:+.2f} %) · {m.candles:,} "
            f"candle{'s' if m.candles != 1 else ''} · {format_duration(m.duration_ms)}")


def _spans(d: Drawing, low: float, high: float) -> bool:
    """Whether ``d``'s prices reach into ``[low, high]`` (a vertical line always does)."""
    prices = [p for _, p in d.points if p is not None]
    return not prices or (min(prices) <= high and max(prices) >= low)


class ChartDrawings:
    """See the module docstring; ``set_drawings`` gives what the chart shows."""

    def __init__(self, chart):
        self.chart = chart
        self.drawings: list[Drawing] = []
        self.selected_id: str | None = None
        self.sketch: Drawing | None = None  # the drawing being placed
        self.point: PendingPoint | None = None  # its pending point
        self.alerted: set[str] = set()  # the ids of levels with an alert
        self._font = axis_font()
        self.item = PaneItem(chart.price_view, self._paint, chart.overlays.item.zValue() - 0.25)

    def set_drawings(self, drawings: Sequence[Drawing]) -> None:
        self.drawings = list(drawings)
        self.item.update()

    def set_selected(self, drawing_id: str | None) -> None:
        if drawing_id != self.selected_id:
            self.selected_id = drawing_id
            self.item.update()

    def set_sketch(self, sketch: Drawing | None, point: PendingPoint | None) -> None:
        self.sketch, self.point = sketch, point
        self.item.update()

    def set_alerted(self, drawing_ids: set[str]) -> None:
        if drawing_ids != self.alerted:
            self.alerted = set(drawing_ids)
            self.item.update()

    def set_visible(self, visible: bool) -> None:
        self.item.setVisible(visible)

    # -- geometry -------------------------------------------------------------------------
    def _x(self, ts: int) -> float:
        return float(self.chart.view_model.time_map.centre_x(ts))

    def hit(self, index: int, price: float) -> Drawing | None:
        """The drawing within ``HIT_PX`` pixels of candle ``index``'s centre at ``price``
        (the nearest; None: none)."""
        c = self.chart.candles
        if c is None or not 0 <= index < len(c) or not self.item.isVisible():
            return None
        px_x, px_y = self.chart.price_view.viewPixelSize()
        x = float(index)
        best: tuple[float, Drawing | None] = (HIT_PX, None)
        for d in self.drawings:
            dist = self._distance_px(d, x, price, px_x, px_y)
            if dist <= best[0]:
                best = (dist, d)
        return best[1]

    def _distance_px(self, d: Drawing, x: float, price: float, px_x: float, px_y: float
                     ) -> float:
        x1 = self._x(d.ts1)
        if d.shape is Shape.LEVEL:
            return abs(price - (d.price1 or 0.0)) / px_y
        if d.shape is Shape.VERTICAL:
            return abs(x - x1) / px_x
        x2, p1, p2 = self._x(d.last_ts), d.price1 or 0.0, d.price2 or 0.0
        if d.shape is Shape.TREND:
            ax, ay, bx, by = x1 / px_x, p1 / px_y, x2 / px_x, p2 / px_y
            qx, qy = x / px_x, price / px_y
            span = (bx - ax) ** 2 + (by - ay) ** 2
            t = 0.0 if span == 0 else max(0.0, min(1.0, ((qx - ax) * (bx - ax)
                                                         + (qy - ay) * (by - ay)) / span))
            return float(((qx - ax - t * (bx - ax)) ** 2 + (qy - ay - t * (by - ay)) ** 2) ** 0.5)
        inside = min(x1, x2) <= x <= max(x1, x2) and min(p1, p2) <= price <= max(p1, p2)
        return 0.0 if inside else HIT_PX + 1.0

    # -- painting -------------------------------------------------------------------------
    def _paint(self, p: QtGui.QPainter, exposed, bounds) -> None:
        if not self.drawings and self.sketch is None:
            return
        c = self.chart.candles
        if c is None:
            return
        sx, dx, sy, dy = device_scale(p)
        left, right = sorted((sx * bounds.left() + dx, sx * bounds.right() + dx))
        top, bottom = sorted((sy * bounds.top() + dy, sy * bounds.bottom() + dy))
        t_lo = self.chart.view_model.time_map.ts_of(bounds.left() - 1.0)
        t_hi = self.chart.view_model.time_map.ts_of(bounds.right() + 1.0)
        p.save()
        p.resetTransform()
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        p.setFont(self._font)
        frame = (sx, dx, sy, dy, left, right, top, bottom)
        p_lo, p_hi = sorted((bounds.top(), bounds.bottom()))
        for d in self.drawings:
            if d.shape is not Shape.LEVEL and (d.last_ts < t_lo or d.ts1 > t_hi):
                continue
            if d.price1 is not None and not _spans(d, p_lo, p_hi):
                continue
            self._paint_one(p, d, frame, selected=d.id == self.selected_id, sketch=False)
        if self.sketch is not None:
            self._paint_one(p, self.sketch, frame, selected=False, sketch=True)
            if self.point is not None:
                self._paint_point(p, self.point, frame)
        p.restore()

    def _pen(self, color, width: float, dashed: bool) -> QtGui.QPen:
        pen = pg.mkPen(color, width=width)
        pen.setCosmetic(True)
        if dashed:
            pen.setStyle(QtCore.Qt.PenStyle.DashLine)
        return pen

    def _paint_one(self, p: QtGui.QPainter, d: Drawing, frame, *, selected: bool,
                   sketch: bool) -> None:
        sx, dx, sy, dy, left, right, top, bottom = frame
        x1 = sx * self._x(d.ts1) + dx
        y1 = sy * (d.price1 or 0.0) + dy
        x2 = sx * self._x(d.last_ts) + dx
        y2 = sy * (d.price2 if d.price2 is not None else d.price1 or 0.0) + dy
        colors = self.chart.colors
        color = LINE_COLOR
        if d.shape is Shape.MEASURE:
            color = colors.up if (d.price2 or 0.0) >= (d.price1 or 0.0) else colors.down
        p.setPen(self._pen(color, 2.0 if selected else 1.0, sketch))
        handles: list[QtCore.QPointF] = []
        if d.shape is Shape.LEVEL:
            p.drawLine(QtCore.QPointF(left, y1), QtCore.QPointF(right, y1))
            alert = "alert · " if d.id in self.alerted else ""
            self._tag(p, alert + self.chart.format_price(d.price1 or 0.0), right, y1, color)
            handles = [QtCore.QPointF(x1, y1)]
        elif d.shape is Shape.VERTICAL:
            p.drawLine(QtCore.QPointF(x1, top), QtCore.QPointF(x1, bottom))
            handles = [QtCore.QPointF(x1, (top + bottom) / 2)]
        elif d.shape is Shape.TREND:
            p.drawLine(QtCore.QPointF(x1, y1), QtCore.QPointF(x2, y2))
            handles = [QtCore.QPointF(x1, y1), QtCore.QPointF(x2, y2)]
        else:
            rect = QtCore.QRectF(QtCore.QPointF(x1, y1), QtCore.QPointF(x2, y2)).normalized()
            fill = pg.mkColor(color)
            fill.setAlphaF(BOX_ALPHA)
            p.fillRect(rect, fill)
            p.drawRect(rect)
            handles = [QtCore.QPointF(x1, y1), QtCore.QPointF(x2, y2)]
            if d.shape is Shape.MEASURE and rect.width() >= MIN_LABEL_PX:
                self._label(p, measure_text(d, self.chart.format_price), rect, color)
        if selected:
            self._handles(p, handles, color, hollow=d.locked)

    def _handles(self, p: QtGui.QPainter, points, color, hollow: bool) -> None:
        half = HANDLE_PX / 2
        p.setBrush(QtCore.Qt.BrushStyle.NoBrush if hollow else pg.mkBrush(color))
        for pt in points:
            p.drawRect(QtCore.QRectF(pt.x() - half, pt.y() - half, HANDLE_PX, HANDLE_PX))
        p.setBrush(QtCore.Qt.BrushStyle.NoBrush)

    def _tag(self, p: QtGui.QPainter, text: str, right: float, y: float, color) -> None:
        """The level's price in a box at the pane's right edge."""
        metrics = QtGui.QFontMetricsF(self._font)
        w = metrics.horizontalAdvance(text) + 2 * TAG_PAD_PX
        h = metrics.height() + 2
        rect = QtCore.QRectF(right - w - 2, y - h - 1, w, h)
        p.fillRect(rect, pg.mkColor(color))
        p.setPen(pg.mkPen(self.chart.colors.price_line_text))
        p.drawText(rect, QtCore.Qt.AlignmentFlag.AlignCenter, text)
        p.setPen(self._pen(color, 1.0, False))

    def _label(self, p: QtGui.QPainter, text: str, rect: QtCore.QRectF, color) -> None:
        """A measure's numbers, centred under (or over) its box."""
        metrics = QtGui.QFontMetricsF(self._font)
        w = metrics.horizontalAdvance(text) + 2 * TAG_PAD_PX
        h = metrics.height() + 2
        box = QtCore.QRectF(rect.center().x() - w / 2, rect.bottom() + 3, w, h)
        p.fillRect(box, pg.mkColor(color))
        p.setPen(pg.mkPen(self.chart.colors.price_line_text))
        p.drawText(box, QtCore.Qt.AlignmentFlag.AlignCenter, text)

    def _paint_point(self, p: QtGui.QPainter, point: PendingPoint, frame) -> None:
        sx, dx, sy, dy = frame[:4]
        x, y = sx * self._x(point.ts) + dx, sy * point.price + dy
        p.setPen(self._pen(LINE_COLOR, 1.5, False))
        p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        p.drawEllipse(QtCore.QPointF(x, y), 5.0, 5.0)
        text = f"{point.field or 'price'} {self.chart.format_price(point.price)}"
        p.setPen(pg.mkPen(self.chart.colors.readout_text))
        p.drawText(QtCore.QPointF(x + 8, y - 6), text)
