"""Retrying exchange calls: which errors are worth another try, and how long to wait.

ccxt's error classes come from per-exchange lists of error bodies, so they are not enough: a
429 or 503 whose body ccxt does not know (Coinbase ``RESOURCE_EXHAUSTED``, KuCoin
``503000``, Bybit ``10016`` ...) arrives as a plain ``ExchangeError``, while ccxt maps some
answers that will never change (HTTP 400, 403, 404) to ``ExchangeNotAvailable``, a
``NetworkError``. ``tag_http_errors`` therefore records the HTTP status and headers on every
ccxt error an exchange raises from a response, and ``diagnose`` decides by them first:

- **banned** (stop at once; another request lengthens the ban): HTTP 418, or an answer that
  says the IP is banned (Binance's ``-1003 ... IP banned until``);
- **transient** (retry): HTTP 429, 408 and every 5xx whatever the body, and, without a
  status, ccxt's ``OperationFailed`` family (``NetworkError``: timeouts, dropped or refused
  connections, ``DDoSProtection``; Binance's -1000 ``OperationFailed``);
- **permanent** (never retried): any other 4xx answer (bad symbol, bad request, auth) and
  every other ccxt error (``ExchangeError``: ``BadSymbol``, ``AuthenticationError``, ...).

A transient answer's ``Retry-After`` header (seconds or an HTTP date) is honoured: the wait
is never shorter than it asks. ``call_with_retry`` backs off exponentially with jitter and is
bounded both in attempts and in total time (``RetryPolicy``).
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import ccxt

from ..errors import WorkstationError

T = TypeVar("T")

TRANSIENT = "transient"
BANNED = "banned"
PERMANENT = "permanent"

_STATUS_ATTR = "workstation_http_status"
_HEADERS_ATTR = "workstation_http_headers"
# ccxt's own messages: "<id> GET <url> 503 Service Unavailable <body>" (handle_http_status_code),
# "binance 418 I'm a teapot <body>" (binance), "503, message='Invalid response status', url=..."
# (aiohttp's websocket handshake, as ccxt words it), "status=503" (its repr)
_STATUS_PATTERNS = (re.compile(r"\b(?:GET|POST|PUT|DELETE|PATCH|HEAD) \S+ ([1-5]\d\d)\b"),
                    re.compile(r"^\w+ ([1-5]\d\d) "),
                    re.compile(r"^([1-5]\d\d), message="),
                    re.compile(r"\bstatus=([1-5]\d\d)\b"))
_BAN = re.compile(r"\b(?:IP|address|you are|you're|has been|is) banned\b|\bbanned until\b",
                  re.IGNORECASE)
_BANNED_UNTIL = re.compile(r"banned until (\d{12,13})\b")


@dataclass(frozen=True)
class RetryPolicy:
    """``max_attempts`` tries per call (1 = no retry); the n-th retry waits
    ``min(max_delay, base_delay * 2**(n-1))``, shortened by up to ``jitter`` (a fraction), or
    longer if the exchange's ``Retry-After`` asks so. A call gives up once its next wait would
    end more than ``max_elapsed`` seconds after it started."""

    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.5
    max_elapsed: float = 120.0

    def __post_init__(self):
        if self.max_attempts < 1:
            raise WorkstationError(f"retry max_attempts must be >= 1, got {self.max_attempts}")
        if self.base_delay < 0 or self.max_delay < 0 or self.max_elapsed < 0:
            raise WorkstationError("retry delays must be >= 0")
        if not 0 <= self.jitter <= 1:
            raise WorkstationError(f"retry jitter must be within 0..1, got {self.jitter}")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based); at least ``retry_after``."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** min(retry - 1, 62))
        backoff = ceiling * (1.0 - self.jitter * random.random())
        return max(backoff, retry_after) if retry_after is not None else backoff


# -- what an error says ----------------------------------------------------------------------
def tag_http_errors(exchange: Any) -> Any:
    """Make every ccxt error ``exchange`` raises from an HTTP answer carry its status and
    headers (read back by ``http_status``/``retry_after``). Wraps the instance's
    ``handle_errors`` (the exchange's body checks) and ``handle_http_status_code`` (ccxt's
    fallback by status, called right after it); returns ``exchange``."""
    handle_errors = exchange.handle_errors
    handle_http_status_code = exchange.handle_http_status_code

    def tag(error: ccxt.BaseError, status: Any, headers: Any) -> None:
        if getattr(error, _STATUS_ATTR, None) is None:
            setattr(error, _STATUS_ATTR, status)
            setattr(error, _HEADERS_ATTR, headers)

    def tagged_handle_errors(code, reason, url, method, headers, *rest):
        try:
            return handle_errors(code, reason, url, method, headers, *rest)
        except ccxt.BaseError as error:
            tag(error, code, headers)
            raise

    def tagged_handle_http_status_code(code, reason, url, method, body):
        try:
            return handle_http_status_code(code, reason, url, method, body)
        except ccxt.BaseError as error:
            tag(error, code, getattr(exchange, "last_response_headers", None))
            raise

    exchange.handle_errors = tagged_handle_errors
    exchange.handle_http_status_code = tagged_handle_http_status_code
    return exchange


def _ccxt_error(error: BaseException | None) -> ccxt.BaseError | None:
    """The ccxt error ``error`` is, or was raised from (``from``/context chain)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, ccxt.BaseError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def http_status(error: BaseException) -> int | None:
    """The HTTP status of the answer behind ``error`` (None: no answer, or not known)."""
    found = _ccxt_error(error)
    if found is None:
        return None
    status = getattr(found, _STATUS_ATTR, None)
    if status is not None:
        try:
            return int(status)
        except (TypeError, ValueError):
            return None
    text = str(found)
    for pattern in _STATUS_PATTERNS:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


def retry_after(error: BaseException, now: Callable[[], float] = time.time) -> float | None:
    """Seconds the answer behind ``error`` asks to wait (its ``Retry-After``), or None."""
    found = _ccxt_error(error)
    headers = getattr(found, _HEADERS_ATTR, None) if found is not None else None
    if not isinstance(headers, dict):
        return None
    value = next((str(v) for k, v in headers.items() if str(k).lower() == "retry-after"), None)
    if value is None or not value.strip():
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now())


@dataclass(frozen=True)
class Diagnosis:
    """What to do about an error: ``kind`` is ``TRANSIENT``, ``BANNED`` or ``PERMANENT``."""

    kind: str
    status: int | None = None
    retry_after: float | None = None


def diagnose(error: BaseException) -> Diagnosis:
    """Whether ``error`` is worth a retry; see the module docstring."""
    found = _ccxt_error(error)
    status = http_status(error)
    wait = retry_after(error)
    text = str(found) if found is not None else str(error)
    if status == 418 or (_BAN.search(text) and (
            status in (403, 429) or isinstance(found, ccxt.DDoSProtection))):
        return Diagnosis(BANNED, status, wait)
    if status is not None and status >= 400:
        transient = status in (408, 429) or status >= 500
        return Diagnosis(TRANSIENT if transient else PERMANENT, status, wait)
    if isinstance(found, ccxt.OperationFailed):
        return Diagnosis(TRANSIENT, status, wait)
    return Diagnosis(PERMANENT, status, wait)


def is_transient(error: BaseException) -> bool:
    """Whether a retry may succeed (``diagnose`` says ``TRANSIENT``)."""
    return diagnose(error).kind == TRANSIENT


class ExchangeBanned(WorkstationError):
    """The exchange banned this IP address (HTTP 418 ...): nothing is retried."""


def ban_text(what: str, error: BaseException, diagnosis: Diagnosis | None = None) -> str:
    """Why ``what`` stopped at a ban, and for how long (as far as the exchange said)."""
    diagnosis = diagnosis or diagnose(error)
    status = f"HTTP {diagnosis.status}" if diagnosis.status else "a ban"
    found = _ccxt_error(error)
    until = _BANNED_UNTIL.search(str(found) if found is not None else str(error))
    if until:
        end = datetime.fromtimestamp(int(until.group(1)) / 1000, UTC)
        how_long = f" until {end:%Y-%m-%d %H:%M:%S} UTC"
    elif diagnosis.retry_after is not None:
        how_long = f" for {diagnosis.retry_after:.0f} s (Retry-After)"
    else:
        how_long = ""
    return (f"{what} stopped: the exchange has banned this IP address{how_long} ({status}: "
            f"too many requests). Nothing was retried, since every request during a ban "
            f"lengthens it; wait for the ban to end before opening it again: {error}")


# -- retrying --------------------------------------------------------------------------------
async def call_with_retry(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    what: str,
    on_retry: Callable[[int, float, BaseException], None] | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> T:
    """Await ``call()``, retrying transient errors per ``policy``.

    A ban becomes an ``ExchangeBanned``; a permanent ccxt error, the last transient one, or
    one whose wait would overrun ``policy.max_elapsed`` a ``WorkstationError`` naming
    ``what`` failed. ``on_retry(retry, delay_s, error)`` is told before each wait.
    """
    started = time.monotonic()
    waited = 0.0  # time asked to sleep (what a real sleep adds to the elapsed time)
    attempt = 1
    while True:
        try:
            return await call()
        except ccxt.BaseError as error:
            found = diagnose(error)
            if found.kind == BANNED:
                raise ExchangeBanned(ban_text(what, error, found)) from error
            if found.kind != TRANSIENT:
                raise WorkstationError(f"{what} failed: {error}") from error
            if attempt >= policy.max_attempts:
                raise WorkstationError(
                    f"{what} failed after {attempt} attempts: {error}") from error
            delay = policy.delay(attempt, found.retry_after)
            elapsed = max(time.monotonic() - started, waited)
            if elapsed + delay > policy.max_elapsed:
                asked = (f" (the exchange asks to wait {found.retry_after:.0f} s)"
                         if found.retry_after is not None and found.retry_after >= delay
                         else "")
                raise WorkstationError(
                    f"{what} failed after {attempt} attempts: waiting {delay:.1f} s more"
                    f"{asked} would exceed the {policy.max_elapsed:g} s allowed: "
                    f"{error}") from error
            if on_retry is not None:
                on_retry(attempt, delay, error)
            await sleep(delay)
            waited += delay
            attempt += 1


# -- telling the user ------------------------------------------------------------------------
UNREACHABLE = "unreachable"  # no answer: no network, DNS, refused connection, timeout, 5xx down
RATE_LIMITED = "rate limited"  # the exchange answered: too many requests (HTTP 429)
BANNED_IP = "banned"  # the exchange answered: this IP is banned for a while (HTTP 418)
REFUSED = "refused"  # the exchange answered with an error, or the request was never valid


def failure_kind(error: BaseException) -> str:
    """Why an exchange call failed: ``BANNED_IP`` for a ban (see ``diagnose``),
    ``RATE_LIMITED`` for HTTP 429 and ccxt's ``DDoSProtection``/``RateLimitExceeded`` (it was
    reached and said "too many requests"), ``REFUSED`` for any other 4xx answer, then by
    ccxt's error class: ``UNREACHABLE`` for a ``ccxt.NetworkError`` (the exchange cannot be
    reached), ``REFUSED`` for everything else (``ExchangeError``: a bad symbol or request;
    ``OperationFailed`` answers such as Binance's -1000; errors that are not ccxt's)."""
    found = _ccxt_error(error)
    if isinstance(error, ExchangeBanned) or (found is not None
                                             and diagnose(found).kind == BANNED):
        return BANNED_IP
    status = http_status(error) if found is not None else None
    if status == 429 or isinstance(found, (ccxt.DDoSProtection, ccxt.RateLimitExceeded)):
        return RATE_LIMITED
    if status is not None and 400 <= status < 500:
        return REFUSED
    if isinstance(found, ccxt.NetworkError):
        return UNREACHABLE
    return REFUSED


def failure_text(exchange_id: str, error: BaseException) -> str:
    """One line saying why ``exchange_id`` failed, led by what ``failure_kind`` found."""
    found = _ccxt_error(error)
    cause = f"{type(found).__name__}: {found}" if found is not None else ""
    kind = failure_kind(error)
    if kind == BANNED_IP:
        if isinstance(error, ExchangeBanned):
            return str(error)
        return ban_text(exchange_id, error)
    if kind == UNREACHABLE:
        return (f"{exchange_id} cannot be reached (no network connection, or the exchange is "
                f"down): {cause or error}")
    if kind == RATE_LIMITED:
        return (f"{exchange_id} is refusing requests for now (too many requests; retry in a "
                f"minute): {cause or error}")
    if found is None:  # our own check (no such market, no such timeframe): it says it all
        return str(error)
    return f"{exchange_id} answered with an error ({type(found).__name__}): {error}"
