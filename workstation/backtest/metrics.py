"""A backtest's metrics, with backtesting.py's names and definitions (numpy only).

Returns compound: the annualised return is the geometric mean daily return (equity at each
UTC day's last close) compounded over a year of 365 trading days (crypto trades every day),
the annualised volatility is backtesting.py's compounding formula, Sharpe and Sortino divide
the annualised return by it (no risk-free rate), Calmar by the maximum drawdown. Trade returns
are per unit after fees (``ReturnPct``); the profit factor and expectancy use them, the win rate
and SQN the cash P&L. Durations are in milliseconds, rounded up to whole candles as
backtesting.py rounds them to the data's period. A value without data is NaN.

The CAGR is given only over a span of a year or more (``cagr_known``): compounding a few days
into a yearly rate reads as a return no one earned (a 20-day gain of 5 % as 2,210 % a year), so
over a shorter span it is NaN and the plain return stands in its place.
"""

from __future__ import annotations

import numpy as np

from .engine import BacktestRun

DAY_MS = 86_400_000
TRADING_DAYS = 365
YEAR_DAYS = 365.25
CAGR_MIN_DAYS = 365  # the shortest span a CAGR is given for


def cagr_known(duration_ms: float) -> bool:
    """Whether a span of ``duration_ms`` (first to last candle) is long enough for a CAGR."""
    return duration_ms >= CAGR_MIN_DAYS * DAY_MS


def _geometric_mean(returns: np.ndarray) -> float:
    growth = np.nan_to_num(returns) + 1
    if np.any(growth <= 0):
        return 0.0
    return float(np.exp(np.log(growth).sum() / (len(growth) or np.nan)) - 1)


def _drawdown_periods(dd: np.ndarray, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Duration (ms) and deepest drawdown of each drawdown period (backtesting.py's
    ``compute_drawdown_duration_peaks``)."""
    ends = np.unique(np.r_[np.flatnonzero(dd == 0), len(dd) - 1])
    prev, end = ends[:-1], ends[1:]
    keep = end > prev + 1
    prev, end = prev[keep], end[keep]
    durations = (ts[end] - ts[prev]).astype(np.float64)
    peaks = np.array([dd[a:b + 1].max() for a, b in zip(prev, end)], dtype=np.float64)
    return durations, peaks


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else float("nan")


def _max(values: np.ndarray) -> float:
    return float(values.max()) if len(values) else float("nan")


def _whole_candles(ms: float, candle_ms: int) -> float:
    return float(np.ceil(ms / candle_ms) * candle_ms) if np.isfinite(ms) else ms


def compute_metrics(run: BacktestRun, ts: np.ndarray, close: np.ndarray,
                    candle_ms: int) -> dict[str, float]:
    """backtesting.py's statistics of ``run`` (``ts``/``close``: every candle of the series,
    ``candle_ms`` its timeframe)."""
    start, stop = run.span
    ts = np.asarray(ts, dtype=np.int64)[start:stop]
    c = np.asarray(close, dtype=np.float64)[start:stop]
    equity = run.equity
    trades = run.trades
    dd = 1 - equity / np.maximum.accumulate(equity)
    dd_durations, dd_peaks = _drawdown_periods(dd, ts)
    s: dict[str, float] = {}
    s["Start"] = float(ts[0])
    s["End"] = float(ts[-1])
    s["Duration"] = float(ts[-1] - ts[0])
    held = np.zeros(len(equity), dtype=bool)
    for a, b in zip(trades.entry_bar - start, trades.exit_bar - start):
        held[a:b + 1] = True
    s["Exposure Time [%]"] = float(held.mean() * 100)
    s["Equity Final [$]"] = float(equity[-1])
    s["Equity Peak [$]"] = float(equity.max())
    s["Commissions [$]"] = float(trades.fees.sum())
    s["Return [%]"] = float((equity[-1] - equity[0]) / equity[0] * 100)
    s["Buy & Hold Return [%]"] = float((c[-1] - c[0]) / c[0] * 100)
    day = ts // DAY_MS
    last_of_day = np.r_[np.flatnonzero(np.diff(day) != 0), len(day) - 1]
    daily = equity[last_of_day]
    day_returns = daily[1:] / daily[:-1] - 1
    g = _geometric_mean(day_returns) if len(day_returns) else 0.0
    annual = (1 + g) ** TRADING_DAYS - 1
    var = float(np.var(day_returns, ddof=1)) if len(day_returns) > 1 else float("nan")
    s["Return (Ann.) [%]"] = annual * 100
    s["Volatility (Ann.) [%]"] = float(np.sqrt(
        (var + (1 + g) ** 2) ** TRADING_DAYS - (1 + g) ** (2 * TRADING_DAYS)) * 100)
    years = s["Duration"] / DAY_MS / YEAR_DAYS
    s["CAGR [%]"] = (((equity[-1] / equity[0]) ** (1 / years) - 1) * 100
                     if cagr_known(s["Duration"]) else float("nan"))
    s["Sharpe Ratio"] = s["Return (Ann.) [%]"] / (s["Volatility (Ann.) [%]"] or np.nan)
    downside = np.sqrt(np.mean(np.clip(day_returns, -np.inf, 0) ** 2)) if len(day_returns) \
        else float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        s["Sortino Ratio"] = float(annual / (downside * np.sqrt(TRADING_DAYS)))
    max_dd = float(np.nan_to_num(dd.max()))
    s["Calmar Ratio"] = annual / (max_dd or np.nan)
    s["Max. Drawdown [%]"] = -max_dd * 100
    s["Avg. Drawdown [%]"] = -_mean(dd_peaks) * 100
    s["Max. Drawdown Duration"] = _whole_candles(_max(dd_durations), candle_ms)
    s["Avg. Drawdown Duration"] = _whole_candles(_mean(dd_durations), candle_ms)
    n = len(trades)
    s["# Trades"] = float(n)
    pnl, returns = trades.pnl, trades.return_pct
    s["Win Rate [%]"] = float((pnl > 0).mean() * 100) if n else float("nan")
    s["Best Trade [%]"] = _max(returns) * 100
    s["Worst Trade [%]"] = -_max(-returns) * 100
    s["Avg. Trade [%]"] = _geometric_mean(returns) * 100 if n else float("nan")
    durations = (ts[trades.exit_bar - start] - ts[trades.entry_bar - start]).astype(np.float64)
    s["Max. Trade Duration"] = _whole_candles(_max(durations), candle_ms)
    s["Avg. Trade Duration"] = _whole_candles(_mean(durations), candle_ms)
    losses = abs(returns[returns < 0].sum())
    s["Profit Factor"] = float(returns[returns > 0].sum() / (losses or np.nan)) if n \
        else float("nan")
    s["Expectancy [%]"] = _mean(returns) * 100
    std = float(np.std(pnl, ddof=1)) if n > 1 else float("nan")
    s["SQN"] = float(np.sqrt(n) * _mean(pnl) / (std or np.nan))
    return s
