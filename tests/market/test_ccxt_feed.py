"""CcxtFeed against a loopback fake Binance: a real ccxt client over real HTTP and websockets."""

from __future__ import annotations

import asyncio
import contextlib

import ccxt
import ccxt.async_support
import numpy as np
import pytest

from workstation.errors import WorkstationError
from workstation.market.ccxt_feed import CcxtFeed, parse_json_overrides
from workstation.market.retry import RetryPolicy
from workstation.market.timeframes import ONE_MINUTE

from ccxt_streams import (
    KLINES,
    MIN,
    T0,
    StreamRecorder,
    assert_closed_exchange,
    candles_rows,
    eventually,
    feed_for,
    run,
)
from fake_exchange import (
    ILLEGAL_PARAMETER,
    UNKNOWN_ERROR,
    FakeBinance,
    final_candle,
    forming_candle,
)


def test_run_helper_catches_an_exchange_left_open():
    async def leaky():
        exchange = ccxt.async_support.binance()
        exchange.open()  # creates an aiohttp session that nobody closes

    with pytest.raises(AssertionError):
        run(leaky)


# -- history -------------------------------------------------------------------------------------
def test_history_pages_by_hand_with_no_gaps_or_duplicates():
    since = T0 - 5000 * MIN
    until = since + 3499 * MIN  # inclusive: 3,500 candles

    async def body():
        async with FakeBinance(first_ms=T0 - 20_000 * MIN, now_ms=T0 + 30_000) as fake:
            progress = []
            async with feed_for(fake) as feed:
                assert feed.page_limit == 1000
                candles = await feed.fetch_history(since, until,
                                                   progress=lambda d, t: progress.append((d, t)))
            assert_closed_exchange(feed)
            return fake, candles, progress

    fake, candles, progress = run(body)
    assert len(candles) == 3500 and candles.last_closed
    assert candles.ts[0] == since and candles.ts[-1] == until
    assert not candles.gaps() and np.all(np.diff(candles.ts) == MIN)
    assert np.array_equal(candles_rows(candles), fake.series("ETHUSDT", "1m", since, until))
    pages = fake.klines_requests()
    assert [int(q["startTime"]) for q in pages] == [since + i * 1000 * MIN for i in range(4)]
    assert [int(q["limit"]) for q in pages] == [1000, 1000, 1000, 500]
    assert progress[-1] == (3500 * MIN, 3500 * MIN)
    assert [d for d, _ in progress] == sorted(d for d, _ in progress) and len(progress) == 4
    assert fake.unknown_paths == []


def test_history_up_to_now_leaves_out_the_forming_candle_unless_asked():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0 + 25_000) as fake:
            async with feed_for(fake) as feed:
                closed = await feed.fetch_history(T0 - 10 * MIN)
                with_forming = await feed.fetch_history(T0 - 10 * MIN, include_forming=True)
            return closed, with_forming

    closed, with_forming = run(body)
    assert closed.last_closed and len(closed) == 10 and closed.ts[-1] == T0 - MIN
    assert not with_forming.last_closed and len(with_forming) == 11
    assert with_forming.ts[-1] == T0
    assert with_forming.row(-1)[1:6] == forming_candle("ETHUSDT", T0, MIN, 25_000)
    assert not with_forming.row(-1).closed


def test_history_starts_at_the_listing_and_stops_when_the_exchange_has_nothing():
    async def body():
        async with FakeBinance(first_ms=T0 - 50 * MIN, now_ms=T0 + 1000) as fake:
            async with feed_for(fake) as feed:
                from_listing = await feed.fetch_history(T0 - 500 * MIN, T0 - 41 * MIN)
                before_listing = await feed.fetch_history(T0 - 500 * MIN, T0 - 60 * MIN)
            return fake, from_listing, before_listing

    fake, from_listing, before_listing = run(body)
    assert from_listing.ts[0] == T0 - 50 * MIN and len(from_listing) == 10
    assert len(before_listing) == 0
    assert len(fake.klines_requests()) == 2  # one each: nothing more was asked for


# -- retries -------------------------------------------------------------------------------------
def test_http_429_is_retried_until_it_succeeds():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            fake.fail_next(2, 429, path="/api/v3/exchangeInfo")
            fake.fail_next(3, 429, path=KLINES)
            async with feed_for(fake) as feed:
                candles = await feed.fetch_history(T0 - 20 * MIN, T0 - 11 * MIN)
            return fake, candles

    fake, candles = run(body)
    assert len(candles) == 10
    assert [p for p, _ in fake.requests].count("/api/v3/exchangeInfo") == 3
    assert len(fake.klines_requests()) == 4


def test_http_500_unknown_error_is_operation_failed_and_is_retried():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            async with feed_for(fake) as feed:
                # ccxt raises OperationFailed for it, which is not a NetworkError
                fake.fail_next(1, 500, UNKNOWN_ERROR, path=KLINES)
                with pytest.raises(ccxt.OperationFailed) as raised:
                    await feed.exchange.fetch_ohlcv("ETH/USDT", "1m", since=T0 - 5 * MIN)
                assert not isinstance(raised.value, ccxt.NetworkError)
                fake.fail_next(2, 500, UNKNOWN_ERROR, path=KLINES)
                candles = await feed.fetch_history(T0 - 20 * MIN, T0 - 11 * MIN)
            return fake, candles

    fake, candles = run(body)
    assert len(candles) == 10
    assert len(fake.klines_requests()) == 1 + 3


def test_retries_give_up_after_max_attempts_with_a_clear_message():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            feed = feed_for(fake, retry=RetryPolicy(max_attempts=3, base_delay=0.001,
                                                    max_delay=0.002))
            async with feed:
                fake.fail_next(10, 429, path=KLINES)
                with pytest.raises(WorkstationError, match="failed after 3 attempts"):
                    await feed.fetch_history(T0 - 20 * MIN, T0 - 11 * MIN)
            assert_closed_exchange(feed)
            return fake

    fake = run(body)
    assert len(fake.klines_requests()) == 3


def test_a_final_exchange_error_is_not_retried():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            async with feed_for(fake) as feed:
                fake.fail_next(1, 400, ILLEGAL_PARAMETER, path=KLINES)
                with pytest.raises(WorkstationError, match="Illegal characters") as raised:
                    await feed.fetch_history(T0 - 20 * MIN, T0 - 11 * MIN)
            assert isinstance(raised.value.__cause__, ccxt.BadRequest)
            return fake

    fake = run(body)
    assert len(fake.klines_requests()) == 1


def test_a_bad_symbol_is_a_clear_error_before_any_candle_request():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            feed = feed_for(fake, "ETH/NOPE")
            with pytest.raises(WorkstationError) as raised:
                async with feed:
                    raise AssertionError("entered a feed for a market that does not exist")
            assert_closed_exchange(feed)
            return fake, str(raised.value)

    fake, message = run(body)
    assert message.startswith("binance has no market ETH/NOPE")
    assert fake.klines_requests() == []


def test_unknown_exchange_and_timeframe_are_clear_errors():
    with pytest.raises(WorkstationError, match=r"unknown exchange 'binanse': did you mean binance.*"
                                              r"ids like binance, bybit"):
        CcxtFeed("binanse", "ETH/USDT")

    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            feed = CcxtFeed("binance", "ETH/USDT", ONE_MINUTE, urls=fake.ccxt_urls(),
                            options=fake.ccxt_options(), config={"enableRateLimit": False})
            feed.exchange.timeframes = {"1h": "1h"}
            with pytest.raises(WorkstationError, match="binance has no 1m candles; it offers 1h"):
                async with feed:
                    pass
            assert_closed_exchange(feed)

    run(body)


# -- live ---------------------------------------------------------------------------------------
def test_websocket_stream_yields_forming_then_closed_candles():
    async def body():
        states = []
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0 + 30_000) as fake:
            async with feed_for(fake, on_state=lambda s, d: states.append(s)) as feed:
                rec = StreamRecorder(feed, after_ts=T0 - 2 * MIN)
                await eventually(lambda: fake.subscriptions)
                await fake.advance(10_000)  # T0 forming, 40 s in
                await eventually(lambda: feed.state == "live")
                # a slow consumer may see only the newest state of a forming candle (ccxt
                # keeps one per candle): let the 40 s state arrive before the next one
                at_40s = forming_candle("ETHUSDT", T0, MIN, 40_000)
                await eventually(lambda: at_40s in [u[1:6] for u in rec.updates])
                await fake.advance(40_000)  # T0 closes, T0+1m opens 20 s in
                await eventually(lambda: rec.closed_ts()[-1:] == [T0])
                await fake.advance(60_000)
                await eventually(lambda: rec.closed_ts()[-1:] == [T0 + MIN])
                await rec.finish()
            return fake, rec.updates, states

    fake, updates, states = run(body)
    assert fake.subscriptions == [["ethusdt@kline_1m"]]
    closed = [u for u in updates if u.closed]
    assert [u.ts for u in closed] == [T0 - MIN, T0, T0 + MIN]
    for u in closed:
        assert u[1:6] == final_candle("ETHUSDT", u.ts, MIN)
    first_forming = [u for u in updates if not u.closed and u.ts == T0]
    assert first_forming[0][1:6] == forming_candle("ETHUSDT", T0, MIN, 30_000)  # from REST
    assert forming_candle("ETHUSDT", T0, MIN, 40_000) in [u[1:6] for u in first_forming]
    for i, u in enumerate(updates):  # nothing about a candle comes after it closed
        if u.closed:
            assert all(v.ts > u.ts for v in updates[i + 1:])
    assert states[:2] == ["connecting", "live"] and states[-1] == "closed"


def test_a_dropped_websocket_is_reconnected_and_the_gap_back_filled():
    async def body():
        states = []
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0 + 30_000) as fake:
            async with feed_for(fake, on_state=lambda s, d: states.append(s)) as feed:
                rec = StreamRecorder(feed, after_ts=T0 - MIN)
                await eventually(lambda: fake.subscriptions)
                await fake.advance(10_000)
                await fake.advance(60_000)  # T0 closes on the socket
                await eventually(lambda: rec.closed_ts() == [T0])

                fake.ws_accepting = False
                await fake.drop_websockets()
                await eventually(lambda: feed.state == "reconnecting")
                await fake.advance(3 * MIN)  # T0+1m .. T0+3m close while the socket is down
                fake.ws_accepting = True

                await eventually(lambda: len(fake.subscriptions) == 2)
                await fake.advance(MIN)  # T0+4m closes on the new socket
                await eventually(lambda: rec.closed_ts()[-1:] == [T0 + 4 * MIN])
                await rec.finish()
            return fake, rec.updates, states

    fake, updates, states = run(body)
    closed = [u for u in updates if u.closed]
    assert [u.ts for u in closed] == [T0 + i * MIN for i in range(5)]  # none lost, none twice
    for u in closed:
        assert u[1:6] == final_candle("ETHUSDT", u.ts, MIN)
    pushed_closed = {ts for ts, was_closed in fake.ws_pushed if was_closed}
    assert pushed_closed.isdisjoint({T0 + MIN, T0 + 2 * MIN, T0 + 3 * MIN})  # so: REST back-fill
    assert fake.ws_connections == 2
    lost = states.index("reconnecting")
    assert "live" in states[:lost] and "live" in states[lost:]


def test_candles_a_stalled_socket_skipped_are_filled_from_rest():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0 + 30_000) as fake:
            async with feed_for(fake) as feed:
                rec = StreamRecorder(feed, after_ts=T0 - MIN)
                await eventually(lambda: fake.subscriptions)
                await fake.advance(10_000)
                await eventually(lambda: feed.state == "live" and len(rec.updates) > 1)
                fake.ws_muted = True
                await fake.advance(3 * MIN)  # T0 .. T0+2m close unseen by the socket
                fake.ws_muted = False
                await fake.advance(MIN)  # T0+3m closes on the socket
                await eventually(lambda: rec.closed_ts()[-1:] == [T0 + 3 * MIN])
                await rec.finish()
            return fake, rec.updates

    fake, updates = run(body)
    closed = [u for u in updates if u.closed]
    assert [u.ts for u in closed] == [T0 + i * MIN for i in range(4)]
    for u in closed:  # T0 too: its last socket values (40 s in) were not final
        assert u[1:6] == final_candle("ETHUSDT", u.ts, MIN)
    assert fake.ws_connections == 1
    assert {T0, T0 + MIN, T0 + 2 * MIN}.isdisjoint(ts for ts, c in fake.ws_pushed if c)


def test_polling_when_the_exchange_has_no_websocket_candles():
    async def body():
        states = []
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0 + 30_000) as fake:
            async with feed_for(fake, poll_interval=0.01,
                                on_state=lambda s, d: states.append(s)) as feed:
                feed.exchange.has["watchOHLCV"] = False
                rec = StreamRecorder(feed)
                await eventually(lambda: feed.state == "polling")
                await fake.advance(MIN)
                await eventually(lambda: rec.closed_ts()[-1:] == [T0])
                await fake.advance(2 * MIN + 5_000)
                await eventually(lambda: rec.closed_ts()[-1:] == [T0 + 2 * MIN])
                fake.fail_next(2, 429, path=KLINES)  # a poll failing is retried, not fatal
                await eventually(lambda: "reconnecting" in states)
                await fake.advance(MIN)
                await eventually(lambda: rec.closed_ts()[-1:] == [T0 + 3 * MIN])
                await rec.finish()
            assert feed.latency_ms is not None and feed.latency_ms > 0
            return fake, rec.updates, states

    fake, updates, states = run(body)
    assert [u.ts for u in updates if u.closed] == [T0 - MIN + i * MIN for i in range(5)]
    assert fake.ws_connections == 0
    assert states[:2] == ["connecting", "polling"] and states[-1] == "closed"
    assert "polling" in states[states.index("reconnecting"):]


def test_cancelling_a_stream_still_closes_the_exchange():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0 + 30_000) as fake:
            feed = feed_for(fake)

            async def consume():
                async with feed:
                    async for _ in feed.stream():
                        pass

            task = asyncio.ensure_future(consume())
            await eventually(lambda: fake.subscriptions)
            await fake.advance(5_000)
            await eventually(lambda: feed.state == "live")
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            assert_closed_exchange(feed)

    run(body)


# -- configuration ------------------------------------------------------------------------------
def test_json_overrides_and_their_merge_into_the_exchange():
    assert parse_json_overrides(None, "--ccxt-urls") is None
    assert parse_json_overrides('{"public": "http://x/api/v3"}', "--ccxt-urls") == \
        {"public": "http://x/api/v3"}
    with pytest.raises(WorkstationError, match=r"--ccxt-urls: not valid JSON .*line 1"):
        parse_json_overrides("{public: 1}", "--ccxt-urls")
    with pytest.raises(WorkstationError, match="--ccxt-options: expected a JSON object"):
        parse_json_overrides("[1, 2]", "--ccxt-options")

    feed = CcxtFeed("binance", "ETH/USDT",
                    urls={"public": "http://127.0.0.1:1/api/v3", "ws": {"spot": "ws://h/ws"}},
                    options={"fetchMarkets": {"types": ["spot"]}})
    api = feed.exchange.urls["api"]
    assert api["public"] == "http://127.0.0.1:1/api/v3" and api["ws"]["spot"] == "ws://h/ws"
    assert api["ws"]["linear"].startswith("wss://")  # merged, not replaced
    assert api["private"].startswith("https://api.binance.com")
    assert feed.exchange.options["fetchMarkets"]["types"] == ["spot"]
    assert "loadAllOptions" in feed.exchange.options["fetchMarkets"]  # deep-merged
    assert "defaultType" in feed.exchange.options


def test_retry_delays_grow_exponentially_with_jitter_and_a_cap():
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=0.5)
    for retry, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (60, 5.0)]:
        delays = [policy.delay(retry) for _ in range(200)]
        assert all(ceiling * 0.5 <= d <= ceiling for d in delays)
        assert max(delays) - min(delays) > 0.1 * ceiling  # jittered
    with pytest.raises(WorkstationError):
        RetryPolicy(max_attempts=0)


def test_proxy_settings_in_the_options_go_to_the_exchange_itself():
    feed = CcxtFeed("binance", "ETH/USDT", ONE_MINUTE,
                    options={"httpsProxy": "http://127.0.0.1:3128", "wsProxy":
                             "http://127.0.0.1:3128", "defaultType": "spot"})
    assert feed.exchange.httpsProxy == "http://127.0.0.1:3128"  # ccxt reads them there
    assert feed.exchange.wsProxy == "http://127.0.0.1:3128"
    assert "httpsProxy" not in feed.exchange.options
    assert feed.exchange.options["defaultType"] == "spot"  # the rest stays an option
