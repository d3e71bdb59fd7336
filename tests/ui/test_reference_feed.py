"""Where live mode's reference asset comes from (``ui.training.reference_feed``): a real ccxt
client streaming it from a loopback fake Binance beside a live chart, the candle cache
(final) beside a static one, and a one-line failure for a symbol that cannot be followed."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import qasync

from workstation.market.cache import CandleCache
from workstation.market.demo import demo_candles
from workstation.market.retry import RetryPolicy
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.ui.training.reference_feed import ReferenceFeed

from conftest import wait_for
from fake_exchange import FakeBinance

MIN = 60_000
FAST = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.05)
ETH = SeriesKey("binance", "ETH/USDT", ONE_MINUTE)


def settings(fake) -> dict:
    return dict(urls=fake.ccxt_urls(), options=fake.ccxt_options(), retry=FAST,
                config={"enableRateLimit": False, "timeout_on_exit": 0}, clock=fake.clock)


def test_the_reference_streams_from_the_exchange_and_grows_as_it_closes(qapp, paths):
    seen: dict = {}

    async def main():
        now = MIN * (int(time.time() * 1000) // MIN) + 30_000
        async with FakeBinance(first_ms=now - 3000 * MIN, now_ms=now) as fake:
            feed = ReferenceFeed(paths.candle_cache)
            changed = []
            feed.changed.connect(lambda: changed.append(1))
            feed.start("btc/usdt", ETH, True, settings(fake))
            await wait_for(lambda: feed.data.state == "live" and feed.candles(None)[0] is not None)
            reference, final = feed.candles(None)
            seen["first"] = (reference.slice(0, len(reference)), final)
            newest = int(reference.ts[-1 if reference.last_closed else -2])
            await fake.advance(2 * MIN)
            await wait_for(lambda: int(feed.candles(None)[0].ts[-1]) >= newest + 2 * MIN)
            seen["changed"] = len(changed)
            seen["want"] = fake.series("BTCUSDT", "1m", int(reference.ts[0]), newest)
            await feed.stop()
            seen["mode"] = feed.mode
        return 0

    assert qasync.run(main()) == 0
    reference, final = seen["first"]
    assert not final and reference.timeframe.name == "1m"
    want = seen["want"]
    closed = reference.slice(0, len(reference) - (0 if reference.last_closed else 1))
    assert np.array_equal(closed.ts, want[:, 0].astype(np.int64))
    assert np.allclose(closed.close, want[:, 4])  # BTC/USDT's own candles, not ETH/USDT's
    assert seen["changed"] >= 2 and seen["mode"] == "closed"
    with CandleCache(paths.candle_cache) as cache:  # its closed candles are cached too
        assert len(cache.load(SeriesKey("binance", "BTC/USDT", ONE_MINUTE))) >= len(want)


def test_beside_a_static_series_the_reference_comes_from_the_cache_and_is_final(qapp, paths):
    btc = demo_candles(500, ONE_MINUTE, seed=2, end_ts=1_700_000_000_000)
    with CandleCache(paths.candle_cache) as cache:
        cache.put(SeriesKey("binance", "BTC/USDT", ONE_MINUTE), btc)
        five_minutes = parse_timeframe("5m")
        cache.put(SeriesKey("binance", "BTC/USDT", five_minutes), btc.resample(five_minutes))
    seen: dict = {}

    async def main():
        feed = ReferenceFeed(paths.candle_cache)
        feed.start("BTC/USDT", ETH, False)
        await wait_for(lambda: feed.candles(None)[0] is not None)
        seen["got"] = feed.candles(None)
        opening = feed._opening
        feed.start("BTC/USDT", ETH, False)  # the same again: nothing reopens
        seen["same"] = feed._opening is opening
        # Chart 1 on 5m now: its 1m candles are never handed out beside the 5m series.
        feed.start("BTC/USDT", SeriesKey("binance", "ETH/USDT", parse_timeframe("5m")), False)
        seen["stale"] = feed.candles(None)
        await wait_for(lambda: feed.data.key.timeframe.name == "5m")
        seen["five"] = feed.candles(None)
        failures = []
        feed.failed.connect(failures.append)
        feed.start("NOPE/USDT", ETH, False)  # not in the cache: said in one line
        await wait_for(lambda: failures)
        seen["failures"] = failures
        await feed.stop()
        return 0

    assert qasync.run(main()) == 0
    reference, final = seen["got"]
    assert final and np.array_equal(reference.close, btc.close)
    assert seen["same"] and seen["stale"] == (None, False)
    five, final = seen["five"]
    assert final and five.timeframe.name == "5m"
    assert np.array_equal(five.ts, btc.resample(parse_timeframe("5m")).ts[:len(five)])
    assert len(five) >= 99
    (failure,) = seen["failures"]
    assert failure.startswith("the reference asset NOPE/USDT could not be followed: ")
    assert "\n" not in failure


def test_starts_in_a_row_follow_the_last_and_a_close_leaves_no_feed_running(qapp, paths):
    seen: dict = {}

    async def main():
        grid = 5 * MIN * (int(time.time() * 1000) // (5 * MIN))  # on the 1m and 5m grids
        async with FakeBinance(first_ms=grid - 3000 * MIN, now_ms=grid + 30_000) as fake:
            feed = ReferenceFeed(paths.candle_cache)
            feed.start("BTC/USDT", ETH, True, settings(fake))
            await wait_for(lambda: feed.data.state == "live")
            # the chart switches twice while the first feed is still closing: the last wins
            feed.start("BTC/USDT", ETH, False)
            five = SeriesKey("binance", "ETH/USDT", parse_timeframe("5m"))
            feed.start("BTC/USDT", five, True, settings(fake))
            await wait_for(lambda: feed.candles(None)[0] is not None)
            seen["last"] = (feed.data.spec, feed.data.key, feed.candles(None)[1])
            feed.start("BTC/USDT", ETH, True, settings(fake))
            await asyncio.sleep(0)
            feed.close()  # while that open waits for the 5m feed to close
            await asyncio.sleep(0.5)
            seen["after_close"] = (feed.mode, feed.data.running)
            await feed.stop()
        return 0

    assert qasync.run(main()) == 0
    spec, key, final = seen["last"]
    assert (spec, key, final) == ("binance", SeriesKey("binance", "BTC/USDT",
                                                       parse_timeframe("5m")), False)
    assert seen["after_close"] == ("closed", False)
