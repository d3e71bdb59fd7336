"""The annotation tool's rules: the state machine that turns a cursor candle into trades and
regions (no Qt, no store).

Keyboard: ``open`` (L/S) starts a pending long/short entry at the cursor candle's close,
``close`` (X or Enter) turns it into a ``Trade`` at the cursor candle's close; ``cancel`` (Esc)
drops the pending entry (or the mark); ``set_mark`` (M) and ``label`` (1/2/3/4) make a ``Region``
from the mark to the cursor (either order), which clears the mark. ``click`` (when "Click to
annotate" is on) opens an entry in the last direction chosen (long until one was chosen), and
the next click closes it. ``step_annotation`` is where N / P go next.

A trade is priced at closed candles only (a forming candle's close is not known yet: on a
higher-timeframe chart that can be a day away) and must close on a later candle than it
opened, and may not be held at the same time as
another trade of its market on any timeframe (``overlap``, the rule training and imports use
too); a refusal names the other trade. Each method checks a request and returns the annotation
to write, or raises ``ToolRefused`` with a message for the trader.

In blind replay each request comes with the replay ``clock``: a candle that has not closed by
then cannot be marked, each decision keeps the clock it was made at, and a trade whose entry
and exit were both decided in replay (a region whose mark and label were) is ``blind``. A
refusal never names the times of a mark the clock still hides.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import WorkstationError
from ..market.candles import Candles
from ..market.series import MarketKey
from .horizon import seen_by
from .model import Annotation, Direction, Region, RegionLabel, Trade
from .overlap import describe_trade, overlapping


class ToolRefused(WorkstationError):
    """A tool request that cannot be done as asked; the message says what to do instead."""


@dataclass(frozen=True)
class PendingEntry:
    """An opened, not yet closed, trade: entry at ``price`` on the candle opening at ``ts``."""

    direction: Direction
    ts: int
    price: float
    decided_at: int | None = None  # the replay clock when it was opened


@dataclass(frozen=True)
class Mark:
    """The start of a range to label: the candle opening at ``ts``."""

    ts: int
    decided_at: int | None = None  # the replay clock when it was set


def _candle(candles: Candles | None, index: int, *, priced: bool = False
            ) -> tuple[int, float, int]:
    """Open time, close and timeframe length (ms) of candle ``index``, or a refusal; a trade's
    price (``priced``) is never taken from a candle still forming, whose close is not known."""
    if candles is None or not len(candles):
        raise ToolRefused("No candles on the chart: open a data source first")
    if not 0 <= index < len(candles):
        raise ToolRefused("Put the cursor on a candle first")
    if priced and index >= candles.n_closed:
        raise ToolRefused(f"The cursor {candles.timeframe.name} candle is still forming: a "
                          "trade is priced at a closed candle's close (move the cursor back)")
    return int(candles.ts[index]), float(candles.close[index]), candles.timeframe.ms


def before_clock(ts: int, timeframe_ms: int, clock: int | None) -> None:
    if clock is not None and ts + timeframe_ms > clock:
        raise ToolRefused("That candle closes after the replay clock: nothing can be marked "
                          "after it (move the cursor back, or play on)")


def _named(trade: Trade, clock: int | None) -> str:
    """How a refusal names another trade: by its times, unless the replay clock hides them."""
    if seen_by(trade, clock):
        return describe_trade(trade)
    return "one of your marks that the replay still hides"


def _blind(first: int | None, last: int | None) -> dict:
    """The blind fields of a mark whose two decisions were made at these clocks."""
    if first is None or last is None:
        return {}
    return {"blind": True, "decided_at": (first, last)}


class AnnotationTools:
    """The pending entry, the mark and the last chosen direction, and the rules that turn
    them plus a cursor candle into annotations (see the module docstring). ``trades`` are the
    market's trades on every timeframe."""

    def __init__(self):
        self.pending: PendingEntry | None = None
        self.mark: Mark | None = None
        self.direction = Direction.LONG

    def reset(self) -> None:
        """Forget the pending entry and the mark (another series is shown)."""
        self.pending = None
        self.mark = None

    def open(self, direction: Direction | str, candles: Candles | None, index: int,
             trades: Iterable[Trade] = (), clock: int | None = None) -> PendingEntry:
        """Open (or move) the pending entry at the close of candle ``index``."""
        direction = Direction(direction)
        ts, price, timeframe_ms = _candle(candles, index, priced=True)
        before_clock(ts, timeframe_ms, clock)
        acted = ts + timeframe_ms
        for trade in trades:
            start, end = trade.held
            if start <= acted < end:
                raise ToolRefused(
                    f"The cursor candle's close is inside the {_named(trade, clock)}; move "
                    "past its exit (or delete it with Del) to open another")
        self.direction = direction
        self.pending = PendingEntry(direction, ts, price, clock)
        return self.pending

    def close(self, candles: Candles | None, index: int, market: MarketKey, timeframe: str,
              trades: Iterable[Trade] = (), clock: int | None = None) -> Trade:
        """The trade from the pending entry to the close of candle ``index``; the pending entry
        is used up only when the trade is valid."""
        pending = self.pending
        if pending is None:
            raise ToolRefused("No open entry to close: press L (long) or S (short) first")
        ts, price, timeframe_ms = _candle(candles, index, priced=True)
        before_clock(ts, timeframe_ms, clock)
        if ts <= pending.ts:
            raise ToolRefused("Move the cursor to a candle after the entry to close the trade "
                              "(Esc cancels the entry)")
        trade = Trade(market=market.kind, symbol=market.symbol, timeframe=timeframe,
                      direction=pending.direction, entry_ts=pending.ts,
                      entry_price=pending.price, exit_ts=ts, exit_price=price,
                      **_blind(pending.decided_at, clock))
        other = overlapping(trades, trade)
        if other is not None:
            raise ToolRefused(f"This trade would overlap the {_named(other, clock)}; close "
                              "before it starts or delete it first")
        self.pending = None
        return trade

    def cancel(self) -> str | None:
        """Drop the pending entry, else the mark; says which ("entry", "mark" or None)."""
        if self.pending is not None:
            self.pending = None
            return "entry"
        if self.mark is not None:
            self.mark = None
            return "mark"
        return None

    def set_mark(self, candles: Candles | None, index: int, clock: int | None = None) -> Mark:
        ts, _, timeframe_ms = _candle(candles, index)
        before_clock(ts, timeframe_ms, clock)
        self.mark = Mark(ts, clock)
        return self.mark

    def label(self, label: RegionLabel | str, candles: Candles | None, index: int,
              market: MarketKey, timeframe: str, clock: int | None = None) -> Region:
        """The region from the mark to candle ``index`` (inclusive, either order) with
        ``label``; the mark is used up."""
        if self.mark is None:
            raise ToolRefused("No mark: press M on the first candle of the range, move the "
                              "cursor to its last candle, then 1 / 2 / 3 / 4")
        ts, _, timeframe_ms = _candle(candles, index)
        before_clock(ts, timeframe_ms, clock)
        start, end = sorted((self.mark.ts, ts))
        region = Region(market=market.kind, symbol=market.symbol, timeframe=timeframe,
                        start_ts=start, end_ts=end, label=label,
                        **_blind(self.mark.decided_at, clock))
        self.mark = None
        return region

    def click(self, candles: Candles | None, index: int, market: MarketKey, timeframe: str,
              trades: Iterable[Trade] = (), clock: int | None = None) -> PendingEntry | Trade:
        """A click in click-to-annotate mode: opens an entry in the last chosen direction,
        or closes the pending one."""
        if self.pending is None:
            return self.open(self.direction, candles, index, trades, clock)
        return self.close(candles, index, market, timeframe, trades, clock)


def step_annotation(annotations: Iterable[Annotation], candles: Candles, cursor: int,
                    selected: Annotation | None, step: int) -> Annotation | None:
    """Where N (``step`` > 0) or P (< 0) goes, in one stable order (start, end, id): the
    annotation after (before) ``selected`` while the cursor is on ``selected``'s first candle,
    so that annotations starting on one candle are each visited; else the first starting on a
    candle after (the last starting on one before) ``cursor``; None when there is none."""
    order = sorted(annotations, key=lambda a: (a.span[0], a.span[1], a.id))
    if not order or not len(candles):
        return None
    last = len(candles) - 1
    rows = [min(max(int(candles.ts.searchsorted(a.span[0], side="right")) - 1, 0), last)
            for a in order]
    at = next((i for i, a in enumerate(order) if selected is not None and a.id == selected.id),
              None)
    if at is not None and rows[at] == cursor:
        i = at + (1 if step > 0 else -1)
        return order[i] if 0 <= i < len(order) else None
    if step > 0:
        return next((a for a, row in zip(order, rows) if row > cursor), None)
    return next((a for a, row in zip(reversed(order), reversed(rows)) if row < cursor), None)
