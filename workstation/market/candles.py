"""``Candles``: a growable columnar OHLCV series on one timeframe grid.

Columns are numpy buffers with spare capacity: ``ts`` (int64, open time in UTC epoch ms) and
``open high low close volume`` (float64). Appending a closed candle is amortised O(1) and
updating the forming (last) candle is O(1); the public column properties are views of the
filled part, so readers never copy.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..errors import WorkstationError
from .timeframes import ONE_MINUTE, Timeframe

PRICE_FIELDS = ("open", "high", "low", "close", "volume")
FIELDS = ("ts",) + PRICE_FIELDS
_MIN_CAPACITY = 1024


class CandleUpdate(NamedTuple):
    """One message from a feed: the state of candle ``ts``; ``closed`` once it is final."""

    ts: int
    open: float
    high: float
    low: float
    close: float
    volume: float
    closed: bool


class CandleValidationError(WorkstationError):
    """Bad candle data; ``row`` is 0-based within the checked arrays, ``field`` a column name."""

    def __init__(self, row: int, field: str, reason: str, *, row_label: str | None = None):
        self.row = row
        self.field = field
        self.reason = reason
        where = row_label if row_label is not None else f"row {row}"
        super().__init__(f"{where}: {field}: {reason}")


@dataclass(frozen=True)
class _Problem:
    row: int
    field: str
    reason: str


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def find_problem(ts, o, h, l, c, v, *, timeframe: Timeframe | None = None) -> _Problem | None:
    """The first (lowest row) problem in these columns, or None; vectorised."""
    found: list[_Problem] = []

    def check(mask: np.ndarray, field: str, reason) -> None:
        row = _first(mask)
        if row is not None:
            found.append(_Problem(row, field, reason(row) if callable(reason) else reason))

    for name, col in zip(PRICE_FIELDS, (o, h, l, c, v)):
        check(~np.isfinite(col), name, lambda r, col=col: f"not a finite number ({col[r]})")
    for name, col in zip(PRICE_FIELDS[:4], (o, h, l, c)):
        check(col <= 0, name, lambda r, col=col: f"price must be positive, got {col[r]}")
    check(v < 0, "volume", lambda r: f"negative volume {v[r]}")
    with np.errstate(invalid="ignore"):
        check(h < np.maximum(o, c), "high", lambda r: f"high {h[r]} is below max(open, close)")
        check(l > np.minimum(o, c), "low", lambda r: f"low {l[r]} is above min(open, close)")
    if len(ts) > 1:
        step = np.diff(ts)
        check(
            np.concatenate(([False], step < 0)),
            "ts",
            lambda r: f"timestamps not sorted ({ts[r]} comes after {ts[r - 1]})",
        )
        check(np.concatenate(([False], step == 0)), "ts", lambda r: f"duplicate timestamp {ts[r]}")
    if timeframe is not None:
        check(
            ts % timeframe.ms != 0,
            "ts",
            lambda r: f"timestamp {ts[r]} is not on the {timeframe.name} grid",
        )
    return min(found, key=lambda p: p.row) if found else None


def validate_columns(ts, o, h, l, c, v, *, timeframe: Timeframe | None = None,
                     row_label=None):
    """Raise ``CandleValidationError`` for the first bad row. ``row_label(row)`` names it."""
    problem = find_problem(ts, o, h, l, c, v, timeframe=timeframe)
    if problem is not None:
        label = row_label(problem.row) if row_label else None
        raise CandleValidationError(problem.row, problem.field, problem.reason, row_label=label)


_COLUMN_SLOTS = ("_ts", "_o", "_h", "_l", "_c", "_v")  # the buffers, in FIELDS order


class Candles:
    """A candle series on one timeframe; see the module docstring."""

    __slots__ = ("_c", "_h", "_l", "_n", "_o", "_ts", "_v", "last_closed", "timeframe")

    def __init__(self, timeframe: Timeframe, capacity: int = _MIN_CAPACITY):
        self.timeframe = timeframe
        capacity = max(int(capacity), _MIN_CAPACITY)
        self._n = 0
        self._ts = np.empty(capacity, dtype=np.int64)
        self._o, self._h, self._l, self._c, self._v = (
            np.empty(capacity, dtype=np.float64) for _ in range(5)
        )
        self.last_closed = True  # False while the last candle is still forming

    # -- construction ------------------------------------------------------------------
    @classmethod
    def from_arrays(cls, ts, open, high, low, close, volume, timeframe: Timeframe = ONE_MINUTE,
                    *, validate=True, last_closed: bool = True) -> Candles:
        """Build from six equally long arrays (copied); validated unless ``validate=False``."""
        return cls.from_columns((ts, open, high, low, close, volume), timeframe,
                                validate=validate, last_closed=last_closed)

    @classmethod
    def from_columns(cls, columns: Sequence, timeframe: Timeframe = ONE_MINUTE, *,
                     validate: bool = True, last_closed: bool = True) -> Candles:
        """``from_arrays`` of the six columns ``(ts, open, high, low, close, volume)``."""
        if len(columns) != len(FIELDS):
            raise WorkstationError(f"candles have {len(FIELDS)} columns ({', '.join(FIELDS)}), "
                                   f"got {len(columns)}")
        cols = [np.ascontiguousarray(columns[0], dtype=np.int64)] + [
            np.ascontiguousarray(x, dtype=np.float64) for x in columns[1:]
        ]
        n = len(cols[0])
        for name, col in zip(FIELDS, cols):
            if col.ndim != 1 or len(col) != n:
                raise WorkstationError(f"column {name} has shape {col.shape}, expected ({n},)")
        out = cls(timeframe, capacity=n + n // 8)
        if validate:
            validate_columns(*cols, timeframe=out.timeframe)
        for buf, col in zip(out._buffers(), cols):
            buf[:n] = col
        out._n = n
        out.last_closed = last_closed
        return out

    @classmethod
    def from_parts(cls, parts: Iterable[Sequence[np.ndarray]], most: int,
                   timeframe: Timeframe) -> Candles:
        """Consecutive parts of one series, each six columns in ``FIELDS`` order, copied one
        after another into buffers sized once for at most ``most`` candles: a long series is
        built without a second whole copy (unvalidated: the parts come from a checked
        store)."""
        out = cls(timeframe, capacity=most + most // 8)
        n = 0
        for part in parts:
            m = len(part[0])
            if n + m > most:
                raise WorkstationError(f"candle parts hold more than the {most} announced")
            for buf, col in zip(out._buffers(), part):
                buf[n:n + m] = col
            n += m
        out._n = n
        return out

    @classmethod
    def from_updates(cls, updates: Iterable[CandleUpdate], timeframe: Timeframe) -> Candles:
        out = cls(timeframe)
        for update in updates:
            out.apply(update)
        return out

    # -- columns -----------------------------------------------------------------------
    def _buffers(self):
        return (self._ts, self._o, self._h, self._l, self._c, self._v)

    @property
    def ts(self) -> np.ndarray:
        return self._ts[: self._n]

    @property
    def open(self) -> np.ndarray:
        return self._o[: self._n]

    @property
    def high(self) -> np.ndarray:
        return self._h[: self._n]

    @property
    def low(self) -> np.ndarray:
        return self._l[: self._n]

    @property
    def close(self) -> np.ndarray:
        return self._c[: self._n]

    @property
    def volume(self) -> np.ndarray:
        return self._v[: self._n]

    def columns(self) -> tuple[np.ndarray, ...]:
        """``(ts, open, high, low, close, volume)`` views."""
        return tuple(buf[: self._n] for buf in self._buffers())

    def __len__(self) -> int:
        return self._n

    @property
    def n_closed(self) -> int:
        """How many rows are final: all of them, or all but the last while it is forming."""
        return self._n if self.last_closed else self._n - 1

    def __repr__(self) -> str:
        if not self._n:
            return f"Candles({self.timeframe.name}, empty)"
        return (f"Candles({self.timeframe.name}, {self._n} from {self._ts[0]} to "
                f"{self._ts[self._n - 1]})")

    def row(self, i: int) -> CandleUpdate:
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        closed = self.last_closed or i < self._n - 1
        return CandleUpdate(int(self._ts[i]), float(self._o[i]), float(self._h[i]),
                            float(self._l[i]), float(self._c[i]), float(self._v[i]), closed)

    def slice(self, start: int, stop: int) -> Candles:
        """A copy of rows ``start:stop``."""
        cols = [col[start:stop] for col in self.columns()]
        forming = not self.last_closed and stop >= self._n
        return Candles.from_columns(cols, self.timeframe, validate=False,
                                    last_closed=not forming)

    def copy(self) -> Candles:
        return self.slice(0, self._n)

    def without(self, rows) -> Candles:
        """A copy without the candles at ``rows`` (indices, or a boolean mask of those to
        drop): gaps."""
        keep = np.ones(self._n, dtype=bool)
        keep[rows] = False
        forming = not self.last_closed and self._n > 0 and bool(keep[-1])
        return Candles.from_columns([col[keep] for col in self.columns()], self.timeframe,
                                    validate=False, last_closed=not forming)

    def index_of(self, ts_ms: int) -> int:
        """Index of the candle whose open time is the greatest <= ``ts_ms`` (-1 if none)."""
        return int(np.searchsorted(self.ts, ts_ms, side="right")) - 1

    # -- live updates --------------------------------------------------------------------
    def _grow(self) -> None:
        capacity = len(self._ts) * 2
        for name in _COLUMN_SLOTS:
            old = getattr(self, name)
            new = np.empty(capacity, dtype=old.dtype)
            new[: self._n] = old[: self._n]
            setattr(self, name, new)

    def append(self, ts: int, o: float, h: float, l: float, c: float, v: float,
               closed: bool = True) -> None:
        """Append a candle after the last one (amortised O(1)); checked like any input."""
        n = self._n
        if n and ts <= self._ts[n - 1]:
            raise CandleValidationError(n, "ts", f"timestamp {ts} is not after the last candle "
                                                 f"{int(self._ts[n - 1])}")
        self._check_one(n, ts, o, h, l, c, v)
        if n == len(self._ts):
            self._grow()
        self._ts[n] = ts
        self._o[n] = o
        self._h[n] = h
        self._l[n] = l
        self._c[n] = c
        self._v[n] = v
        self._n = n + 1
        self.last_closed = closed

    def update_last(self, o: float, h: float, l: float, c: float, v: float,
                    closed: bool = False) -> None:
        """Replace the values of the last (forming) candle in place: O(1)."""
        n = self._n - 1
        if n < 0:
            raise WorkstationError("no candle to update")
        self._check_one(n, int(self._ts[n]), o, h, l, c, v)
        self._o[n] = o
        self._h[n] = h
        self._l[n] = l
        self._c[n] = c
        self._v[n] = v
        self.last_closed = closed

    def apply(self, update: CandleUpdate) -> str:
        """Apply a feed update: ``"update"`` of the last candle, or ``"append"`` of a new one.

        An update for an older candle than the last one is an error: feeds back-fill gaps
        before resuming, so a late candle means the feed is broken.
        """
        ts = int(update.ts)
        if self._n and ts == self._ts[self._n - 1]:
            self.update_last(update.open, update.high, update.low, update.close,
                             update.volume, update.closed)
            return "update"
        self.append(ts, update.open, update.high, update.low, update.close, update.volume,
                    update.closed)
        return "append"

    def _check_one(self, row, ts, o, h, l, c, v) -> None:
        if ts % self.timeframe.ms:
            raise CandleValidationError(row, "ts", f"timestamp {ts} is not on the "
                                                   f"{self.timeframe.name} grid")
        # Comparisons written so that NaN fails them.
        if not (0 < o < np.inf and 0 < c < np.inf and 0 < l < np.inf and 0 < h < np.inf):
            raise CandleValidationError(row, "price", f"prices must be finite and positive, got "
                                                      f"o={o} h={h} l={l} c={c}")
        if not 0 <= v < np.inf:
            raise CandleValidationError(row, "volume", f"volume must be finite and >= 0, got {v}")
        if not h >= max(o, c):
            raise CandleValidationError(row, "high", f"high {h} is below max(open, close)")
        if not l <= min(o, c):
            raise CandleValidationError(row, "low", f"low {l} is above min(open, close)")

    # -- whole-series operations ---------------------------------------------------------
    def merge(self, other: Candles) -> Candles:
        """A new series with the candles of both; where both have a timestamp, ``other`` wins."""
        if other.timeframe != self.timeframe:
            raise WorkstationError(
                f"cannot merge {other.timeframe.name} candles into {self.timeframe.name} candles")
        if not len(other):
            return self.copy()
        if not self._n:
            return other.copy()
        if other.ts[0] > self.ts[-1]:  # the common case: new candles after the old ones
            cols = [np.concatenate((a, b)) for a, b in zip(self.columns(), other.columns())]
            return Candles.from_columns(cols, self.timeframe, validate=False,
                                        last_closed=other.last_closed)
        cols = [np.concatenate((a, b)) for a, b in zip(self.columns(), other.columns())]
        order = np.argsort(cols[0], kind="stable")
        ts_sorted = cols[0][order]
        # keep the last occurrence of each timestamp (other's rows come later in the stable order)
        keep = np.ones(len(order), dtype=bool)
        keep[:-1] = ts_sorted[1:] != ts_sorted[:-1]
        pick = order[keep]
        last_closed = other.last_closed if other.ts[-1] >= self.ts[-1] else self.last_closed
        return Candles.from_columns([col[pick] for col in cols], self.timeframe,
                                    validate=False, last_closed=last_closed)

    def resample(self, target: Timeframe) -> Candles:
        """Aggregate into a coarser timeframe (first open, max high, min low, last close, sum
        volume). The last bucket is marked forming if it is not complete."""
        if target.ms % self.timeframe.ms:
            raise WorkstationError(f"cannot resample {self.timeframe.name} candles to "
                                   f"{target.name}: not a whole multiple")
        if not self._n:
            return Candles(target)
        ts = self.ts
        bucket = ts - ts % target.ms
        starts = np.flatnonzero(np.concatenate(([True], bucket[1:] != bucket[:-1])))
        ends = np.append(starts[1:], self._n)
        out = Candles.from_arrays(
            bucket[starts],
            self.open[starts],
            np.maximum.reduceat(self.high, starts),
            np.minimum.reduceat(self.low, starts),
            self.close[ends - 1],
            np.add.reduceat(self.volume, starts),
            timeframe=target,
            validate=False,
        )
        last_complete = ts[-1] + self.timeframe.ms >= bucket[-1] + target.ms
        out.last_closed = bool(last_complete and self.last_closed)
        return out

    def gaps(self) -> list[tuple[int, int]]:
        """Missing stretches as ``(first missing ts, candles missing)`` pairs."""
        if self._n < 2:
            return []
        step = np.diff(self.ts)
        where = np.flatnonzero(step > self.timeframe.ms)
        return [(int(self.ts[i] + self.timeframe.ms), int(step[i] // self.timeframe.ms - 1))
                for i in where]
