"""What the model learns to predict at every candle ``t``; market targets look only forward.

- ``candle``: direction of the next candle, log(close_{t+1} / close_t): 0 down, 1 flat, 2 up.
- ``trend``: direction over the next ``trend_horizon`` candles, log(close_{t+H} / close_t).
- ``position``: the trader's position once candle ``t`` has closed (flat / long / short), on
  the candles the trader reviewed (``annotations.targets``).
- ``regime``: the trader's regime label at ``t`` (uptrend / downtrend / range).
- ``next_return_bps``: log(close_{t+1} / close_t) in basis points (the uncertainty head's
  target).

Flat bands (``flat_band``): by default a move is flat when it lies within ``k`` times the
trailing volatility known at ``t`` (the RMS of the last ``volatility_window`` close-to-close
log returns, times sqrt(H) for the trend), so "flat" means the same in calm and wild markets
and the classes measure direction; ``flat_band="bps"`` uses fixed bands in basis points.
``volatility_bps`` (the trailing volatility at every candle) is kept for the volatility-rule
baseline.

Candles without a full horizon (the last one, the last ``H``) and candles without a trader's
label are masked: classes hold ``MASKED`` (-1) and returns hold NaN. Nothing is filled in.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..errors import WorkstationError
from .candle_columns import trailing_mean
from .settings import settings_from_dict

CANDLE_CLASSES = ("down", "flat", "up")
TREND_CLASSES = ("down", "flat", "up")
POSITION_CLASSES = ("flat", "long", "short")
REGIME_CLASSES = ("uptrend", "downtrend", "range")
CLASSES = {"candle": CANDLE_CLASSES, "trend": TREND_CLASSES, "position": POSITION_CLASSES,
           "regime": REGIME_CLASSES}
HEADS = ("candle", "trend", "position", "regime", "return")
CLASS_HEADS = ("candle", "trend", "position", "regime")
MARKET_HEADS = ("candle", "trend")   # learned from the candles alone
TRADER_HEADS = ("position", "regime")  # learned from the trader's marks
MASKED = -1
TARGETS_VERSION = 2
FLAT_BANDS = ("volatility", "bps")
CHUNK_ROWS = 1 << 20  # candles whose market targets are made at once


@dataclass(frozen=True)
class TargetSpec:
    """Target definitions and per-head loss weights; recorded in every checkpoint.

    ``candle_flat_k``/``trend_flat_k``: the flat band in trailing volatilities (``flat_band``
    "volatility"); ``*_flat_bps``: in basis points ("bps"). ``class_weights``: weigh each
    class's loss by the inverse of its share of the training targets (rare classes count).
    ``review_margin``: candles around a trade that count as reviewed."""

    flat_band: str = "volatility"
    candle_flat_k: float = 0.4
    candle_flat_bps: float = 2.0
    trend_horizon: int = 10
    trend_flat_k: float = 0.4
    trend_flat_bps: float = 6.0
    volatility_window: int = 60
    candle_weight: float = 1.0
    trend_weight: float = 1.0
    position_weight: float = 1.0
    regime_weight: float = 1.0
    return_weight: float = 0.5
    class_weights: bool = False
    review_margin: int = 10
    version: int = TARGETS_VERSION

    def __post_init__(self) -> None:
        if self.version != TARGETS_VERSION:
            raise WorkstationError(f"targets version {self.version} is not supported "
                                   f"(this Workstation computes version {TARGETS_VERSION})")
        if self.flat_band not in FLAT_BANDS:
            raise WorkstationError(f"flat_band must be one of {', '.join(FLAT_BANDS)}, got "
                                   f"{self.flat_band!r}")
        for name in ("trend_horizon", "volatility_window"):
            if int(getattr(self, name)) < 1:
                raise WorkstationError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if int(self.review_margin) < 0:
            raise WorkstationError(f"review_margin must be >= 0, got {self.review_margin!r}")
        for name in ("candle_flat_k", "trend_flat_k", "candle_flat_bps", "trend_flat_bps"):
            if not getattr(self, name) >= 0:
                raise WorkstationError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        for head in HEADS:
            weight = getattr(self, f"{head}_weight")
            if not (weight >= 0 and np.isfinite(weight)):
                raise WorkstationError(f"{head}_weight must be finite and >= 0, got {weight!r}")

    @property
    def horizon(self) -> int:
        """How many candles after ``t`` the targets of ``t`` look at (at most)."""
        return max(1, int(self.trend_horizon))

    def weight(self, head: str) -> float:
        return float(getattr(self, f"{head}_weight"))

    def band_bps(self, head: str, volatility_bps: np.ndarray) -> np.ndarray:
        """The flat band of ``head`` (candle or trend) at each candle, in bps."""
        if self.flat_band == "bps":
            fixed = self.candle_flat_bps if head == "candle" else self.trend_flat_bps
            return np.full(np.shape(volatility_bps), float(fixed))
        if head == "candle":
            return self.candle_flat_k * volatility_bps
        return self.trend_flat_k * volatility_bps * np.sqrt(self.horizon)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TargetSpec:
        return settings_from_dict(cls, data, "target settings")


@dataclass
class Targets:
    """Per-candle targets of one series (see the module docstring); all arrays ``[N]``."""

    candle: np.ndarray           # int64, MASKED where there is no next candle
    trend: np.ndarray            # int64, MASKED for the last trend_horizon candles
    position: np.ndarray         # int64, MASKED where the trader reviewed nothing
    regime: np.ndarray           # int64, MASKED outside the trader's regime regions
    next_return_bps: np.ndarray  # float32, NaN where there is no next candle
    volatility_bps: np.ndarray   # float64, trailing volatility known at t

    def __len__(self) -> int:
        return len(self.candle)

    def classes(self, head: str) -> np.ndarray:
        if head not in CLASS_HEADS:
            raise KeyError(f"{head!r} is not a class head; use one of {CLASS_HEADS}")
        return getattr(self, head)

    def mask(self, head: str) -> np.ndarray:
        """True where ``head`` has a target."""
        if head == "return":
            return np.isfinite(self.next_return_bps)
        return self.classes(head) != MASKED

    def reviewed(self) -> np.ndarray:
        """True where the trader's marks label the candle (a position or a regime)."""
        return (self.position != MASKED) | (self.regime != MASKED)

    def class_counts(self, head: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        values = self.classes(head)[start:stop]
        return np.bincount(values[values != MASKED], minlength=len(CLASSES[head]))

    def majority_baseline(self, head: str, start: int = 0, stop: int | None = None
                          ) -> float | None:
        """Accuracy of always predicting the most common class of ``[start, stop)``; None
        when that stretch has no target for ``head``."""
        counts = self.class_counts(head, start, stop)
        total = int(counts.sum())
        return float(counts.max()) / total if total else None

    def class_weights(self, head: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Inverse-frequency weights of ``head``'s classes over ``[start, stop)``, averaging 1
        over the targets there (a class that does not occur gets weight 0)."""
        counts = self.class_counts(head, start, stop).astype(np.float64)
        total = counts.sum()
        present = counts > 0
        weights = np.zeros(len(counts))
        if total:
            weights[present] = total / (present.sum() * counts[present])
        return weights

    def slice(self, start: int, stop: int) -> Targets:
        return Targets(self.candle[start:stop], self.trend[start:stop],
                       self.position[start:stop], self.regime[start:stop],
                       self.next_return_bps[start:stop], self.volatility_bps[start:stop])


def run_starts(labels: np.ndarray) -> np.ndarray:
    """Whether each candle begins a run of one class: labelled, and the candle before it
    unlabelled or labelled otherwise (the trader's regions, and with ``trade_starts`` trades)."""
    labels = np.asarray(labels)
    before = np.concatenate(([MASKED], labels[:-1]))
    return (labels != MASKED) & (labels != before)


def trade_starts(position: np.ndarray) -> np.ndarray:
    """Whether each candle begins a trade: a run of long or short (``run_starts``)."""
    position = np.asarray(position)
    return run_starts(position) & (position != POSITION_CLASSES.index("flat"))


def direction(log_return_bps: np.ndarray, flat_bps) -> np.ndarray:
    """0 down, 1 flat, 2 up (int64) for log returns in basis points; ``flat_bps`` is one band
    or one per return."""
    out = np.ones(len(log_return_bps), dtype=np.int64)
    out[log_return_bps < -flat_bps] = 0
    out[log_return_bps > flat_bps] = 2
    return out


def trailing_volatility_bps(log_close: np.ndarray, window: int) -> np.ndarray:
    """RMS of the last ``window`` close-to-close log returns up to each candle, in bps (at
    the start of a series, of those there are; the first candle has none: NaN)."""
    n = len(log_close)
    out = np.full(n, np.nan)
    if n > 1:
        square = (np.diff(log_close) * 1e4) ** 2
        out[1:] = np.sqrt(trailing_mean(square, window))
    return out


def flat_bands_at(spec: TargetSpec, close: np.ndarray, t: int) -> tuple[float, float]:
    """The candle and trend flat bands (bps) of the targets of candle ``t`` of the closes
    ``close``: what a prediction made at ``t`` is judged by once its outcome is known."""
    if spec.flat_band == "bps":
        return spec.candle_flat_bps, spec.trend_flat_bps
    first = max(0, t - spec.volatility_window)
    window = np.log(np.asarray(close[first:t + 1], dtype=np.float64))
    volatility = trailing_volatility_bps(window, spec.volatility_window)[-1:]
    known = np.where(np.isfinite(volatility), volatility, 0.0)
    return (float(spec.band_bps("candle", known)[0]), float(spec.band_bps("trend", known)[0]))


def check_labels(labels, n: int, head: str) -> np.ndarray:
    """A trader's per-candle labels for ``head`` as int64: -1 (masked) or a class index."""
    array = np.asarray(labels)
    if array.shape != (n,):
        raise WorkstationError(f"{head} labels have shape {array.shape}, expected ({n},): one "
                               f"per candle")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise WorkstationError(f"{head} labels must be integers (-1 for none), got "
                               f"{array.dtype}")
    names = CLASSES[head]
    bad = np.flatnonzero((array < MASKED) | (array >= len(names)))
    if bad.size:
        i = int(bad[0])
        raise WorkstationError(f"{head} label at candle {i} is {int(array[i])}; use -1 for "
                               f"none or 0..{len(names) - 1} ({', '.join(names)})")
    return array.astype(np.int64, copy=False)


def make_targets(candles, spec: TargetSpec | None = None, trader=None) -> Targets:
    """Targets for every candle of ``candles``. ``trader`` holds the trader's ``position``
    and ``regime`` labels per candle (``annotations.targets.TraderTargets``); None masks
    those heads. The market targets are made ``CHUNK_ROWS`` candles at a time, each chunk
    from the closes its rows read (the volatility window before, the horizon after), so a
    long series needs no more scratch memory than a short one and gets the same values."""
    spec = spec or TargetSpec()
    n = len(candles)
    close = np.asarray(candles.close, dtype=np.float64)
    candle = np.empty(n, dtype=np.int64)
    trend = np.empty(n, dtype=np.int64)
    next_bps = np.empty(n, dtype=np.float32)
    volatility = np.empty(n, dtype=np.float64)
    for a in range(0, n, CHUNK_ROWS):
        b = min(n, a + CHUNK_ROWS)
        first, last = max(0, a - spec.volatility_window), min(n, b + spec.horizon)
        rows = slice(a - first, b - first)
        parts = _market_targets(np.log(close[first:last]), spec)
        outputs: tuple[np.ndarray, ...] = (candle, trend, next_bps, volatility)
        for out, part in zip(outputs, parts, strict=True):
            out[a:b] = part[rows]
    position = np.full(n, MASKED, dtype=np.int64)
    regime = np.full(n, MASKED, dtype=np.int64)
    if trader is not None:
        position = check_labels(trader.position, n, "position")
        regime = check_labels(trader.regime, n, "regime")
    return Targets(candle, trend, position, regime, next_bps, volatility)


def _market_targets(log_close: np.ndarray, spec: TargetSpec
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The candle and trend classes, the next return (float32 bps) and the trailing volatility
    of every close of ``log_close`` (the last ones masked: no next candle, no horizon)."""
    n = len(log_close)
    horizon = spec.horizon
    volatility = trailing_volatility_bps(log_close, spec.volatility_window)
    known = np.where(np.isfinite(volatility), volatility, 0.0)

    next_bps = np.full(n, np.nan, dtype=np.float64)
    next_bps[:-1] = (log_close[1:] - log_close[:-1]) * 1e4
    candle = np.full(n, MASKED, dtype=np.int64)
    band = spec.band_bps("candle", known)
    candle[:-1] = direction(next_bps[:-1], band[:-1])

    trend = np.full(n, MASKED, dtype=np.int64)
    if n > horizon:
        band = spec.band_bps("trend", known)
        trend[:-horizon] = direction((log_close[horizon:] - log_close[:-horizon]) * 1e4,
                                     band[:-horizon])
    if spec.flat_band == "volatility":  # no volatility known yet: no band, no target
        unknown = ~np.isfinite(volatility)
        candle[unknown] = MASKED
        trend[unknown] = MASKED
    return candle, trend, next_bps.astype(np.float32), volatility
