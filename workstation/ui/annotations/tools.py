"""The annotation tool: its commands and keys, and the state machine that turns the chart's
cursor candle into trades and regions.

Keyboard: ``L``/``S`` open a pending long/short entry at the cursor candle's close, ``X`` (or
Enter) closes it at the cursor candle's close into a ``Trade``; ``Esc`` cancels the pending
entry (or the mark); ``M`` sets a mark and ``1``/``2``/``3`` label the candles from the mark to
the cursor (either order) as an uptrend / downtrend / range ``Region``, which clears the mark.

Mouse (when "Click to annotate" is on): a click on a candle opens a pending entry there in the
last direction chosen (long until ``L``/``S`` or the menu chose otherwise); the next click closes
it. A trade must close on a later candle than it opened, and may not overlap another trade
of the series (training would refuse it); touching (a reversal on one candle) is fine.

``AnnotationTools`` holds no Qt and no store: it checks a request and returns the annotation
to write, or raises ``ToolRefused`` with a message for the trader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ...annotations.model import Direction, Region, RegionLabel, Trade
from ...errors import WorkstationError
from ...market.candles import Candles
from ..shortcuts import Command, register

ANNOTATE = "Annotate"
COMMANDS: tuple[Command, ...] = (
    Command("annotate.long", "Open long at cursor", ("L",), ANNOTATE,
            "Open a long entry at the cursor candle's close"),
    Command("annotate.short", "Open short at cursor", ("S",), ANNOTATE,
            "Open a short entry at the cursor candle's close"),
    Command("annotate.close", "Close trade at cursor", ("X", "Return", "Enter"), ANNOTATE,
            "Close the open entry at the cursor candle's close"),
    Command("annotate.cancel", "Cancel entry / mark", ("Esc",), ANNOTATE,
            "Drop the open entry (or the mark) without saving anything"),
    Command("annotate.mark", "Set mark at cursor", ("M",), ANNOTATE,
            "Start a range at the cursor candle; 1 / 2 / 3 label it"),
    Command("annotate.uptrend", "Label mark…cursor as uptrend", ("1",), ANNOTATE),
    Command("annotate.downtrend", "Label mark…cursor as downtrend", ("2",), ANNOTATE),
    Command("annotate.range", "Label mark…cursor as range", ("3",), ANNOTATE),
    Command("annotate.delete", "Delete annotation under cursor", ("Del", "Backspace"), ANNOTATE),
    Command("annotate.next", "Next annotation", ("N",), ANNOTATE,
            "Move the cursor to the next annotation's start"),
    Command("annotate.previous", "Previous annotation", ("P",), ANNOTATE,
            "Move the cursor to the previous annotation's start"),
    Command("annotate.notes", "Edit notes…", ("E",), ANNOTATE,
            "Edit the notes of the annotation under the cursor"),
    Command("annotate.undo", "Undo", ("Ctrl+Z",), ANNOTATE, "Undo the last annotation change"),
    Command("annotate.redo", "Redo", ("Ctrl+Shift+Z", "Ctrl+Y"), ANNOTATE,
            "Redo the annotation change undone last"),
    Command("annotate.click_mode", "Click to annotate", (), ANNOTATE,
            "Clicks on the chart open and close trades (first click entry, second exit)"),
    Command("annotate.export", "Export annotations…", (), ANNOTATE,
            "Write every annotation to a JSON file (all kinds) or a CSV file (trades)"),
    Command("annotate.import", "Import annotations…", (), ANNOTATE,
            "Read annotations from a JSON or CSV file; a bad file imports nothing"),
)
register(*COMMANDS)

REGION_KEYS = {"annotate.uptrend": RegionLabel.UPTREND,
               "annotate.downtrend": RegionLabel.DOWNTREND,
               "annotate.range": RegionLabel.RANGE}


class ToolRefused(WorkstationError):
    """A tool request that cannot be done as asked; the message says what to do instead."""


@dataclass(frozen=True)
class PendingEntry:
    """An opened, not yet closed, trade: entry at ``price`` on the candle opening at ``ts``."""

    direction: Direction
    ts: int
    price: float


@dataclass(frozen=True)
class Mark:
    """The start of a range to label: the candle opening at ``ts``."""

    ts: int


def overlapping_trade(trades: Iterable[Trade], entry_ts: int, exit_ts: int) -> Trade | None:
    """A trade open at the same time as ``entry_ts..exit_ts`` (sharing an end is not overlap)."""
    for trade in trades:
        if trade.entry_ts < exit_ts and entry_ts < trade.exit_ts:
            return trade
        if trade.entry_ts == entry_ts:
            return trade
    return None


def _candle(candles: Candles | None, index: int) -> tuple[int, float]:
    if candles is None or not len(candles):
        raise ToolRefused("No candles on the chart: open a data source first")
    if not 0 <= index < len(candles):
        raise ToolRefused("Put the cursor on a candle first")
    return int(candles.ts[index]), float(candles.close[index])


class AnnotationTools:
    """The pending entry, the mark and the last chosen direction, and the rules that turn
    them plus a cursor candle into annotations (see the module docstring)."""

    def __init__(self):
        self.pending: PendingEntry | None = None
        self.mark: Mark | None = None
        self.direction = Direction.LONG

    def reset(self) -> None:
        """Forget the pending entry and the mark (another series is shown)."""
        self.pending = None
        self.mark = None

    def open(self, direction: Direction | str, candles: Candles | None, index: int,
             trades: Iterable[Trade] = ()) -> PendingEntry:
        """Open (or move) the pending entry at the close of candle ``index``."""
        direction = Direction(direction)
        ts, price = _candle(candles, index)
        for trade in trades:
            if trade.entry_ts <= ts < trade.exit_ts:
                raise ToolRefused(
                    f"The cursor candle is inside a {trade.direction.value} trade; move past "
                    "its exit (or delete it with Del) to open another")
        self.direction = direction
        self.pending = PendingEntry(direction, ts, price)
        return self.pending

    def close(self, candles: Candles | None, index: int, symbol: str, timeframe: str,
              trades: Iterable[Trade] = ()) -> Trade:
        """The trade from the pending entry to the close of candle ``index``; the pending entry
        is used up only when the trade is valid."""
        pending = self.pending
        if pending is None:
            raise ToolRefused("No open entry to close: press L (long) or S (short) first")
        ts, price = _candle(candles, index)
        if ts <= pending.ts:
            raise ToolRefused("Move the cursor to a candle after the entry to close the trade "
                              "(Esc cancels the entry)")
        other = overlapping_trade(trades, pending.ts, ts)
        if other is not None:
            raise ToolRefused(
                f"This trade would overlap the {other.direction.value} trade opened on that "
                "chart earlier; close before it starts or delete it first")
        trade = Trade(symbol=symbol, timeframe=timeframe, direction=pending.direction,
                      entry_ts=pending.ts, entry_price=pending.price, exit_ts=ts,
                      exit_price=price)
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

    def set_mark(self, candles: Candles | None, index: int) -> Mark:
        ts, _ = _candle(candles, index)
        self.mark = Mark(ts)
        return self.mark

    def label(self, label: RegionLabel | str, candles: Candles | None, index: int,
              symbol: str, timeframe: str) -> Region:
        """The region from the mark to candle ``index`` (inclusive, either order) with
        ``label``; the mark is used up."""
        if self.mark is None:
            raise ToolRefused("No mark: press M on the first candle of the range, move the "
                              "cursor to its last candle, then 1 / 2 / 3")
        ts, _ = _candle(candles, index)
        start, end = sorted((self.mark.ts, ts))
        region = Region(symbol=symbol, timeframe=timeframe, start_ts=start, end_ts=end,
                        label=label)
        self.mark = None
        return region

    def click(self, candles: Candles | None, index: int, symbol: str, timeframe: str,
              trades: Iterable[Trade] = ()) -> PendingEntry | Trade:
        """A click in click-to-annotate mode: opens an entry in the last chosen direction,
        or closes the pending one."""
        if self.pending is None:
            return self.open(self.direction, candles, index, trades)
        return self.close(candles, index, symbol, timeframe, trades)
