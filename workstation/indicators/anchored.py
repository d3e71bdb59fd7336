"""``anchored``: an indicator computed so that each value reads a bounded, fixed stretch of
candles, for the model's inputs.

The chart's EMA, RSI and ATR are recursive: their value at a candle depends, ever more weakly,
on every candle before it, so a live window that starts later would compute other values.
Here every value is computed from an *anchor* on: the start of the block of ``span`` candle
durations (in time, from the epoch) that lies ``span`` to ``2 * span`` durations back, seeded
there as the indicator seeds itself at a series' start. Any series that holds the anchor then
gives the same value, bit for bit, and a window needs only ``2 * span`` candles before its
first row (``warmup``). ``span`` is ten periods for an EMA and twenty for Wilder's smoothing
(RSI, ATR; it forgets at half the rate), so the seed's weight is about e^-20 (2e-9) of the
value, and the model reads what the chart shows to float32 precision. SMA and Bollinger bands
read a finite window anyway; they are anchored one period back so that their running sums
(``formulas``) begin at the same candle in any series, which keeps them bit for bit too.
Values before a full anchor stretch exists are NaN (warm-up). VWAP (its session needs up to a
day of candles before each window) and the volume profile (of a range, not per candle) are not
offered.
"""

from __future__ import annotations

import numpy as np

from ..market.candles import Candles
from .formulas import compute
from .spec import IndicatorKind, IndicatorSpec, IndicatorSpecError

SPAN_PERIODS = {IndicatorKind.EMA: 10, IndicatorKind.RSI: 20, IndicatorKind.ATR: 20,
                IndicatorKind.SMA: 1, IndicatorKind.BOLLINGER: 1}
"""Each kind's anchor stretch, in periods."""


def span_of(spec: IndicatorSpec) -> int:
    """Candles of history a value reads at least (``warmup`` reads at most twice that)."""
    return SPAN_PERIODS[spec.kind] * spec.period


def check_anchorable(spec: IndicatorSpec) -> None:
    """Refuse, in one line, a kind that cannot be anchored (VWAP, the volume profile)."""
    if spec.kind is IndicatorKind.VWAP:
        raise IndicatorSpecError("vwap is not offered as a model input: its session needs up "
                                 "to a day of candles before every window")
    if spec.kind is IndicatorKind.VOLUME_PROFILE:
        raise IndicatorSpecError("a volume profile is of a candle range, not of each candle: "
                                 "it is not offered as a model input")


def warmup(spec: IndicatorSpec) -> int:
    """Candles before a row that its value may read."""
    return 2 * span_of(spec)


def _pieces(candles: Candles, starts: np.ndarray, rows_from: np.ndarray, spec: IndicatorSpec,
            out: dict[str, np.ndarray]) -> None:
    """For each anchor: compute from ``starts[k]`` and keep rows ``rows_from[k]`` up to the
    next anchor's first row."""
    n = len(candles)
    ends = np.append(rows_from[1:], n)
    for start, first, end in zip(starts, rows_from, ends):
        if end <= first:
            continue
        values = compute(spec, candles.slice(int(start), int(end)))
        for name in spec.lines:
            out[name][first:end] = values[name][first - start:]


def anchored(spec: IndicatorSpec, candles: Candles) -> dict[str, np.ndarray]:
    """The spec's lines, each value from its anchor on (see the module docstring)."""
    check_anchorable(spec)
    n = len(candles)
    out = {name: np.full(n, np.nan) for name in spec.lines}
    if not n:
        return out
    ts = candles.ts
    block = span_of(spec) * candles.timeframe.ms
    anchor = (ts // block - 1) * block  # each row's anchor: one to two blocks back
    changes = np.flatnonzero(np.concatenate(([True], anchor[1:] != anchor[:-1])))
    whole = anchor[changes] >= ts[0]  # the anchor lies inside the series
    starts = np.searchsorted(ts, anchor[changes])
    _pieces(candles, starts[whole], changes[whole], spec, out)
    return out
