"""The trader against the trader's own blind self: fresh blind marks of stretches already
labelled (``annotations.consistency_plan``) beside the old marks of the same candles.

Both sets of marks become per-candle positions by the training targets' own rule
(``annotations.targets.trader_targets``, the same review margin); they are compared on the
candles both label (the fresh marks label what their blind replays passed).

- **Position agreement** p_o: the share of compared candles held the same (flat, long, short).
- **Chance agreement** p_e: the sum over positions of the old share times the fresh share:
  what two markers who hold each position that often agree by luck alone.
- **Cohen's kappa** (p_o - p_e) / (1 - p_e): 1 the same, 0 no better than chance (None where
  p_e is 1: one position only, on both sides).
- Each with a 95 % interval from the stationary bootstrap of UTC days used by every score here
  (``scoring.stationary_picks``, mean block ``scoring.block_length`` of the daily agreement;
  fewer than ``scoring.MIN_DAYS`` days: none).
- **Entries** matched within ±``window`` candles by ``entry_events`` with the old marks as the
  truth: the old entries found again (recall), the fresh entries that meet an old one
  (precision), beside random entries placed at the fresh rate (its random baseline, with the
  same interval). Exits likewise.
- **By origin** of each candle's old label (``annotations.origin_filter.label_origins``):
  blind, hindsight or unblinded; a trader who agrees with their hindsight marks less than with
  their blind ones learns how much the hindsight marks saw.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np

from ..annotations.model import Annotation, Origin
from ..annotations.origin_filter import label_origins
from ..annotations.targets import DEFAULT_REVIEW_MARGIN, trader_targets
from ..display import NO_DATA, percent
from ..market.timeframes import Timeframe
from .entry_events import (
    EVENT_WINDOW,
    describe_match,
    percentile_interval,
    span_tallies,
    trade_events,
)
from .events import TradeEvents
from .scoring import BOOTSTRAP_SAMPLES, MIN_DAYS, block_length, day_blocks, stationary_picks
from .targets import MASKED, POSITION_CLASSES

K = len(POSITION_CLASSES)


@dataclass(frozen=True)
class Agreement:
    """Agreement of the positions on ``candles`` compared candles (see the module
    docstring); the intervals are 95 % day-bootstrap ones (None: too few days)."""

    candles: int
    observed: float | None
    chance: float | None
    kappa: float | None
    observed_interval: tuple[float, float] | None = None
    kappa_interval: tuple[float, float] | None = None

    def describe(self) -> str:
        if not self.candles:
            return "no candle marked both times"

        def bar(interval: tuple[float, float] | None) -> str:
            return "" if interval is None else \
                f" [{interval[0] * 100:.1f}, {interval[1] * 100:.1f}]"

        kappa = NO_DATA if self.kappa is None else f"{self.kappa:.2f}"
        kappa_bar = "" if self.kappa_interval is None else \
            f" [{self.kappa_interval[0]:.2f}, {self.kappa_interval[1]:.2f}]"
        few = "" if self.observed_interval is not None else ", too few days for an interval"
        return (f"{self.candles:,} candles: position agreement {percent(self.observed)}"
                f"{bar(self.observed_interval)} (chance {percent(self.chance)}), Cohen's "
                f"kappa {kappa}{kappa_bar}{few}")


@dataclass(frozen=True)
class ConsistencyReport:
    """The fresh blind marks against the old ones on one series (``series``): ``overall``,
    ``by_origin`` of the old label, ``events`` (entries and exits within ``window``) and how
    many ``old_marks`` and ``fresh_marks`` there were."""

    series: str
    old_marks: int
    fresh_marks: int
    window: int
    overall: Agreement
    by_origin: dict[str, Agreement]
    events: TradeEvents | None

    def lines(self) -> list[str]:
        out = [f"Consistency, blind, on {self.series}: {self.fresh_marks:,} fresh blind marks "
               f"against {self.old_marks:,} old ones", f"  all: {self.overall.describe()}"]
        out += [f"  where the old label was {origin}: {a.describe()}"
                for origin, a in self.by_origin.items()]
        if self.events is not None:
            out += [f"  {describe_match(m, ('old', 'fresh'))}"
                    for m in (self.events.entries, self.events.exits)]
        return out

    def to_dict(self) -> dict:
        return {"series": self.series, "old_marks": self.old_marks,
                "fresh_marks": self.fresh_marks, "window": self.window,
                "overall": asdict(self.overall),
                "by_origin": {k: asdict(v) for k, v in self.by_origin.items()},
                "entries": None if self.events is None else asdict(self.events.entries),
                "exits": None if self.events is None else asdict(self.events.exits)}


def _kappa(confusion: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observed agreement, chance agreement and kappa of a K x K count table (trailing axes)."""
    n = confusion.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = np.trace(confusion, axis1=-2, axis2=-1) / n
        chance = (confusion.sum(axis=-1) * confusion.sum(axis=-2)).sum(axis=-1) / n ** 2
        kappa = np.where(chance < 1, (observed - chance) / (1 - chance), np.nan)
    return observed, chance, kappa


def _finite(x) -> float | None:
    return float(x) if np.isfinite(x) else None


def agreement(old: np.ndarray, fresh: np.ndarray, ts: np.ndarray, *, seed: int = 0
              ) -> Agreement:
    """Agreement of the position codes ``old`` and ``fresh`` on the candles (opening at
    ``ts``) where both exist (see the module docstring)."""
    both = (old != MASKED) & (fresh != MASKED)
    if not both.any():
        return Agreement(0, None, None, None)
    days, day_of = np.unique(day_blocks(np.asarray(ts)[both]), return_inverse=True)
    cell = old[both].astype(np.int64) * K + fresh[both]
    per_day = np.zeros((days.size, K * K))
    np.add.at(per_day, (day_of, cell), 1.0)
    table = per_day.sum(axis=0).reshape(K, K)
    observed, chance, kappa = _kappa(table)
    observed_interval = kappa_interval = None
    if days.size >= MIN_DAYS:
        daily = np.trace(per_day.reshape(-1, K, K), axis1=1, axis2=2) / per_day.sum(axis=1)
        picks = stationary_picks(days.size, block_length(daily), BOOTSTRAP_SAMPLES,
                                 np.random.default_rng(seed))
        o, _c, k = _kappa(per_day[picks].sum(axis=1).reshape(-1, K, K))
        observed_interval, kappa_interval = percentile_interval(o), percentile_interval(k)
    return Agreement(int(both.sum()), _finite(observed), _finite(chance), _finite(kappa),
                     observed_interval, kappa_interval)


def consistency(series: str, old: Iterable[Annotation], fresh: Iterable[Annotation],
                candles_ts: np.ndarray, tf: Timeframe, *, window: int = EVENT_WINDOW,
                review_margin: int = DEFAULT_REVIEW_MARGIN, seed: int = 0
                ) -> ConsistencyReport:
    """The fresh marks against the old ones on the candles opening at ``candles_ts``."""
    if window < 0:
        raise ValueError(f"the entries' window must be at least 0 candles, got {window}")
    old, fresh = list(old), list(fresh)
    ts = np.asarray(candles_ts, dtype=np.int64)
    old_pos = trader_targets(old, ts, tf, review_margin=review_margin).position
    fresh_pos = trader_targets(fresh, ts, tf, review_margin=review_margin).position
    origins = np.asarray(label_origins(old, ts, tf, review_margin=review_margin))
    by_origin = {}
    for origin in Origin:
        mine = origins == origin.value
        if ((fresh_pos != MASKED) & mine).any():
            by_origin[origin.value] = agreement(np.where(mine, old_pos, MASKED), fresh_pos,
                                                ts, seed=seed)
    both = (old_pos != MASKED) & (fresh_pos != MASKED)
    events = None
    if both.any():
        events = trade_events([span_tallies(np.where(both, old_pos, MASKED),
                                            np.where(both, fresh_pos, MASKED), ts,
                                            window=window, seed=seed)], seed)
    return ConsistencyReport(series, len(old), len(fresh), window,
                             agreement(old_pos, fresh_pos, ts, seed=seed), by_origin, events)
