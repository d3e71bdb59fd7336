"""The P&L labels of trades on a chart: one per chart candle that trades exit on.

Trades marked on a lower timeframe (1m) exit minutes apart inside one candle of a higher
timeframe chart (1h); their labels would pile up there, so they merge into one per candle:
``"+1.20%"`` for one trade, ``"3 trades +1.20%"`` for several (the sum of their P&L %), with
one line per trade for a tooltip (``trade_lines``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..display import percent
from ..timeparse import format_minute


def pnl_text(pnl_pct: float) -> str:
    """A trade's P&L %: ``"+1.20%"``."""
    return percent(pnl_pct / 100.0, 2, signed=True)


@dataclass(frozen=True)
class TradeLabel:
    """The label of the trades ``rows`` (indexes of the arrays given, by exit time) that exit
    on chart candle ``candle``: ``pnl`` is the sum of their P&L %."""

    candle: int
    rows: np.ndarray
    pnl: float

    @property
    def text(self) -> str:
        n = len(self.rows)
        return pnl_text(self.pnl) if n == 1 else f"{n} trades {pnl_text(self.pnl)}"


def trade_labels(exit_candle: np.ndarray, exit_ts: np.ndarray,
                 pnl: np.ndarray) -> list[TradeLabel]:
    """One label per candle that trades exit on (``exit_candle``: each trade's chart candle),
    in candle order."""
    exit_candle = np.asarray(exit_candle, dtype=np.int64)
    if not exit_candle.size:
        return []
    order = np.lexsort((np.asarray(exit_ts), exit_candle))
    candles = exit_candle[order]
    starts = np.flatnonzero(np.r_[True, candles[1:] != candles[:-1]])
    totals = np.add.reduceat(np.asarray(pnl, dtype=np.float64)[order], starts)
    return [TradeLabel(int(candles[s]), rows, float(total))
            for s, rows, total in zip(starts.tolist(), np.split(order, starts[1:]),
                                      totals.tolist())]


def trade_lines(long: np.ndarray, entry_ts: np.ndarray, exit_ts: np.ndarray,
                pnl: np.ndarray) -> str:
    """One line per trade: ``"long 2024-05-01 12:03 → 12:41 +0.50%"``."""
    lines = []
    for is_long, t0, t1, value in zip(long.tolist(), entry_ts.tolist(), exit_ts.tolist(),
                                      pnl.tolist()):
        entry, exit_ = format_minute(int(t0)), format_minute(int(t1))
        if exit_[:10] == entry[:10]:
            exit_ = exit_[11:]  # the same day: its time only
        lines.append(f"{'long' if is_long else 'short'} {entry} → {exit_} {pnl_text(value)}")
    return "\n".join(lines)
