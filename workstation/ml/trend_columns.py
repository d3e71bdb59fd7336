"""Multi-scale trend inputs (``FeatureSpec.trend_windows``): where the close stands against the
last ``k`` candles, for each ``k``, causal and from finite windows only.

- ``trend_k``: log(close_t / mean of the last ``k`` closes) in units of the trailing volatility
  (``candle_columns.volatility``), clipped at ``spec.clip``: how far price has run from its
  ``k``-candle average, comparable across timeframes and calm or wild markets;
- ``breakout_k``: the close's place in the channel of the ``k`` candles *before* it (their
  highest high and lowest low), -1 at the low and +1 at the high; above +1 the close broke
  out upwards, below -1 downwards (a Donchian breakout), clipped at ``CHANNEL_CLIP``; 0
  where the channel is flat.

Row ``t`` reads candles ``t - k .. t`` only (at the start of a series, what exists), so a
window that starts ``k`` candles before ``t`` gives the same row as the full history
(``FeatureSpec.warmup`` covers it). Moving-average crossovers and channel breakouts, the rules
traders mark most, are then a function of one row rather than of a sum the model must rebuild
over its window (docs/evaluation.md, "What holds the position head back").
"""

from __future__ import annotations

import numpy as np

from ..errors import WorkstationError
from .candle_columns import trailing_mean, volatility

# Fed by default (``FeatureSpec.trend_windows``): the close against 10 to 100 candles
TREND_WINDOWS = (10, 20, 50, 100)
CHANNEL_CLIP = 3.0  # a close beyond the prior channel reads above 1 (below -1), up to this


def parse_trend_windows(text: str | None) -> tuple[int, ...] | None:
    """``"10,20,50"`` -> ``(10, 20, 50)``; None for None (not given), ``()`` for a blank."""
    if text is None:
        return None
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise WorkstationError(f"trend windows must be candle counts like 10,20,50, got "
                               f"{text!r}") from None


def trend_names(windows: tuple[int, ...]) -> tuple[str, ...]:
    """The columns ``trend_features`` gives for ``windows``."""
    return tuple(f"trend_{k}" for k in windows) + tuple(f"breakout_{k}" for k in windows)


def _trailing(filter1d, x: np.ndarray, k: int) -> np.ndarray:
    """``filter1d`` (max or min) of ``x[max(0, t - k + 1) : t + 1]`` for every ``t``."""
    padded = np.concatenate((np.full(k - 1, x[0]), x))  # the first value repeats: no effect
    return filter1d(padded, size=k, origin=(k - 1) // 2, mode="nearest")[k - 1:]


def _prior(filter1d, x: np.ndarray, k: int) -> np.ndarray:
    """``filter1d`` of the ``k`` candles before ``t`` (``x[max(0, t - k) : t]``); row 0, with
    none before it, reads its own."""
    out = np.empty_like(x)
    out[1:] = _trailing(filter1d, x, k)[:-1]
    out[:1] = x[:1]
    return out


def trend_features(candles, spec) -> np.ndarray:
    """``float32 [len(candles), 2 * len(spec.trend_windows)]``: see the module docstring."""
    windows = spec.trend_windows
    c, h, low = (np.asarray(x, dtype=np.float64) for x in (candles.close, candles.high,
                                                           candles.low))
    out = np.zeros((len(c), 2 * len(windows)), dtype=np.float32)
    if not len(c):
        return out
    from scipy.ndimage import maximum_filter1d, minimum_filter1d  # lazily: settings import us

    vol = volatility(candles, spec)
    for i, k in enumerate(windows):
        run = (np.log(c) - np.log(trailing_mean(c, k))) / vol
        out[:, i] = np.clip(run, -spec.clip, spec.clip)
        top, bottom = _prior(maximum_filter1d, h, k), _prior(minimum_filter1d, low, k)
        width = top - bottom
        place = np.divide(2 * (c - bottom), width, out=np.zeros(len(c)), where=width > 0) - 1
        out[:, len(windows) + i] = np.clip(place, -CHANNEL_CLIP, CHANNEL_CLIP)
    return out
