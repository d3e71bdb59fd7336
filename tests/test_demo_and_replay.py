"""The demo market (seeded, realistic, labelled DEMO) and replay of a series as a live feed."""

import asyncio

import numpy as np

from workstation.market.candles import Candles
from workstation.market.demo import DemoMarket, demo_candles
from workstation.market.replay import replay
from workstation.market.sources import load_series


def test_demo_is_seeded_valid_and_labelled():
    a = demo_candles(30_000, "1m", seed=11, end_ts=10**12)
    b = demo_candles(30_000, "1m", seed=11, end_ts=10**12)
    c = demo_candles(30_000, "1m", seed=12, end_ts=10**12)
    assert all(np.array_equal(x, y) for x, y in zip(a.columns(), b.columns()))
    assert not np.array_equal(a.close, c.close)
    # from_arrays validated them: sorted, on grid, high/low consistent, positive
    assert a.ts[-1] + 60_000 <= 10**12 and np.all(np.diff(a.ts) == 60_000)
    _, key = load_series("demo", None, "1m", max_candles=100)
    assert key.is_demo and "DEMO" in key.provenance


def test_demo_has_volatility_clustering_and_volume_seasonality():
    c = demo_candles(100_000, "1m", seed=5, end_ts=10**12 - 10**12 % 86_400_000)
    r = np.diff(np.log(c.close))
    absr = np.abs(r - r.mean())
    clustering = np.corrcoef(absr[1:], absr[:-1])[0, 1]
    assert clustering > 0.05, clustering  # i.i.d. returns would give ~0
    hour = (c.ts % 86_400_000) // 3_600_000
    by_hour = np.array([c.volume[hour == h].mean() for h in range(24)])
    assert by_hour.max() / by_hour.min() > 1.8


def test_demo_stream_forms_then_closes():
    market = DemoMarket("1m", seed=1)

    async def take(n):
        out = []
        async for update in market.stream(0, speed=0, ticks_per_candle=3):
            out.append(update)
            if len(out) == n:
                return out

    updates = asyncio.run(take(6))
    assert [u.closed for u in updates] == [False, False, True] * 2
    assert [u.ts for u in updates] == [0, 0, 0, 60_000, 60_000, 60_000]
    series = Candles("1m")
    for u in updates:
        series.apply(u)
    assert len(series) == 2 and series.last_closed


def test_replay_rebuilds_the_series_exactly():
    source = demo_candles(50, "5m", seed=2, end_ts=10**12)

    async def collect():
        rebuilt = Candles("5m")
        kinds = []
        async for update in replay(source, speed=0, ticks_per_candle=4):
            kinds.append(rebuilt.apply(update))
        return rebuilt, kinds

    rebuilt, kinds = asyncio.run(collect())
    assert kinds.count("append") == 50 and kinds.count("update") == 150
    assert all(np.array_equal(x, y) for x, y in zip(rebuilt.columns(), source.columns()))


def test_replay_speed_and_stop():
    source = demo_candles(1000, "1m", seed=2, end_ts=10**12)

    async def run():
        stop = asyncio.Event()
        got = []
        loop = asyncio.get_running_loop()
        start = loop.time()
        async for update in replay(source, speed=600.0, ticks_per_candle=2, stop=stop):
            got.append(update)
            if len(got) == 4:
                stop.set()
        return got, loop.time() - start

    got, elapsed = asyncio.run(run())
    assert len(got) == 4
    assert 0.2 <= elapsed < 1.5  # 600x: 2 ticks a candle -> 0.05 s a tick, 5 sleeps before stop
