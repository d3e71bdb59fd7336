"""Which exchange errors are retried, how long each wait is, and what stops at once.

Against the loopback fake Binance with a real ccxt client: bodies ccxt does not know (other
exchanges' 429/503 answers) are retried by their HTTP status, ``Retry-After`` is honoured, a
418 ban stops at once (a stream too), permanent answers are never retried. No real waits:
``call_with_retry`` is given a recording ``sleep`` where a wait would be long.
"""

from __future__ import annotations

import asyncio
import email.utils
import time

import ccxt
import pytest

from workstation.errors import WorkstationError
from workstation.market.retry import (
    BANNED,
    BANNED_IP,
    PERMANENT,
    RATE_LIMITED,
    REFUSED,
    TRANSIENT,
    UNREACHABLE,
    ExchangeBanned,
    RetryPolicy,
    call_with_retry,
    diagnose,
    failure_kind,
    failure_text,
)

from ccxt_streams import FAST, KLINES, MIN, T0, StreamRecorder, eventually, feed_for, run
from fake_exchange import FakeBinance

KUCOIN_503 = {"code": "503000", "msg": "Service unavailable"}
COINBASE_429 = {"error": "RESOURCE_EXHAUSTED", "code": 8, "message": "too many requests"}
COINBASE_503 = {"error": "UNAVAILABLE", "code": 14, "message": "service unavailable"}
BYBIT_503 = {"retCode": 10016, "retMsg": "Server error."}
BINANCE_BAN = {"code": -1003, "msg": "Way too much request weight used; IP banned until "
                                     "1700000000000. Please use WebSocket Streams for live "
                                     "updates to avoid bans."}


class Sleeps:
    """A ``sleep`` for ``call_with_retry`` that records the waits and returns at once."""

    def __init__(self):
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def fetch(feed, sleep=None, policy=FAST):
    return call_with_retry(
        lambda: feed.exchange.fetch_ohlcv("ETH/USDT", "1m", since=T0 - 20 * MIN, limit=10),
        policy, what="binance fetch_ohlcv", sleep=sleep or asyncio.sleep)


# -- unknown bodies: retried by their status -----------------------------------------------------
@pytest.mark.parametrize("status, body", [(503, KUCOIN_503), (429, COINBASE_429),
                                          (503, COINBASE_503), (503, BYBIT_503),
                                          (502, "<html>Bad Gateway</html>")])
def test_a_429_or_5xx_with_a_body_ccxt_does_not_know_is_retried(status, body):
    async def body_():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            async with feed_for(fake) as feed:
                fake.fail_next(1, status, body, path=KLINES)
                with pytest.raises(ccxt.BaseError) as raw:  # what ccxt alone makes of it
                    await feed.exchange.fetch_ohlcv("ETH/USDT", "1m", since=T0 - 5 * MIN)
                fake.fail_next(2, status, body, path=KLINES)
                candles = await feed.fetch_history(T0 - 20 * MIN, T0 - 11 * MIN)
            return fake, raw.value, candles

    fake, raw, candles = run(body_)
    assert diagnose(raw).kind == TRANSIENT and diagnose(raw).status == status
    assert len(candles) == 10
    assert len(fake.klines_requests()) == 1 + 3


def test_the_kucoin_503_was_a_plain_exchange_error_to_ccxt():
    """The bug this guards against: ccxt's class alone would have made it final."""
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            async with feed_for(fake) as feed:
                fake.fail_next(1, 503, KUCOIN_503, path=KLINES)
                with pytest.raises(ccxt.ExchangeError) as raised:
                    await feed.exchange.fetch_ohlcv("ETH/USDT", "1m", since=T0 - 5 * MIN)
            return raised.value

    error = run(body)
    assert not isinstance(error, ccxt.OperationFailed)
    assert diagnose(error).kind == TRANSIENT


# -- Retry-After ---------------------------------------------------------------------------------
def test_retry_after_in_seconds_is_honoured():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            async with feed_for(fake) as feed:
                fake.fail_next(2, 429, COINBASE_429, path=KLINES, headers={"Retry-After": "45"})
                sleeps = Sleeps()
                rows = await fetch(feed, sleeps)
            return fake, sleeps.waits, rows

    fake, waits, rows = run(body)
    assert len(rows) == 10 and len(fake.klines_requests()) == 3
    assert waits == [45.0, 45.0]  # FAST alone would have waited a few ms


def test_retry_after_as_an_http_date_is_honoured():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            async with feed_for(fake) as feed:
                when = email.utils.formatdate(time.time() + 60, usegmt=True)
                fake.fail_next(1, 503, path=KLINES, headers={"Retry-After": when})
                sleeps = Sleeps()
                await fetch(feed, sleeps)
            return sleeps.waits

    (wait,) = run(body)
    assert 50 <= wait <= 61


def test_a_short_retry_after_really_waits_in_the_feed():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            async with feed_for(fake) as feed:
                waits = []
                feed._log_retry = lambda attempt, delay, error: waits.append(delay)
                fake.fail_next(1, 429, path=KLINES, headers={"Retry-After": "0.2"})
                candles = await feed.fetch_history(T0 - 20 * MIN, T0 - 11 * MIN)
            return waits, candles

    waits, candles = run(body)
    assert len(candles) == 10 and waits == [0.2]


def test_a_retry_after_beyond_the_time_budget_gives_up_at_once():
    policy = RetryPolicy(max_attempts=5, base_delay=0.001, max_delay=0.01, max_elapsed=30)

    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            async with feed_for(fake) as feed:
                fake.fail_next(3, 503, path=KLINES, headers={"Retry-After": "3600"})
                sleeps = Sleeps()
                with pytest.raises(WorkstationError) as raised:
                    await fetch(feed, sleeps, policy)
            return fake, sleeps.waits, str(raised.value)

    fake, waits, message = run(body)
    assert waits == [] and len(fake.klines_requests()) == 1
    assert "failed after 1 attempts" in message and "asks to wait 3600 s" in message
    assert "30 s allowed" in message


def test_retries_are_bounded_in_time_as_well_as_in_count():
    policy = RetryPolicy(max_attempts=50, base_delay=4.0, max_delay=8.0, jitter=0.0,
                         max_elapsed=20.0)

    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            async with feed_for(fake) as feed:
                fake.fail_next(50, 503, KUCOIN_503, path=KLINES)
                sleeps = Sleeps()  # waits are recorded, not slept: elapsed stays ~0
                with pytest.raises(WorkstationError, match="would exceed the 20 s allowed"):
                    await fetch(feed, sleeps, policy)
            return sleeps.waits

    waits = run(body)
    assert waits == [4.0, 8.0, 8.0]  # 20 s spent: another 8 s would overrun the 20 s


# -- bans: never retried -------------------------------------------------------------------------
def test_a_418_ban_is_not_retried_and_says_so():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            async with feed_for(fake) as feed:
                fake.fail_next(5, 418, BINANCE_BAN, path=KLINES, headers={"Retry-After": "7200"})
                with pytest.raises(ExchangeBanned) as raised:
                    await feed.fetch_history(T0 - 20 * MIN, T0 - 11 * MIN)
            return fake, raised.value

    fake, error = run(body)
    assert len(fake.klines_requests()) == 1
    message = str(error)
    assert "banned this IP address until 2023-11-14 22:13:20 UTC" in message
    assert "HTTP 418" in message and "Nothing was retried" in message
    assert failure_kind(error) == BANNED_IP
    assert failure_text("binance", error) == message


def test_a_429_that_says_the_ip_is_banned_is_a_ban_too():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            fake.fail_next(3, 429, BINANCE_BAN, path="/api/v3/exchangeInfo")
            feed = feed_for(fake)
            with pytest.raises(ExchangeBanned, match="load_markets stopped"):
                async with feed:
                    pass
            return fake

    fake = run(body)
    assert [p for p, _ in fake.requests].count("/api/v3/exchangeInfo") == 1


def test_a_ban_ends_a_polling_stream_at_once():
    async def body():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0 + 30_000) as fake, \
                feed_for(fake, poll_interval=0.01) as feed:
            feed.exchange.has["watchOHLCV"] = False
            rec = StreamRecorder(feed, after_ts=T0 - 2 * MIN)
            await eventually(lambda: feed.state == "polling")
            fake.fail_next(5, 418, BINANCE_BAN, path=KLINES)
            with pytest.raises(ExchangeBanned, match="stream stopped"):
                await asyncio.wait_for(rec.task, 5)
            asked = len(fake.klines_requests())
            await asyncio.sleep(0.05)
            return fake, asked, feed.state

    fake, asked, state = run(body)
    assert len(fake.klines_requests()) == asked and state == "closed"
    assert len(fake._faults) == 4  # one 418 answered, no more requests made


# -- permanent answers: never retried ------------------------------------------------------------
@pytest.mark.parametrize("status, body, cls", [
    (400, {"code": -1121, "msg": "Invalid symbol."}, ccxt.BadSymbol),
    (404, "<html>Not Found</html>", ccxt.ExchangeNotAvailable),  # a NetworkError to ccxt
    (401, {"code": -2014, "msg": "API-key format invalid."}, ccxt.AuthenticationError),
    (403, "<html>Forbidden</html>", ccxt.ExchangeNotAvailable),
])
def test_permanent_answers_are_not_retried(status, body, cls):
    async def body_():
        async with FakeBinance(first_ms=T0 - 100 * MIN, now_ms=T0) as fake:
            async with feed_for(fake) as feed:
                fake.fail_next(3, status, body, path=KLINES)
                with pytest.raises(WorkstationError) as raised:
                    await feed.fetch_history(T0 - 20 * MIN, T0 - 11 * MIN)
            return fake, raised.value

    fake, error = run(body_)
    assert isinstance(error.__cause__, cls)
    assert diagnose(error).kind == PERMANENT
    assert len(fake.klines_requests()) == 1
    assert failure_kind(error) == REFUSED  # the exchange answered: not "cannot be reached"


# -- the rules, on errors built by hand (no status tag: read from ccxt's message) --------------
@pytest.mark.parametrize("error, kind", [
    (ccxt.ExchangeError("kucoin GET https://api.kucoin.com/x 503 Service Unavailable {}"),
     TRANSIENT),
    (ccxt.ExchangeNotAvailable("okx GET https://www.okx.com/x 404 Not Found"), PERMANENT),
    (ccxt.DDoSProtection("binance 418 I'm a teapot {}"), BANNED),
    (ccxt.DDoSProtection("binance 429 Too Many Requests {}"), TRANSIENT),
    (ccxt.RequestTimeout("binance GET https://api.binance.com/x"), TRANSIENT),
    (ccxt.NetworkError("503, message='Invalid response status', url='wss://x'"), TRANSIENT),
    (ccxt.NetworkError("418, message='Invalid response status', url='wss://x'"), BANNED),
    (ccxt.ExchangeNotAvailable("binance GET https://api.binance.com/x"), TRANSIENT),
    (ccxt.OperationFailed('binance {"code":-1000}'), TRANSIENT),
    (ccxt.BadSymbol("binance does not have market symbol X/Y"), PERMANENT),
    (ccxt.AuthenticationError("binance requires apiKey"), PERMANENT),
    (ccxt.ExchangeError("bybit {\"retCode\":10001}"), PERMANENT),
])
def test_diagnosis_rules(error, kind):
    assert diagnose(error).kind == kind
    wrapped = WorkstationError("failed")
    wrapped.__cause__ = error
    assert diagnose(wrapped).kind == kind


def test_failure_kinds_for_the_user():
    assert failure_kind(ccxt.RequestTimeout("binance GET x")) == UNREACHABLE
    assert failure_kind(ccxt.RateLimitExceeded("binance 429 Too Many Requests")) == RATE_LIMITED
    assert failure_kind(ccxt.DDoSProtection("binance 418 I'm a teapot")) == BANNED_IP
    assert "banned this IP address" in failure_text(
        "binance", ccxt.DDoSProtection("binance 418 I'm a teapot"))


def test_a_delay_is_never_shorter_than_retry_after():
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=0.5)
    assert all(policy.delay(1, retry_after=30.0) == 30.0 for _ in range(20))
    assert all(0.5 <= policy.delay(1, retry_after=0.1) <= 1.0 for _ in range(20))
    with pytest.raises(WorkstationError):
        RetryPolicy(max_elapsed=-1)
