"""Per-candle model inputs: causal, scale-free, vectorised.

Row ``t`` of :func:`make_features` depends only on candles ``<= t``; changing any later candle
leaves it bit-for-bit unchanged. Prices enter only as log ratios, so the same market at another
price level gives the same features. Returns are expressed in units of a trailing volatility
(the RMS of close-to-close log returns over ``volatility_window`` candles), which makes them
comparable across timeframes and calm or wild markets.

Columns (``FEATURE_NAMES``):

- ``open_ret high_ret low_ret close_ret``: log(price_t / close_{t-1}) / volatility_t
- ``range``: log(high_t / low_t) / volatility_t
- ``log_volume``: log1p(volume_t / trailing mean volume) - log 2 (0 for an average candle)
- ``vol_regime``: 0.5 * log(short-window mean square return / long-window mean square return)
- ``tod_sin tod_cos``: time of day (UTC) of the candle's open on the unit circle

Trailing windows include candle ``t``; at the start of a series they average what exists.
A series that starts ``spec.warmup`` or more candles before ``t`` gives exactly the same row
``t`` as the full history, so a live window needs only its own candles plus ``warmup``
(``window_start`` says where a window must start when higher timeframes are on).

Optional context (``ml.context``), after these columns: per higher timeframe the last
*closed* higher candle's features and the forming one's aggregate of base candles so far; a
reference asset's features at the same open time with an explicit mask (never forward-filled).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..errors import WorkstationError
from .settings import settings_from_dict

FEATURE_NAMES = (
    "open_ret", "high_ret", "low_ret", "close_ret", "range",
    "log_volume", "vol_regime", "tod_sin", "tod_cos",
)
N_FEATURES = len(FEATURE_NAMES)
FEATURES_VERSION = 1
_DAY_MS = 86_400_000


@dataclass(frozen=True)
class FeatureSpec:
    """Settings of :func:`make_features`; recorded in every checkpoint (``to_dict``).
    ``higher_timeframes`` ("15m", "1h", ...) and ``reference`` (a symbol such as "BTC/USDT";
    where its candles come from is the run's data provenance, not a feature setting) add
    context columns (``ml.context``)."""

    volatility_window: int = 60
    regime_window: int = 10
    volume_window: int = 60
    min_volatility_bps: float = 0.1
    clip: float = 10.0
    version: int = FEATURES_VERSION
    higher_timeframes: tuple[str, ...] = ()
    reference: str = ""

    def __post_init__(self) -> None:
        from .context import check_context

        object.__setattr__(self, "higher_timeframes", tuple(self.higher_timeframes))
        object.__setattr__(self, "reference", str(self.reference or "").strip().upper())
        check_context(self)
        for name in ("volatility_window", "regime_window", "volume_window"):
            if int(getattr(self, name)) < 1:
                raise WorkstationError(f"feature setting {name} must be >= 1, "
                                       f"got {getattr(self, name)!r}")
        if not self.min_volatility_bps > 0:
            raise WorkstationError(f"feature setting min_volatility_bps must be > 0, "
                                   f"got {self.min_volatility_bps!r}")
        if not self.clip > 0:
            raise WorkstationError(f"feature setting clip must be > 0, got {self.clip!r}")
        if self.version != FEATURES_VERSION:
            raise WorkstationError(f"features version {self.version} is not supported "
                                   f"(this Workstation computes version {FEATURES_VERSION})")

    @property
    def n_features(self) -> int:
        return len(self.names)

    @property
    def names(self) -> tuple[str, ...]:
        from .context import context_names

        return FEATURE_NAMES + context_names(self)

    @property
    def warmup(self) -> int:
        """Candles before ``t`` that row ``t`` of the candle columns depends on (at most)."""
        return max(self.volatility_window, self.regime_window, self.volume_window)

    @property
    def has_context(self) -> bool:
        return bool(self.higher_timeframes or self.reference)

    def to_dict(self) -> dict:
        data = dict(asdict(self), names=list(self.names))
        data["higher_timeframes"] = list(self.higher_timeframes)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> FeatureSpec:
        """Inverse of ``to_dict``; a checkpoint from other features is a clear error."""
        spec = settings_from_dict(cls, data, "feature settings", frozenset({"names"}))
        names = data.get("names")
        if names is not None and tuple(names) != spec.names:
            raise WorkstationError(f"these features ({', '.join(names)}) differ from the ones "
                                   f"this Workstation computes ({', '.join(spec.names)})")
        return spec


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


def make_features(candles, spec: FeatureSpec | None = None, reference=None) -> np.ndarray:
    """``float32 [len(candles), spec.n_features]`` for a ``Candles`` series; ``reference``: the
    reference asset's candles on the same timeframe when ``spec.reference`` is set. See the
    module docstring."""
    spec = spec or FeatureSpec()
    base = candle_features(candles, spec)
    if not spec.has_context:
        return base
    from .context import context_features

    return np.concatenate((base, context_features(candles, spec, reference)), axis=1)


def volatility(candles, spec: FeatureSpec) -> np.ndarray:
    """The trailing RMS log return (with the floor) that scales row ``t``'s returns."""
    c = candles.close
    if not len(c):
        return np.zeros(0)
    log_c = np.log(c)
    square = np.concatenate(([np.log(candles.open[0]) - log_c[0]], np.diff(log_c))) ** 2
    return np.sqrt(trailing_mean(square, spec.volatility_window)
                   + (spec.min_volatility_bps * 1e-4) ** 2)


def candle_features(candles, spec: FeatureSpec) -> np.ndarray:
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
