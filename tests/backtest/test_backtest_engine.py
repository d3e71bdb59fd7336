"""The backtest engine against an independent reference (backtesting.py, a test-only extra):
the same trades and metrics to 1e-9 on a seeded moving-average strategy; fills, costs and
sizing by hand; and no look-ahead (cutting the data never changes an earlier fill)."""

from __future__ import annotations

import warnings

import backtesting as bt
import numpy as np
import pandas as pd
import pytest
from backtesting.lib import FractionalBacktest

from workstation.backtest.engine import (
    NEXT_OPEN,
    SAME_CLOSE,
    BacktestError,
    Costs,
    Sizing,
    run_backtest,
)
from workstation.backtest.metrics import compute_metrics
from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe

MIN = 60_000


def sma(x: np.ndarray, n: int) -> np.ndarray:
    out = np.full(len(x), np.nan)
    sums = np.cumsum(x)
    out[n - 1:] = (sums[n - 1:] - np.r_[0, sums[:-n]]) / n
    return out


@pytest.fixture(scope="module")
def market():
    candles = demo_candles(6000, ONE_MINUTE, seed=3, end_ts=1_700_000_000_000)
    close = candles.close.astype(np.float64)
    fast, slow = sma(close, 10), sma(close, 40)
    signal = np.where(np.isnan(slow), 0, np.where(fast > slow, 1, -1)).astype(np.int8)
    signal[-50:] = 0  # flat at the end: no trade left open for the reference to handle
    frame = pd.DataFrame({"Open": candles.open, "High": candles.high, "Low": candles.low,
                          "Close": close, "Volume": candles.volume},
                         index=pd.to_datetime(candles.ts, unit="ms"))
    return candles, signal, frame


def reference(frame: pd.DataFrame, signal: np.ndarray, **kwargs):
    """backtesting.py trading ``signal`` (decided at each close) with exclusive orders."""
    units = kwargs.pop("units")

    class Follow(bt.Strategy):
        def init(self):
            pass

        def next(self):
            want = signal[len(self.data) - 1]
            held = 0 if not self.position else (1 if self.position.is_long else -1)
            if want != held:
                if want == 0:
                    self.position.close()
                elif want == 1:
                    self.buy(size=units)
                else:
                    self.sell(size=units)

    backtest = kwargs.pop("backtest", bt.Backtest)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return backtest(frame, Follow, exclusive_orders=True, **kwargs).run()


def plain(value):
    if isinstance(value, pd.Timedelta):
        return value / pd.Timedelta(milliseconds=1)
    if isinstance(value, pd.Timestamp):
        return value.value / 1e6
    return float(value)


@pytest.mark.parametrize("fee", [0.0, 0.001])
def test_trades_and_metrics_equal_backtesting_py(market, fee):
    candles, signal, frame = market
    ref = reference(frame, signal, units=1, cash=1_000_000, commission=fee)
    run = run_backtest(candles.open, candles.close, signal, costs=Costs(fee),
                       sizing=Sizing(units=1), cash=1_000_000)
    trades = ref["_trades"]
    assert len(run.trades) == len(trades) > 100
    assert np.array_equal(run.trades.entry_bar, trades.EntryBar.to_numpy())
    assert np.array_equal(run.trades.exit_bar, trades.ExitBar.to_numpy())
    assert np.array_equal(run.trades.direction, np.sign(trades.Size.to_numpy()))
    for mine, theirs in ((run.trades.entry_price, trades.EntryPrice),
                         (run.trades.exit_price, trades.ExitPrice),
                         (run.trades.pnl, trades.PnL), (run.trades.return_pct, trades.ReturnPct),
                         (run.trades.fees, trades.Commission),
                         (run.equity, ref["_equity_curve"].Equity)):
        np.testing.assert_allclose(mine, theirs.to_numpy(), rtol=1e-9, atol=1e-9)
    metrics = compute_metrics(run, candles.ts, candles.close, MIN)
    compared = 0
    for name, value in metrics.items():
        if name == "CAGR [%]":  # ours: none over these 4 days (only over a year or more)
            assert np.isnan(value) and np.isfinite(plain(ref[name]))
        elif name in ref and ref[name] is not None:
            expected = plain(ref[name])
            assert value == pytest.approx(expected, rel=1e-9, abs=1e-12, nan_ok=True), name
            compared += 1
    assert compared >= 27  # every other metric backtesting.py reports (commissions if any)


def test_fractional_sizing_matches_the_reference_to_its_unit(market):
    candles, signal, frame = market
    ref = reference(frame, signal, units=0.5, cash=10_000, commission=0.001,
                    backtest=FractionalBacktest, fractional_unit=1e-10)
    run = run_backtest(candles.open, candles.close, signal, costs=Costs(0.001),
                       sizing=Sizing(size=0.5), cash=10_000)
    # the reference rounds each trade down to whole 1e-10 units: agreement to ~1e-10
    np.testing.assert_allclose(run.trades.units, ref["_trades"].Size.abs().to_numpy(),
                               rtol=1e-9)
    np.testing.assert_allclose(run.equity, ref["_equity_curve"].Equity.to_numpy(), rtol=1e-9)


def test_same_close_fills_are_the_references_trade_on_close(market):
    candles, signal, frame = market
    ref = reference(frame, signal, units=1, cash=1_000_000, commission=0.001,
                    trade_on_close=True)
    run = run_backtest(candles.open, candles.close, signal, costs=Costs(0.001),
                       sizing=Sizing(units=1), cash=1_000_000, fill=SAME_CLOSE)
    trades = ref["_trades"]
    assert np.array_equal(run.trades.entry_bar, trades.EntryBar.to_numpy())
    np.testing.assert_allclose(run.trades.entry_price, trades.EntryPrice, rtol=1e-12)
    np.testing.assert_allclose(run.trades.pnl, trades.PnL.to_numpy(), rtol=1e-9, atol=1e-9)
    # the reference books a close fill in the next candle's equity; here it is in its own


def test_fills_costs_and_sizing_by_hand():
    open_ = np.array([100.0, 101.0, 102.0, 104.0, 103.0, 100.0])
    close = np.array([100.5, 101.5, 103.0, 103.5, 101.0, 99.0])
    signal = np.array([1, 1, -1, -1, 0, 0])
    run = run_backtest(open_, close, signal, costs=Costs(0.001, slippage_bps=10),
                       sizing=Sizing(size=0.5), cash=1000.0)
    t = run.trades
    assert t.entry_bar.tolist() == [1, 3] and t.exit_bar.tolist() == [3, 5]
    assert t.direction.tolist() == [1, -1]
    # long filled at the next open plus 10 bps, sold at open 3 minus 10 bps
    assert t.entry_price[0] == pytest.approx(101.0 * 1.001)
    assert t.exit_price[0] == pytest.approx(104.0 * 0.999)
    units0 = 0.5 * 1000 / (101.0 * 1.001 * 1.001)
    assert t.units[0] == pytest.approx(units0)
    pnl0 = units0 * (104.0 * 0.999 - 101.0 * 1.001) - 0.001 * units0 * (101.0 * 1.001
                                                                        + 104.0 * 0.999)
    assert t.pnl[0] == pytest.approx(pnl0)
    # the short opens at open 3 with what the long left, and closes at open 5
    assert t.units[1] == pytest.approx(0.5 * (1000 + pnl0) / (104.0 * 0.999 * 1.001))
    assert t.entry_price[1] == pytest.approx(104.0 * 0.999)
    assert t.exit_price[1] == pytest.approx(100.0 * 1.001)
    assert run.equity[0] == 1000.0  # nothing held at the first close
    mark1 = 1000 - units0 * t.entry_price[0] * 0.001 + units0 * (101.5 - t.entry_price[0])
    assert run.equity[1] == pytest.approx(mark1)
    assert run.equity[5] == pytest.approx(1000 + t.pnl.sum())
    assert run.fill == NEXT_OPEN


def test_a_trade_open_at_the_end_closes_at_the_last_close():
    open_ = np.array([10.0, 11.0, 12.0, 13.0])
    close = np.array([10.5, 11.5, 12.5, 13.5])
    run = run_backtest(open_, close, np.array([0, 1, 1, 1]), costs=Costs(0.0),
                       sizing=Sizing(units=2), cash=100.0)
    assert run.trades.closed_at_end.tolist() == [True]
    assert run.trades.exit_price[0] == 13.5 and run.trades.exit_bar[0] == 3
    assert run.trades.pnl[0] == pytest.approx(2 * (13.5 - 12.0))
    assert run.equity[-1] == pytest.approx(103.0)


def test_no_trade_keeps_the_cash():
    run = run_backtest(np.ones(5), np.ones(5), np.zeros(5), costs=Costs(0.001), cash=50.0)
    assert len(run.trades) == 0 and run.equity.tolist() == [50.0] * 5
    metrics = compute_metrics(run, np.arange(5) * MIN, np.ones(5), MIN)
    assert metrics["Return [%]"] == 0 and metrics["# Trades"] == 0
    assert np.isnan(metrics["Win Rate [%]"]) and metrics["Exposure Time [%]"] == 0


def test_no_look_ahead_cutting_the_data_changes_no_earlier_fill(market):
    candles, signal, _ = market
    full = run_backtest(candles.open, candles.close, signal, costs=Costs(0.001),
                        sizing=Sizing(size=0.3))
    rng = np.random.default_rng(7)
    for cut in rng.integers(200, len(signal) - 1, 8):
        part = run_backtest(candles.open[:cut], candles.close[:cut], signal[:cut],
                            costs=Costs(0.001), sizing=Sizing(size=0.3))
        done = part.trades.exit_bar < cut - 1  # not the one the cut closed at its end
        k = int(done.sum())
        assert np.array_equal(part.trades.entry_bar[:k], full.trades.entry_bar[:k])
        assert np.array_equal(part.trades.exit_bar[:k], full.trades.exit_bar[:k])
        assert np.array_equal(part.trades.pnl[:k], full.trades.pnl[:k])
        opened = len(part.trades)
        assert np.array_equal(part.trades.entry_price[:opened],
                              full.trades.entry_price[:opened])
        last = int(part.trades.entry_bar[-1]) if opened else cut
        assert np.array_equal(part.equity[:last], full.equity[:last])


@pytest.mark.parametrize("kwargs, message", [
    ({"costs": Costs(0.001), "fill": "tomorrow"}, "fill must be"),
    ({"costs": Costs(0.001), "span": (10, 5)}, "span 10..5"),
    ({"costs": Costs(0.001), "cash": 0}, "starting cash"),
])
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(BacktestError, match=message):
        run_backtest(np.ones(8), np.ones(8), np.zeros(8), **kwargs)
    with pytest.raises(BacktestError, match="fee must be"):
        Costs(0.5)
    with pytest.raises(BacktestError, match="size must be"):
        Sizing(size=1.5)


def test_bench_backtest_times_the_engine_beside_the_per_candle_loop(capsys):
    import json

    from workstation.cli import main

    assert main(["bench", "backtest", "--candles", "5000", "--reference-candles", "2000",
                 "--runs", "1", "--json"]) == 0
    (case,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert case["candles"] == 5000 and case["trades"] > 50
    assert case["max_rel_diff"] < 1e-12  # the loop computes the same equity
    assert case["seconds"] > 0 and case["reference_seconds"] > 0
    assert isinstance(case["meets_target"], bool)


@pytest.mark.parametrize("days", [20, 400])
def test_the_cagr_is_backtesting_pys_over_a_year_and_none_under_one(days):
    day = parse_timeframe("1d")
    candles = demo_candles(days + 1, day, seed=4, end_ts=1_700_006_400_000)
    signal = np.ones(len(candles), dtype=np.int8)
    signal[:5] = signal[-10:] = 0  # long from after the reference's first candle, flat at the end
    frame = pd.DataFrame({"Open": candles.open, "High": candles.high, "Low": candles.low,
                          "Close": candles.close.astype(np.float64), "Volume": candles.volume},
                         index=pd.to_datetime(candles.ts, unit="ms"))
    ref = reference(frame, signal, units=1, cash=1_000_000, commission=0.001)
    run = run_backtest(candles.open, candles.close, signal, costs=Costs(0.001),
                       sizing=Sizing(units=1), cash=1_000_000)
    cagr = compute_metrics(run, candles.ts, candles.close, day.ms)["CAGR [%]"]
    if days >= 365:
        assert cagr == pytest.approx(plain(ref["CAGR [%]"]), rel=1e-9)
    else:  # compounded from 20 days into a year it would read as no one earned it
        assert np.isnan(cagr) and np.isfinite(plain(ref["CAGR [%]"]))
