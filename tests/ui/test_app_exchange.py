"""The window on a (loopback fake) exchange through qasync: history, live candles drawn as
they form and close, closed candles cached, clean close; and the offline banner when the
exchange cannot be reached (the source is kept, never switched)."""

import argparse
import json
import socket
import time

import qasync

from workstation.market.cache import CandleCache
from workstation.market.retry import RetryPolicy
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.paths import app_paths
from workstation.ui.app import run_window

from conftest import wait_for
from fake_exchange import FakeBinance

MIN = 60_000
FAST = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.05)


def on_binance(window) -> bool:
    return window.live.key is not None and window.live.key.source == "binance"


def test_live_exchange_candles_reach_the_chart_and_the_cache(qapp):
    seen = {}
    now = int(time.time() * 1000)

    async def session(window):
        async with FakeBinance(first_ms=now - 5000 * MIN, now_ms=now) as fake:
            window.live.feed_settings.update(
                urls=fake.ccxt_urls(), options=fake.ccxt_options(), retry=FAST,
                config={"enableRateLimit": False, "timeout_on_exit": 0}, clock=fake.clock)
            await window.open_source("binance", "ETH/USDT", "1m")
            await wait_for(lambda: on_binance(window)
                           and window.live.state == "live" and len(window.live.candles))
            seen["history"] = len(window.live.candles)
            seen["badge"] = window.data_bar.demo_shown()
            first_last = int(window.live.candles.ts[-1])
            await fake.advance(2 * MIN)
            await wait_for(lambda: int(window.live.candles.ts[-1]) >= first_last + 2 * MIN)
            seen["closed_added"] = window.live.candles.last_closed is False
            seen["chart_len"] = len(window.chart.candles)
            seen["live_len"] = len(window.live.candles)
            await window.live.stop()
        return 0

    assert qasync.run(run_window(argparse.Namespace(source="demo", symbol=None, timeframe="1m",
                                                    speed=1.0), on_shown=session)) == 0
    assert seen["history"] >= 999 and seen["badge"] is False
    assert seen["chart_len"] == seen["live_len"]
    with CandleCache(app_paths().candle_cache) as cache:
        cached = cache.load(SeriesKey("binance", "ETH/USDT", ONE_MINUTE))
        tick = cache.tick("binance", "ETH/USDT")  # the market's price tick, for backtests
    assert len(cached) >= seen["history"] + 1  # the candle that closed live was stored
    assert tick is not None and tick[0] == 0.01


def test_unreachable_exchange_shows_the_offline_banner_and_keeps_the_source(qapp):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    seen = {}

    async def session(window):
        await window.open_source("binance", "ETH/USDT", "1m")
        await wait_for(lambda: on_binance(window)
                       and window.live.state == "offline")
        seen["banner"] = window.offline.isVisible()
        seen["text"] = window.offline.message.text()
        seen["key"] = window.live.key
        window.offline.buttons["demo"].click()
        await wait_for(lambda: window.live.key is not None and window.live.key.is_demo)
        seen["after"] = (window.offline.isVisible(), window.data_bar.demo_shown())
        return 0

    url = f"http://127.0.0.1:{port}/api/v3"
    args = argparse.Namespace(source="demo", symbol=None, timeframe="1m", speed=1.0,
                              ccxt_urls=json.dumps({"public": url, "private": url}),
                              ccxt_options=json.dumps({"fetchMarkets": {"types": ["spot"]}}))

    async def with_fast_retry(window):
        window.live.feed_settings["retry"] = FAST
        return await session(window)

    assert qasync.run(run_window(args, on_shown=with_fast_retry)) == 0
    assert seen["banner"] and "Offline" in seen["text"] and "binance" in seen["text"]
    assert seen["key"].source == "binance"  # still the exchange: nothing switched by itself
    assert seen["after"] == (False, True)  # the user chose the demo market
