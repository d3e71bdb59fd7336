"""Candle data from the command line: ``fetch``, ``import-candles`` and ``candles list|export``
(``export`` also writes the demo market)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from ..errors import WorkstationError
from ..interrupt import signals_deferred
from ..market.cache import CandleCache
from ..market.candles import Candles
from ..market.csv_io import read_candles_csv, write_candles_csv
from ..market.file_symbol import SymbolMismatch, check_file_symbol
from ..market.file_timeframe import on_timeframe, resampled_note
from ..market.series import DEMO_SOURCE, SeriesKey
from ..market.sources import demo_market
from ..market.timeframes import SUPPORTED, Timeframe, parse_timeframe
from ..paths import app_paths
from ..progress import ProgressBar
from ..timeparse import format_minute, format_ms, parse_time_ms
from .flags import add_exchange_flags

FETCH_BATCH = 5000  # candles stored (with their coverage) at a time: what a kill can lose


def register(sub) -> None:
    fetch = sub.add_parser("fetch", help="download candles from an exchange into the cache")
    fetch.add_argument("--exchange", default="binance", help="ccxt exchange id (default binance)")
    fetch.add_argument("--symbol", default="ETH/USDT")
    fetch.add_argument("--timeframe", default="1m", choices=SUPPORTED)
    fetch.add_argument("--since", required=True, help="ISO date/datetime (UTC) or epoch ms")
    fetch.add_argument("--until", help="inclusive; ISO date (whole day), datetime or epoch ms; "
                                       "default: now")
    add_exchange_flags(fetch)
    fetch.set_defaults(func=run_fetch)

    imp = sub.add_parser("import-candles", help="import a candle CSV (Binance klines or "
                                                "ts,open,high,low,close,volume) into the cache")
    imp.add_argument("file", type=Path)
    imp.add_argument("--symbol", required=True)
    imp.add_argument("--timeframe", choices=SUPPORTED,
                     help="the file's own (told from its timestamps, the default) or a longer "
                          "one it is resampled to")
    imp.add_argument("--source", default="csv", help="name to file it under (default csv)")
    imp.add_argument("--symbol-mismatch-ok", action="store_true",
                     help="import it even though its name or prices say another symbol")
    imp.set_defaults(func=run_import)

    candles = sub.add_parser("candles", help="what the candle cache holds")
    what = candles.add_subparsers(dest="candles_command", metavar="ACTION", required=True)
    what.add_parser("list", help="one line per cached series").set_defaults(func=run_list)
    export = what.add_parser("export", help="write a cached series (or the demo market) as CSV")
    export.add_argument("--source", required=True,
                        help="a name from `candles list`, or demo (the simulated market)")
    export.add_argument("--symbol", help="e.g. ETH/USDT (default for demo: DEMO/USDT)")
    export.add_argument("--timeframe", required=True, choices=SUPPORTED)
    export.add_argument("--out", required=True, type=Path, help="FILE.csv (or .csv.gz)")
    export.add_argument("--since", help="first open time to include")
    export.add_argument("--until", help="last open time to include")
    export.set_defaults(func=run_export)


def _cache() -> CandleCache:
    return CandleCache(app_paths().candle_cache)


def run_fetch(args) -> int:
    from ..market.ccxt_feed import CcxtFeed, parse_json_overrides

    key = SeriesKey(args.exchange, args.symbol, parse_timeframe(args.timeframe))
    tf = key.timeframe
    since = tf.floor(parse_time_ms(args.since))
    now = int(time.time() * 1000)
    until = parse_time_ms(args.until, end_of_day=True) if args.until else now
    until = tf.floor(min(until, now))
    if until < since:
        raise WorkstationError(f"--until ({format_ms(until)}) is before --since "
                               f"({format_ms(since)})")
    forming = tf.floor(now)  # only closed candles are stored: the forming one is not asked for
    if since >= forming:
        print(f"{key}: no closed candle from {format_ms(since)} yet (the one at "
              f"{format_ms(forming)} is still forming)")
        return 0
    until = min(until, forming - tf.ms)
    urls = parse_json_overrides(args.ccxt_urls, "--ccxt-urls")
    options = parse_json_overrides(args.ccxt_options, "--ccxt-options")
    with _cache() as cache:
        spans = cache.missing(key, since, until)
        if not spans:
            if not len(cache.load(key, since, until)):
                raise WorkstationError(f"{key}: the exchange has no candles from "
                                       f"{format_ms(since)} to {format_ms(until)} (it said so "
                                       f"before; nothing to store)")
            print(f"{key}: already cached from {format_ms(since)} to {format_ms(until)}")
            return 0
        total = sum(end - start + tf.ms for start, end in spans)
        bar = ProgressBar(total, f"fetch {key}")
        feed = CcxtFeed(args.exchange, args.symbol, tf, urls=urls, options=options,
                        remember_credentials=args.remember_credentials)
        stored, notes = asyncio.run(_fetch_spans(feed, cache, key, spans, bar))
        bar.finish(f"{stored} candles")
        left = cache.missing(key, since, until)
    for note in notes.values():
        print(note)
    not_covered = _describe_spans(left, tf.ms)
    if not stored:
        why = ("; ".join(notes.values()) if notes else
               f"not answered for {not_covered}" if left else
               "the exchange has no candles in that range")
        raise WorkstationError(f"{key}: stored no candles from {format_ms(since)} to "
                               f"{format_ms(until)}: {why}")
    print(f"{key}: stored {stored} candles ({len(spans)} missing span(s) fetched)")
    if left:
        print(f"{key}: not covered (the exchange did not answer for it; a later fetch asks "
              f"again): {not_covered}")
    return 0


def _describe_spans(spans, tf_ms: int, most: int = 3) -> str:
    """``2024-01-01 00:00 .. 2024-01-01 12:00 (721 candles), ...`` for up to ``most`` spans."""
    parts = [f"{format_minute(start)} .. {format_minute(end)} ({(end - start) // tf_ms + 1} "
             f"candles)" for start, end in spans[:most]]
    if len(spans) > most:
        parts.append(f"and {len(spans) - most} more span(s)")
    return ", ".join(parts)


def _batches(spans, step_ms: int, size: int):
    """The missing spans cut into batches of at most ``size`` candles, oldest first."""
    for start, end in spans:
        for first in range(start, end + 1, size * step_ms):
            yield first, min(first + (size - 1) * step_ms, end)


async def _fetch_spans(feed, cache: CandleCache, key: SeriesKey, spans, bar
                       ) -> tuple[int, dict[str, str]]:
    """Fetch and store the spans batch by batch: a fetch stopped (or killed) mid-way keeps
    every batch it stored, with its coverage, and a rerun asks only for the rest. Only the
    spans the exchange answered for are recorded as covered (see ``market.paging``).
    Returns the candles stored and the feed's notes on what it did not serve."""
    from ..market.ccxt_feed import remember_tick

    stored, done_before = 0, 0
    notes: dict[str, str] = {}
    served_from: int | None = None  # a recent-only exchange has nothing older
    tf = key.timeframe.ms
    async with feed:
        remember_tick(cache, feed)
        for start, end in _batches(spans, tf, FETCH_BATCH):
            def progress(done_ms: int, _total_ms: int, base=done_before) -> None:
                bar.update(base + done_ms)

            if served_from is None or end >= served_from:
                history = await feed.fetch_range(start, end, progress=progress)
                notes.update(history.notes)
                served_from = history.served_from or served_from
                stored += cache.put(key, history.candles, covered=history.covered)
            done_before += end - start + tf
            bar.update(done_before)
    return stored, notes


def run_import(args) -> int:
    """Import the file on ``--timeframe`` (its own, the default, or resampled from it to a
    longer one); a file whose name or prices say another symbol is refused unless
    ``--symbol-mismatch-ok``."""
    own = read_candles_csv(args.file)
    tf = parse_timeframe(args.timeframe) if args.timeframe else own.timeframe
    candles = on_timeframe(own, tf, Path(args.file).name)
    key = SeriesKey(args.source, args.symbol, tf)
    with signals_deferred(then_ignore=True) as signalled:  # all, or (before this) none
        with _cache() as cache:
            if not args.symbol_mismatch_ok:
                try:
                    check_file_symbol(cache, Path(args.file).name, key, candles)
                except SymbolMismatch as exc:
                    raise WorkstationError(
                        f"{exc.reason}: nothing was imported; check --symbol, or pass "
                        f"--symbol-mismatch-ok to import it as {key.symbol} anyway") from None
            stored = cache.put(key, candles)
        print(f"{key}: imported {stored} candles from {args.file} "
              f"({format_ms(int(candles.ts[0]))} .. {format_ms(int(candles.ts[-1]))})"
              f"{resampled_note(own.timeframe, tf)}")
        if signalled.signum is not None:
            print("workstation: the signal came while the candles were being stored; the "
                  "import was finished first", file=sys.stderr)
    return 0


def run_list(args) -> int:
    with _cache() as cache:
        rows = cache.series()
    if not rows:
        print("the candle cache is empty (fetch or import-candles fill it)")
        return 0
    header = ("source", "symbol", "timeframe", "count", "first", "last", "gaps", "uncovered")
    table = [header] + [
        (s.key.source + (" (DEMO)" if s.key.is_demo else ""), s.key.symbol, s.key.timeframe.name,
         str(s.count), format_ms(s.first_ts), format_ms(s.last_ts),
         f"{s.gaps} ({s.missing} candles)" if s.gaps else "0",
         f"{len(s.uncovered)} ({_span_candles(s.uncovered, s.key.timeframe.ms)} candles)"
         if s.uncovered else "0")
        for s in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    for s in rows:
        if s.uncovered:
            print(f"{s.key}: not covered (fetch asks again): "
                  f"{_describe_spans(list(s.uncovered), s.key.timeframe.ms)}")
    return 0


def _span_candles(spans, tf_ms: int) -> int:
    return sum((end - start) // tf_ms + 1 for start, end in spans)


def run_export(args) -> int:
    since = parse_time_ms(args.since) if args.since else None
    until = parse_time_ms(args.until, end_of_day=True) if args.until else None
    if args.source.strip().lower() == DEMO_SOURCE:
        candles, key = _demo_candles(args.symbol, parse_timeframe(args.timeframe), since, until)
        if not len(candles):
            raise WorkstationError(f"{key} has no closed candles in that range")
    else:
        if not args.symbol:
            raise WorkstationError(f"--symbol is needed for source {args.source!r}")
        key = SeriesKey(args.source, args.symbol, parse_timeframe(args.timeframe))
        with _cache() as cache:
            candles = cache.load(key, since, until)
        if not len(candles):
            raise WorkstationError(f"the cache holds no candles for {key} in that range "
                                   f"(see `workstation candles list`)")
    write_candles_csv(candles, args.out)
    what = "simulated DEMO candles (not market data)" if key.is_demo else "candles"
    print(f"{key}: wrote {len(candles)} {what} to {args.out}")
    return 0


def _demo_candles(symbol: str | None, timeframe: Timeframe, since: int | None, until: int | None
                  ) -> tuple[Candles, SeriesKey]:
    """The demo market's candles closed by now that open from ``since`` to ``until``."""
    market = demo_market(symbol, timeframe)
    end = market.timeframe.floor(int(time.time() * 1000))
    start = market.origin_ms if since is None else since
    stop = end if until is None else min(end, until + 1)
    return market.candles(start, stop), market.key
