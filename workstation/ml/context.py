"""Context columns of the model's inputs: higher timeframes and a reference asset, causal.

Higher timeframe ``H`` over base candles of timeframe ``B`` (``H`` a whole multiple of ``B``),
for the base candle ``t`` (open ``ts_t``, closed at ``ts_t + B``):

- ``H:open_ret .. H:vol_regime``: the candle columns (``candle_columns.candle_features``) of the
  last *closed* ``H`` candle as of ``t``'s close, the one that ended at or before
  ``ts_t + B``, computed on the ``H`` series resampled from the base candles;
- ``H:forming_close|high|low``: the forming ``H`` candle (the bucket holding ``t``) as the
  aggregate of its base candles up to and including ``t`` only: its close, highest high and
  lowest low as log ratios to the previous ``H`` candle's close, in units of that candle's
  volatility; ``H:forming_elapsed``: the fraction of the bucket over at ``t``'s close;
- ``H:mask``: 1 where both of those ``H`` candles exist, else 0 with every ``H`` column 0
  (the series' first bucket is never used: the series may start inside it).

Reference asset ``R`` on the same timeframe: ``ref:open_ret .. ref:vol_regime``, its candle
columns at exactly ``ts_t`` (computed on ``R``'s own closed candles), and ``ref:mask``: 1 where
``R`` has that candle, else 0 with every ``ref`` column 0; a missing candle is never
forward-filled.

Every column of row ``t`` depends only on candles (of the series and of ``R``) that closed by
``ts_t + B``; ``window_start`` says where a window must begin for its rows to equal the full
history's bit for bit.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import WorkstationError
from ..market.timeframes import Timeframe, parse_timeframe
from ..timeparse import format_ms
from .candle_columns import candle_features, volatility

CLOSED_NAMES = ("open_ret", "high_ret", "low_ret", "close_ret", "range", "log_volume",
                "vol_regime")  # the candle columns a context candle contributes
FORMING_NAMES = ("forming_close", "forming_high", "forming_low", "forming_elapsed")
REFERENCE_PREFIX = "ref"


def parse_higher_timeframes(text: str | None) -> tuple[str, ...] | None:
    """``"15m, 1h"`` -> ``("15m", "1h")``; None or blank -> None (not given)."""
    if not text or not text.strip():
        return None
    return tuple(part.strip() for part in text.replace(" ", ",").split(",") if part.strip())


def higher_frames(spec) -> list[Timeframe]:
    """The higher timeframes ``spec`` names (``higher_timeframes``: names, as settings keep
    them), read in this one place."""
    return [parse_timeframe(name) for name in spec.higher_timeframes]


def check_context(spec) -> None:
    """Refuse context settings that are not ones (unknown or repeated timeframes, ...)."""
    frames = higher_frames(spec)
    if sorted(set(frames)) != frames:
        raise WorkstationError(f"higher timeframes must be distinct and rising, got "
                               f"{', '.join(spec.higher_timeframes)}")


def check_base(spec, timeframe: Timeframe) -> None:
    """Refuse higher timeframes that are not whole multiples above ``timeframe``."""
    for higher in higher_frames(spec):
        if higher.ms <= timeframe.ms or higher.ms % timeframe.ms:
            raise WorkstationError(f"higher timeframe {higher.name} is not a whole multiple "
                                   f"above the series' {timeframe.name} candles")


def context_names(spec) -> tuple[str, ...]:
    names: list[str] = []
    for frame in spec.higher_timeframes:
        names += [f"{frame}:{n}" for n in CLOSED_NAMES + FORMING_NAMES] + [f"{frame}:mask"]
    if spec.reference:
        names += [f"{REFERENCE_PREFIX}:{n}" for n in CLOSED_NAMES] + [f"{REFERENCE_PREFIX}:mask"]
    return tuple(names)


def context_features(candles, spec, reference=None) -> np.ndarray:
    """The context columns (``context_names(spec)``) of ``candles`` (closed candles)."""
    check_base(spec, candles.timeframe)
    parts = [np.zeros((len(candles), 0), dtype=np.float32)]
    parts += [higher_timeframe_features(candles, higher, spec) for higher in higher_frames(spec)]
    if spec.reference:
        if reference is None:
            raise WorkstationError(f"these features use {spec.reference} as a reference asset, "
                                   f"but no {spec.reference} candles were given")
        parts.append(reference_features(candles, reference, spec))
    return np.concatenate(parts, axis=1)


def _closed_higher(candles, higher: Timeframe):
    """The ``higher`` candles resampled from ``candles`` without the series' first bucket."""
    resampled = candles.resample(higher)
    return resampled.slice(1, len(resampled)) if len(resampled) else resampled


def _lookup(ts: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the sorted ``ts`` equal to ``wanted`` (clipped) and whether each exists."""
    if not len(ts):
        return np.zeros(len(wanted), dtype=np.int64), np.zeros(len(wanted), dtype=bool)
    rows = np.minimum(np.searchsorted(ts, wanted), len(ts) - 1)
    return rows, ts[rows] == wanted


def _running_extremes(high: np.ndarray, low: np.ndarray, bucket: np.ndarray,
                      position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Highest high and lowest low of each row's bucket up to and including the row (rows
    sorted by time; ``position``: the row's place in its bucket). Exact: one pass per place."""
    group = np.cumsum(np.concatenate(([True], bucket[1:] != bucket[:-1]))) - 1
    top = np.full(group[-1] + 1, -np.inf)
    bottom = np.full(group[-1] + 1, np.inf)
    out_high, out_low = np.empty_like(high), np.empty_like(low)
    order = np.argsort(position, kind="stable")
    places = position[order]
    cuts = np.flatnonzero(np.concatenate(([True], places[1:] != places[:-1], [True])))
    for lo, hi in itertools.pairwise(cuts):
        rows = order[lo:hi]
        g = group[rows]
        top[g] = np.maximum(top[g], high[rows])
        bottom[g] = np.minimum(bottom[g], low[rows])
        out_high[rows] = top[g]
        out_low[rows] = bottom[g]
    return out_high, out_low


def higher_timeframe_features(candles, higher: Timeframe, spec) -> np.ndarray:
    """The ``H:*`` columns of ``candles`` for ``higher``; see the module docstring."""
    n = len(candles)
    out = np.zeros((n, len(CLOSED_NAMES) + len(FORMING_NAMES) + 1), dtype=np.float32)
    if n == 0:
        return out
    step, span = candles.timeframe.ms, higher.ms
    ts = candles.ts
    bucket = ts - ts % span
    ended = ts + step
    closed_open = ended - ended % span - span
    prev_open = bucket - span
    closed = _closed_higher(candles, higher)
    row_closed, has_closed = _lookup(closed.ts, closed_open)
    row_prev, has_prev = _lookup(closed.ts, prev_open)
    use = has_closed & has_prev
    if not use.any():
        return out
    columns = candle_features(closed, spec)[:, :len(CLOSED_NAMES)]
    k = len(CLOSED_NAMES)
    out[use, :k] = columns[row_closed[use]]

    high, low = _running_extremes(candles.high, candles.low, bucket, (ts - bucket) // step)
    prev_close = np.log(closed.close[row_prev[use]])
    scale = volatility(closed, spec)[row_prev[use]]
    forming = np.stack((np.log(candles.close[use]) - prev_close, np.log(high[use]) - prev_close,
                        np.log(low[use]) - prev_close), axis=1) / scale[:, None]
    out[use, k:k + 3] = np.clip(forming, -spec.clip, spec.clip)
    out[use, k + 3] = (ended[use] - bucket[use]) / span
    out[use, k + 4] = 1.0
    return out


def reference_features(candles, reference, spec) -> np.ndarray:
    """The ``ref:*`` columns: ``reference``'s closed candles at each row's open time."""
    if reference.timeframe != candles.timeframe:
        raise WorkstationError(f"the reference asset's candles are {reference.timeframe.name}, "
                               f"the series' {candles.timeframe.name}: they must be the same")
    out = np.zeros((len(candles), len(CLOSED_NAMES) + 1), dtype=np.float32)
    ref = reference_span(reference, candles, spec)
    if not len(ref):
        return out
    rows, found = _lookup(ref.ts, candles.ts)
    out[found, :len(CLOSED_NAMES)] = candle_features(ref, spec)[rows[found], :len(CLOSED_NAMES)]
    out[found, len(CLOSED_NAMES)] = 1.0
    return out


def reference_span(reference, candles, spec):
    """The closed candles of ``reference`` that the rows of ``candles`` use: up to the last
    row's time, from ``spec.warmup`` candles before the first row's."""
    closed_rows = reference.n_closed
    if not len(candles) or closed_rows <= 0:
        return reference.slice(0, 0)
    ref_ts = reference.ts[:closed_rows]
    lo = max(0, int(np.searchsorted(ref_ts, candles.ts[0])) - spec.warmup)
    hi = int(np.searchsorted(ref_ts, candles.ts[-1], side="right"))
    return reference.slice(lo, max(lo, hi))


def reference_has(reference, ts: int) -> bool:
    """Whether ``reference`` holds a closed candle that opens at ``ts`` (a row at ``ts``
    reads it; without one, the row's reference columns are masked)."""
    closed = reference.n_closed
    i = int(np.searchsorted(reference.ts[:closed], int(ts)))
    return i < closed and int(reference.ts[i]) == int(ts)


def as_of(candles, ts: int, reference=None):
    """``candles`` (and ``reference``) as they stood when candle ``ts`` closed: every candle
    up to and including the one that opens at ``ts`` (it must exist), none after."""
    ts = candles.timeframe.floor(int(ts))
    row = int(np.searchsorted(candles.ts, ts))
    if row >= candles.n_closed or int(candles.ts[row]) != ts:
        raise WorkstationError(f"the series has no closed candle that opens at {ts} "
                               f"({format_ms(ts)})")
    past = candles.slice(0, row + 1)
    past.last_closed = True
    if reference is not None:
        cut = int(np.searchsorted(reference.ts, ts, side="right"))
        closed = reference.last_closed or cut < len(reference)
        reference = reference.slice(0, cut)
        reference.last_closed = closed
    return past, reference


def window_start(ts: np.ndarray, n: int, spec, seq_len: int) -> int:
    """The first row a window must hold for rows ``n - seq_len .. n - 1`` computed from rows
    ``start .. n - 1`` alone to equal those computed from the whole series."""
    first = max(0, n - seq_len)
    start = max(0, first - spec.warmup)
    if n == 0:
        return 0
    for higher in higher_frames(spec):
        span = higher.ms
        need = spec.warmup + 1  # H candles before the first one used, and the dropped bucket
        earliest = int(ts[first]) - int(ts[first]) % span - span
        lo = int(np.searchsorted(ts[:n], earliest - need * span))
        buckets = _buckets(ts[lo:n], span)
        if len(buckets[buckets < earliest]) < need and lo > 0:
            buckets = _buckets(ts[:n], span)  # missing buckets: count them over the whole
        before = buckets[buckets < earliest]
        if len(before) < need:
            return 0
        start = min(start, int(np.searchsorted(ts[:n], before[-need])))
    return start


def window_candles(spec, timeframe: Timeframe, rows: int) -> int:
    """Candles a gapless window needs before and including its last ``rows`` for those rows
    to be exact (what ``window_start`` finds on real data): a live tail's length."""
    need = rows + spec.warmup
    for higher in higher_frames(spec):
        span = higher.ms // timeframe.ms
        need = max(need, rows + (spec.warmup + 3) * span)
    return need


def _buckets(ts: np.ndarray, span: int) -> np.ndarray:
    bucket = ts - ts % span
    return bucket[np.concatenate(([True], bucket[1:] != bucket[:-1]))] if len(bucket) else bucket
