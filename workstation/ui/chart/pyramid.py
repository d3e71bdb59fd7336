"""``CandlePyramid``: min/max aggregates of a candle series at every power-of-two scale.

Level ``k`` (``k >= FIRST``) holds, for each aligned bucket of ``2**k`` candles, the highest
high, the lowest low and the summed volume; level 0 is the candles themselves (read from the
``Candles`` columns, never copied). Levels 1 to ``FIRST - 1`` are not kept: a query that would
read them reads at most ``2**FIRST`` candles of level 0 instead, and the pyramid costs 3 bytes
a candle instead of 24 (a year of 1s candles: 95 MB instead of 760). The first open and last
close of any candle range need no table: they are ``open[start]`` and ``close[stop - 1]``.

Built once in O(n) numpy; appending a candle or updating the forming one touches only the
last bucket of each level, O(log n). Two queries make a zoomed-out chart independent of the
series length:

- ``range_stats(start, stop)``: low, high and volume of any candle range in O(log n);
- ``columns(edges)``: first open / max high / min low / last close / summed volume for many
  consecutive ranges (one per pixel column) at the coarsest level whose buckets still fit in a
  range, so the work is O(ranges), not O(candles).

Pure numpy: no Qt here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...market.candles import Candles

_MIN_CAPACITY = 64
FINENESS = 2
"""``columns`` reads buckets at most half as wide as the ranges it aggregates (so a column
is off by at most a quarter of a pixel)."""
FIRST = 4
"""The finest level kept: buckets of 16 candles."""


class _Level:
    """One aggregation level: growable high/low/volume buffers of ``count`` buckets."""

    __slots__ = ("count", "high", "low", "volume")

    def __init__(self, capacity: int):
        capacity = max(_MIN_CAPACITY, capacity)
        self.high = np.empty(capacity)
        self.low = np.empty(capacity)
        self.volume = np.empty(capacity)
        self.count = 0

    @classmethod
    def buckets_of(cls, high: np.ndarray, low: np.ndarray, volume: np.ndarray,
                   width: int) -> _Level:
        """The level of buckets of ``width`` candles over these columns (the last bucket may
        hold fewer)."""
        m, rest = divmod(len(high), width)
        count = m + bool(rest)
        level = cls(count + count // 4)
        whole = m * width
        np.max(high[:whole].reshape(m, width), axis=1, out=level.high[:m])
        np.min(low[:whole].reshape(m, width), axis=1, out=level.low[:m])
        np.sum(volume[:whole].reshape(m, width), axis=1, out=level.volume[:m])
        if rest:
            level.high[m], level.low[m] = high[whole:].max(), low[whole:].min()
            level.volume[m] = volume[whole:].sum()
        level.count = count
        return level

    @classmethod
    def pairs_of(cls, high: np.ndarray, low: np.ndarray, volume: np.ndarray) -> _Level:
        """The level above ``(high, low, volume)``: each bucket joins two neighbours."""
        m, odd = divmod(len(high), 2)
        count = m + odd
        level = cls(count + count // 4)
        np.maximum(high[0:2 * m:2], high[1:2 * m:2], out=level.high[:m])
        np.minimum(low[0:2 * m:2], low[1:2 * m:2], out=level.low[:m])
        np.add(volume[0:2 * m:2], volume[1:2 * m:2], out=level.volume[:m])
        if odd:
            level.high[m], level.low[m], level.volume[m] = high[-1], low[-1], volume[-1]
        level.count = count
        return level

    def set(self, i: int, high: float, low: float, volume: float) -> None:
        if i == self.count:
            if i == len(self.high):
                for name in ("high", "low", "volume"):
                    old = getattr(self, name)
                    new = np.empty(2 * len(old))
                    new[:i] = old[:i]
                    setattr(self, name, new)
            self.count = i + 1
        self.high[i] = high
        self.low[i] = low
        self.volume[i] = volume


@dataclass(frozen=True)
class ColumnStats:
    """Aggregates of consecutive candle ranges ``[start[j], stop[j])``; ``column[j]`` is the
    index of the range in the ``edges`` that were asked for (empty ranges are left out)."""

    column: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    volume: np.ndarray
    level: int


class CandlePyramid:
    """See the module docstring. Call ``sync()`` after the candles change."""

    def __init__(self, candles: Candles):
        self.candles = candles
        self.rebuild()

    # -- building ----------------------------------------------------------------------
    def rebuild(self) -> None:
        """Build every level from the candles: O(n)."""
        c = self.candles
        self._n = len(c)
        self._levels: list[_Level] = []
        if self._n <= 1:
            return
        level = _Level.buckets_of(c.high, c.low, c.volume, 1 << FIRST)
        self._levels.append(level)
        high, low, volume = (a[:level.count] for a in (level.high, level.low, level.volume))
        while len(high) > 1:
            level = _Level.pairs_of(high, low, volume)
            self._levels.append(level)
            high = level.high[:level.count]
            low = level.low[:level.count]
            volume = level.volume[:level.count]

    def sync(self) -> None:
        """Catch up with the candles: the last known candle may have changed and new ones may
        have been appended. O(log n) per changed candle; a rebuild if the series shrank or grew
        by a large block."""
        n = len(self.candles)
        if n < self._n or n - self._n > max(64, self._n // 8) or self._n == 0:
            self.rebuild()
            return
        for i in range(self._n - 1, n):
            self._refresh_path(i, n)
        self._n = n

    def _refresh_path(self, i: int, n: int) -> None:
        """Recompute the bucket holding candle ``i`` on every level (candles ``< n`` exist);
        called for increasing ``i``, so each level grows by at most one bucket at a time."""
        if n <= 1:
            return
        c = self.candles
        b = i >> FIRST
        j0, j1 = b << FIRST, min((b + 1) << FIRST, n)
        if not self._levels:
            self._levels.append(_Level(1))
        level = self._levels[0]
        level.set(b, c.high[j0:j1].max(), c.low[j0:j1].min(), c.volume[j0:j1].sum())
        k = 1
        while level.count > 1:
            below, b = level, b >> 1
            j = 2 * b
            if j + 1 < below.count:
                h = max(below.high[j], below.high[j + 1])
                lw = min(below.low[j], below.low[j + 1])
                v = below.volume[j] + below.volume[j + 1]
            else:
                h, lw, v = below.high[j], below.low[j], below.volume[j]
            if k == len(self._levels):
                self._levels.append(_Level(1))
            level = self._levels[k]
            level.set(b, h, lw, v)
            k += 1

    # -- queries -----------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    @property
    def levels(self) -> int:
        """Number of aggregation levels kept above the candles (``FIRST`` and up)."""
        return len(self._levels)

    @property
    def top(self) -> int:
        """The coarsest level there is (0: the candles alone)."""
        return FIRST + len(self._levels) - 1 if self._levels else 0

    def _arrays(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        if k == 0:
            c = self.candles
            return c.high, c.low, c.volume, self._n
        level = self._levels[k - FIRST]
        return level.high, level.low, level.volume, level.count

    def range_stats(self, start: int, stop: int) -> tuple[float, float, float]:
        """``(lowest low, highest high, summed volume)`` of candles ``[start, stop)``;
        ``(inf, -inf, 0)`` for an empty range. O(log n)."""
        a = max(0, int(start))
        b = min(self._n, int(stop))
        if a >= b:
            return np.inf, -np.inf, 0.0
        c = self.candles
        a_up = -(-a >> FIRST) << FIRST  # the candles outside whole buckets are read as they are
        b_down = b >> FIRST << FIRST
        if a_up >= b_down:
            return float(c.low[a:b].min()), float(c.high[a:b].max()), float(c.volume[a:b].sum())
        ends = (slice(a, a_up), slice(b_down, b))
        low = min([np.inf] + [c.low[s].min() for s in ends if s.start < s.stop])
        high = max([-np.inf] + [c.high[s].max() for s in ends if s.start < s.stop])
        volume = sum(float(c.volume[s].sum()) for s in ends)
        a, b, k = a_up >> FIRST, b_down >> FIRST, FIRST
        while a < b:
            h_arr, l_arr, v_arr, _ = self._arrays(k)
            if a & 1:
                high = max(high, h_arr[a])
                low = min(low, l_arr[a])
                volume += v_arr[a]
                a += 1
            if b & 1:
                b -= 1
                high = max(high, h_arr[b])
                low = min(low, l_arr[b])
                volume += v_arr[b]
            a >>= 1
            b >>= 1
            k += 1
        return float(low), float(high), float(volume)

    def level_for(self, candles_per_range: float) -> int:
        """The coarsest level whose buckets fit ``FINENESS`` times in ranges this wide."""
        if candles_per_range < FINENESS << FIRST:
            return 0
        return min(int(math.log2(candles_per_range / FINENESS)), self.top)

    def columns(self, edges: np.ndarray, level: int | None = None) -> ColumnStats:
        """Aggregates of the candle ranges between consecutive ``edges`` (non-decreasing candle
        indices, clipped to ``[0, n]``).

        Read at ``level`` (default: ``level_for`` the narrowest non-empty range); each edge is
        rounded to that level's bucket grid, so with the default a range starts or ends at
        most 1/(2 * FINENESS) of a range away from where it was asked. O(len(edges) *
        FINENESS), or of the candles in ranges narrower than ``FINENESS << FIRST``."""
        n = self._n
        edges = np.clip(np.asarray(edges, dtype=np.int64), 0, n)
        if level is None:
            widths = np.diff(edges)
            nonempty = widths[widths > 0]
            level = self.level_for(float(nonempty.min())) if nonempty.size else 0
        k = min(level, self.top) if level >= FIRST else 0
        high_k, low_k, volume_k, count = self._arrays(k)
        buckets = np.minimum((edges + (1 << (k - 1))) >> k, count) if k else edges
        keep = np.flatnonzero(buckets[1:] > buckets[:-1])
        b_start = buckets[keep]
        b_stop = buckets[keep + 1]
        start = np.minimum(b_start << k, n)
        stop = np.minimum(b_stop << k, n)
        if keep.size:
            lo_b = int(b_start[0])
            hi_b = int(b_stop[-1])
            # Consecutive kept ranges are contiguous except across dropped empty ones, which
            # have no buckets; so reduceat over the covered slice sees exactly each range.
            offsets = b_start - lo_b
            high = np.maximum.reduceat(high_k[lo_b:hi_b], offsets)
            low = np.minimum.reduceat(low_k[lo_b:hi_b], offsets)
            volume = np.add.reduceat(volume_k[lo_b:hi_b], offsets)
        else:
            high = low = volume = np.empty(0)
        c = self.candles
        return ColumnStats(keep, start, stop, c.open[start], high, low, c.close[stop - 1],
                           volume, k)
