"""Keeping a websocket coming back while the live feed polls REST.

``SocketProbe`` (re)connects a websocket in a background task: it awaits the first message
of ``connect()`` (ccxt's first ``watch_ohlcv``), retrying transient errors with the feed's
backoff (``retry.diagnose``: ``Retry-After`` honoured) for as long as it takes. Meanwhile the
feed polls REST; once the probe ``timed_out`` (no connection within ``timeout`` seconds of
the outage's start) the feed says ``polling``. ``wait`` hands over the first message as soon
as the socket is back. A ban or a permanent error ends the probe: ``wait`` raises it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import ccxt

from .retry import TRANSIENT, RetryPolicy, diagnose, http_status

log = logging.getLogger(__name__)
T = TypeVar("T")


class SocketProbe(Generic[T]):
    """See the module docstring. ``what`` names the socket in log lines."""

    def __init__(self, connect: Callable[[], Awaitable[T]], policy: RetryPolicy,
                 timeout: float, *, what: str = "websocket"):
        self.connect = connect
        self.policy = policy
        self.timeout = timeout
        self.what = what
        self.attempts = 0  # failed tries in this outage
        self.last_error: BaseException | None = None
        self.next_try_s: float | None = None  # wait before the next try, while one is pending
        self._started = time.monotonic()
        self._task: asyncio.Task | None = None

    @property
    def running(self) -> bool:
        return self._task is not None

    @property
    def timed_out(self) -> bool:
        """Whether the socket has been away for ``timeout`` seconds or more."""
        return time.monotonic() - self._started >= self.timeout

    def start(self) -> None:
        """A new outage (or the first connection): try now, then on and on with backoff."""
        self._started = time.monotonic()
        self.attempts, self.last_error, self.next_try_s = 0, None, None
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> T:
        while True:
            try:
                result = await self.connect()
            except ccxt.BaseError as error:
                found = diagnose(error)
                if found.kind != TRANSIENT:
                    raise
                self.attempts += 1
                self.last_error = error
                self.next_try_s = self.policy.delay(self.attempts, found.retry_after)
                log.info("%s: %s: %s; retry %d in %.1f s", self.what, type(error).__name__,
                         error, self.attempts, self.next_try_s)
                await asyncio.sleep(self.next_try_s)
                self.next_try_s = None
                continue
            self.next_try_s = None
            return result

    async def wait(self, seconds: float) -> T | None:
        """The socket's first message if it connects within ``seconds`` (else None); raises
        the error that ended the probe (a ban, a permanent error). Nothing running: sleeps."""
        if self._task is None:
            await asyncio.sleep(seconds)
            return None
        await asyncio.wait({self._task}, timeout=seconds)
        if not self._task.done():
            return None
        task, self._task = self._task, None
        return task.result()

    def summary(self) -> str:
        """The last error in a few stable words (its class, its HTTP status), or ""."""
        if self.last_error is None:
            return ""
        status = http_status(self.last_error)
        return type(self.last_error).__name__ + (f" (HTTP {status})" if status else "")

    async def close(self) -> None:
        """Stop trying (safe to call twice)."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        await asyncio.wait({task})
        if not task.cancelled():
            task.exception()  # retrieved: an error at the very end is not reported twice
