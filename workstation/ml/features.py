"""Per-candle model inputs: their settings (``FeatureSpec``) and ``make_features``.

Row ``t`` of :func:`make_features` depends only on candles ``<= t``; changing any later candle
leaves it bit-for-bit unchanged. Prices enter only as log ratios, so the same market at another
price level gives the same features. Returns are expressed in units of a trailing volatility
(the RMS of close-to-close log returns over ``volatility_window`` candles), which makes them
comparable across timeframes and calm or wild markets.

The candle columns (``FEATURE_NAMES``) come first; ``ml.candle_columns`` computes them. With
``trend_windows``, the multi-scale trend columns follow (``ml.trend_columns``), then, with
``indicators`` (opt-in), the chart's indicators (``ml.indicator_columns``), then, with
``levels`` (opt-in), the distance to the nearest drawn levels (``ml.level_columns``; they need
the market's ``Levels``).
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

from ..errors import WorkstationError
from .candle_columns import FEATURE_NAMES, candle_features
from .context import check_context, context_features, context_names
from .indicator_columns import indicator_features, indicator_names, indicators_warmup, normalized
from .level_columns import LEVEL_NAMES, level_features
from .settings import settings_from_dict
from .trend_columns import TREND_WINDOWS, trend_features, trend_names

FEATURES_VERSION = 1


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
    trend_windows: tuple[int, ...] = TREND_WINDOWS  # ``ml.trend_columns`` (none: not fed)
    indicators: tuple[str, ...] = ()  # the chart's, as typed (``ml.indicator_columns``)
    levels: bool = False  # the distance to the drawn levels (``ml.level_columns``)

    def __post_init__(self) -> None:
        object.__setattr__(self, "higher_timeframes", tuple(self.higher_timeframes))
        object.__setattr__(self, "trend_windows", tuple(int(k) for k in self.trend_windows))
        if any(k < 2 for k in self.trend_windows) or \
                len(set(self.trend_windows)) != len(self.trend_windows):
            raise WorkstationError(f"trend windows must be distinct candle counts of at least "
                                   f"2, got {', '.join(map(str, self.trend_windows))}")
        object.__setattr__(self, "indicators", normalized(self.indicators))
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
        return (FEATURE_NAMES + trend_names(self.trend_windows)
                + indicator_names(self.indicators) + (LEVEL_NAMES if self.levels else ())
                + context_names(self))

    @property
    def warmup(self) -> int:
        """Candles before ``t`` that row ``t`` of the candle, trend and indicator columns
        depends on (at most)."""
        return max(self.volatility_window, self.regime_window, self.volume_window,
                   *self.trend_windows, indicators_warmup(self.indicators))

    @property
    def has_context(self) -> bool:
        return bool(self.higher_timeframes or self.reference)

    def to_dict(self) -> dict:
        data = dict(asdict(self), names=list(self.names))
        data["higher_timeframes"] = list(self.higher_timeframes)
        data["trend_windows"] = list(self.trend_windows)
        data["indicators"] = list(self.indicators)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> FeatureSpec:
        """Inverse of ``to_dict``; a checkpoint from other features is a clear error."""
        # settings written before trend inputs existed fed none
        data = dict(data, trend_windows=data.get("trend_windows", ()))
        spec = settings_from_dict(cls, data, "feature settings", frozenset({"names"}))
        names = data.get("names")
        if names is not None and tuple(names) != spec.names:
            raise WorkstationError(f"these features ({', '.join(names)}) differ from the ones "
                                   f"this Workstation computes ({', '.join(spec.names)})")
        return spec


def make_features(candles, spec: FeatureSpec | None = None, reference=None,
                  levels=None) -> np.ndarray:
    """``float32 [len(candles), spec.n_features]`` for a ``Candles`` series; ``reference``: the
    reference asset's candles on the same timeframe when ``spec.reference`` is set; ``levels``:
    the market's drawn levels (``level_columns.Levels``) when ``spec.levels`` is. See the
    module docstring."""
    spec = spec or FeatureSpec()
    base = candle_features(candles, spec)
    if spec.trend_windows:
        base = np.concatenate((base, trend_features(candles, spec)), axis=1)
    if spec.indicators:
        base = np.concatenate((base, indicator_features(candles, spec)), axis=1)
    if spec.levels:
        base = np.concatenate((base, level_features(candles, spec, levels)), axis=1)
    if not spec.has_context:
        return base
    return np.concatenate((base, context_features(candles, spec, reference)), axis=1)

