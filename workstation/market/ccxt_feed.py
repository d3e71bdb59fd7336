"""Exchange candles through ccxt: paginated history, and a live stream that survives drops.

``CcxtFeed`` wraps one ccxt exchange (the ``ccxt.pro`` class where there is one, which is the
``ccxt.async_support`` REST client plus websockets) for one symbol and timeframe:

- ``fetch_history`` / ``fetch_range`` page ``fetch_ohlcv`` by hand in the exchange's own
  paging style (``paging``: from the last candle, fixed windows from ``since``, or recent
  only; ccxt's ``paginate=True`` returns nothing for old history) and say which spans the
  exchange answered for, retrying transient errors (see ``retry``);
- ``stream`` yields ``CandleUpdate``s: live by ``watch_ohlcv`` where the exchange has it, else
  by polling ``fetch_ohlcv``. A candle is reported closed once the next candle has appeared
  (ccxt does not expose Binance's kline "closed" flag) or, for REST rows, once its close time
  has passed. While the socket is away (refused, hanging, dropped) it polls REST and retries
  the socket in the background (``polling``), back-filling by REST, so every closed candle is
  yielded exactly once and in order across every switch.

Time ("now") is the feed's ``clock``: the system clock unless given.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TypeVar

import ccxt
import ccxt.async_support
import ccxt.pro

from ..errors import WorkstationError
from ..redact import redact, register, register_in
from .candles import Candles, CandleUpdate, CandleValidationError
from .credentials import RememberedCredentials, exchange_credentials, split_credentials
from .paging import (
    DEFAULT_PAGE_LIMIT,
    START,
    Collected,
    History,
    clip,
    collect,
    newer,
    offered_timeframes,
    page_limit,
    paging_style,
    recent_page_limit,
)
from .polling import SocketProbe
from .retry import (
    BANNED,
    TRANSIENT,
    ExchangeBanned,
    RetryPolicy,
    ban_text,
    call_with_retry,
    diagnose,
    tag_http_errors,
)
from .timeframes import ONE_MINUTE, Timeframe

log = logging.getLogger(__name__)
T = TypeVar("T")

STATES = ("connecting", "live", "reconnecting", "polling", "closed")


def parse_json_overrides(text: str | None, flag_name: str) -> dict | None:
    """The JSON object given to a CLI flag such as ``--ccxt-urls`` (None when not given)."""
    if text is None or not text.strip():
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise WorkstationError(f"{flag_name}: not valid JSON ({error.msg} at line {error.lineno} "
                               f"column {error.colno}): {redact(text)!r}") from None
    if not isinstance(value, dict):
        raise WorkstationError(f"{flag_name}: expected a JSON object such as "
                               f"'{{\"key\": \"value\"}}', got {type(value).__name__} "
                               f"{redact(text)!r}")
    return value


# ccxt's proxy settings and the HTTP headers it adds to every request are the exchange's own
# attributes, not ``options``: given in ``options`` (``--ccxt-options``), they go to its
# constructor
CONSTRUCTOR_FIELDS = ("httpProxy", "httpsProxy", "socksProxy", "wsProxy", "wssProxy",
                      "wsSocksProxy", "headers")


WELL_KNOWN = ("binance", "bybit", "okx", "kraken", "coinbase")  # named when an id is unknown


def _exchange_class(exchange_id: str):
    if exchange_id in ccxt.pro.exchanges:
        return getattr(ccxt.pro, exchange_id)
    if exchange_id in ccxt.async_support.exchanges:
        return getattr(ccxt.async_support, exchange_id)
    near = difflib.get_close_matches(exchange_id, ccxt.async_support.exchanges, n=3)
    hint = f"did you mean {', '.join(near)}? " if near else ""
    known = [name for name in WELL_KNOWN if name in ccxt.async_support.exchanges]
    raise WorkstationError(f"unknown exchange {exchange_id!r}: {hint}ccxt knows "
                           f"{len(ccxt.async_support.exchanges)} ids like {', '.join(known)}")


def price_tick(exchange, market: dict) -> float | None:
    """The market's price tick from its price precision (a tick size, or a number of decimal
    places), None where the exchange gives neither."""
    from ccxt.base.decimal_to_precision import DECIMAL_PLACES, TICK_SIZE

    precision = (market.get("precision") or {}).get("price")
    if isinstance(precision, bool) or not isinstance(precision, (int, float)) or \
            not math.isfinite(precision) or precision <= 0:
        return None
    mode = getattr(exchange, "precisionMode", None)
    if mode == TICK_SIZE:
        return float(precision)
    if mode == DECIMAL_PLACES and float(precision).is_integer():
        return 10.0 ** -int(precision)
    return None


def remember_tick(cache, feed: CcxtFeed) -> None:
    """Record the opened ``feed``'s price tick for its market in ``cache`` (a
    ``CandleCache``; what a backtest counts price moves in); nothing without one."""
    from ..timeparse import format_minute

    if feed.price_tick is not None:
        cache.put_tick(feed.exchange_id, feed.symbol, feed.price_tick,
                       f"{feed.exchange_id} price precision, recorded at fetch "
                       f"{format_minute(int(time.time() * 1000))}")


def _page_limit(exchange, market: dict) -> int:
    """Most candles one ``fetch_ohlcv`` returns for this market, from ccxt's ``features``
    (a bounded default where ccxt does not say; see ``paging.page_limit``)."""
    return page_limit(exchange, market)


def _update(row: Sequence, closed: bool) -> CandleUpdate:
    ts, o, h, l, c, v = row[:6]
    return CandleUpdate(int(ts), float(o), float(h), float(l), float(c), float(v), closed)


class _CloseTracker:
    """Turns exchange rows into updates that yield each closed candle once, in order.

    ``done_ts``: open time of the newest candle whose final state was yielded (or that the
    exchange was asked for and does not have). ``forming``: the newest row not yet closed;
    ``forming_live`` when its values come from the current websocket connection, which
    carries every change of the candle, so they are final when the next candle appears.
    """

    def __init__(self, timeframe: Timeframe, done_ts: int | None):
        self.tf = timeframe.ms
        self.done_ts = done_ts
        self.forming: list | None = None
        self.forming_live = False

    def next_needed(self) -> int | None:
        """Open time of the first candle whose final state is still owed (None: unknown)."""
        if self.done_ts is not None:
            return self.done_ts + self.tf
        return self.forming[0] if self.forming is not None else None

    def is_old(self, ts: int) -> bool:
        if self.done_ts is not None and ts <= self.done_ts:
            return True
        return self.forming is not None and ts < self.forming[0]

    def from_rest(self, rows: list[list], now_ms: int) -> list[CandleUpdate]:
        """Rows fetched by REST from ``next_needed()`` to the newest: every row but the last
        has a successor, so it is closed; the last is closed once its close time is past."""
        out = []
        rows = [row for row in rows if not self.is_old(row[0])]
        for i, row in enumerate(rows):
            if i < len(rows) - 1 or row[0] + self.tf <= now_ms:
                out.append(self._close(row))
            else:
                out.append(self._form(row, live=False))
        return out

    def from_gap_fill(self, rows: list[list], before_ts: int) -> list[CandleUpdate]:
        """Rows fetched to fill the gap before candle ``before_ts``: all closed."""
        out = [self._close(row) for row in rows if not self.is_old(row[0])]
        if self.done_ts is None or self.done_ts < before_ts - self.tf:
            self.done_ts = before_ts - self.tf
        return out

    def close_live_forming(self, ts: int) -> list[CandleUpdate]:
        """Candle ``ts`` appeared on the socket: the live forming candle just before it is
        closed with its last values. (If candles were skipped, the socket missed something:
        the forming candle is left to the REST gap fill instead.)"""
        if self.forming is not None and self.forming_live and self.forming[0] + self.tf == ts:
            return [self._close(self.forming)]
        return []

    def from_live(self, row: list) -> CandleUpdate:
        return self._form(row, live=True)

    def connection_lost(self) -> None:
        self.forming_live = False

    def _close(self, row: list) -> CandleUpdate:
        self.done_ts = row[0]
        self.forming = None
        self.forming_live = False
        return _update(row, True)

    def _form(self, row: list, live: bool) -> CandleUpdate:
        self.forming = row
        self.forming_live = live
        return _update(row, False)


def _short(error: BaseException | None, limit: int = 200) -> str:
    """An error's text cut to ``limit`` characters (a websocket's can quote every header)."""
    text = " ".join(str(error).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


class Stopped(Exception):
    """The stream's stop event was set while it waited."""


async def _unless_stopped(awaitable: Awaitable[T], stop: asyncio.Event | None) -> T:
    """Await ``awaitable``; raise ``Stopped`` (cancelling it) if ``stop`` is set first."""
    if stop is None:
        return await awaitable
    if stop.is_set():
        if asyncio.iscoroutine(awaitable):
            awaitable.close()
        raise Stopped
    task = asyncio.ensure_future(awaitable)
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
    if task.cancelled():
        raise Stopped
    return task.result()


class CcxtFeed:
    """Candles of ``symbol`` on ``timeframe`` from the ccxt exchange ``exchange_id``.

    ``urls`` is deep-merged into the exchange's ``urls['api']`` and ``options`` into its
    ``options`` (testnets, proxies, HTTP ``headers``, a loopback fake); ``config`` goes to the
    ccxt constructor (e.g. ``{"enableRateLimit": False}``) with the exchange's credentials:
    credential fields of ``options`` (``apiKey``, ``secret`` ...), else the environment, else
    the OS keyring (``market.credentials``); ``remember_credentials`` keeps them in the
    keyring. ``retry`` governs each REST call of ``fetch_history`` and the reconnect backoff
    of ``stream``; ``poll_interval`` (s) the REST polls while the socket is away,
    ``socket_timeout`` (s) how long the socket may take to connect before the state says
    ``polling``.
    ``clock()`` is exchange time in epoch ms (default: the system clock). ``on_state(state,
    detail)`` hears connection states (``STATES``); ``state`` and ``latency_ms`` (the last REST
    round trip) can be read at any time.

    Use ``async with CcxtFeed(...) as feed``: entering loads the markets and checks symbol and
    timeframe; leaving always closes the exchange's connections.
    """

    def __init__(self, exchange_id: str, symbol: str, timeframe: Timeframe = ONE_MINUTE, *,
                 urls: dict | None = None, options: dict | None = None,
                 config: dict | None = None, retry: RetryPolicy = RetryPolicy(),
                 poll_interval: float = 2.0, socket_timeout: float = 30.0,
                 clock: Callable[[], int] | None = None,
                 on_state: Callable[[str, str], None] | None = None,
                 remember_credentials: bool = False):
        self.exchange_id = exchange_id
        self.symbol = symbol
        self.timeframe = timeframe
        self.retry = retry
        self.poll_interval = poll_interval
        self.socket_timeout = socket_timeout
        self.on_state = on_state
        self.state = "closed"
        self._state_detail = ""
        self.latency_ms: float | None = None
        self.market: dict | None = None
        self.price_tick: float | None = None  # the market's price tick, once opened
        self.page_limit = DEFAULT_PAGE_LIMIT
        self.paging = START  # how the exchange pages history (``paging``), known once open
        self.listed_ms: int | None = None  # the market's listing time where ccxt knows it
        self.timeframes: tuple[str, ...] = ()  # offered by the exchange and supported here
        self._clock = clock or (lambda: int(time.time() * 1000))
        exchange_class = _exchange_class(exchange_id)
        given, options = split_credentials(options)
        register(*given.values())  # masked from here on, whatever fails next
        register_in([urls, options])  # a URL's user:password, a header's key ...
        credentials = exchange_credentials(exchange_id, given)
        if remember_credentials:
            RememberedCredentials().remember(exchange_id, credentials)
        own = {name: options.pop(name) for name in CONSTRUCTOR_FIELDS if name in options}
        exchange = exchange_class({**credentials, **own, **dict(config or {})})
        if urls:
            exchange.urls["api"] = exchange.deep_extend(exchange.urls["api"], urls)
        if options:
            exchange.options = exchange.deep_extend(exchange.options, options)
        self.exchange = tag_http_errors(exchange)  # errors carry HTTP status and headers

    # -- lifecycle -----------------------------------------------------------------------
    async def __aenter__(self) -> CcxtFeed:
        try:
            await self._open()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self, timeout_s: float = 10.0) -> None:
        """Close every connection of the exchange (safe to call twice), waiting at most
        ``timeout_s``: a stop (Ctrl-C, SIGTERM) never hangs on a connection that will not
        close."""
        try:
            await asyncio.wait_for(self.exchange.close(), timeout_s)
        except TimeoutError:
            log.warning("%s: its connections did not close within %.0f s; left to the "
                        "process's end", self.exchange_id, timeout_s)
        self._set_state("closed", "exchange closed")

    async def _open(self) -> None:
        ex = self.exchange
        await call_with_retry(ex.load_markets, self.retry,
                              what=f"{self.exchange_id} load_markets",
                              on_retry=self._log_retry)
        if self.symbol not in ex.markets:
            near = difflib.get_close_matches(self.symbol, list(ex.markets), n=3)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            raise WorkstationError(f"{self.exchange_id} has no market {self.symbol}{hint}")
        if not ex.has.get("fetchOHLCV"):
            raise WorkstationError(f"{self.exchange_id} does not serve candles (fetchOHLCV)")
        self.timeframes = offered_timeframes(ex)
        if self.timeframe.name not in self.timeframes:
            offers = (f"it offers {', '.join(self.timeframes)}" if self.timeframes else
                      "it offers none of the timeframes Workstation supports")
            raise WorkstationError(f"{self.exchange_id} has no {self.timeframe.name} candles; "
                                   f"{offers}")
        self.market = ex.markets[self.symbol]
        self.price_tick = price_tick(ex, self.market)
        self.page_limit = _page_limit(ex, self.market)
        self.paging = paging_style(ex)
        created = self.market.get("created")
        self.listed_ms = int(created) if isinstance(created, (int, float)) and created > 0 \
            else None

    # -- history ---------------------------------------------------------------------------
    async def fetch_history(self, since_ms: int, until_ms: int | None = None,
                            progress: Callable[[int, int], None] | None = None, *,
                            include_forming: bool = False) -> Candles:
        """Candles with open time in ``[since_ms, until_ms]`` (until: inclusive; None: now).

        The still-forming newest candle (close time after ``clock()``) is left out unless
        ``include_forming``, in which case it is the last row and ``last_closed`` is False.
        ``progress(done_ms, total_ms)`` is called after each page.
        """
        history = await self.fetch_range(since_ms, until_ms, progress,
                                         include_forming=include_forming)
        return history.candles

    async def fetch_range(self, since_ms: int, until_ms: int | None = None,
                          progress: Callable[[int, int], None] | None = None, *,
                          include_forming: bool = False) -> History:
        """``fetch_history``'s candles with the spans of closed candles the exchange answered
        for (``covered``) and why a stretch is not covered (``notes``); see ``paging``."""
        if until_ms is not None and until_ms < since_ms:
            raise WorkstationError(f"history range is empty: until {until_ms} is before "
                                   f"since {since_ms}")
        tf = self.timeframe.ms
        start = since_ms + (-since_ms) % tf
        now = self._clock()
        newest = now - now % tf
        last = newest if until_ms is None else min(until_ms - until_ms % tf, newest)
        what = f"{self.exchange_id} fetch_ohlcv {self.symbol} {self.timeframe.name}"

        async def page(since: int, limit: int) -> list:
            return await call_with_retry(lambda: self._fetch_page(since, limit), self.retry,
                                         what=what, on_retry=self._log_retry)

        got = await self._collect_spans(start, last, page, progress)
        rows = got.rows
        forming = bool(rows) and rows[-1][0] + tf > now
        if forming and not include_forming:
            rows.pop()
            forming = False
        # only closed candles count as answered: the forming one is asked for again
        return History(self._to_candles(rows, last_closed=not forming),
                       clip(got.covered, newest - tf), got.notes, got.served_from)

    async def _fetch_page(self, since: int | None, limit: int) -> list:
        started = time.perf_counter()
        rows = await self.exchange.fetch_ohlcv(self.symbol, self.timeframe.name, since=since,
                                               limit=limit)
        self.latency_ms = (time.perf_counter() - started) * 1000.0
        return rows

    async def _collect(self, start: int, last: int, page, progress=None) -> list[list]:
        """Rows with open time in ``[start, last]``, page after page in the exchange's paging
        style, through the whole range. ``page(since, limit)`` fetches one page."""
        return (await self._collect_spans(start, last, page, progress)).rows

    async def _collect_spans(self, start: int, last: int, page, progress=None) -> Collected:
        """``_collect`` with the spans the exchange answered for, and notes (``paging``)."""
        now = self._clock()
        market = self.market or {}

        def limit_at(since: int) -> int:
            return recent_page_limit(self.exchange, market, self.timeframe.name, since, now,
                                     self.page_limit)

        return await collect(start, last, self.timeframe.ms, page, style=self.paging,
                             limit_at=limit_at, listed=self.listed_ms, progress=progress,
                             what=f"{self.exchange_id} {self.symbol} {self.timeframe.name}")

    def _to_candles(self, rows: list[list], last_closed: bool) -> Candles:
        cols = list(zip(*rows)) if rows else [()] * 6
        try:
            return Candles.from_columns(cols, self.timeframe, last_closed=last_closed)
        except (CandleValidationError, TypeError, ValueError) as error:
            raise WorkstationError(f"{self.exchange_id} sent bad {self.symbol} "
                                   f"{self.timeframe.name} candles: {error}") from error

    # -- live --------------------------------------------------------------------------------
    async def stream(self, stop: asyncio.Event | None = None, *,
                     after_ts: int | None = None) -> AsyncIterator[CandleUpdate]:
        """Live updates until ``stop`` is set: forming (``closed=False``) and closed ones.

        ``after_ts``: open time of the newest closed candle the caller already has; the stream
        first yields every closed candle after it. Without it, it starts with the newest
        closed candle.

        Live by websocket where the exchange has ``watch_ohlcv``. While the socket is away
        (not connected yet, dropped, refused) REST is polled every ``poll_interval`` seconds
        and the socket retried in the background with backoff (``polling.SocketProbe``);
        after ``socket_timeout`` seconds without it (or with no socket at all) the state is
        ``polling``, and ``live`` again once it connects. Every closed candle is yielded once
        and in order, across every switch. Transient errors never end the stream (backoff,
        ``Retry-After`` honoured); a ban ends it with ``ExchangeBanned``, any other ccxt
        error with a ``WorkstationError``.
        """
        tf = self.timeframe.ms
        if after_ts is not None and after_ts % tf:
            raise WorkstationError(f"after_ts {after_ts} is not on the {self.timeframe.name} grid")
        now = self._clock()
        tracker = _CloseTracker(self.timeframe,
                                after_ts if after_ts is not None else now - now % tf - 2 * tf)
        probe: SocketProbe[list] | None = None
        if self.exchange.has.get("watchOHLCV"):
            probe = SocketProbe(
                lambda: self.exchange.watch_ohlcv(self.symbol, self.timeframe.name),
                self.retry, self.socket_timeout, what=f"{self.exchange_id} websocket")
            probe.start()
        first: list | None = None  # the socket's first message: it is (back) up
        no_socket = f"no websocket candles from {self.exchange_id}"  # why REST only
        rest_failures = 0
        self._set_state("connecting", f"{self.exchange_id} {self.symbol} {self.timeframe.name}")
        try:
            while True:
                if first is not None and probe is not None:  # live, until the socket fails
                    watching = self._watch(tracker, stop, first)
                    first, rest_failures = None, 0
                    try:
                        async with contextlib.aclosing(watching) as updates:  # type: ignore[type-var]
                            async for update in updates:
                                yield update
                    except ccxt.BaseError as error:
                        self._stream_error(error)
                        tracker.connection_lost()
                        self._set_state("reconnecting",
                                        f"live updates interrupted ({type(error).__name__}: "
                                        f"{_short(error)}); polling REST until the "
                                        f"{self.exchange_id} websocket is back")
                        log.warning("%s %s live updates interrupted: %s; polling REST until "
                                    "the websocket is back", self.exchange_id, self.symbol,
                                    error)
                        probe.start()
                    continue
                try:  # not live: REST brings every candle owed, then waits a poll interval
                    for update in await _unless_stopped(self._catch_up(tracker), stop):
                        yield update
                except ccxt.BaseError as error:
                    self._stream_error(error)
                    rest_failures += 1
                    wait = self.retry.delay(rest_failures, diagnose(error).retry_after)
                    self._set_state("reconnecting", f"REST retry {rest_failures} in {wait:.1f} s:"
                                                    f" {type(error).__name__}: {_short(error)}")
                    log.warning("%s %s stream: %s; retry %d in %.1f s", self.exchange_id,
                                self.symbol, error, rest_failures, wait)
                else:
                    rest_failures = 0
                    wait = self.poll_interval
                    if probe is None:
                        self._set_state("polling",
                                        f"REST every {self.poll_interval:g} s ({no_socket})")
                    elif probe.timed_out:
                        why = f"; last error: {probe.summary()}" if probe.last_error else ""
                        self._set_state("polling", f"REST every {self.poll_interval:g} s; "
                                                   f"{self.exchange_id} websocket not connected "
                                                   f"in {self.socket_timeout:g} s, retried in "
                                                   f"the background{why}")
                if probe is None:
                    await _unless_stopped(asyncio.sleep(wait), stop)
                    continue
                try:
                    first = await _unless_stopped(probe.wait(wait), stop)
                except ccxt.BaseError as error:  # the socket will not work: REST only
                    if diagnose(error).kind == BANNED:
                        self._stream_error(error)
                    log.warning("%s %s websocket unusable (%s: %s): polling REST only",
                                self.exchange_id, self.symbol, type(error).__name__, error)
                    no_socket = (f"the {self.exchange_id} websocket is unusable: "
                                 f"{type(error).__name__}: {_short(error)}")
                    probe = None
        except Stopped:
            pass
        finally:
            if probe is not None:
                await probe.close()
            self._set_state("closed", "stream stopped")

    def _stream_error(self, error: ccxt.BaseError) -> None:
        """Raise what ends the stream: a ban or a permanent error (a transient one returns)."""
        found = diagnose(error)
        if found.kind == BANNED:
            raise ExchangeBanned(ban_text(f"{self.exchange_id} {self.symbol} stream", error,
                                          found)) from error
        if found.kind != TRANSIENT:
            raise WorkstationError(f"{self.exchange_id} {self.symbol} stream "
                                   f"failed: {error}") from error

    async def _catch_up(self, tracker: _CloseTracker) -> list[CandleUpdate]:
        """REST: every candle from the first one still owed to the newest."""
        now = self._clock()
        newest = now - now % self.timeframe.ms
        owed = tracker.next_needed()  # None: nothing known yet, the newest candle is enough
        rows = await self._collect(newest if owed is None else owed, newest, self._fetch_page)
        return tracker.from_rest(rows, now)

    async def _watch(self, tracker: _CloseTracker, stop,
                     first: list | None = None) -> AsyncIterator[CandleUpdate]:
        """Socket updates, from ``first`` (the message the connection began with) on; a gap
        before a new candle is filled by REST first."""
        live = False
        while True:
            if first is not None:
                rows, first = first, None
            else:
                rows = await _unless_stopped(
                    self.exchange.watch_ohlcv(self.symbol, self.timeframe.name), stop)
            if not live:
                live = True
                self._set_state("live", f"{self.exchange_id} websocket")
            for row in newer(rows, None, None):
                ts = row[0]
                if tracker.is_old(ts):
                    continue
                for update in tracker.close_live_forming(ts):
                    yield update
                start = tracker.next_needed()
                if start is not None and start < ts:  # a gap before this candle
                    filled = await _unless_stopped(
                        self._collect(start, ts - self.timeframe.ms, self._fetch_page), stop)
                    for update in tracker.from_gap_fill(filled, ts):
                        yield update
                yield tracker.from_live(row)

    # -- reporting -----------------------------------------------------------------------------
    def _set_state(self, state: str, detail: str) -> None:
        if (state, detail) == (self.state, self._state_detail):
            return
        self.state, self._state_detail = state, detail
        if self.on_state is not None:
            self.on_state(state, detail)

    def _log_retry(self, attempt: int, delay: float, error: BaseException) -> None:
        log.warning("%s %s: %s: %s; retry %d in %.2f s", self.exchange_id, self.symbol,
                    type(error).__name__, error, attempt, delay)
