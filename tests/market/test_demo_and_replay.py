"""The demo market (seeded, realistic, labelled DEMO) and the ticks of a forming candle."""

import asyncio
import math

import numpy as np

from workstation.market import demo
from workstation.market.candles import Candles
from workstation.market.demo import DemoMarket, demo_candles
from workstation.market.replay import forming_ticks
from workstation.market.sources import load_series
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe


def test_demo_is_seeded_valid_and_labelled():
    a = demo_candles(30_000, ONE_MINUTE, seed=11, end_ts=10**12)
    b = demo_candles(30_000, ONE_MINUTE, seed=11, end_ts=10**12)
    c = demo_candles(30_000, ONE_MINUTE, seed=12, end_ts=10**12)
    assert all(np.array_equal(x, y) for x, y in zip(a.columns(), b.columns()))
    assert not np.array_equal(a.close, c.close)
    # from_arrays validated them: sorted, on grid, high/low consistent, positive
    assert a.ts[-1] + 60_000 <= 10**12 and np.all(np.diff(a.ts) == 60_000)
    _, key = load_series("demo", None, ONE_MINUTE, max_candles=100)
    assert key.is_demo and "DEMO" in key.provenance


def test_demo_has_volatility_clustering_and_volume_seasonality():
    c = demo_candles(100_000, ONE_MINUTE, seed=5, end_ts=10**12 - 10**12 % 86_400_000)
    r = np.diff(np.log(c.close))
    absr = np.abs(r - r.mean())
    clustering = np.corrcoef(absr[1:], absr[:-1])[0, 1]
    assert clustering > 0.05, clustering  # i.i.d. returns would give ~0
    hour = (c.ts % 86_400_000) // 3_600_000
    by_hour = np.array([c.volume[hour == h].mean() for h in range(24)])
    assert by_hour.max() / by_hour.min() > 1.8


def test_demo_garch_variance_matches_the_candle_by_candle_recursion():
    market = DemoMarket(ONE_MINUTE, anchor_ms=10**12, seed=4)
    chunk = market._chunk_returns(0)
    rng = np.random.default_rng([4, 0, 0])
    z = rng.standard_normal(demo._CHUNK)
    w = market._base_var * (1 - demo._A - demo._B)
    variance, shock = market._base_var, 0.0
    for i in range(demo._CHUNK):
        if i:
            variance = w + demo._A * shock * shock + demo._B * variance
        assert math.isclose(chunk.variances[i], variance, rel_tol=1e-12)
        shock = math.sqrt(variance) * z[i]


def test_demo_stream_forms_then_closes():
    market = DemoMarket(ONE_MINUTE, anchor_ms=0, seed=1, history=0)

    async def take(n):
        out = []
        async for update in market.stream(0, speed=0, ticks_per_candle=3):
            out.append(update)
            if len(out) == n:
                return out

    updates = asyncio.run(take(6))
    assert [u.closed for u in updates] == [False, False, True] * 2
    assert [u.ts for u in updates] == [0, 0, 0, 60_000, 60_000, 60_000]
    series = Candles(ONE_MINUTE)
    for u in updates:
        series.apply(u)
    assert len(series) == 2 and series.last_closed


def test_forming_ticks_rebuild_the_series_exactly():
    source = demo_candles(50, parse_timeframe("5m"), seed=2, end_ts=10**12)
    rebuilt = Candles(parse_timeframe("5m"))
    kinds = [rebuilt.apply(update) for i in range(len(source))
             for update in forming_ticks(source.row(i)._replace(closed=True), 4)]
    assert kinds.count("append") == 50 and kinds.count("update") == 150
    assert all(np.array_equal(x, y) for x, y in zip(rebuilt.columns(), source.columns()))
