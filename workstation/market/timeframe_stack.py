"""``TimeframeStack``: one base series and the higher timeframes made from it, kept in step.

The base ``Candles`` (the lowest timeframe shown) is the one truth; each higher timeframe is
its resample, with exactly the reductions of ``Candles.resample`` (first open, ``reduceat``
max high / min low / sum volume, last close), so a derived candle is bit-identical to
``base.resample(tf)`` for its bucket, the forming one included, at every tick.

A first bucket of the base that starts after its bucket's open time is partial and never
shown as if complete: a derived series begins at the base's first complete bucket. Older
candles of a timeframe (from the cache, say) may come before that bucket as ``history``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from ..errors import WorkstationError
from .candles import Candles, CandleUpdate
from .timeframes import ALL, Timeframe


def common_base(timeframes: Iterable[Timeframe]) -> Timeframe:
    """The longest supported timeframe that every one of ``timeframes`` is a whole multiple
    of (``3m`` and ``5m``: ``1m``)."""
    tfs = list(timeframes)
    if not tfs:
        raise WorkstationError("no timeframes given")
    return max(t for t in ALL if all(x.ms % t.ms == 0 for x in tfs))


def first_complete_bucket(first_ts: int, timeframe: Timeframe) -> int:
    """The open time of the first ``timeframe`` bucket that a series starting at
    ``first_ts`` covers from its start."""
    floor = timeframe.floor(first_ts)
    return floor if floor == first_ts else floor + timeframe.ms


class TimeframeStack:
    """``base`` plus its resamples to ``timeframes`` (each a whole multiple of the base's);
    see the module docstring. After the base changes by one feed update (``apply``, or the
    owner's own ``base.apply`` followed by ``sync``), the derived forming candles follow."""

    def __init__(self, base: Candles, timeframes: Iterable[Timeframe] = (),
                 history: Mapping[Timeframe, Candles] | None = None):
        self.base = base
        self._history = dict(history or {})
        wanted = sorted(set(timeframes) - {base.timeframe})
        for tf in wanted:
            if tf.ms < base.timeframe.ms or tf.ms % base.timeframe.ms:
                raise WorkstationError(f"{tf.name} candles cannot be made from "
                                       f"{base.timeframe.name} candles: not a whole multiple")
        self._derived: dict[Timeframe, Candles] = {}
        self._start: dict[Timeframe, int | None] = {}
        for tf in wanted:
            self._build(tf)
        self._synced = len(base)

    @property
    def timeframes(self) -> tuple[Timeframe, ...]:
        """The base's timeframe, then the derived ones, shortest first."""
        return (self.base.timeframe, *self._derived)

    def candles(self, tf: Timeframe) -> Candles:
        """The series of ``tf`` (the base itself for the base's)."""
        if tf == self.base.timeframe:
            return self.base
        try:
            return self._derived[tf]
        except KeyError:
            raise WorkstationError(f"no {tf.name} candles in this stack") from None

    def apply(self, update: CandleUpdate) -> dict[Timeframe, str]:
        """Apply a feed update to the base and bring every timeframe up to date; returns
        what changed per timeframe (``"update"``, ``"append"`` or ``"reset"``)."""
        kinds = {self.base.timeframe: self.base.apply(update)}
        kinds.update(self.sync())
        return kinds

    def sync(self) -> dict[Timeframe, str]:
        """Bring the derived series up to date with candles updated or appended to the base
        since the last sync; returns what changed per derived timeframe."""
        n = len(self.base)
        first = max(min(self._synced, n) - 1, 0)
        self._synced = n
        kinds: dict[Timeframe, str] = {}
        if not n:
            return kinds
        for tf in self._derived:
            kind = self._sync_one(tf, first)
            if kind is not None:
                kinds[tf] = kind
        return kinds

    # -- internals ---------------------------------------------------------------------------
    def _build(self, tf: Timeframe) -> None:
        """The whole series of ``tf``: history before the base's first complete bucket, then
        the base's resample from that bucket on."""
        base, older = self.base, self._history.get(tf)
        start = first_complete_bucket(int(base.ts[0]), tf) if len(base) else None
        if older is not None and older.timeframe != tf:
            raise WorkstationError(f"history for {tf.name} holds {older.timeframe.name} candles")
        parts = []
        if older is not None and len(older):
            keep = len(older) if start is None else int(np.searchsorted(older.ts, start))
            parts.append(older.slice(0, keep))
            if keep < len(older) or start is not None:
                parts[0].last_closed = True
        if start is not None:
            parts.append(base.slice(int(np.searchsorted(base.ts, start)), len(base)).resample(tf))
        out = Candles(tf)
        for part in parts:
            out = out.merge(part) if len(out) else part
        self._derived[tf] = out
        self._start[tf] = start

    def _sync_one(self, tf: Timeframe, first: int) -> str | None:
        start = self._start[tf]
        if start is None:  # the base was empty: its first candles set the start
            self._build(tf)
            return "reset"
        ts, n, out = self.base.ts, len(self.base), self._derived[tf]
        kind = None
        i = first
        while i < n:
            bucket = tf.floor(int(ts[i]))
            end = int(np.searchsorted(ts, bucket + tf.ms))
            if bucket >= start:
                step = self._put(out, tf, bucket, int(np.searchsorted(ts, bucket)), end)
                kind = "append" if "append" in (kind, step) else step
            i = end
        return kind

    def _put(self, out: Candles, tf: Timeframe, bucket: int, s: int, e: int) -> str:
        """Write the aggregate of base rows ``[s, e)`` as the candle of ``bucket``."""
        b = self.base
        at = [0]
        high = float(np.maximum.reduceat(b.high[s:e], at)[0])
        low = float(np.minimum.reduceat(b.low[s:e], at)[0])
        volume = float(np.add.reduceat(b.volume[s:e], at)[0])
        complete = int(b.ts[e - 1]) + b.timeframe.ms >= bucket + tf.ms
        closed = e < len(b) or (complete and b.last_closed)
        values = (float(b.open[s]), high, low, float(b.close[e - 1]), volume)
        if len(out) and int(out.ts[-1]) == bucket:
            out.update_last(*values, closed=closed)
            return "update"
        out.append(bucket, *values, closed=closed)
        return "append"
