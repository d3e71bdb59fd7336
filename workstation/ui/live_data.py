"""``LiveData``: the series on screen and the feed that keeps it current.

It owns one ``Candles`` object and one asyncio task (on the Qt loop through qasync) that
applies feed updates to it: the demo market, a stored series, or a ccxt exchange
(history from the cache, the missing recent part fetched, then live updates, with closed
candles written back to the cache). Widgets listen to its signals and never run I/O
themselves. A source that fails is reported as such; it is never replaced by another.

Opening a source without a symbol opens it with the one last used with it (``remembered``,
kept by the window's settings), else the core's default (``sources.symbol_for``). A file
(``csv:FILE``) is imported into the candle cache once, off the GUI thread with ``progress``
reports, and read from the cache afterwards (``sources.open_candle_file``), on its own
timeframe or resampled to a longer one. It is read before the series on screen is let go: a
file refused for its timeframe, or one that contradicts its symbol (``refused``; the window
asks, then opens it again with ``symbol_ok``), leaves the chart and its feed as they were and
stores nothing. Any other switch that fails empties the chart (the series on screen is the
one asked for, with no candles); a feed that stops with an error drops its forming candle,
so what stays on screen is closed candles marked offline or failed, never an old candle
still "forming".

In blind replay (``ui.replay_mode``) the feed stops and the series is what the replay clock
has passed (``show_replay``), one closed candle more at each step (``reveal``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from ..errors import WorkstationError
from ..market.cache import CandleCache
from ..market.candles import Candles, CandleUpdate
from ..market.csv_io import ImportCancelled
from ..market.file_symbol import SymbolMismatch
from ..market.file_timeframe import TimeframeMismatch, resampled_note
from ..market.series import SeriesKey
from ..market.sources import (
    FileOpened,
    SourceSpec,
    demo_market,
    file_key,
    load_series,
    open_candle_file,
    parse_source,
    symbol_for,
)
from ..market.timeframes import ONE_MINUTE, Timeframe, parse_timeframe
from ..redact import redact

log = logging.getLogger(__name__)
EXCHANGE_HISTORY = 1000  # candles fetched when the cache has none of an exchange series
DEMO_SHOWN = 500_000  # newest demo candles loaded (the 1s demo market grows 86,400 a day)
OPENED_STATES = ("live", "static", "polling", "replay")  # a source that delivered candles
# Files are read (and imported into the cache) one at a time, off the GUI thread.
_FILES = ThreadPoolExecutor(max_workers=1, thread_name_prefix="candle-file")


def feeds_can_run() -> bool:
    """Whether an event loop runs here for feeds (the app's qasync loop always does; a widget
    driven without one cannot open a feed)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class LiveData(QObject):
    """See the module docstring. States: loading, live, replay, static, connecting,
    reconnecting, polling, offline, failed, closed."""

    candles_changed = Signal(str)  # "reset" | "append" | "update"
    candle_closed = Signal(int)  # index of a candle that just closed
    state_changed = Signal(str, str)  # state, detail
    progress = Signal(float, str)  # fraction of a file import done (1.0: finished), what
    opening = Signal(str, str, str)  # source, symbol (as resolved), timeframe being opened

    def __init__(self, cache_path: Path, parent=None):
        super().__init__(parent)
        self.cache_path = Path(cache_path)
        self.key: SeriesKey | None = None
        self.candles = Candles(ONE_MINUTE)
        self.state = "closed"
        self.detail = ""
        self.latency_ms: float | None = None
        self.last_update_wall: float | None = None
        # Extra CcxtFeed arguments for exchange sources: urls/options overrides (testnets,
        # proxies), ccxt constructor config, retry policy.
        self.feed_settings: dict = {}
        self.spec: str | None = None  # the source as asked for (``csv:/full/path``, ...)
        self.speed = 1.0  # the demo market's and a replay's, as last opened
        self._replaying = False
        self.remembered: dict[str, str] = {}  # source -> the symbol last opened with it
        self.last_import: bool | None = None  # whether the last file opened was read anew
        self.file_timeframe: Timeframe | None = None  # the file on screen's own timeframe
        self.refused: WorkstationError | None = None  # why the last open changed nothing
        self._task: asyncio.Task | None = None
        self._stop = asyncio.Event()
        self._generation = 0  # opens so far: an open overtaken by a newer one gives up
        self._file_stop = threading.Event()

    @property
    def streaming(self) -> bool:
        """Whether the source asked for streams new candles (the demo market or an exchange,
        not a file, the cache or a replay), whatever its state now."""
        try:
            kind = parse_source(self.spec or "").kind
        except WorkstationError:
            return False  # it names no source
        return kind in ("demo", "exchange") and not self._replaying

    @property
    def running(self) -> bool:
        """Whether a feed task runs (a stream, a replay, an opening)."""
        return self._task is not None and not self._task.done()

    # -- state -----------------------------------------------------------------------------
    def _set_state(self, state: str, detail: str = "") -> None:
        detail = redact(detail)  # an exchange's error may quote a key or a signed URL
        self.state, self.detail = state, detail
        if state in OPENED_STATES and self.spec and self.key is not None:
            self.remembered[self.spec] = self.key.symbol  # before anyone hears of the state
        log.info("data %s: %s %s", self.key, state, detail)
        self.state_changed.emit(state, detail)

    def _reset(self, candles: Candles, key: SeriesKey) -> None:
        self.candles, self.key = candles, key
        self.candles_changed.emit("reset")

    def _fail(self, key: SeriesKey, detail: str) -> None:
        """A switch that failed: the series asked for, with no candles, and why."""
        self._reset(Candles(key.timeframe), key)
        self._set_state("failed", detail)

    def _drop_forming(self) -> None:
        """A feed that stopped leaves closed candles only: its forming one will never close."""
        if len(self.candles) and not self.candles.last_closed and self.key is not None:
            self._reset(self.candles.slice(0, self.candles.n_closed), self.key)

    def _apply(self, update: CandleUpdate) -> None:
        kind = self.candles.apply(update)
        self.last_update_wall = time.monotonic()
        self.candles_changed.emit(kind)
        if update.closed:
            self.candle_closed.emit(len(self.candles) - 1)

    # -- opening sources -------------------------------------------------------------------
    def symbol_for(self, source: str, timeframe: Timeframe) -> str | None:
        """The symbol ``source`` opens with when none is given (see the module docstring)."""
        source = source.strip()
        try:
            spec: SourceSpec | None = parse_source(source)
        except WorkstationError:
            spec = None  # it names no source (yet): only a symbol remembered with it fits
        cached, imported = [], []
        if spec is not None and spec.kind != "demo" and source not in self.remembered:
            try:
                with CandleCache(self.cache_path) as cache:
                    cached = cache.keys()
                    if spec.kind == "file":
                        imported = cache.imported_symbols(spec.argument)
            except WorkstationError as exc:  # a damaged cache: its error shows on opening
                log.warning("choosing a symbol for %s: %s", source, exc)
        return symbol_for(source, timeframe, remembered=self.remembered.get(source),
                          cached=cached, imported=imported)

    async def open(self, source: str, symbol: str | None, timeframe: str, *,
                   speed: float = 1.0, symbol_ok: bool = False) -> None:
        """Switch to a source on ``timeframe`` ("" for a file: its own). Demo and exchanges
        go live; files and the cache are static (a blind replay plays them). Returns
        once a file or the cache is on screen (or failed, or refused: see the module
        docstring); a feed goes on in its task. An open overtaken by a newer one gives up."""
        self._generation += 1
        generation = self._generation
        own = not timeframe.strip()  # a file on its own timeframe, known once it is read
        tf = ONE_MINUTE if own else parse_timeframe(timeframe)
        source = source.strip()
        symbol = (symbol or "").strip().upper() or self.symbol_for(source, tf)
        self.refused, problem = None, ""
        try:
            spec: SourceSpec | None = parse_source(source)
        except WorkstationError as exc:
            spec, problem = None, str(exc)
        read: FileOpened | WorkstationError | None = None
        if spec is not None and spec.kind == "file" and symbol:
            read = await self._read_file(spec.argument, symbol, None if own else tf, symbol_ok)
            if read is None or generation != self._generation:
                return  # refused, cancelled or overtaken: the series on screen stays
            if isinstance(read, FileOpened):
                tf = read.key.timeframe
        await self.stop()
        if generation != self._generation:
            return
        self.speed = float(speed)
        self._replaying = False
        self.spec = source
        self.file_timeframe = None
        self.progress.emit(1.0, "")  # an import overtaken by this opening shows no more
        self.opening.emit(source, symbol or "", tf.name)
        if spec is None:
            self._fail(SeriesKey(source or "?", symbol or "?", tf), problem)
            return
        if spec.kind == "demo":
            self._start(self._run_demo(symbol, tf, speed))
        elif spec.kind == "file":
            self._show_file(spec.argument, symbol, tf, read)
        elif spec.kind == "cache":
            await self._open_cached(source, spec.argument, symbol, tf)
        elif not symbol:
            self._fail(SeriesKey(source, "?", tf), f"a symbol is needed for {source}")
        else:
            self._start(self._run_exchange(SeriesKey(source, symbol, tf)))

    async def _in_thread(self, work):
        """``work(progress, stop)`` on the file thread; its progress is re-emitted here."""
        loop = asyncio.get_running_loop()
        self._file_stop = stop = threading.Event()
        generation = self._generation

        def progress(done: float, what: str) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody listens
                loop.call_soon_threadsafe(self._progress, generation, done, what)

        try:
            return await loop.run_in_executor(_FILES, work, progress, stop.is_set)
        finally:
            stop.set()  # cancelled while it ran: it stops at its next step

    def _progress(self, generation: int, done: float, what: str) -> None:
        if generation == self._generation:
            self.progress.emit(done, what)

    async def _read_file(self, path: str, symbol: str, tf: Timeframe | None, symbol_ok: bool
                         ) -> FileOpened | WorkstationError | None:
        """The file's candles on ``tf`` (``open_candle_file``, on the file thread), or the
        error to show once the series on screen is let go; None when the file is refused
        (``refused`` says why), cancelled or overtaken."""
        generation = self._generation
        self._file_stop.set()  # a file still being read for an older opening stops
        name = Path(path).name
        try:
            return await self._in_thread(lambda progress, stop: open_candle_file(
                path, symbol, tf, cache_path=self.cache_path, stop=stop, symbol_ok=symbol_ok,
                progress=lambda done, what: progress(done, f"importing {name}: {what}")))
        except ImportCancelled:
            return None
        except (TimeframeMismatch, SymbolMismatch) as exc:
            if generation == self._generation:
                self.progress.emit(1.0, "")
                self.refused = exc
                log.info("not opened: %s", exc)
            return None
        except WorkstationError as exc:
            return exc

    def _show_file(self, path: str, symbol: str | None, tf: Timeframe,
                   read: FileOpened | WorkstationError | None) -> None:
        key = file_key(path, symbol or "?", tf)
        if not symbol or read is None:
            self._fail(key, f"type the symbol of {Path(path).name} (e.g. ETH/USDT): its name "
                            f"does not say it")
            return
        if isinstance(read, WorkstationError):
            self._fail(key, str(read))
            return
        self.last_import, self.file_timeframe = read.imported, read.own
        self._reset(read.candles, read.key)
        how = "imported into the candle cache" if read.imported else "from the candle cache"
        self._set_state("static", f"{read.key.provenance}: {len(read.candles):,} candles "
                                  f"{how}{resampled_note(read.own, tf)}")

    async def _open_cached(self, source: str, name: str, symbol: str | None, tf: Timeframe
                           ) -> None:
        key = SeriesKey(name or "cache", symbol or "?", tf)
        generation = self._generation
        self._reset(Candles(tf), key)
        if not symbol:
            self._fail(key, "the candle cache holds no candles to open; fetch some "
                            "(`workstation fetch`) or import a file")
            return
        self._set_state("loading", source)
        try:
            candles, key = await self._in_thread(lambda _progress, _stop: load_series(
                source, symbol, tf, cache_path=self.cache_path))
        except WorkstationError as exc:
            if generation == self._generation:
                self._fail(key, str(exc))
            return
        if generation != self._generation:
            return
        self._reset(candles, key)
        self._set_state("static", key.provenance)

    def show_replay(self, candles: Candles, detail: str) -> None:
        """Blind replay: the feed stops and the series shown is ``candles`` (those the replay
        clock has passed; the series' key stays)."""
        assert self.key is not None  # a replay starts on a series on screen
        self._cancel()
        self._replaying = True  # before the reset: its listeners see a replay
        self._reset(candles, self.key)
        self._set_state("replay", detail)

    def end_replay(self, candles: Candles) -> None:
        """The blind replay ended: the whole series (``candles``) is shown again."""
        assert self.key is not None
        self._replaying = False
        self._reset(candles, self.key)
        self._set_state("static", self.key.provenance)

    def reveal(self, candles: Candles) -> None:
        """The replay clock passed ``candles`` (closed, after the last one shown)."""
        for i in range(len(candles)):
            self._apply(candles.row(i))

    def _start(self, coro) -> None:
        self._stop = asyncio.Event()
        self._task = asyncio.ensure_future(coro)
        self._task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if isinstance(error, WorkstationError):  # a message for the user: one line
            log.error("feed for %s failed: %s", self.key, redact(str(error)))
            self._drop_forming()
            self._set_state("failed", str(error))
        elif error is not None:
            log.error("feed for %s failed", self.key, exc_info=error)
            self._drop_forming()
            self._set_state("failed", str(error))

    def _cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._stop.set()
            self._task.cancel()

    async def stop(self) -> None:
        """End the feed task and wait until it has closed its connections."""
        self._file_stop.set()  # a file being read stops at its next step
        task, self._task = self._task, None
        if task is not None and not task.done():
            self._stop.set()
            task.cancel()
            # The task's own error is reported by _task_done; a cancel of the caller's goes on.
            await asyncio.wait({task})

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

    async def _run_exchange(self, key: SeriesKey) -> None:
        from ..market.ccxt_feed import CcxtFeed, remember_tick

        with CandleCache(self.cache_path) as cache:
            self._reset(cache.load(key), key)
        self._set_state("connecting", key.source)
        tf = key.timeframe.ms
        feed = CcxtFeed(key.source, key.symbol, key.timeframe, on_state=self._feed_state,
                        **self.feed_settings)
        try:
            async with feed:
                with CandleCache(self.cache_path) as cache:
                    remember_tick(cache, feed)
                now = key.timeframe.floor(int(time.time() * 1000))
                since = (int(self.candles.ts[-1]) + tf if len(self.candles)
                         else now - EXCHANGE_HISTORY * tf)
                # the cache may run ahead of this computer's clock (the exchange's is ahead)
                recent = await feed.fetch_history(since, now) if since <= now \
                    else Candles(key.timeframe)
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
            from ..market.retry import UNREACHABLE, failure_kind, failure_text  # ccxt: 0.6 s

            self._drop_forming()
            cached = len(self.candles)
            shown = (f"Showing {cached:,} cached candles of {key} (not live)" if cached
                     else "No cached candles of it to show")
            if failure_kind(exc) == UNREACHABLE:
                self._set_state("offline", f"{failure_text(key.source, exc)}. {shown}; choose "
                                           f"the demo market or import a file to work offline")
            else:
                self._set_state("failed", f"{failure_text(key.source, exc)}. {shown}")

    def _feed_state(self, state: str, detail: str) -> None:
        self._set_state(state, detail)

    def _store(self, key: SeriesKey, candles: Candles) -> None:
        with CandleCache(self.cache_path) as cache:
            cache.put(key, candles)
