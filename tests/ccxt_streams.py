"""A real ccxt feed against the loopback fake Binance, as the feed tests drive it: ``run`` an
async test failing on leaked sessions, ``feed_for`` a fake, ``eventually``, ``StreamRecorder``."""

from __future__ import annotations

import asyncio
import gc
import logging
import time
import warnings

import numpy as np

from workstation.market.ccxt_feed import CcxtFeed
from workstation.market.retry import RetryPolicy
from workstation.market.timeframes import ONE_MINUTE

from fake_exchange import FakeBinance

MIN = 60_000
T0 = 1_700_000_040_000  # a 1m candle open time
FAST = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.01)
KLINES = "/api/v3/klines"


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def run(make_coro):
    """``asyncio.run(make_coro())``, failing on leaked aiohttp sessions, connectors or ccxt
    exchanges (unclosed-resource warnings, loop exception reports, ccxt's own warning)."""
    loop_reports: list[str] = []
    ccxt_log = _Records()

    async def main():
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, context: loop_reports.append(context["message"]))
        result = await make_coro()
        gc.collect()
        await asyncio.sleep(0)
        return result

    logging.getLogger("ccxt").addHandler(ccxt_log)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = asyncio.run(main())
            gc.collect()
    finally:
        logging.getLogger("ccxt").removeHandler(ccxt_log)
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)
             or "nclosed" in str(w.message)]
    leaks += [m for m in ccxt_log.messages if "release all resources" in m]
    assert not loop_reports and not leaks, (loop_reports, leaks)
    return result


def feed_for(fake: FakeBinance, symbol: str = "ETH/USDT", **kwargs) -> CcxtFeed:
    kwargs.setdefault("retry", FAST)
    return CcxtFeed("binance", symbol, ONE_MINUTE, urls=fake.ccxt_urls(),
                    options=fake.ccxt_options(),
                    config={"enableRateLimit": False, "timeout_on_exit": 0}, clock=fake.clock,
                    **kwargs)


async def eventually(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)


def assert_closed_exchange(feed: CcxtFeed) -> None:
    assert feed.exchange.closed_by_user and feed.exchange.session is None
    assert feed.state == "closed"


def candles_rows(candles) -> np.ndarray:
    return np.column_stack([c.astype(np.float64) for c in candles.columns()])


class StreamRecorder:
    """Consumes ``feed.stream`` in a task, keeping every update."""

    def __init__(self, feed: CcxtFeed, **kwargs):
        self.updates = []
        self.stop = asyncio.Event()
        self.task = asyncio.ensure_future(self._consume(feed, kwargs))

    async def _consume(self, feed, kwargs):
        async for update in feed.stream(self.stop, **kwargs):
            self.updates.append(update)

    def closed_ts(self) -> list[int]:
        return [u.ts for u in self.updates if u.closed]

    async def finish(self) -> None:
        self.stop.set()
        await asyncio.wait_for(self.task, 5)


# -- leak detection is real --------------------------------------------------------------------
