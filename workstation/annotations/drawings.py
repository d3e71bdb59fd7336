"""What a trader draws on a chart: horizontal levels, trend lines, vertical lines, price
ranges (boxes) and measures.

A ``Drawing`` belongs to a market and symbol (``market_key``), like every annotation, not to one
timeframe: it is drawn at prices and times, so every chart of the symbol shows it wherever
its times fall (``timeframe`` records the chart it was drawn on, whose candles a point
snapped to). Its points are ``(ts, price)``: a level has a price (``ts1`` is the candle it was
drawn at), a vertical line a time, the others two points with ``ts1 <= ts2``. ``locked``
drawings refuse to move. All times are UTC epoch milliseconds of a candle's open; a point
means that candle, so a drawing is known once the last candle it touches has closed
(``known_at``): a replay clock before that shows none of it. Drawings are frozen values; an
edit is a new value (``edited``). Constructing one validates it; a bad value raises
``AnnotationValidationError`` naming the field.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field

from ..market.series import MarketKey, MarketKind
from ..market.timeframes import parse_timeframe
from .model import (
    AnnotationValidationError,
    _enum,
    _price,
    _set,
    _time,
    check_identity,
    new_id,
    now_ms,
)


class Shape(str, enum.Enum):
    LEVEL = "level"
    TREND = "trend"
    VERTICAL = "vertical"
    BOX = "box"
    MEASURE = "measure"

    def __str__(self) -> str:
        return self.value

    @property
    def points(self) -> int:
        """How many points the shape is drawn by (a level and a vertical line: one)."""
        return 1 if self in (Shape.LEVEL, Shape.VERTICAL) else 2


@dataclass(frozen=True, kw_only=True)
class Drawing:
    """See the module docstring."""

    shape: Shape
    symbol: str
    timeframe: str
    ts1: int
    price1: float | None = None
    ts2: int | None = None
    price2: float | None = None
    market: MarketKind = MarketKind.REAL
    locked: bool = False
    notes: str = ""
    id: str = field(default_factory=new_id)
    created_at: int = field(default_factory=now_ms)
    updated_at: int | None = None  # None: same as created_at

    def __post_init__(self) -> None:
        shape = _enum(Shape, self.shape, "shape")
        _set(self, "shape", shape)
        check_identity(self)
        _set(self, "ts1", _time(self.ts1, "ts1"))
        if not isinstance(self.locked, bool):
            raise AnnotationValidationError("locked", f"must be true or false, got "
                                                      f"{self.locked!r}")
        wants_price1 = shape is not Shape.VERTICAL
        if wants_price1:
            _set(self, "price1", _price(self.price1, "price1"))
        elif self.price1 is not None:
            raise AnnotationValidationError("price1", "a vertical line has no price")
        if shape.points == 1:
            for name in ("ts2", "price2"):
                if getattr(self, name) is not None:
                    raise AnnotationValidationError(name, f"a {shape} has one point")
            return
        if self.ts2 is None:
            raise AnnotationValidationError("ts2", f"a {shape} needs a second point")
        _set(self, "ts2", _time(self.ts2, "ts2"))
        _set(self, "price2", _price(self.price2, "price2"))
        if self.ts2 < self.ts1:
            raise AnnotationValidationError(
                "ts2", f"the second point ({self.ts2}) is before the first ({self.ts1})")

    @property
    def market_key(self) -> MarketKey:
        return MarketKey(self.market, self.symbol)

    @property
    def points(self) -> tuple[tuple[int, float | None], ...]:
        if self.shape.points == 1:
            return ((self.ts1, self.price1),)
        return ((self.ts1, self.price1), (int(self.ts2 or 0), self.price2))

    @property
    def last_ts(self) -> int:
        return self.ts1 if self.ts2 is None else self.ts2

    @property
    def known_at(self) -> int:
        """When the drawing can be known: the close of the last candle it touches."""
        return self.last_ts + parse_timeframe(self.timeframe).ms

    def edited(self, **changes) -> Drawing:
        """A copy with ``changes`` and ``updated_at`` now (never earlier); a locked drawing
        refuses to move (only ``locked`` and ``notes`` may change)."""
        moving = {k for k in changes if k not in ("locked", "notes")}
        if self.locked and changes.get("locked", True) and moving:
            raise AnnotationValidationError("locked", f"this {self.shape} is locked: unlock "
                                                      f"it to move it")
        when = max(now_ms(), self.updated_at or self.created_at)
        return dataclasses.replace(self, updated_at=when, **changes)

    def moved(self, dt_ms: int, dprice: float) -> Drawing:
        """Every point moved by ``dt_ms`` and ``dprice`` (prices stay positive)."""
        changes: dict = {"ts1": self.ts1 + dt_ms}
        if self.price1 is not None:
            changes["price1"] = self.price1 + dprice
        if self.ts2 is not None:
            changes["ts2"] = self.ts2 + dt_ms
            changes["price2"] = (self.price2 or 0.0) + dprice
        return self.edited(**changes)


@dataclass(frozen=True)
class Measured:
    """What a measure (or any two-point drawing) spans: price change, percent, candles on
    its timeframe and time."""

    change: float
    percent: float
    candles: int
    duration_ms: int


def measured(d: Drawing) -> Measured:
    if d.shape.points != 2 or d.ts2 is None or d.price1 is None or d.price2 is None:
        raise AnnotationValidationError("shape", f"a {d.shape} has one point: nothing to "
                                                 f"measure")
    tf = parse_timeframe(d.timeframe).ms
    change = d.price2 - d.price1
    return Measured(change, change / d.price1 * 100.0, (d.ts2 - d.ts1) // tf, d.ts2 - d.ts1)


def visible_at(drawings, clock_ms: int | None) -> list[Drawing]:
    """The drawings a replay clock at ``clock_ms`` lets a chart show (all of them for None):
    those known by then."""
    if clock_ms is None:
        return list(drawings)
    return [d for d in drawings if d.known_at <= clock_ms]

