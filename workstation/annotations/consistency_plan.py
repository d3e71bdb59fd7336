"""Which stretches a consistency check asks the trader to mark again, blind.

A consistency check replays stretches the trader already labelled, with the old marks hidden,
and keeps the fresh blind marks apart from them (``AppPaths.consistency_db``: a store of its
own that training never reads); ``ml.consistency`` compares the two. A stretch is a whole
block of ``length`` candles (aligned as ``ml.review_next``'s) on every candle of which the old
marks give a position (``labelled_stretches``); a plan draws ``count`` of them uniformly at
random (seeded), so the sample is not the trader's choice of what they remember, leaving out
the stretches already marked again. A stretch is done once a fresh "reviewed" region (the blind
replay's) covers it. Plans are kept per series in one JSON file (``AppPaths.consistency_plan``),
written atomically; a damaged file is named and left as it is.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..atomic import atomic_write_bytes
from ..errors import WorkstationError
from ..market.series import MarketKey
from ..market.timeframes import Timeframe
from .model import Annotation, Region, RegionLabel, now_ms
from .stretches import DEFAULT_LENGTH, whole_blocks
from .targets import DEFAULT_REVIEW_MARGIN, MASKED, trader_targets

DEFAULT_COUNT = 8  # stretches a check asks for
PLAN_VERSION = 1


class ConsistencyPlanError(WorkstationError):
    """The consistency plans file cannot be read or a plan cannot be made."""


@dataclass(frozen=True)
class Stretch:
    """Candles ``start``..``stop - 1`` of the series, opening at ``start_ts``..``end_ts``."""

    start_ts: int
    end_ts: int

    def to_dict(self) -> dict:
        return {"start_ts": self.start_ts, "end_ts": self.end_ts}


@dataclass(frozen=True)
class ConsistencyPlan:
    """The stretches of one series (``series``: ``market:symbol:timeframe``) to mark again."""

    series: str
    length: int
    seed: int
    stretches: tuple[Stretch, ...]
    made_at: int

    def to_dict(self) -> dict:
        return {"length": self.length, "seed": self.seed, "made_at": self.made_at,
                "stretches": [s.to_dict() for s in self.stretches]}


def series_name(market: MarketKey, timeframe: str) -> str:
    return f"{market.kind.value}:{market.symbol}:{timeframe}"


def labelled_stretches(annotations: Iterable[Annotation], candles_ts: np.ndarray,
                       tf: Timeframe, *, length: int = DEFAULT_LENGTH,
                       review_margin: int = DEFAULT_REVIEW_MARGIN) -> list[tuple[int, int]]:
    """The blocks of ``length`` candles (candle ranges) on every candle of which the marks
    ``annotations`` give a position."""
    if length < 2:
        raise ConsistencyPlanError(f"a stretch needs at least 2 candles, got {length}")
    position = trader_targets(annotations, candles_ts, tf, review_margin=review_margin).position
    return whole_blocks(position != MASKED, length)


def remarked(fresh: Iterable[Annotation], stretch: Stretch) -> bool:
    """Whether a fresh "reviewed" region covers ``stretch`` whole."""
    return any(isinstance(a, Region) and a.label == RegionLabel.REVIEWED.value
               and a.start_ts <= stretch.start_ts and stretch.end_ts <= a.end_ts
               for a in fresh)


def make_plan(market: MarketKey, timeframe: str, old: Iterable[Annotation],
              fresh: Iterable[Annotation], candles_ts: np.ndarray, tf: Timeframe, *,
              count: int = DEFAULT_COUNT, length: int = DEFAULT_LENGTH,
              seed: int | None = None) -> ConsistencyPlan:
    """``count`` stretches drawn at random from the labelled ones not yet marked again (all of
    them, in time order, when there are fewer)."""
    if count < 1:
        raise ConsistencyPlanError(f"a check needs at least 1 stretch, got {count}")
    ts = np.asarray(candles_ts, dtype=np.int64)
    fresh = list(fresh)
    found = [Stretch(int(ts[a]), int(ts[b - 1]))
             for a, b in labelled_stretches(old, ts, tf, length=length)]
    open_ = [s for s in found if not remarked(fresh, s)]
    if not open_:
        why = "all of them are marked again already" if found else \
            "mark trades and reviewed regions first"
        raise ConsistencyPlanError(
            f"no stretch of {length} candles of {market} {timeframe} is labelled on every "
            f"candle and still to check: {why}")
    seed = random.SystemRandom().randrange(2**31) if seed is None else seed
    picked = sorted(random.Random(seed).sample(open_, min(count, len(open_))),
                    key=lambda s: s.start_ts)
    return ConsistencyPlan(series_name(market, timeframe), length, seed, tuple(picked),
                           now_ms())


class ConsistencyPlans:
    """The plans file (``path``): ``get`` the plan of a series, ``put`` one (replacing)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def _read(self) -> dict:
        if not self.path.is_file():
            return {}
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(doc, dict) or doc.get("version") != PLAN_VERSION \
                    or not isinstance(doc.get("plans"), dict):
                raise ValueError(f"not a version-{PLAN_VERSION} plans file")
            return doc["plans"]
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ConsistencyPlanError(
                f"consistency plans {self.path} cannot be read ({exc}); it is left as it is: "
                f"move it away to make new plans (your marks are not in it)") from None

    def get(self, series: str) -> ConsistencyPlan | None:
        raw = self._read().get(series)
        if raw is None:
            return None
        try:
            return ConsistencyPlan(series, int(raw["length"]), int(raw["seed"]), tuple(
                Stretch(int(s["start_ts"]), int(s["end_ts"])) for s in raw["stretches"]),
                int(raw["made_at"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConsistencyPlanError(f"consistency plans {self.path}: the plan of {series} "
                                       f"is malformed ({exc!r}); it is left as it is") from None

    def put(self, plan: ConsistencyPlan) -> None:
        plans = self._read()
        plans[plan.series] = plan.to_dict()
        atomic_write_bytes(self.path, json.dumps(
            {"version": PLAN_VERSION, "plans": plans}, indent=1).encode("utf-8"))
