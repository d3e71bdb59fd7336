"""The fill and accounting rules of a backtest, vectorised with numpy.

A signal is the position wanted after a candle closes: +1 long, -1 short, 0 flat. By default
it fills at the **next candle's open** (``NEXT_OPEN``): what a trader acting on a closed candle
can get. ``SAME_CLOSE`` fills at the signal candle's own close, an optimistic option that every
result labels as such. A change of position closes the open trade and opens the next one at
the same fill, the way backtesting.py's exclusive orders do.

Costs per side: a fee (a fraction of the traded value) and slippage (bps that move every fill
against the trade: buys higher, sells lower). Sizing: each trade takes ``size`` of the equity
at its entry (fractional units; the fee is included, so 1.0 means all of it), or a fixed
number of ``units``. The accounting is backtesting.py's, fractional: the entry fee is paid at
entry, the exit fee at exit, and the equity at a candle's close is the cash plus the open
trade's mark to market at that close. A trade still open at the end of the span is closed at
the span's last close (``closed_at_end``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import WorkstationError

NEXT_OPEN, SAME_CLOSE = "next open", "same close"
FILLS = (NEXT_OPEN, SAME_CLOSE)


class BacktestError(WorkstationError):
    """Settings or inputs a backtest cannot run on."""


@dataclass(frozen=True)
class Costs:
    """``fee``: fraction of the traded value per side (0.001 = 0.1 %); ``slippage_bps`` per
    side; ``fee_source`` says where the fee came from (the exchange, a default, the user)."""

    fee: float
    slippage_bps: float = 0.0
    fee_source: str = "given"

    def __post_init__(self) -> None:
        if not 0 <= self.fee < 0.1 or not np.isfinite(self.fee):
            raise BacktestError(f"fee must be between 0 and 10 % per side, got {self.fee!r}")
        if not 0 <= self.slippage_bps < 1000 or not np.isfinite(self.slippage_bps):
            raise BacktestError(f"slippage must be between 0 and 1000 bps, got "
                                f"{self.slippage_bps!r}")

    def entry_fill(self, price, direction):
        """What a trade of ``direction`` (+1 / -1) entered at ``price`` pays: slippage moves
        it against the trade (numbers or arrays)."""
        return price * (1 + self.slippage_bps / 10_000.0 * direction)

    def exit_fill(self, price, direction):
        """What a trade of ``direction`` exited at ``price`` gets, after slippage."""
        return price * (1 - self.slippage_bps / 10_000.0 * direction)

    def per_unit(self, direction, entry_price, exit_price):
        """Per unit traded: the gross gain of a trade between two fills and the fees of both
        its sides (numbers or arrays)."""
        return direction * (exit_price - entry_price), self.fee * (entry_price + exit_price)


@dataclass(frozen=True)
class Sizing:
    """``size``: the fraction of equity each trade takes (0 < size <= 1), or ``units``: a fixed
    quantity per trade (then ``size`` is ignored)."""

    size: float = 1.0
    units: float | None = None

    def __post_init__(self) -> None:
        if self.units is not None:
            if not self.units > 0 or not np.isfinite(self.units):
                raise BacktestError(f"units must be a positive number, got {self.units!r}")
        elif not 0 < self.size <= 1:
            raise BacktestError(f"size must be a fraction of equity in (0, 1], got "
                                f"{self.size!r}")

    def units_for(self, equity, entry_price, fee: float):
        """The units of a trade entered at ``entry_price`` with ``equity`` (the cash before
        it): ``size`` of it, the entry fee included, or the fixed ``units``."""
        if self.units is not None:
            return np.full(np.shape(entry_price), float(self.units))
        return self.size * equity / (entry_price * (1 + fee))


@dataclass(frozen=True)
class Trades:
    """One row per trade (numpy columns). ``entry_bar``/``exit_bar`` are the candles whose
    open (or close, with ``SAME_CLOSE``) filled them; prices are the fills after slippage."""

    direction: np.ndarray      # +1 long, -1 short
    entry_bar: np.ndarray
    exit_bar: np.ndarray
    entry_price: np.ndarray
    exit_price: np.ndarray
    units: np.ndarray
    fees: np.ndarray           # both sides, in cash
    pnl: np.ndarray            # after fees, in cash
    return_pct: np.ndarray     # backtesting.py's ReturnPct: per unit, after fees, as a fraction
    closed_at_end: np.ndarray  # bool: still open at the span's end, closed at its last close

    def __len__(self) -> int:
        return len(self.direction)


@dataclass(frozen=True)
class BacktestRun:
    """The equity at every candle close of ``span`` (start, stop) and the trades."""

    span: tuple[int, int]
    equity: np.ndarray
    trades: Trades
    cash: float
    costs: Costs
    sizing: Sizing
    fill: str


def run_backtest(open_: np.ndarray, close: np.ndarray, signal: np.ndarray, *,
                 costs: Costs, sizing: Sizing = Sizing(), fill: str = NEXT_OPEN,
                 cash: float = 10_000.0, span: tuple[int, int] | None = None) -> BacktestRun:
    """Backtest ``signal`` (one value per candle: +1 / 0 / -1, decided at that candle's close)
    on the candles' opens and closes, inside ``span`` (default: all candles). See the module
    docstring for the rules."""
    open_ = np.asarray(open_, dtype=np.float64)
    close = np.asarray(close, dtype=np.float64)
    signal = np.asarray(signal)
    n = len(close)
    if len(open_) != n or len(signal) != n:
        raise BacktestError(f"{len(open_)} opens, {n} closes and {len(signal)} signals: "
                            "they must be one per candle")
    if fill not in FILLS:
        raise BacktestError(f"fill must be {' or '.join(FILLS)}, got {fill!r}")
    if not cash > 0:
        raise BacktestError(f"starting cash must be positive, got {cash!r}")
    start, stop = span if span is not None else (0, n)
    if not 0 <= start < stop <= n:
        raise BacktestError(f"span {start}..{stop} is not inside the {n} candles")
    if not np.all(np.isin(signal[start:stop], (-1, 0, 1))):
        raise BacktestError("signals must be -1 (short), 0 (flat) or 1 (long)")
    o, c = open_[start:stop], close[start:stop]
    wanted = np.clip(signal[start:stop].astype(np.int8), -1, 1)
    m = stop - start
    # held[i]: the position during candle i (after its open fill); nothing before the span,
    # and nothing may be decided at the last close (no candle is left to fill it)
    held = np.zeros(m, dtype=np.int8)
    held[1:] = wanted[:-1]
    if fill == SAME_CLOSE:
        fill_bar = np.arange(m) - 1  # a change held from candle i filled at close i - 1
        fill_price = np.concatenate(([np.nan], c[:-1]))
    else:
        fill_bar = np.arange(m)
        fill_price = o
    change = np.flatnonzero(np.diff(held, prepend=0) != 0)
    entries = change[held[change] != 0]
    # each trade ends at the next change after its entry, or at the span's end
    nxt = np.searchsorted(change, entries, side="right")
    at_end = nxt >= len(change)
    exit_change = np.where(at_end, 0, change[np.minimum(nxt, len(change) - 1)])
    direction = held[entries].astype(np.float64)
    entry_bar = fill_bar[entries]
    exit_bar = np.where(at_end, m - 1, fill_bar[exit_change])
    entry_price = costs.entry_fill(fill_price[entries], direction)
    exit_price = costs.exit_fill(np.where(at_end, c[-1], fill_price[exit_change]), direction)
    gross, fee_per_unit = costs.per_unit(direction, entry_price, exit_price)
    if sizing.units is not None:
        units = sizing.units_for(cash, entry_price, costs.fee)
        pnl = units * (gross - fee_per_unit)
        before = cash + np.concatenate(([0.0], np.cumsum(pnl)[:-1]))
    else:
        growth = 1 + sizing.size * (gross - fee_per_unit) / (entry_price * (1 + costs.fee))
        after = cash * np.cumprod(growth)
        before = np.concatenate(([cash], after[:-1]))
        units = sizing.units_for(before, entry_price, costs.fee)
        pnl = units * (gross - fee_per_unit)
    fees = units * fee_per_unit
    trades = Trades(direction.astype(np.int8), entry_bar + start, exit_bar + start, entry_price,
                    exit_price, units, fees, pnl,
                    gross / entry_price - fee_per_unit / entry_price, at_end)
    equity = _equity_curve(c, trades, start, before, cash, costs.fee)
    return BacktestRun((start, stop), equity, trades, float(cash), costs, sizing, fill)


def _equity_curve(close: np.ndarray, trades: Trades, start: int, before: np.ndarray,
                  cash: float, fee: float) -> np.ndarray:
    """Cash plus the open trade's mark to market at every close; a trade is open at the
    closes of candles ``entry_bar`` .. ``exit_bar - 1``."""
    m = len(close)
    if not len(trades):
        return np.full(m, cash)
    bars = np.arange(m)
    entry, exit_ = trades.entry_bar - start, trades.exit_bar - start
    after = before + trades.pnl
    done = np.searchsorted(exit_, bars, side="right")  # trades closed at or before each bar
    equity = np.where(done > 0, after[np.maximum(done - 1, 0)], cash)
    current = np.searchsorted(entry, bars, side="right") - 1
    safe = np.maximum(current, 0)
    open_now = (current >= 0) & (bars < exit_[safe]) & (bars >= entry[safe])
    if open_now.any():
        k = safe[open_now]
        equity[open_now] = marked_equity(before[k], trades.direction[k], trades.units[k],
                                         trades.entry_price[k], close[open_now], fee)
    return equity


def marked_equity(cash, direction, units, entry_price, close, fee: float):
    """The equity at a close while a trade is open: the ``cash`` it was entered with, less
    its entry fee, plus its mark to market at ``close`` (numbers or arrays)."""
    return cash - units * entry_price * fee + units * direction * (close - entry_price)
