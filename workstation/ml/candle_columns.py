"""The candle columns of the model's inputs (``FEATURE_NAMES``): causal, scale-free, vectorised.

Row ``t`` depends only on candles ``<= t``. Prices enter only as log ratios; returns are in
units of a trailing volatility (the RMS of close-to-close log returns over
``volatility_window`` candles). ``spec`` is a ``features.FeatureSpec``.

- ``open_ret high_ret low_ret close_ret``: log(price_t / close_{t-1}) / volatility_t
- ``range``: log(high_t / low_t) / volatility_t
- ``log_volume``: log1p(volume_t / trailing mean volume) - log 2 (0 for an average candle)
- ``vol_regime``: 0.5 * log(short-window mean square return / long-window mean square return)
- ``tod_sin tod_cos``: time of day (UTC) of the candle's open on the unit circle

Trailing windows include candle ``t``; at the start of a series they average what exists.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

FEATURE_NAMES = (
    "open_ret", "high_ret", "low_ret", "close_ret", "range",
    "log_volume", "vol_regime", "tod_sin", "tod_cos",
)
N_FEATURES = len(FEATURE_NAMES)
_DAY_MS = 86_400_000


def trailing_mean(x: np.ndarray, window: int) -> np.ndarray:
    """Mean of ``x[max(0, t - window + 1) : t + 1]`` for every ``t``; each value is summed
    from its own window only, so it does not depend on where the series starts."""
    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    padded = np.concatenate((np.zeros(window - 1, dtype=np.float64), x.astype(np.float64)))
    sums = sliding_window_view(padded, window).sum(axis=1)
    counts = np.minimum(np.arange(1, n + 1, dtype=np.float64), float(window))
    return sums / counts


def volatility(candles, spec) -> np.ndarray:
    """The trailing RMS log return (with the floor) that scales row ``t``'s returns."""
    c = candles.close
    if not len(c):
        return np.zeros(0)
    log_c = np.log(c)
    square = np.concatenate(([np.log(candles.open[0]) - log_c[0]], np.diff(log_c))) ** 2
    return np.sqrt(trailing_mean(square, spec.volatility_window)
                   + (spec.min_volatility_bps * 1e-4) ** 2)


def candle_features(candles, spec) -> np.ndarray:
    """The ``FEATURE_NAMES`` columns of ``candles`` (``float32 [len, N_FEATURES]``)."""
    ts, o, h, l, c, v = candles.columns()
    n = len(ts)
    out = np.empty((n, N_FEATURES), dtype=np.float32)
    if n == 0:
        return out
    log_o, log_h, log_l, log_c = (np.log(x) for x in (o, h, l, c))
    log_prev = np.concatenate((log_o[:1], log_c[:-1]))  # the first candle has no previous close
    rets = np.stack((log_o - log_prev, log_h - log_prev, log_l - log_prev, log_c - log_prev,
                     log_h - log_l), axis=1)
    floor = (spec.min_volatility_bps * 1e-4) ** 2
    square = rets[:, 3] ** 2
    long_ms = trailing_mean(square, spec.volatility_window) + floor
    short_ms = trailing_mean(square, spec.regime_window) + floor
    scaled = rets / np.sqrt(long_ms)[:, None]
    np.clip(scaled, -spec.clip, spec.clip, out=scaled)
    out[:, 0:5] = scaled

    mean_volume = trailing_mean(v, spec.volume_window)
    ratio = np.divide(v, mean_volume, out=np.zeros(n), where=mean_volume > 0)
    out[:, 5] = np.log1p(ratio) - np.log(2.0)
    out[:, 6] = np.clip(0.5 * np.log(short_ms / long_ms), -spec.clip, spec.clip)

    angle = (ts % _DAY_MS).astype(np.float64) * (2.0 * np.pi / _DAY_MS)
    out[:, 7] = np.sin(angle)
    out[:, 8] = np.cos(angle)
    return out
