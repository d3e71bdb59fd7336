"""What the model learns to predict at every candle ``t``; targets look only forward.

- ``candle``: direction of the next candle, log(close_{t+1} / close_t) against a flat band
  (``candle_flat_bps``): 0 down, 1 flat, 2 up.
- ``trend``: direction over the next ``trend_horizon`` candles, log(close_{t+H} / close_t)
  against ``trend_flat_bps``: 0 down, 1 flat, 2 up.
- ``next_return_bps``: log(close_{t+1} / close_t) in basis points (the uncertainty head's
  target).
- ``action``: the trader's action at candle ``t`` from annotations (``ACTIONS``).

Candles without a full horizon (the last one, the last ``H``) and candles without an
annotation are masked: classes hold ``MASKED`` (-1) and returns hold NaN. Nothing is filled in.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..errors import WorkstationError
from .settings import settings_from_dict

CANDLE_CLASSES = ("down", "flat", "up")
TREND_CLASSES = ("down", "flat", "up")
ACTIONS = ("hold", "enter_long", "exit_long", "enter_short", "exit_short")
HEADS = ("candle", "trend", "action", "return")
CLASS_HEADS = ("candle", "trend", "action")
MASKED = -1
TARGETS_VERSION = 1


@dataclass(frozen=True)
class TargetSpec:
    """Target definitions and per-head loss weights; recorded in every checkpoint."""

    candle_flat_bps: float = 2.0
    trend_horizon: int = 10
    trend_flat_bps: float = 6.0
    candle_weight: float = 1.0
    trend_weight: float = 1.0
    action_weight: float = 1.0
    return_weight: float = 0.5
    version: int = TARGETS_VERSION

    def __post_init__(self) -> None:
        if int(self.trend_horizon) < 1:
            raise WorkstationError(f"trend_horizon must be >= 1, got {self.trend_horizon!r}")
        for name in ("candle_flat_bps", "trend_flat_bps"):
            if not getattr(self, name) >= 0:
                raise WorkstationError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        for head in HEADS:
            weight = getattr(self, f"{head}_weight")
            if not (weight >= 0 and np.isfinite(weight)):
                raise WorkstationError(f"{head}_weight must be finite and >= 0, got {weight!r}")
        if self.version != TARGETS_VERSION:
            raise WorkstationError(f"targets version {self.version} is not supported "
                                   f"(this Workstation computes version {TARGETS_VERSION})")

    @property
    def horizon(self) -> int:
        """How many candles after ``t`` the targets of ``t`` look at (at most)."""
        return max(1, int(self.trend_horizon))

    def weight(self, head: str) -> float:
        return float(getattr(self, f"{head}_weight"))

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
    action: np.ndarray           # int64, MASKED where the trader marked nothing
    next_return_bps: np.ndarray  # float32, NaN where there is no next candle

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

    def class_counts(self, head: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        n_classes = len(ACTIONS) if head == "action" else 3
        values = self.classes(head)[start:stop]
        return np.bincount(values[values != MASKED], minlength=n_classes)

    def majority_baseline(self, head: str, start: int = 0, stop: int | None = None
                          ) -> float | None:
        """Accuracy of always predicting the most common class of ``[start, stop)``; None
        when that stretch has no target for ``head``."""
        counts = self.class_counts(head, start, stop)
        total = int(counts.sum())
        return float(counts.max()) / total if total else None

    def slice(self, start: int, stop: int) -> Targets:
        return Targets(self.candle[start:stop], self.trend[start:stop],
                       self.action[start:stop], self.next_return_bps[start:stop])


def direction(log_return_bps: np.ndarray, flat_bps: float) -> np.ndarray:
    """0 down, 1 flat, 2 up (int64) for log returns in basis points."""
    out = np.ones(len(log_return_bps), dtype=np.int64)
    out[log_return_bps < -flat_bps] = 0
    out[log_return_bps > flat_bps] = 2
    return out


def check_actions(actions, n: int) -> np.ndarray:
    """The annotation feature's per-candle action codes as int64; -1 (masked) or 0..4."""
    array = np.asarray(actions)
    if array.shape != (n,):
        raise WorkstationError(f"actions have shape {array.shape}, expected ({n},): one per candle")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise WorkstationError(f"actions must be integers (-1 for none, 0..4), got {array.dtype}")
    bad = np.flatnonzero((array < MASKED) | (array >= len(ACTIONS)))
    if bad.size:
        i = int(bad[0])
        raise WorkstationError(f"action at candle {i} is {int(array[i])}; use -1 for none or "
                               f"0..{len(ACTIONS) - 1} ({', '.join(ACTIONS)})")
    return array.astype(np.int64)


def make_targets(candles, spec: TargetSpec | None = None,
                 actions: np.ndarray | None = None) -> Targets:
    """Targets for every candle of ``candles``; ``actions=None`` masks the action head."""
    spec = spec or TargetSpec()
    n = len(candles)
    log_close = np.log(np.asarray(candles.close, dtype=np.float64))
    horizon = int(spec.trend_horizon)

    next_bps = np.full(n, np.nan, dtype=np.float64)
    next_bps[:-1] = (log_close[1:] - log_close[:-1]) * 1e4
    candle = np.full(n, MASKED, dtype=np.int64)
    candle[:-1] = direction(next_bps[:-1], spec.candle_flat_bps)

    trend = np.full(n, MASKED, dtype=np.int64)
    if n > horizon:
        trend[:-horizon] = direction((log_close[horizon:] - log_close[:-horizon]) * 1e4,
                                     spec.trend_flat_bps)
    action = (np.full(n, MASKED, dtype=np.int64) if actions is None
              else check_actions(actions, n))
    return Targets(candle, trend, action, next_bps.astype(np.float32))
