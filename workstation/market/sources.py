"""Named data sources as the CLI and the window take them: ``demo``, ``csv:FILE``, ``cache``,
``cache:NAME`` or an exchange id (its cached candles), read by ``parse_source`` alone.
Loading never substitutes one source for another: a source with no data is an error that
says what to do."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import WorkstationError
from ..paths import app_paths
from .cache import CacheError, CandleCache, FileStamp
from .candles import Candles
from .csv_io import CsvFormatError, ImportCancelled, Progress, read_candles_csv
from .demo import DEMO_SYMBOL, DemoMarket, demo_anchor
from .file_symbol import check_file_symbol, symbol_from_file_name
from .file_timeframe import FileTimeframeError, infer_timeframe, on_timeframe
from .series import DEMO_SOURCE, SeriesKey
from .timeframes import ALL, Timeframe

SOURCE_GRAMMAR = "demo, an exchange id, cache, cache:NAME or csv:FILE"


@dataclass(frozen=True)
class SourceSpec:
    """A source as named: ``kind`` and its ``argument`` (the exchange id; the cached source's
    name, "" for any (``cache``); the file's path; "" for the demo market)."""

    kind: Literal["demo", "exchange", "cache", "file"]
    argument: str = ""


def parse_source(text: str) -> SourceSpec:
    """The source ``text`` names (see the module docstring); a ``WorkstationError`` for text
    that names none."""
    spec = text.strip()
    if not spec:
        raise WorkstationError(f"no data source given: use {SOURCE_GRAMMAR}")
    if spec == DEMO_SOURCE:
        return SourceSpec("demo")
    if spec == "cache":
        return SourceSpec("cache")
    if spec.startswith("csv:"):
        return SourceSpec("file", _named(spec, "csv:", "FILE"))
    if spec.startswith("cache:"):
        return SourceSpec("cache", _named(spec, "cache:", "NAME"))
    return SourceSpec("exchange", spec)


def _named(spec: str, prefix: str, what: str) -> str:
    """What follows ``prefix`` in ``spec``; an error when nothing does."""
    if not spec[len(prefix):]:
        raise WorkstationError(f"source {spec!r} names no {what}: use {prefix}{what}")
    return spec[len(prefix):]


def demo_seed(symbol: str, timeframe: Timeframe) -> int:
    """A stable seed per demo symbol and timeframe: each pair is its own reproducible market."""
    name = f"{symbol.strip().upper()} {timeframe.name}"
    return zlib.crc32(name.encode())


def demo_market(symbol: str | None, tf: Timeframe) -> DemoMarket:
    """The demo market of ``symbol`` (default DEMO/USDT) on ``tf``, on the anchor kept
    in the data dir (fixed at first use), so its candles are the same on every launch."""
    symbol = (symbol or DEMO_SYMBOL).strip().upper()
    return DemoMarket(tf, anchor_ms=demo_anchor(app_paths().demo_anchor),
                      seed=demo_seed(symbol, tf), symbol=symbol)


def load_series(spec: str, symbol: str | None, tf: Timeframe, *,
                max_candles: int | None = None, cache_path: Path | None = None
                ) -> tuple[Candles, SeriesKey]:
    """Candles and their key for a source ``spec`` (see the module docstring); a
    ``csv:FILE`` is read through the candle cache (``open_candle_file``: parsed once)."""
    source = parse_source(spec)
    if source.kind == "demo":
        market = demo_market(symbol, tf)
        return market.history(int(time.time() * 1000), max_candles), market.key
    if not symbol:
        raise WorkstationError(f"--symbol is needed for source {spec.strip()!r}")
    if source.kind == "file":  # through the cache, as the window opens files: parsed once
        opened = open_candle_file(source.argument, symbol, tf, symbol_ok=True,
                                  cache_path=cache_path or app_paths().candle_cache)
        candles, key = opened.candles, opened.key
    else:
        with CandleCache(cache_path or app_paths().candle_cache) as cache:
            key = _cached_key(cache, source, symbol, tf)
            candles = cache.load(key)
        if not len(candles):
            raise WorkstationError(
                f"the cache holds no {symbol} {tf.name} candles from {key.source}; fetch them "
                f"with `workstation fetch --exchange {key.source} --symbol {symbol} "
                f"--timeframe {tf.name} --since ...` or import a CSV")
    if max_candles is not None and len(candles) > max_candles:
        candles = candles.slice(len(candles) - max_candles, len(candles))
    return candles, key


# -- the symbol a source opens with -------------------------------------------------------
EXCHANGE_SYMBOLS = ("ETH/USDT", "BTC/USDT")  # what an exchange opens with when nothing is known


def symbol_for(source: str, timeframe: Timeframe, *, remembered: str | None = None,
               cached: Sequence[SeriesKey] = (), imported: Sequence[str] = ()) -> str | None:
    """The symbol to open ``source`` with when none is given: the one last used with it
    (``remembered``), else the first of its cached symbols (``cached``: the cache's keys;
    those on ``timeframe`` first, ETH/USDT and BTC/USDT before the rest), else DEMO/USDT for
    the demo market, the symbol a file was imported under (``imported``) or its name says for
    ``csv:FILE``, ETH/USDT for an exchange. None: nothing sensible (a cache with nothing, or
    text that names no source)."""
    if remembered and remembered.strip():
        return remembered.strip().upper()
    try:
        spec = parse_source(source)
    except WorkstationError:
        return None  # the text names no source: no symbol fits it
    if spec.kind == "demo":
        return DEMO_SYMBOL
    if spec.kind == "file":
        return imported[0] if imported else symbol_from_file_name(spec.argument)
    if spec.kind == "cache" and not spec.argument:
        mine = [k for k in cached if not k.is_demo]
    else:
        mine = [k for k in cached if k.source == spec.argument.strip().lower()]
    if mine:
        def rank(key: SeriesKey):
            known = EXCHANGE_SYMBOLS.index(key.symbol) if key.symbol in EXCHANGE_SYMBOLS else 9
            return (key.timeframe != timeframe, known, key.symbol)
        return min(mine, key=rank).symbol
    return None if spec.kind == "cache" else EXCHANGE_SYMBOLS[0]


# -- candle files, imported into the cache once ------------------------------------------
@dataclass(frozen=True)
class FileOpened:
    """What ``open_candle_file`` found: the candles, their key, whether the file was read
    now (``imported``) or its cached copy was used, and the file's own timeframe (``own``;
    the candles are resampled from it when the key's is longer)."""

    candles: Candles
    key: SeriesKey
    imported: bool
    own: Timeframe


def file_key(path: str | Path, symbol: str, timeframe: Timeframe) -> SeriesKey:
    """The series a candle file is: ``csv:NAME`` (its file name), the symbol, the timeframe."""
    return SeriesKey(f"csv:{Path(path).name}", symbol, timeframe)


def _imported_copy(cache: CandleCache, stamp: FileStamp, path: Path, symbol: str
                   ) -> Candles | None:
    """The cache's copy of the file as it is now, on the file's own timeframe (None: none,
    or one stored under a timeframe its candles are not on, as older versions did)."""
    for own in ALL:
        candles = cache.load_imported(stamp, file_key(path, symbol, own))
        if candles is not None:
            try:
                return candles if infer_timeframe(candles.ts, path.name) == own else None
            except FileTimeframeError:
                return None
    return None


def open_candle_file(path: str | Path, symbol: str, tf: Timeframe | None, *,
                     cache_path: Path, progress: Progress | None = None,
                     stop: Callable[[], bool] | None = None,
                     symbol_ok: bool = False) -> FileOpened:
    """The candles of a CSV file on ``tf`` (None: its own), through the candle cache: the
    first opening parses and validates the file and stores it in the cache on its own
    timeframe (under ``file_key``, with the file's path, size and mtime); later openings of
    the unchanged file read the cache. A ``tf`` longer than the file's own is resampled
    from it, a shorter one refused (``file_timeframe.on_timeframe``), before anything is
    stored. A file that
    contradicts ``symbol`` raises ``SymbolMismatch`` unless ``symbol_ok`` (nothing stored).
    A changed file (size or mtime) is imported again and replaces its old candles.
    ``progress(fraction, what)`` hears how far an import is; ``stop()`` true between two
    steps cancels it (``ImportCancelled``), leaving the cache as it was."""
    path = Path(path).expanduser()
    try:
        stamp = FileStamp.of(path)
    except CacheError as exc:
        raise CsvFormatError(str(exc)) from None
    with CandleCache(cache_path) as cache:
        copy = _imported_copy(cache, stamp, path, symbol)
    if copy is not None:
        return FileOpened(on_timeframe(copy, tf, path.name),
                          file_key(path, symbol, tf or copy.timeframe), imported=False,
                          own=copy.timeframe)

    def reading(done: float, what: str) -> None:
        if progress is not None:
            progress(0.85 * done, what)

    candles = read_candles_csv(path, progress=reading, stop=stop)
    shown = on_timeframe(candles, tf, path.name)
    own_key = file_key(path, symbol, candles.timeframe)

    def storing(done: float) -> None:
        if stop is not None and stop():
            raise ImportCancelled("the import was cancelled")
        if progress is not None:
            progress(0.85 + 0.15 * done, "storing in the candle cache")

    with CandleCache(cache_path) as cache:
        if not symbol_ok:
            check_file_symbol(cache, path.name, own_key, candles, replaced=True)
        cache.replace_with_file(own_key, candles, stamp, progress=storing)
    return FileOpened(shown, file_key(path, symbol, shown.timeframe), imported=True,
                      own=candles.timeframe)


def _cached_key(cache: CandleCache, source: SourceSpec, symbol: str, tf: Timeframe
                ) -> SeriesKey:
    if source.argument:  # an exchange id, or cache:NAME
        return SeriesKey(source.argument, symbol, tf)
    wanted = SeriesKey("any", symbol, tf)
    matches = [s.key for s in cache.series()
               if (s.key.symbol, s.key.timeframe) == (wanted.symbol, tf) and not s.key.is_demo]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise WorkstationError(f"the cache holds no {wanted.symbol} {tf.name} candles; see "
                               f"`workstation candles list`")
    names = ", ".join(f"cache:{k.source}" for k in matches)
    raise WorkstationError(f"several cached sources have {wanted.symbol} {tf.name}: "
                           f"choose one of {names}")
