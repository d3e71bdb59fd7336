"""``LiveData``: the series on screen and the feed that keeps it current.

It owns one ``Candles`` object and one asyncio task (on the Qt loop through qasync) that
applies feed updates to it: the demo market, a replay of a stored series, or a ccxt exchange
(history from the cache, the missing recent part fetched, then live updates, with closed
candles written back to the cache). Widgets listen to its signals and never run I/O
themselves. A source that fails is reported as such; it is never replaced by another.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from ..errors import WorkstationError
from ..market.cache import CandleCache
from ..market.candles import Candles, CandleUpdate
from ..market.replay import replay
from ..market.series import DEMO_SOURCE, SeriesKey
from ..market.sources import demo_market, load_series
from ..market.timeframes import parse_timeframe
from ..redact import redact

log = logging.getLogger(__name__)
EXCHANGE_HISTORY = 1000  # candles fetched when the cache has none of an exchange series
DEMO_SHOWN = 500_000  # newest demo candles loaded (the 1s demo market grows 86,400 a day)


class LiveData(QObject):
    """See the module docstring. States: loading, live, replay, static, connecting,
    reconnecting, polling, offline, failed, closed."""

    candles_changed = Signal(str)  # "reset" | "append" | "update"
    candle_closed = Signal(int)  # index of a candle that just closed
    state_changed = Signal(str, str)  # state, detail

    def __init__(self, cache_path: Path, parent=None):
        super().__init__(parent)
        self.cache_path = Path(cache_path)
        self.key: SeriesKey | None = None
        self.candles = Candles("1m")
        self.state = "closed"
        self.detail = ""
        self.latency_ms: float | None = None
        self.last_update_wall: float | None = None
        # Extra CcxtFeed arguments for exchange sources: urls/options overrides (testnets,
        # proxies), ccxt constructor config, retry policy.
        self.feed_settings: dict = {}
        self._task: asyncio.Task | None = None
        self._stop = asyncio.Event()

    # -- state -----------------------------------------------------------------------------
    def _set_state(self, state: str, detail: str = "") -> None:
        detail = redact(detail)  # an exchange's error may quote a key or a signed URL
        self.state, self.detail = state, detail
        log.info("data %s: %s %s", self.key, state, detail)
        self.state_changed.emit(state, detail)

    def _reset(self, candles: Candles, key: SeriesKey) -> None:
        self.candles, self.key = candles, key
        self.candles_changed.emit("reset")

    def _apply(self, update: CandleUpdate) -> None:
        kind = self.candles.apply(update)
        self.last_update_wall = time.monotonic()
        self.candles_changed.emit(kind)
        if update.closed:
            self.candle_closed.emit(len(self.candles) - 1)

    # -- opening sources -------------------------------------------------------------------
    async def open(self, source: str, symbol: str | None, timeframe: str, *,
                   speed: float = 1.0) -> None:
        """Switch to a source. Demo and exchanges go live; files and the cache are static
        until ``replay_from`` is asked for."""
        await self.stop()
        tf = parse_timeframe(timeframe)
        source = source.strip()
        if source == DEMO_SOURCE:
            self._start(self._run_demo(symbol, tf, speed))
        elif source.startswith(("csv:", "cache")):
            self._set_state("loading", source)
            try:
                candles, key = load_series(source, symbol, tf, cache_path=self.cache_path)
            except WorkstationError as exc:
                self.key = SeriesKey(source.split(":")[0], symbol or "?", tf)
                self._set_state("failed", str(exc))
                return
            self._reset(candles, key)
            self._set_state("static", key.provenance)
        else:
            if not symbol:
                self._set_state("failed", f"a symbol is needed for {source}")
                return
            self._start(self._run_exchange(SeriesKey(source, symbol, tf)))

    def replay_from(self, index: int, speed: float) -> None:
        """Show the series up to ``index`` and play the rest as a live feed at ``speed``."""
        rest = self.candles
        index = max(1, min(int(index), len(rest) - 1))
        self._cancel()
        self._reset(rest.slice(0, index), self.key)
        self._start(self._run_replay(rest, index, speed))

    def _start(self, coro) -> None:
        self._stop = asyncio.Event()
        self._task = asyncio.ensure_future(coro)
        self._task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            log.error("feed for %s failed", self.key, exc_info=error)
            self._set_state("failed", str(error))

    def _cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._stop.set()
            self._task.cancel()

    async def stop(self) -> None:
        """End the feed task and wait until it has closed its connections."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            self._stop.set()
            task.cancel()
            # The task's own error is reported by _task_done.
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # -- feeds -----------------------------------------------------------------------------
    async def _run_demo(self, symbol: str | None, tf, speed: float) -> None:
        market = demo_market(symbol, tf)
        now = int(time.time() * 1000)
        self._reset(market.history(now, DEMO_SHOWN), market.key)
        self._set_state("live", f"DEMO market at {speed:g}x")
        ticks = int(max(2, min(60, tf.seconds / max(speed, 1e-9))))
        async for update in market.stream(now, speed=speed, ticks_per_candle=ticks,
                                          stop=self._stop):
            self._apply(update)

    async def _run_replay(self, source: Candles, index: int, speed: float) -> None:
        self._set_state("replay", f"{self.key.provenance} from candle {index} at {speed:g}x")
        async for update in replay(source, speed=speed, start=index, stop=self._stop):
            self._apply(update)
        self._set_state("static", f"replay finished: {self.key.provenance}")

    async def _run_exchange(self, key: SeriesKey) -> None:
        from ..market.ccxt_feed import CcxtFeed

        with CandleCache(self.cache_path) as cache:
            self._reset(cache.load(key), key)
        self._set_state("connecting", key.source)
        tf = key.timeframe.ms
        feed = CcxtFeed(key.source, key.symbol, key.timeframe, on_state=self._feed_state,
                        **self.feed_settings)
        try:
            async with feed:
                now = key.timeframe.floor(int(time.time() * 1000))
                since = (int(self.candles.ts[-1]) + tf if len(self.candles)
                         else now - EXCHANGE_HISTORY * tf)
                recent = await feed.fetch_history(since, now)
                self.latency_ms = feed.latency_ms
                if len(recent):
                    self._store(key, recent)
                    self._reset(self.candles.merge(recent), key)
                after = int(self.candles.ts[-1]) if len(self.candles) else None
                async for update in feed.stream(self._stop, after_ts=after):
                    self.latency_ms = feed.latency_ms
                    self._apply(update)
                    if update.closed:
                        self._store(key, Candles.from_updates([update], key.timeframe))
        except WorkstationError as exc:
            cached = len(self.candles)
            self._set_state("offline", f"{exc}. Showing {cached} cached candles of {key}; "
                                       f"choose the demo market or import a file to work offline")

    def _feed_state(self, state: str, detail: str) -> None:
        self._set_state(state, detail)

    def _store(self, key: SeriesKey, candles: Candles) -> None:
        with CandleCache(self.cache_path) as cache:
            cache.put(key, candles)
