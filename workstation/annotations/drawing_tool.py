"""``DrawingTool``: the rules of drawing a level, trend line, vertical line, box or measure
point by point, from the keyboard or with clicks (no Qt, no store).

``begin(shape)`` (H, /, V, B, R) puts a pending point on the cursor candle's close; the
cursor keys move it along the candles and ``nudge`` (Up / Down) along the prices; ``place``
(Enter) fixes it: a one-point shape becomes a ``Drawing`` at once, a two-point shape after
its second point (either order in time: the earlier point comes first). ``click`` places a
point at a clicked candle and price. With the ``magnet`` on, a point sits on one of its
candle's open, high, low and close: a click snaps to the nearest, the cursor keys keep it on
the same one (a point on a high stays on the highs), and Up / Down step to the next value
above or below; with it off, a point keeps its price and Up / Down move it by a ``tick``.
``cancel`` (Esc) drops the tool. ``step_drawing`` is where D / Shift+D select next.

In blind replay each request comes with the replay ``clock``: a point on a candle that has
not closed by then is refused (a drawing is shown once its last candle has closed, so one
there would vanish as it is made). Refusals raise ``ToolRefused`` with a message for the
trader.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..market.candles import Candles
from ..market.series import MarketKey
from .drawings import Drawing, Shape
from .editing import ToolRefused, before_clock

FIELDS = ("open", "high", "low", "close")


@dataclass(frozen=True)
class PendingPoint:
    """The point being placed: the candle opening at ``ts`` and a ``price``; ``field`` is the
    candle value it sits on (one of ``FIELDS``; None: off the magnet)."""

    ts: int
    price: float
    field: str | None = "close"


def _ohlc(candles: Candles, index: int) -> dict[str, float]:
    return {"open": float(candles.open[index]), "high": float(candles.high[index]),
            "low": float(candles.low[index]), "close": float(candles.close[index])}


def _check(candles: Candles | None, index: int, clock: int | None) -> Candles:
    if candles is None or not len(candles):
        raise ToolRefused("No candles on the chart: open a data source first")
    if not 0 <= index < len(candles):
        raise ToolRefused("Put the cursor on a candle first")
    before_clock(int(candles.ts[index]), candles.timeframe.ms, clock)
    return candles


def snapped(candles: Candles, index: int, price: float) -> tuple[float, str]:
    """The value of candle ``index`` nearest ``price`` (the magnet), and which it is."""
    values = _ohlc(candles, index)
    field = min(FIELDS, key=lambda f: (abs(values[f] - price), FIELDS.index(f)))
    return values[field], field


class DrawingTool:
    """See the module docstring: one chart's tool (its pending shape and points)."""

    def __init__(self, magnet: bool = True):
        self.magnet = magnet
        self.shape: Shape | None = None
        self.first: PendingPoint | None = None  # a two-point shape's placed first point
        self.point: PendingPoint | None = None  # the point the keys move

    @property
    def active(self) -> bool:
        return self.shape is not None

    def begin(self, shape: Shape | str, candles: Candles | None, index: int,
              clock: int | None = None) -> PendingPoint:
        """Start drawing ``shape`` with a pending point at candle ``index``'s close."""
        c = _check(candles, index, clock)
        self.shape, self.first = Shape(shape), None
        self.point = PendingPoint(int(c.ts[index]), float(c.close[index]), "close")
        return self.point

    def follow(self, candles: Candles | None, index: int) -> PendingPoint | None:
        """The cursor moved to candle ``index``: the pending point goes with it (on the same
        candle value, with the magnet on)."""
        if self.point is None or candles is None or not 0 <= index < len(candles):
            return self.point
        field = self.point.field if self.magnet else None
        price = _ohlc(candles, index)[field] if field else self.point.price
        self.point = PendingPoint(int(candles.ts[index]), price, field)
        return self.point

    def nudge(self, candles: Candles | None, index: int, step: int, tick: float
              ) -> PendingPoint | None:
        """Move the pending point up (``step`` > 0) or down: with the magnet, to the candle's
        next value that way (it stays at the high or low past them); else by ``tick``."""
        point = self.point
        if point is None or candles is None or not 0 <= index < len(candles):
            return point
        if not self.magnet:
            price = point.price + step * tick
            if price <= 0:
                raise ToolRefused("A price must stay above zero")
            self.point = PendingPoint(point.ts, price, None)
            return self.point
        values = _ohlc(candles, index)
        order = sorted(FIELDS, key=lambda f: (values[f], FIELDS.index(f)))
        ahead = [f for f in order if (values[f] > point.price if step > 0
                                      else values[f] < point.price)]
        field = (ahead[0] if step > 0 else ahead[-1]) if ahead else (
            order[-1] if step > 0 else order[0])
        self.point = PendingPoint(point.ts, values[field], field)
        return self.point

    def set_magnet(self, on: bool, candles: Candles | None = None, index: int = -1) -> None:
        """Turn the magnet on or off; on, the pending point snaps to its candle."""
        self.magnet = bool(on)
        point = self.point
        if on and point is not None and candles is not None and 0 <= index < len(candles):
            price, field = snapped(candles, index, point.price)
            self.point = PendingPoint(point.ts, price, field)

    def cancel(self) -> Shape | None:
        """Drop the tool; returns the shape that was being drawn (None: nothing was)."""
        shape = self.shape
        self.shape = self.first = self.point = None
        return shape

    def click(self, candles: Candles | None, index: int, price: float, market: MarketKey,
              timeframe: str, clock: int | None = None) -> Drawing | None:
        """Place a point at candle ``index`` and ``price`` (snapped with the magnet on)."""
        c = _check(candles, index, clock)
        if self.magnet:
            price, field = snapped(c, index, price)
        else:
            field = None
        if price <= 0:
            raise ToolRefused("Click above the zero price line")
        self.point = PendingPoint(int(c.ts[index]), float(price), field)
        return self.place(c, index, market, timeframe, clock)

    def place(self, candles: Candles | None, index: int, market: MarketKey, timeframe: str,
              clock: int | None = None) -> Drawing | None:
        """Fix the pending point (on candle ``index``); returns the finished drawing, or None
        while a two-point shape waits for its second point."""
        if self.shape is None or self.point is None:
            raise ToolRefused("No drawing tool is active: H level, / trend line, V vertical "
                              "line, B box, R measure")
        _check(candles, index, clock)
        shape, point = self.shape, self.point
        if shape.points == 2 and self.first is None:
            self.first = point
            return None
        first = self.first
        if shape.points == 2 and first is not None and (first.ts, first.price) == (
                point.ts, point.price):
            raise ToolRefused(f"The {shape}'s second point is its first: move the cursor "
                              "(or Up / Down) first")
        drawing = self.sketch(market, timeframe)
        assert drawing is not None  # a shape and a point
        self.cancel()
        return drawing

    def sketch(self, market: MarketKey, timeframe: str) -> Drawing | None:
        """The drawing as it would be if the pending point were placed now (a two-point
        shape without its first point: from the pending point to itself), for a preview."""
        if self.shape is None or self.point is None:
            return None
        shape = self.shape
        a = self.first or self.point
        b = self.point if shape.points == 2 else None
        if b is not None and b.ts < a.ts:
            a, b = b, a
        fields: dict = {"ts1": a.ts, "price1": None if shape is Shape.VERTICAL else a.price}
        if b is not None:
            fields.update(ts2=b.ts, price2=b.price)
        return Drawing(shape=shape, symbol=market.symbol, market=market.kind,
                       timeframe=timeframe, **fields)


def step_drawing(drawings: Iterable[Drawing], selected: Drawing | None, step: int
                 ) -> Drawing | None:
    """The drawing after (``step`` > 0) or before ``selected`` in time order (by first point,
    then id); from nothing selected, the first or the last; None past the ends."""
    ordered = sorted(drawings, key=lambda d: (d.ts1, d.id))
    if not ordered:
        return None
    if selected is None:
        return ordered[0] if step > 0 else ordered[-1]
    keys = [(d.ts1, d.id) for d in ordered]
    here = (selected.ts1, selected.id)
    after = [d for d, k in zip(ordered, keys, strict=True) if (k > here if step > 0
                                                               else k < here)]
    if not after:
        return None
    return after[0] if step > 0 else after[-1]
