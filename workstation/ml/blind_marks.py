"""The position head's entries and exits scored against the trader's blind marks only.

A blind mark (``Origin.BLIND``) was made in a replay with the future hidden; hindsight and
unblinded marks were not (``annotations.model``). ``blind_position`` is the position target
the trader's blind marks alone give each candle, by the training targets' own rule
(``annotations.targets.trader_targets`` on the blind trades and blind regions, the replay's
"reviewed" region among them, with the same review margin): ``MASKED`` wherever no blind mark
labels the candle. The events are scored on it exactly as against every mark
(``entry_events``: the same window, random baseline, bootstrap and seed), on the candles where
both it and the model's prediction exist. Where no blind mark labels any candle of the span
there is nothing to score: None, shown as "—".

``ScoredTradeEvents`` carries both: the entries and exits against every mark (a
``TradeEvents``) and ``blind``, the same against the blind marks only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..annotations.model import Annotation, Origin
from ..annotations.targets import trader_targets
from ..display import NO_DATA
from ..market.timeframes import Timeframe
from .entry_events import EventTally, describe_match, span_tallies, trade_events
from .events import TradeEvents
from .targets import MASKED

VS_BLIND = "vs blind marks"
NO_BLIND_MARKS = "no blind mark on these candles"


@dataclass(frozen=True)
class ScoredTradeEvents(TradeEvents):
    """The position head's entries and exits against every mark (``entries``, ``exits``)
    and ``blind``: against the blind marks only (None: no blind mark labels these candles)."""

    blind: TradeEvents | None = None


def blind_annotations(annotations: Iterable[Annotation]) -> list[Annotation]:
    """The marks made blind (``Origin.BLIND``); an unblinded mark is a hindsight one."""
    return [a for a in annotations if a.origin is Origin.BLIND]


def blind_position(annotations: Iterable[Annotation], candles_ts: np.ndarray, tf: Timeframe,
                   *, review_margin: int) -> np.ndarray:
    """The position target (int8, ``MASKED`` where none) of the blind marks alone on candles
    opening at ``candles_ts`` of ``tf`` (see the module docstring)."""
    blind = blind_annotations(annotations)
    if not blind:
        return np.full(len(candles_ts), MASKED, dtype=np.int8)
    return trader_targets(blind, candles_ts, tf, review_margin=review_margin).position


def market_blind_position(annotations_db: Path | None, series, candles, spec) -> np.ndarray:
    """``blind_position`` of every mark of ``series``' market in the store file, on
    ``candles`` with the review margin of ``spec`` (a ``TargetSpec``)."""
    from .job import market_annotations

    annotations = market_annotations(annotations_db, series.market)
    return blind_position(annotations, candles.ts, candles.timeframe,
                          review_margin=spec.review_margin)


def blind_tallies(truth: np.ndarray, predicted: np.ndarray, ts: np.ndarray, *, seed: int
                  ) -> dict[str, EventTally] | None:
    """``entry_events.span_tallies`` against the blind positions ``truth`` of one span; None
    where no blind mark labels a candle of it."""
    if not bool((np.asarray(truth) != MASKED).any()):
        return None
    return span_tallies(truth, predicted, ts, seed=seed)


def pooled_blind_events(tallies: Sequence[dict[str, EventTally] | None], seed: int
                        ) -> TradeEvents | None:
    """The entries and exits against the blind marks over the spans that have them (None:
    no span has)."""
    kept = [t for t in tallies if t is not None]
    return trade_events(kept, seed) if kept else None


def blind_trade_events(spans: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], seed: int
                       ) -> TradeEvents | None:
    """The entries and exits against the blind marks of ``spans`` ((blind truth, predicted,
    ts) each; several: pooled), all with ``seed``; None without a blind mark on them."""
    return pooled_blind_events([blind_tallies(t, p, ts, seed=seed) for t, p, ts in spans], seed)


def with_blind(events: TradeEvents, blind: TradeEvents | None) -> ScoredTradeEvents:
    return ScoredTradeEvents(events.entries, events.exits, blind)


def blind_of(events: TradeEvents | None) -> tuple[bool, TradeEvents | None]:
    """Whether ``events`` were also scored against the blind marks, and those scores."""
    if isinstance(events, ScoredTradeEvents):
        return True, events.blind
    return False, None


def describe_blind_events(events: TradeEvents | None) -> list[str]:
    """The entries and exits against the blind marks in words, one line each, or one line
    of "—" without a blind mark."""
    if events is None:
        return [f"{VS_BLIND}: {NO_DATA} ({NO_BLIND_MARKS})"]
    return [f"{VS_BLIND}: {describe_match(m)}" for m in (events.entries, events.exits)]
