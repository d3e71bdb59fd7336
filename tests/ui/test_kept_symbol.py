"""A chart not linked by symbol keeps its symbol when chart 1 switches, live on a feed of its
own: the window on a loopback fake Binance through qasync, a real ccxt client for each feed."""

import argparse
import asyncio
import time

import numpy as np
import qasync

from workstation.market.retry import RetryPolicy
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.ui.app import run_window
from workstation.viewmodel.chart import view_limits

from conftest import wait_for
from fake_exchange import FakeBinance

MIN = 60_000
FAST = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.05)


def on(window, symbol: str) -> bool:
    """Whether chart 1 shows ``symbol`` live from the fake Binance."""
    key = window.live.key
    return (key is not None and (key.source, key.symbol) == ("binance", symbol)
            and window.live.state == "live" and len(window.live.candles) > 0)


def test_a_chart_that_keeps_its_symbol_stays_live_and_rejoins_when_chart_1_comes_back(qapp):
    seen: dict = {}
    now = MIN * (int(time.time() * 1000) // MIN) + 20_000

    async def session(window):
        area = window.chart_area
        async with FakeBinance(first_ms=now - 5000 * MIN, now_ms=now) as fake:
            window.live.feed_settings.update(
                urls=fake.ccxt_urls(), options=fake.ccxt_options(), retry=FAST,
                config={"enableRateLimit": False, "timeout_on_exit": 0}, clock=fake.clock)
            area.set_layout("side_by_side")
            await window.open_source("binance", "ETH/USDT", "1m")
            await wait_for(lambda: on(window, "ETH/USDT"))
            area.toggle_link("symbol")  # off: chart 2 keeps ETH/USDT
            await window.open_source("binance", "BTC/USDT", "1m")
            await wait_for(lambda: on(window, "BTC/USDT"))
            kept = SeriesKey("binance", "ETH/USDT", ONE_MINUTE)
            await wait_for(lambda: kept in area.feeds and area.series_key(1) is not None)
            held = area.feeds[kept]
            await wait_for(lambda: held.state == "live")
            seen["key"] = area.series_key(1)
            seen["note"] = area.charts[1].title_label.text()
            await asyncio.sleep(0.05)  # a frame: the kept chart joins chart 1's time
            seen["centres"] = [sum(c.time_range()) / 2 for c in area.shown()]
            view = area.charts[1].view_model
            seen["at_limit"] = view.x_range()[1] == view_limits(len(view.time_map)).x_max
            before = area.charts[1].candles
            newest = int(held.data.candles.ts[-1])
            await fake.advance(16 * MIN)  # ETH's own feed closes candles: the 15m chart moves
            await wait_for(lambda: int(held.data.candles.ts[-1]) >= newest + 16 * MIN)
            quarter = 15 * MIN
            await wait_for(lambda: int(area.charts[1].candles.ts[-1])
                           == int(held.data.candles.ts[-1]) // quarter * quarter)
            shown = area.charts[1].candles
            seen["same_object"] = shown is before
            seen["shown"] = shown.slice(0, len(shown))
            seen["base"] = held.data.candles.slice(0, len(held.data.candles))
            seen["btc_close"] = float(window.live.candles.close[-1])
            area.activate(1)  # marks on chart 2 are ETH/USDT 15m ones
            seen["target"] = window.annotations.series
            await window.open_source("binance", "ETH/USDT", "1m")  # chart 1 comes back
            await wait_for(lambda: on(window, "ETH/USDT"))
            seen["after"] = (dict(area.kept), dict(area.feeds),
                             area.charts[1].candles is area.stack.candles(parse_timeframe("15m")))
            await wait_for(lambda: not held.data.running)
        return 0

    assert qasync.run(run_window(argparse.Namespace(source="demo", symbol=None, timeframe="1m",
                                                    speed=1.0), on_shown=session)) == 0
    assert seen["key"] == SeriesKey("binance", "ETH/USDT", parse_timeframe("15m"))
    first, kept_centre = seen["centres"]
    # at chart 1's time (which may since have scrolled by a candle) as near as its right
    # limit lets it, not at its own live edge
    assert seen["at_limit"] or abs(kept_centre - first) <= 15 * MIN
    assert "not live" not in seen["note"] and "ETH/USDT" in seen["note"]
    shown, base = seen["shown"], seen["base"]
    want = base.resample(parse_timeframe("15m"))  # the kept chart is its own feed's resample
    assert np.array_equal(shown.ts[-5:], want.ts[-5:])
    assert np.allclose(shown.close[-5:], want.close[-5:])
    assert shown.close[-1] != seen["btc_close"]
    assert seen["target"][0].symbol == "ETH/USDT" and seen["target"][1] == "15m"
    assert seen["after"] == ({}, {}, True)
