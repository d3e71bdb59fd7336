"""``TimeMap``: the one mapping between times (UTC epoch ms) and a chart's x.

A chart draws its candles side by side whatever the gaps in the data: candle ``i`` covers
``x`` in ``[i - 0.5, i + 0.5)``, its open time ``ts[i]`` at the left edge and the time
``ts[i] + f * timeframe`` (``0 <= f < 1``) at ``i - 0.5 + f``. Before the first candle and
after the last, x goes on along the timeframe grid; a time inside a gap of the data maps to
the edge between the candles around it (gaps take no space). So ``x_of(ts_of(x)) == x``
everywhere, and ``ts_of(x_of(t)) == t`` except inside gaps.
"""

from __future__ import annotations

import math

import numpy as np

from ..market.candles import Candles


class TimeMap:
    """Time <-> x for a series' open times ``ts`` (sorted int64 ms) on a timeframe of
    ``timeframe_ms``; see the module docstring. An empty series maps along the grid from
    the epoch."""

    __slots__ = ("timeframe_ms", "ts")

    def __init__(self, ts: np.ndarray, timeframe_ms: int):
        self.ts = np.asarray(ts, dtype=np.int64)  # a view of the candles' column: no copy
        self.timeframe_ms = int(timeframe_ms)

    @classmethod
    def of(cls, candles: Candles) -> TimeMap:
        return cls(candles.ts, candles.timeframe.ms)

    def __len__(self) -> int:
        return len(self.ts)

    def index_at(self, ts: int) -> int:
        """The candle that contains ``ts`` or, in a gap, the last one before it (-1 before
        the first)."""
        return int(self.ts.searchsorted(ts, side="right")) - 1

    def x_of(self, ts):
        """x of a time, or of an array of times (vectorised)."""
        if np.ndim(ts):
            return self._xs_of(np.asarray(ts, dtype=np.int64))
        tf, n, t = self.timeframe_ms, len(self.ts), int(ts)
        if not n:
            return t / tf - 0.5
        i = self.index_at(t)
        if i < 0:
            return (t - int(self.ts[0])) / tf - 0.5
        x = i - 0.5 + (t - int(self.ts[i])) / tf
        return min(x, i + 0.5) if i < n - 1 else x

    def _xs_of(self, ts: np.ndarray) -> np.ndarray:
        tf, n = self.timeframe_ms, len(self.ts)
        if not n:
            return ts / tf - 0.5
        i = np.searchsorted(self.ts, ts, side="right") - 1
        j = np.maximum(i, 0)
        x = j - 0.5 + (ts - self.ts[j]) / tf
        return np.where((i >= 0) & (i < n - 1), np.minimum(x, j + 0.5), x)

    def centre_x(self, ts):
        """x of the centre of a candle that opens at ``ts`` (half a candle right of
        ``x_of``): where the chart draws what is stamped with a candle's open time
        (overlays, time ticks)."""
        return self.x_of(ts) + 0.5

    def ts_of(self, x: float) -> int:
        """The time at ``x`` (to the millisecond)."""
        tf, n = self.timeframe_ms, len(self.ts)
        if not n:
            return round((x + 0.5) * tf)
        i = min(max(math.floor(x + 0.5), 0), n - 1)
        return int(self.ts[i]) + round((x - i + 0.5) * tf)

    def index_range(self, x0: float, x1: float) -> tuple[int, int]:
        """Candles ``[i0, i1)`` at least partly inside ``[x0, x1]``."""
        n = len(self.ts)
        i0 = min(max(0, math.floor(x0 - 0.5) + 1), n)
        i1 = min(max(0, math.ceil(x1 + 0.5)), n)
        return i0, max(i0, i1)
