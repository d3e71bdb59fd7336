"""Retrying exchange calls: exponential backoff with jitter on transient ccxt errors.

Transient means ``ccxt.OperationFailed``, which covers ``ccxt.NetworkError`` (timeouts,
dropped connections, HTTP 429 as ``DDoSProtection``) and Binance's HTTP 500 ``-1000``
"unknown error" (raised as ``OperationFailed``, *not* a ``NetworkError``). Every other ccxt
error (``ExchangeError``: bad symbol, bad request, ...) is final and never retried.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import ccxt

from ..errors import WorkstationError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """``max_attempts`` tries per call (1 = no retry); the n-th retry waits
    ``min(max_delay, base_delay * 2**(n-1))``, shortened by up to ``jitter`` (a fraction)."""

    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.5

    def __post_init__(self):
        if self.max_attempts < 1:
            raise WorkstationError(f"retry max_attempts must be >= 1, got {self.max_attempts}")
        if self.base_delay < 0 or self.max_delay < 0:
            raise WorkstationError("retry delays must be >= 0")
        if not 0 <= self.jitter <= 1:
            raise WorkstationError(f"retry jitter must be within 0..1, got {self.jitter}")

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** min(retry - 1, 62))
        return ceiling * (1.0 - self.jitter * random.random())


def is_transient(error: BaseException) -> bool:
    """Whether a retry may succeed: ccxt's ``OperationFailed`` family."""
    return isinstance(error, ccxt.OperationFailed)


async def call_with_retry(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    what: str,
    on_retry: Callable[[int, float, BaseException], None] | None = None,
) -> T:
    """Await ``call()``, retrying transient errors per ``policy``.

    A final (non-transient) ccxt error, or the last transient one, becomes a
    ``WorkstationError`` naming ``what`` failed; ``on_retry(retry, delay_s, error)`` is told
    before each wait.
    """
    attempt = 1
    while True:
        try:
            return await call()
        except ccxt.BaseError as error:
            if not is_transient(error):
                raise WorkstationError(f"{what} failed: {error}") from error
            if attempt >= policy.max_attempts:
                raise WorkstationError(
                    f"{what} failed after {attempt} attempts: {error}") from error
            delay = policy.delay(attempt)
            if on_retry is not None:
                on_retry(attempt, delay, error)
            await asyncio.sleep(delay)
            attempt += 1


UNREACHABLE = "unreachable"  # no answer: no network, DNS, refused connection, timeout, 5xx down
RATE_LIMITED = "rate limited"  # the exchange answered: too many requests (HTTP 429, 418)
REFUSED = "refused"  # the exchange answered with an error, or the request was never valid


def _ccxt_error(error: BaseException | None) -> ccxt.BaseError | None:
    """The ccxt error ``error`` is, or was raised from (``from``/context chain)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, ccxt.BaseError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def failure_kind(error: BaseException) -> str:
    """Why an exchange call failed, by ccxt's error class: ``UNREACHABLE`` for a
    ``ccxt.NetworkError`` (the exchange cannot be reached), ``RATE_LIMITED`` for its
    ``DDoSProtection`` and ``RateLimitExceeded`` (it was reached and said "too many
    requests"), ``REFUSED`` for everything else (``ExchangeError``: a bad symbol or request;
    ``OperationFailed`` answers such as Binance's -1000; errors that are not ccxt's)."""
    found = _ccxt_error(error)
    if isinstance(found, (ccxt.DDoSProtection, ccxt.RateLimitExceeded)):
        return RATE_LIMITED
    if isinstance(found, ccxt.NetworkError):
        return UNREACHABLE
    return REFUSED


def failure_text(exchange_id: str, error: BaseException) -> str:
    """One line saying why ``exchange_id`` failed, led by what ``failure_kind`` found."""
    found = _ccxt_error(error)
    cause = f"{type(found).__name__}: {found}" if found is not None else ""
    kind = failure_kind(error)
    if kind == UNREACHABLE:
        return (f"{exchange_id} cannot be reached (no network connection, or the exchange is "
                f"down): {cause or error}")
    if kind == RATE_LIMITED:
        return (f"{exchange_id} is refusing requests for now (too many requests; retry in a "
                f"minute): {cause or error}")
    if found is None:  # our own check (no such market, no such timeframe): it says it all
        return str(error)
    return f"{exchange_id} answered with an error ({type(found).__name__}): {error}"
