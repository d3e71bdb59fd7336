"""What a trader marks on a chart: trades, labelled regions and point notes.

Every annotation has an ``id`` (a UUID string), the ``market`` (real or demo) and ``symbol``
it belongs to (``market_key``), the ``timeframe`` it was drawn on, ``notes``, ``tags``, a
``source`` (a human, or a model suggestion a human confirmed) and ``created_at``/``updated_at``.
All times are UTC epoch milliseconds; a time that marks a candle is that candle's open time on
the annotation's timeframe, and what the trader did there happened at the candle's close.
Annotations are frozen values: an edit is a new value (``ann.edited(notes=...)``) that the
store writes. P&L and holding time of a trade are derived, never stored.

A mark made in blind replay (the future hidden behind the replay clock) is ``blind`` and keeps
``decided_at``: the clock time of each decision (a trade's entry and exit, a region's start and
end, a point's one), each no earlier than the close of the candle it marks. Changing what was
decided later (``edited`` with a time, price, direction or label) makes it a hindsight mark
that keeps its decision times and says when (``unblinded_at``); ``origin`` names the three.

Constructing an annotation validates it; a bad value raises ``AnnotationValidationError``
naming the field.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from ..errors import WorkstationError
from ..market.series import MarketKey, MarketKind
from ..market.timeframes import SUPPORTED as TIMEFRAMES
from ..market.timeframes import parse_timeframe


class AnnotationError(WorkstationError):
    """Base of every annotation error."""


class AnnotationValidationError(AnnotationError):
    """A value an annotation cannot hold; ``field`` names it."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class Kind(str, enum.Enum):
    TRADE = "trade"
    REGION = "region"
    POINT = "point"

    def __str__(self) -> str:
        return self.value


class Direction(str, enum.Enum):
    LONG = "long"
    SHORT = "short"

    @property
    def sign(self) -> int:
        """+1 for long, -1 for short."""
        return 1 if self is Direction.LONG else -1

    def __str__(self) -> str:
        return self.value


class Source(str, enum.Enum):
    """Who made the annotation: the trader, or a model suggestion the trader confirmed."""

    HUMAN = "human"
    MODEL_CONFIRMED = "model-confirmed"

    def __str__(self) -> str:
        return self.value


class Origin(str, enum.Enum):
    """Whether a mark was made with the future hidden: ``blind`` (in replay), ``hindsight``
    (the whole chart in view), or ``unblinded`` (blind once, its decision changed since)."""

    BLIND = "blind"
    HINDSIGHT = "hindsight"
    UNBLINDED = "unblinded"

    def __str__(self) -> str:
        return self.value


class RegionLabel(str, enum.Enum):
    """The standard region labels; any other non-empty text is a custom label. Uptrend,
    downtrend and range are regimes the model learns; ``reviewed`` says the trader looked at
    the stretch, so its candles without a trade are "no trade" labels."""

    UPTREND = "uptrend"
    DOWNTREND = "downtrend"
    RANGE = "range"
    REVIEWED = "reviewed"
    CUSTOM = "custom"

    def __str__(self) -> str:
        return self.value


MAX_TIME_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


def now_ms() -> int:
    """The current time in UTC epoch milliseconds."""
    return time.time_ns() // 1_000_000


def new_id() -> str:
    return str(uuid.uuid4())


def _enum(cls, value, name: str):
    if isinstance(value, cls):
        return value
    try:
        return cls(value)
    except ValueError:
        allowed = " or ".join(member.value for member in cls)
        raise AnnotationValidationError(name, f"unknown {name} {value!r}; use {allowed}") from None


def _time(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise AnnotationValidationError(
                name, f"must be an integer time in epoch milliseconds, got {value!r}"
            )
    if not 0 <= value <= MAX_TIME_MS:
        raise AnnotationValidationError(
            name, f"must be between 0 and {MAX_TIME_MS} (year 9999), got {value}"
        )
    return value


def _price(value, name: str, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AnnotationValidationError(name, f"must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise AnnotationValidationError(name, f"must be a positive number, got {value!r}")
    return value


def _text(value, name: str) -> str:
    if not isinstance(value, str):
        raise AnnotationValidationError(name, f"must be text, got {value!r}")
    return value


def _tags(value) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise AnnotationValidationError("tags", f"must be a list of texts, got {value!r}")
    tags: list[str] = []
    for tag in value:
        tag = _text(tag, "tags").strip()
        if not tag:
            raise AnnotationValidationError("tags", "a tag must not be empty")
        if ";" in tag or "\n" in tag or "\r" in tag:
            raise AnnotationValidationError(
                "tags", f"a tag must not contain ';' or a newline: {tag!r}")
        if tag not in tags:
            tags.append(tag)
    return tuple(tags)


def _set(obj, name: str, value) -> None:
    object.__setattr__(obj, name, value)


def check_identity(obj) -> None:
    """Check and normalise what every mark and drawing has: ``id``, ``symbol``, ``market``,
    ``timeframe``, ``notes`` and ``created_at`` / ``updated_at``."""
    if not isinstance(obj.id, str):
        raise AnnotationValidationError("id", f"must be a UUID text, got {obj.id!r}")
    try:
        _set(obj, "id", str(uuid.UUID(obj.id)))
    except ValueError:
        raise AnnotationValidationError("id", f"not a UUID: {obj.id!r}") from None
    symbol = _text(obj.symbol, "symbol").strip().upper()
    if not symbol:
        raise AnnotationValidationError("symbol", "must not be empty")
    _set(obj, "symbol", symbol)
    _set(obj, "market", _enum(MarketKind, obj.market, "market"))
    timeframe = _text(obj.timeframe, "timeframe").strip()
    if timeframe not in TIMEFRAMES:
        raise AnnotationValidationError(
            "timeframe",
            f"unsupported timeframe {timeframe!r}; use one of {', '.join(TIMEFRAMES)}",
        )
    _set(obj, "timeframe", timeframe)
    _set(obj, "notes", _text(obj.notes, "notes"))
    _set(obj, "created_at", _time(obj.created_at, "created_at"))
    updated = obj.updated_at
    updated = obj.created_at if updated is None else _time(updated, "updated_at")
    if updated < obj.created_at:
        raise AnnotationValidationError(
            "updated_at", f"updated_at {updated} is before created_at {obj.created_at}"
        )
    _set(obj, "updated_at", updated)


@dataclass(frozen=True, kw_only=True)
class _AnnotationBase:
    kind: ClassVar[Kind]
    DECISIONS: ClassVar[tuple[str, ...]]  # the times a blind mark's decisions are made at
    DECIDED: ClassVar[frozenset[str]]  # the fields whose change makes a blind mark hindsight

    symbol: str
    timeframe: str
    market: MarketKind = MarketKind.REAL
    notes: str = ""
    tags: tuple[str, ...] = ()
    source: Source = Source.HUMAN
    id: str = field(default_factory=new_id)
    created_at: int = field(default_factory=now_ms)
    updated_at: int | None = None  # None: same as created_at
    blind: bool = False
    decided_at: tuple[int, ...] = ()  # the replay clock at each of ``DECISIONS``
    unblinded_at: int | None = None  # when a blind mark's decision was changed

    def __post_init__(self) -> None:
        check_identity(self)
        _set(self, "tags", _tags(self.tags))
        _set(self, "source", _enum(Source, self.source, "source"))

    def _check_decisions(self) -> None:
        """The blind fields hold together (after the kind's own fields are checked)."""
        if not isinstance(self.blind, bool):
            raise AnnotationValidationError("blind", f"must be true or false, got {self.blind!r}")
        if isinstance(self.decided_at, str) or not isinstance(self.decided_at, (list, tuple)):
            raise AnnotationValidationError(
                "decided_at", f"must be a list of times, got {self.decided_at!r}")
        decided = tuple(_time(t, "decided_at") for t in self.decided_at)
        _set(self, "decided_at", decided)
        if self.unblinded_at is not None:
            _set(self, "unblinded_at", _time(self.unblinded_at, "unblinded_at"))
            if self.blind:
                raise AnnotationValidationError(
                    "unblinded_at", "a blind mark has not been unblinded")
        if not decided:
            if self.blind or self.unblinded_at is not None:
                raise AnnotationValidationError(
                    "decided_at", "a blind mark needs the replay clock time of each decision")
            return
        if len(decided) != len(self.DECISIONS):
            raise AnnotationValidationError(
                "decided_at", f"a {self.kind} has {len(self.DECISIONS)} decision time(s) "
                              f"({', '.join(self.DECISIONS)}), got {len(decided)}")
        if list(decided) != sorted(decided):
            raise AnnotationValidationError("decided_at", "decisions must be in time order")
        if self.blind:
            tf = self.timeframe_ms
            for name, at in zip(self.DECISIONS, decided):
                close = getattr(self, name) + tf
                if at < close:
                    raise AnnotationValidationError(
                        "decided_at", f"{name} was decided at {at}, before its candle closed "
                                      f"at {close}: nothing can be marked after the clock")

    @property
    def origin(self) -> Origin:
        if self.blind:
            return Origin.BLIND
        return Origin.UNBLINDED if self.unblinded_at is not None else Origin.HINDSIGHT

    @property
    def market_key(self) -> MarketKey:
        """The market this annotation belongs to (the scope of training and of overlaps)."""
        return MarketKey(self.market, self.symbol)

    @property
    def timeframe_ms(self) -> int:
        return parse_timeframe(self.timeframe).ms

    @property
    def version_time(self) -> int:
        """When this version was written (``updated_at``, set by the constructor)."""
        return self.created_at if self.updated_at is None else self.updated_at

    def edited(self, **changes) -> Self:
        """A copy with ``changes`` applied and ``updated_at`` set to now (never earlier). A
        blind mark whose decision changes (a time, price, direction or label) becomes a
        hindsight mark that keeps its decision times (``unblinded_at``: now)."""
        when = max(now_ms(), self.version_time)
        if self.blind and any(getattr(self, k) != v for k, v in changes.items()
                              if k in self.DECIDED) and "blind" not in changes:
            changes.update(blind=False, unblinded_at=when)
        return dataclasses.replace(self, updated_at=when, **changes)


@dataclass(frozen=True, kw_only=True)
class Trade(_AnnotationBase):
    """A completed trade: in at the close of the candle opening at ``entry_ts`` (at
    ``entry_price``), out at the close of the candle opening at ``exit_ts`` (``exit_price``).

    ``span`` is (entry_ts, exit_ts); every kind has a ``span`` (first, last time covered).
    ``held`` is when the position is open: from the entry candle's close to the exit candle's.
    """

    kind: ClassVar[Kind] = Kind.TRADE
    DECISIONS: ClassVar[tuple[str, ...]] = ("entry_ts", "exit_ts")
    DECIDED: ClassVar[frozenset[str]] = frozenset(
        {"direction", "entry_ts", "entry_price", "exit_ts", "exit_price"})

    direction: Direction
    entry_ts: int
    entry_price: float
    exit_ts: int
    exit_price: float
    stop: float | None = None
    target: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _set(self, "direction", _enum(Direction, self.direction, "direction"))
        _set(self, "entry_ts", _time(self.entry_ts, "entry_ts"))
        _set(self, "exit_ts", _time(self.exit_ts, "exit_ts"))
        if self.entry_ts > self.exit_ts:
            raise AnnotationValidationError(
                "entry_ts", f"entry {self.entry_ts} is after exit {self.exit_ts}"
            )
        _set(self, "entry_price", _price(self.entry_price, "entry_price"))
        _set(self, "exit_price", _price(self.exit_price, "exit_price"))
        _set(self, "stop", _price(self.stop, "stop", optional=True))
        _set(self, "target", _price(self.target, "target", optional=True))
        self._check_decisions()

    @property
    def span(self) -> tuple[int, int]:
        return self.entry_ts, self.exit_ts

    @property
    def held(self) -> tuple[int, int]:
        """``[start, end)`` in epoch ms: entry candle's close to exit candle's close."""
        tf = self.timeframe_ms
        return self.entry_ts - self.entry_ts % tf + tf, self.exit_ts - self.exit_ts % tf + tf

    @property
    def pnl_pct(self) -> float:
        """Return on the entry price in percent, positive when the trade made money."""
        return (self.exit_price - self.entry_price) / self.entry_price * 100.0 * self.direction.sign

    @property
    def holding_ms(self) -> int:
        return self.exit_ts - self.entry_ts


@dataclass(frozen=True, kw_only=True)
class Region(_AnnotationBase):
    """A labelled stretch of time: a ``RegionLabel`` value or custom text."""

    kind: ClassVar[Kind] = Kind.REGION
    DECISIONS: ClassVar[tuple[str, ...]] = ("start_ts", "end_ts")
    DECIDED: ClassVar[frozenset[str]] = frozenset({"start_ts", "end_ts", "label"})

    start_ts: int
    end_ts: int
    label: str

    def __post_init__(self) -> None:
        super().__post_init__()
        _set(self, "start_ts", _time(self.start_ts, "start_ts"))
        _set(self, "end_ts", _time(self.end_ts, "end_ts"))
        if self.start_ts > self.end_ts:
            raise AnnotationValidationError(
                "start_ts", f"start {self.start_ts} is after end {self.end_ts}"
            )
        label = self.label.value if isinstance(self.label, RegionLabel) else self.label
        label = _text(label, "label").strip()
        if not label:
            raise AnnotationValidationError("label", "must not be empty")
        _set(self, "label", label)
        self._check_decisions()

    @property
    def span(self) -> tuple[int, int]:
        return self.start_ts, self.end_ts

    @property
    def label_kind(self) -> RegionLabel:
        """The standard label, or ``RegionLabel.CUSTOM`` for any other text."""
        try:
            return RegionLabel(self.label)
        except ValueError:
            return RegionLabel.CUSTOM


@dataclass(frozen=True, kw_only=True)
class Point(_AnnotationBase):
    """A note pinned to one time, optionally at a price."""

    kind: ClassVar[Kind] = Kind.POINT
    DECISIONS: ClassVar[tuple[str, ...]] = ("ts",)
    DECIDED: ClassVar[frozenset[str]] = frozenset({"ts", "price"})

    ts: int
    price: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _set(self, "ts", _time(self.ts, "ts"))
        _set(self, "price", _price(self.price, "price", optional=True))
        self._check_decisions()

    @property
    def span(self) -> tuple[int, int]:
        return self.ts, self.ts


Annotation = Trade | Region | Point
CLASSES: dict[Kind, type[Annotation]] = {Kind.TRADE: Trade, Kind.REGION: Region,
                                         Kind.POINT: Point}


def annotation_class(kind) -> type[Annotation]:
    """The class for a kind name (``"trade"`` ...); an unknown kind names the field ``kind``."""
    return CLASSES[_enum(Kind, kind, "kind")]


LEGACY_DEMO_PREFIX = "DEMO:"


def legacy_market(symbol: str) -> tuple[MarketKind, str]:
    """The market and symbol of a record written before annotations named their market: the
    window filed demo marks under ``DEMO:<symbol>``, or under the demo's own ``DEMO/...``
    symbols unchanged; everything else was a real market."""
    text = str(symbol).strip().upper()
    if text.startswith(LEGACY_DEMO_PREFIX):
        return MarketKind.DEMO, text[len(LEGACY_DEMO_PREFIX):]
    return (MarketKind.DEMO if "DEMO" in text else MarketKind.REAL), text


def unchecked(cls: type[Annotation], values: dict) -> Annotation:
    """An annotation built from already-valid ``values`` without validation.

    Only for records the store validated when it wrote them (ten times faster than the
    constructor, which matters when a chart loads thousands of annotations).
    """
    obj: Any = object.__new__(cls)
    obj.__dict__.update(values)
    return obj
