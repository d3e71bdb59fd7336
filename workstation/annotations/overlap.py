"""The one rule for trades held at the same time.

A market's trades (one symbol, real or demo: ``Annotation.market_key``) may not overlap in
time, whatever timeframe each was marked on: the trader holds one position at a time. A trade
is held from its entry candle's close to its exit candle's close (``Trade.held``, half-open);
two trades overlap when those spans intersect (a trade entered and exited on one close overlaps
a trade held across that moment). One may open on the close where another ends (a reversal).

The keyboard tool asks ``overlapping`` before it makes a trade, the store refuses a change or
an import that would add an overlap, and training refuses a market whose trades overlap, with
one ``OverlappingTradesError`` naming every pair. A store that already holds overlapping
trades still opens; ``overlapping_pairs`` tells which they are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from ..timeparse import format_minute
from .model import Annotation, AnnotationError, Trade


def describe_trade(trade: Trade) -> str:
    """``"1h long entered on the 2026-11-30 10:00 candle, exited on the 14:00 candle"``."""
    entry, exit_ = format_minute(trade.entry_ts), format_minute(trade.exit_ts)
    if entry[:10] == exit_[:10]:
        exit_ = exit_[11:]
    return (f"{trade.timeframe} {trade.direction.value} entered on the {entry} candle, exited "
            f"on the {exit_} candle")


class OverlappingTradesError(AnnotationError):
    """Trades of one market that are held at the same time; ``pairs`` lists every pair."""

    def __init__(self, pairs: list[tuple[Trade, Trade]], what: str = "trades overlap"):
        self.pairs = pairs
        listed = "; ".join(f"{describe_trade(a)} overlaps {describe_trade(b)}" for a, b in pairs)
        market = pairs[0][0].market_key if pairs else ""
        super().__init__(f"{what} in {market} ({len(pairs)} pair{'s' * (len(pairs) != 1)}): "
                         f"{listed}; edit or delete one trade of each pair")


def held_together(a: Trade, b: Trade) -> bool:
    """Whether ``a`` and ``b`` (of one market) are held at the same time."""
    (a0, a1), (b0, b1) = a.held, b.held
    return a0 < b1 and b0 < a1


def overlapping(trades: Iterable[Annotation], candidate: Trade) -> Trade | None:
    """The first trade (by entry) of ``candidate``'s market held at the same time as it; the
    trade with ``candidate``'s own id is its older version, not another trade."""
    hits = [t for t in trades if isinstance(t, Trade) and t.id != candidate.id
            and t.market_key == candidate.market_key and held_together(t, candidate)]
    return min(hits, key=lambda t: (t.held, t.id)) if hits else None


def overlapping_pairs(trades: Iterable[Annotation]) -> list[tuple[Trade, Trade]]:
    """Every pair of trades of one market held at the same time, the earlier first, in entry
    order (a sweep over the sorted trades: O(n log n) plus the pairs)."""
    markets: dict = defaultdict(list)
    for ann in trades:
        if isinstance(ann, Trade):
            markets[ann.market_key].append(ann)
    pairs: list[tuple[Trade, Trade]] = []
    for group in markets.values():
        group.sort(key=lambda t: (t.held, t.id))
        open_: list[Trade] = []
        for trade in group:
            start = trade.held[0]
            open_ = [t for t in open_ if t.held[1] > start]
            pairs.extend((t, trade) for t in open_)
            open_.append(trade)
    return pairs


def check_no_overlaps(trades: Iterable[Annotation], what: str = "trades overlap") -> None:
    """Raise ``OverlappingTradesError`` naming every overlapping pair, if there is one."""
    pairs = overlapping_pairs(trades)
    if pairs:
        raise OverlappingTradesError(pairs, what)
