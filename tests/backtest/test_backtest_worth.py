"""What an edge is worth (``backtest.worth``): the mean trade in bps and ticks and the break-even
cost worked by hand, the tick inferred from prices, the share of next opens equal to the
close, and a placebo of shifted copies that equals the engine and ranks foresight first."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.backtest.engine import NEXT_OPEN, SAME_CLOSE, Costs, Sizing, run_backtest
from workstation.backtest.worth import (
    NO_TICK,
    PLACEBO_SHIFTS,
    TICK_INFERRED,
    Tick,
    assess,
    break_even_bps,
    inferred_tick,
    next_open_equals_close,
    outcome,
    raw_fills,
)

TICK = Tick(0.01, TICK_INFERRED)


def flat_candles(n: int, price: float = 100.0):
    """``n`` candles at ``price``: open, high, low and close the same."""
    o = np.full(n, price)
    return o.copy(), o.copy(), o.copy(), o.copy()


def walk(n: int, seed: int):
    """A random walk of ``n`` candles on a 0.01 grid, each opening at the last close."""
    rng = np.random.default_rng(seed)
    close = np.round(2000 + np.cumsum(rng.choice([-0.03, -0.01, 0.0, 0.01, 0.02], n)), 2)
    open_ = np.r_[2000.0, close[:-1]]
    return open_, np.maximum(open_, close) + 0.01, np.minimum(open_, close) - 0.01, close


def test_one_trade_of_2_bps_gross_has_a_break_even_of_1_bps_per_side():
    o, h, low, c = flat_candles(8)
    o[5:] = c[4:] = 100.02  # long from the open of candle 2 to the open of candle 5
    h[0] = 100.01  # the smallest step seen: a tick of 0.01
    signal = np.array([0, 1, 1, 1, 0, 0, 0, 0])
    run = run_backtest(o, c, signal, costs=Costs(0.0))
    w = assess(run, o, h, low, c, signal)
    assert w.trades == 1
    assert w.mean_trade_bps_before == pytest.approx(2.0) == pytest.approx(w.mean_trade_bps)
    assert w.mean_trade_ticks_before == pytest.approx(2.0) and not w.below_one_tick
    # (1 - f) x = (1 + f) e: f = (x - e) / (x + e) = 0.02 / 200.02
    assert w.break_even_bps == pytest.approx(0.02 / 200.02 * 10_000, rel=1e-9)
    assert w.break_even_bps == pytest.approx(1.0, rel=1e-3)
    assert w.return_before == pytest.approx(0.0002)
    at = run_backtest(o, c, signal, costs=Costs(w.break_even_bps / 10_000))
    assert at.equity[-1] == pytest.approx(run.cash, abs=1e-9)  # nothing earned, nothing lost
    # after a fee of 0.5 bps a side: (0.02 - 0.00005 * 200.02) / 100, in bps
    paid = assess(run_backtest(o, c, signal, costs=Costs(0.00005)), o, h, low, c, signal)
    assert paid.mean_trade_bps == pytest.approx((0.02 - 0.00005 * 200.02) / 100 * 10_000)
    assert paid.mean_trade_bps_before == pytest.approx(2.0)  # the same trade without costs


def test_slippage_leaves_the_trade_before_costs_at_the_raw_fills():
    o, h, low, c = flat_candles(8)
    o[5:] = c[4:] = 100.02
    signal = np.array([0, 1, 1, 1, 0, 0, 0, 0])
    run = run_backtest(o, c, signal, costs=Costs(0.001, 3.0))
    entry, exit_ = raw_fills(run, o, c)
    assert (entry.tolist(), exit_.tolist()) == ([100.0], [100.02])
    assert run.trades.entry_price[0] > 100.0  # the engine's fill, after slippage
    w = assess(run, o, h, low, c, signal)
    assert w.mean_trade_bps_before == pytest.approx(2.0)
    assert w.mean_trade_bps == pytest.approx(run.trades.return_pct[0] * 10_000)


def test_a_mean_trade_under_one_tick_is_flagged():
    # a long from open 2 to open 3 that gains a tick, a short from open 5 to open 7 that
    # loses one
    o = np.array([100.0, 100.0, 100.0, 100.01, 100.01, 100.01, 100.01, 100.02, 100.02, 100.02,
                  100.02, 100.02])
    c = np.r_[o[1:], o[-1]]
    h, low = np.maximum(o, c), np.minimum(o, c)
    signal = np.array([0, 1, 0, 0, -1, -1, 0, 0, 0, 0, 0, 0])
    run = run_backtest(o, c, signal, costs=Costs(0.0))
    w = assess(run, o, h, low, c, signal)
    assert w.trades == 2
    assert w.mean_trade_ticks_before == pytest.approx(0.0, abs=1e-6) and w.below_one_tick
    assert w.break_even_bps is None  # it earns nothing even without costs: "none"


def test_the_break_even_is_none_for_losers_nan_without_trades_and_exact_for_fixed_units():
    e, x, d = np.array([100.0, 200.0]), np.array([101.0, 199.0]), np.array([1.0, -1.0])
    assert break_even_bps(d, e, x, Sizing(units=3)) == pytest.approx(2 / 600 * 10_000)
    assert break_even_bps(-d, e, x, Sizing()) is None
    assert np.isnan(break_even_bps(d[:0], e[:0], x[:0], Sizing()))
    half = break_even_bps(d, e, x, Sizing(size=0.5))
    assert half is not None
    growth = 1 + 0.5 * (d * (x - e) - half / 1e4 * (e + x)) / (e * (1 + half / 1e4))
    assert np.prod(growth) == pytest.approx(1.0, abs=1e-12)


def test_the_tick_is_the_smallest_price_step_on_a_grid_else_unknown():
    prices = np.array([2000.0, 2000.3, 2000.1]) + 0.05  # float noise off the 0.05 grid
    tick = inferred_tick(prices, np.array([2000.0]))
    assert (tick.size, tick.source) == (0.05, TICK_INFERRED)
    assert inferred_tick(np.array([10.0, 10.5, 12.0])).size == 0.5
    rough = inferred_tick(np.random.default_rng(1).uniform(1990, 2010, 500))
    assert not rough.known and rough.source == NO_TICK
    assert not inferred_tick(np.full(4, 7.0)).known  # one price: no step


def test_the_tick_the_exchange_gave_at_fetch_is_used_before_an_inferred_one(tmp_path):
    from workstation.backtest.worth import recorded_tick
    from workstation.market.cache import CandleCache

    cache_file = tmp_path / "candles.sqlite"
    assert recorded_tick(cache_file, "binance", "ETH/USDT") is None  # no cache yet
    with CandleCache(cache_file) as cache:
        assert cache.tick("binance", "ETH/USDT") is None
        cache.put_tick("binance", "ETH/USDT", 0.001, "binance price precision, at fetch")
    given = recorded_tick(cache_file, "binance", "ETH/USDT")
    assert given == Tick(0.001, "binance price precision, at fetch")
    assert recorded_tick(cache_file, "kraken", "ETH/USDT") is None
    o, h, low, c = walk(300, seed=2)  # prices on a 0.01 grid
    signal = np.zeros(300, dtype=np.int8)
    signal[10:40] = 1
    run = run_backtest(o, c, signal, costs=Costs(0.0))
    inferred, exchange = assess(run, o, h, low, c, signal), assess(run, o, h, low, c, signal,
                                                                    given)
    assert inferred.tick == TICK and exchange.tick == given
    assert exchange.mean_trade_ticks_before == pytest.approx(
        10 * inferred.mean_trade_ticks_before)


def test_the_share_of_next_opens_that_equal_the_close_on_a_constructed_series():
    close = np.array([10.00, 11.00, 12.00, 13.00, 14.00])
    open_ = np.array([9.99, 10.00, 11.01, 12.004, 13.02])
    # next opens: 10.00 = 10.00, 11.01 != 11.00, 12.004 = 12.00 to the tick, 13.02 != 13.00
    assert next_open_equals_close(open_, close, (0, 5), TICK) == 0.5
    assert next_open_equals_close(open_, close, (0, 5), Tick(float("nan"), NO_TICK)) == 0.25
    assert next_open_equals_close(open_, close, (2, 5), TICK) == 0.5  # 12.004, 13.02
    assert np.isnan(next_open_equals_close(open_, close, (4, 5), TICK))


@pytest.mark.parametrize("fill", [NEXT_OPEN, SAME_CLOSE])
@pytest.mark.parametrize("sizing", [Sizing(), Sizing(size=0.4), Sizing(units=2.0)])
def test_the_fast_backtest_of_the_placebo_equals_the_engine(fill, sizing):
    o, _, _, c = walk(5000, seed=3)
    rng = np.random.default_rng(4)
    signal = np.repeat(rng.choice([-1, 0, 1], 250), 20)
    span, costs = (37, 4990), Costs(0.0004, 1.5)
    a, b = span
    for shift in (0, 1, 777):  # shift 0: the result itself; others: the engine on the copy
        copy = signal.copy()
        copy[a:b] = np.roll(signal[a:b], shift)
        run = run_backtest(o, c, copy, costs=costs, sizing=sizing, fill=fill, span=span)
        fast, _ = outcome(o[a:b], c[a:b], copy[a:b], costs=costs, sizing=sizing, fill=fill,
                          cash=run.cash)
        assert fast == pytest.approx(run.equity[-1] / run.cash - 1, abs=1e-9), shift


def test_the_placebo_ranks_foresight_first_and_a_coin_near_the_middle():
    o, h, low, c = walk(20_000, seed=5)
    costs = Costs(0.0001)
    # held during candle i + 1, from its open to the next: the sign of that move, known ahead
    foresight = np.sign(np.r_[o[2:] - o[1:-1], 0.0, 0.0]).astype(np.int8)
    run = run_backtest(o, c, foresight, costs=costs)
    p = assess(run, o, h, low, c, foresight).placebo
    assert len(p.returns) == PLACEBO_SHIFTS and p.rank == PLACEBO_SHIFTS + 1 and p.beaten == 1
    longest = int((run.trades.exit_bar - run.trades.entry_bar).max())
    assert p.offsets.min() >= longest and p.offsets.max() <= len(o) - longest
    assert p.actual == pytest.approx(run.equity[-1] / run.cash - 1)
    # costs that ruin every copy and the result itself: still ranked by how far each fell
    ruined = assess(run_backtest(o, c, foresight, costs=Costs(0.005)), o, h, low, c,
                    foresight).placebo
    assert ruined.actual == -1.0 and np.all(ruined.returns == -1.0)
    assert ruined.rank == PLACEBO_SHIFTS + 1 and np.all(ruined.scores < ruined.score)
    coin = np.repeat(np.random.default_rng(6).choice([-1, 1], 1000), 20)
    run = run_backtest(o, c, coin, costs=costs)
    again = assess(run, o, h, low, c, coin).placebo
    assert 50 <= again.rank <= 150, again.rank
    assert again.median <= again.p95
    assert assess(run, o, h, low, c, coin).placebo.offsets.tolist() == again.offsets.tolist()


def test_no_placebo_without_a_trade_or_for_a_trade_over_the_whole_span():
    o, h, low, c = walk(300, seed=7)
    for signal in (np.zeros(300, dtype=np.int8), np.ones(300, dtype=np.int8)):
        run = run_backtest(o, c, signal, costs=Costs(0.001))
        p = assess(run, o, h, low, c, signal).placebo
        assert len(p.returns) == 0 and np.isnan(p.beaten) and np.isnan(p.median)
