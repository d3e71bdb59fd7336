"""Paging styles through the real ccxt clients and loopback fakes (``fake_exchanges``): the
whole range is fetched across a gap longer than a page and from a ``since`` before the
listing; coverage is only what the exchange answered for; stored values equal those served."""

import asyncio
import time
from types import SimpleNamespace

import ccxt
import numpy as np
import pytest

from workstation.errors import WorkstationError
from workstation.market import paging
from workstation.market.ccxt_feed import CcxtFeed
from workstation.market.timeframes import parse_timeframe

from fake_exchanges import FakeBinanceGaps, FakeKraken, FakeOKX

MIN = 60_000


def now_floor() -> tuple[int, int]:
    now = int(time.time() * 1000)
    return now, now - now % MIN


def feed_for(fake, exchange, symbol, timeframe="1m") -> CcxtFeed:
    return CcxtFeed(exchange, symbol, parse_timeframe(timeframe), urls=fake.ccxt_urls(),
                    options=fake.ccxt_options(), config={"enableRateLimit": False},
                    clock=fake.clock)


def assert_served(candles, expected):
    assert len(candles) == len(expected)
    for got, want in zip(candles.columns(), expected.T):
        assert np.array_equal(got, want)


def rel(spans, base):
    return [((s - base) // MIN, (e - base) // MIN) for s, e in spans]


# -- start-based (Binance) -----------------------------------------------------------------
def test_start_based_paging_crosses_a_long_gap_and_a_since_before_listing():
    async def go():
        now, nf = now_floor()
        listed = nf - 4000 * MIN
        gap = (nf - 3000 * MIN, nf - 1801 * MIN)  # 1200 candles: longer than a 1000 page
        async with (FakeBinanceGaps(first_ms=listed, now_ms=now, gaps=[gap]) as fake,
                    feed_for(fake, "binance", "ETH/USDT") as feed):
            assert (feed.paging, feed.page_limit) == (paging.START, 1000)
            since = listed - 1500 * MIN
            history = await feed.fetch_range(since, nf)
            assert_served(history.candles, fake.series("1m", since, nf))
            assert rel(history.covered, nf) == [(-5500, -1)]  # all closed slots
            assert history.notes == {}
            assert len(fake.candle_requests) == 3  # the gap costs nothing
    asyncio.run(go())


# -- fixed windows (OKX) ---------------------------------------------------------------------
@pytest.mark.parametrize("list_time", [True, False])
def test_fixed_windows_move_on_past_empty_windows_to_the_requested_end(list_time):
    async def go():
        now, nf = now_floor()
        listed = nf - 2000 * MIN
        gap = (nf - 1500 * MIN, nf - 851 * MIN)  # 650 candles: more than two 300 windows
        async with FakeOKX(first_ms=listed, now_ms=now, gaps=[gap],
                           list_time=list_time) as fake, feed_for(fake, "okx", "ETH/USDT") as feed:
            assert (feed.paging, feed.page_limit) == (paging.WINDOW, 300)
            assert feed.listed_ms == (listed if list_time else None)
            since = listed - 700 * MIN  # before the listing
            history = await feed.fetch_range(since, nf)
            assert_served(history.candles, fake.series("1m", since, nf))
            assert rel(history.covered, nf) == [(-2700, -1)]
            windows = [int(q["before"]) + 1 for q in fake.candle_requests]
            assert windows == sorted(windows) and len(windows) == len(set(windows))
            if list_time:  # the listing is known: nothing is asked for before it
                assert "listed" in history.notes
                assert min(windows) == listed and len(windows) == 7
            else:  # window by window from since, empty ones included
                assert min(windows) == since and len(windows) == 10
    asyncio.run(go())


def test_a_window_fetch_after_the_market_has_no_candles_covers_only_what_was_answered():
    async def go():
        now, nf = now_floor()
        async with (FakeOKX(first_ms=nf - 100 * MIN, now_ms=now, list_time=False) as fake,
                    feed_for(fake, "okx", "ETH/USDT") as feed):
            history = await feed.fetch_range(nf - 400 * MIN, nf - 350 * MIN)
            assert len(history.candles) == 0  # before the listing: confirmed empty
            assert rel(history.covered, nf) == [(-400, -350)]
    asyncio.run(go())


# -- recent only (Kraken) ----------------------------------------------------------------------
def test_recent_only_history_stores_what_it_has_and_says_so():
    async def go():
        now, nf = now_floor()
        gap = (nf - 1000 * MIN, nf - 201 * MIN)  # 800 candles: longer than its 720 page
        async with (FakeKraken(first_ms=nf - 50_000 * MIN, now_ms=now, gaps=[gap]) as fake,
                    feed_for(fake, "kraken", "ETH/USD") as feed):
            assert (feed.paging, feed.page_limit) == (paging.RECENT, 720)
            history = await feed.fetch_range(nf - 3000 * MIN, nf)
            oldest = fake.kept(MIN)[0]
            assert_served(history.candles, fake.series("1m", oldest, nf))
            assert len(history.candles) == 719  # the newest 720 but the forming one
            assert rel(history.covered, nf) == [((oldest - nf) // MIN, -1)]
            assert history.served_from == oldest
            assert "serves only its newest 720 candles" in history.notes["recent"]

            # a request wholly older than what it serves: nothing stored, nothing covered
            old = await feed.fetch_range(nf - 3000 * MIN, nf - 2500 * MIN)
            assert len(old.candles) == 0 and old.covered == []
            assert "recent" in old.notes
    asyncio.run(go())


def test_recent_only_history_of_a_young_market_is_complete():
    async def go():
        now, nf = now_floor()
        listed = nf - 300 * MIN  # listed after since, within the newest 720
        async with (FakeKraken(first_ms=listed, now_ms=now) as fake,
                    feed_for(fake, "kraken", "ETH/USD") as feed):
            history = await feed.fetch_range(nf - 1000 * MIN, nf)
            assert_served(history.candles, fake.series("1m", listed, nf))
            assert rel(history.covered, nf) == [(-1000, -1)]
            assert history.notes == {}
    asyncio.run(go())


# -- collect on its own ----------------------------------------------------------------------
def test_collect_covers_what_each_style_justifies():
    tf = MIN
    have = [t * tf for t in range(0, 10)] + [t * tf for t in range(30, 40)]

    def page_for(style):
        async def page(since, limit):
            if style == paging.WINDOW:
                return [[t, 1, 1, 1, 1, 1] for t in have if since <= t < since + limit * tf]
            return [[t, 1, 1, 1, 1, 1] for t in have if t >= since][:limit]
        return page

    async def go():
        for style in (paging.START, paging.WINDOW):
            got = await paging.collect(0, 49 * tf, tf, page_for(style), style=style,
                                       limit_at=lambda since: 5)
            assert [r[0] for r in got.rows] == have
            assert got.covered == [(0, 49 * tf)]
        # a start-based exchange that fails to answer is not covered past its last answer
        calls = []

        async def failing(since, limit):
            calls.append(since)
            if len(calls) > 1:
                raise ccxt.NetworkError("down")
            return [[0, 1, 1, 1, 1, 1]]
        with pytest.raises(ccxt.NetworkError):
            await paging.collect(0, 49 * tf, tf, failing, limit_at=lambda since: 5)
    asyncio.run(go())


# -- page sizes and timeframes from the exchange ---------------------------------------------
def test_page_size_comes_from_ccxt_features_with_a_bounded_default():
    spot = {"type": "spot", "spot": True}
    assert paging.page_limit(ccxt.okx(), spot) == 300
    assert paging.page_limit(ccxt.kraken(), spot) == 720
    assert paging.page_limit(ccxt.bybit(), {"type": "swap", "subType": "linear"}) == 1000

    unknown = SimpleNamespace(features={})
    assert paging.page_limit(unknown, spot) == paging.DEFAULT_PAGE_LIMIT
    silly = SimpleNamespace(features={"spot": {"fetchOHLCV": {"limit": 10**9}}})
    assert paging.page_limit(silly, spot) == paging.DEFAULT_PAGE_LIMIT

    bitget = ccxt.bitget()
    now = int(time.time() * 1000)
    assert paging.page_limit(bitget, spot) == 200
    assert paging.recent_page_limit(bitget, spot, "1m", now - 86_400_000, now, 200) == 1000
    assert paging.recent_page_limit(bitget, spot, "1m", now - 40 * 86_400_000, now, 200) == 200
    assert paging.recent_page_limit(bitget, spot, "1d", now - 86_400_000, now, 200) == 300
    assert paging.recent_page_limit(ccxt.okx(), spot, "1m", now, now, 300) == 300


def test_paging_styles_of_ccxt_exchanges():
    assert paging.paging_style(ccxt.binance()) == paging.START
    assert paging.paging_style(ccxt.bybit()) == paging.START
    for name in ("okx", "myokx", "coinbase", "coinbaseexchange", "bitget", "kucoin",
                 "kucoinfutures", "gate"):
        assert paging.paging_style(getattr(ccxt, name)()) == paging.WINDOW, name
    assert paging.paging_style(ccxt.kraken()) == paging.RECENT


def test_only_timeframes_both_sides_support_are_offered_and_named():
    assert paging.offered_timeframes(ccxt.kraken()) == ("1m", "5m", "15m", "30m", "1h", "4h",
                                                         "1d")
    assert "10s" not in paging.offered_timeframes(ccxt.gate())

    async def go():
        now, nf = now_floor()
        async with FakeKraken(first_ms=nf - 100 * MIN, now_ms=now) as fake:
            with pytest.raises(WorkstationError) as info:
                async with feed_for(fake, "kraken", "ETH/USD", "3m"):
                    pass
        assert str(info.value) == ("kraken has no 3m candles; it offers 1m, 5m, 15m, 30m, "
                                   "1h, 4h, 1d")
    asyncio.run(go())
