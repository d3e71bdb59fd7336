"""Live without a socket: a websocket that is refused or hangs makes the feed poll REST (state
``polling``) while the socket is retried in the background; once it connects the feed is
``live`` again. No closed candle is lost or yielded twice across the switches, and in the
window the status bar says ``polling``, and the candles cached are the ones served.

The socket timeout and poll interval are shrunk to fractions of a second; nothing waits for
real minutes (the fake's clock is advanced instead).
"""

from __future__ import annotations

import argparse
import asyncio
import time

import numpy as np
import pytest
import qasync

from workstation.market.cache import CandleCache
from workstation.market.retry import ExchangeBanned, RetryPolicy
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.paths import app_paths
from workstation.ui.app import run_window

from ccxt_streams import MIN, T0, StreamRecorder, candles_rows, eventually, feed_for, run
from conftest import wait_for
from fake_exchange import FakeBinance, final_candle

QUICK = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


def quick_feed(fake, states):
    return feed_for(fake, retry=QUICK, poll_interval=0.02, socket_timeout=0.2,
                    on_state=lambda state, detail: states.append((state, detail)))


def runs(names: list[str]) -> list[str]:
    """``names`` with repeats in a row collapsed."""
    return [n for i, n in enumerate(names) if i == 0 or names[i - 1] != n]


def assert_every_candle_once_with_final_values(updates, first_ts: int, count: int) -> None:
    closed = [u for u in updates if u.closed]
    assert [u.ts for u in closed] == [first_ts + i * MIN for i in range(count)]
    for u in closed:
        assert u[1:6] == final_candle("ETHUSDT", u.ts, MIN)
    for i, u in enumerate(updates):  # nothing about a candle comes after it closed
        if u.closed:
            assert all(v.ts > u.ts for v in updates[i + 1:])


def test_socket_refused_then_polling_then_the_socket_back():
    async def body():
        states: list[tuple[str, str]] = []
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0 + 30_000) as fake:
            fake.ws_accepting = False
            async with quick_feed(fake, states) as feed:
                rec = StreamRecorder(feed, after_ts=T0 - MIN)
                await eventually(lambda: feed.state == "polling")
                await fake.advance(MIN)  # T0 closes: REST brings it within a poll
                await eventually(lambda: rec.closed_ts()[-1:] == [T0])
                await fake.advance(MIN)
                await eventually(lambda: rec.closed_ts()[-1:] == [T0 + MIN])
                assert fake.ws_connections == 0 and feed.state == "polling"

                fake.ws_accepting = True  # retried in the background: live again
                await eventually(lambda: feed.state == "live" and fake.subscriptions)
                await fake.advance(MIN)
                await eventually(lambda: rec.closed_ts()[-1:] == [T0 + 2 * MIN])

                fake.ws_accepting = False  # dropped and refused: polling again
                await fake.drop_websockets()
                await eventually(lambda: feed.state == "polling")
                await fake.advance(2 * MIN)
                await eventually(lambda: rec.closed_ts()[-1:] == [T0 + 4 * MIN])

                fake.ws_accepting = True
                await eventually(lambda: feed.state == "live" and len(fake.subscriptions) == 2)
                await fake.advance(MIN)
                await eventually(lambda: rec.closed_ts()[-1:] == [T0 + 5 * MIN])
                await rec.finish()
            return fake, rec.updates, states

    fake, updates, states = run(body)
    assert_every_candle_once_with_final_values(updates, T0, 6)
    assert runs([s for s, _ in states]) == ["connecting", "polling", "live", "reconnecting",
                                            "polling", "live", "closed"]
    polling = [d for s, d in states if s == "polling"]
    assert all("websocket not connected in 0.2 s, retried in the background" in d
               for d in polling)
    first_outage = [d for s, d in states[:[s for s, _ in states].index("live")]
                    if s == "polling"]  # the refusal may come after the first poll
    assert any("last error: NetworkError (HTTP 503)" in d for d in first_outage)
    assert fake.ws_connections == 2


def test_a_socket_that_hangs_is_waited_for_while_polling():
    async def body():
        states: list[tuple[str, str]] = []
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0 + 30_000) as fake:
            fake.ws_stalled = True  # the handshake gets no answer (ccxt waits 10 s)
            async with quick_feed(fake, states) as feed:
                rec = StreamRecorder(feed, after_ts=T0 - MIN)
                await eventually(lambda: feed.state == "polling")
                await fake.advance(MIN)
                await eventually(lambda: rec.closed_ts()[-1:] == [T0])
                fake.ws_stalled = False  # the same connection attempt completes
                await eventually(lambda: feed.state == "live" and fake.subscriptions)
                await fake.advance(MIN)
                await eventually(lambda: rec.closed_ts()[-1:] == [T0 + MIN])
                await rec.finish()
            return fake, rec.updates, states

    fake, updates, states = run(body)
    assert_every_candle_once_with_final_values(updates, T0, 2)
    assert runs([s for s, _ in states]) == ["connecting", "polling", "live", "closed"]
    assert fake.ws_connections == 1


def test_a_socket_refused_for_good_leaves_rest_polling_and_a_banned_one_stops():
    async def body(status):
        states: list[tuple[str, str]] = []
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0 + 30_000) as fake:
            fake.ws_accepting, fake.ws_refusal_status = False, status
            async with quick_feed(fake, states) as feed:
                rec = StreamRecorder(feed, after_ts=T0 - MIN)
                if status == 418:
                    with pytest.raises(ExchangeBanned, match="banned this IP address"):
                        await asyncio.wait_for(rec.task, 5)
                    return fake, rec.updates, states
                await eventually(lambda: feed.state == "polling")
                await fake.advance(MIN)
                await eventually(lambda: rec.closed_ts()[-1:] == [T0])
                fake.ws_accepting = True  # no longer tried: it said no for good
                await fake.advance(MIN)
                await eventually(lambda: rec.closed_ts()[-1:] == [T0 + MIN])
                await rec.finish()
            return fake, rec.updates, states

    fake, updates, states = run(lambda: body(403))
    assert_every_candle_once_with_final_values(updates, T0, 2)
    assert fake.ws_connections == 0
    assert any(s == "polling" and "websocket is unusable: NetworkError" in d for s, d in states)
    fake, updates, states = run(lambda: body(418))
    assert states[-1][0] == "closed" and "live" not in [s for s, _ in states]


def test_polling_reaches_the_status_bar_and_the_cache_holds_what_was_served(qapp):
    seen = {}
    now = int(time.time() * 1000)
    key = SeriesKey("binance", "ETH/USDT", ONE_MINUTE)

    async def session(window):
        async with FakeBinance(first_ms=now - 3000 * MIN, now_ms=now) as fake:
            fake.ws_accepting = False
            window.live.feed_settings.update(
                urls=fake.ccxt_urls(), options=fake.ccxt_options(), retry=QUICK,
                poll_interval=0.02, socket_timeout=0.2,
                config={"enableRateLimit": False, "timeout_on_exit": 0}, clock=fake.clock)
            await window.open_source("binance", "ETH/USDT", "1m")
            await wait_for(lambda: window.status.connection.text() == "polling")
            seen["tip"] = window.status.connection.toolTip()
            last = int(window.live.candles.ts[-1])
            await fake.advance(2 * MIN)
            await wait_for(lambda: int(window.live.candles.ts[-1]) >= last + 2 * MIN)
            fake.ws_accepting = True
            await wait_for(lambda: window.status.connection.text() == "live")
            await fake.advance(MIN)
            await wait_for(lambda: int(window.live.candles.ts[-1]) >= last + 3 * MIN)
            await window.live.stop()
            with CandleCache(app_paths().candle_cache) as cache:
                cached = cache.load(key)
            seen["cached"] = candles_rows(cached)
            seen["served"] = fake.series("ETHUSDT", "1m", int(cached.ts[0]), int(cached.ts[-1]))
            seen["last"] = last
        return 0

    args = argparse.Namespace(source="demo", symbol=None, timeframe="1m", speed=1.0)
    assert qasync.run(run_window(args, on_shown=session)) == 0
    assert "websocket not connected" in seen["tip"]
    cached, served = seen["cached"], seen["served"]
    assert cached[-1, 0] >= seen["last"] + 2 * MIN  # closed while polling and live, stored
    assert np.array_equal(cached, served)  # every value as the exchange served it
