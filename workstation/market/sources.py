"""Named data sources as the CLI and the window take them: ``demo``, ``csv:FILE``, ``cache``,
``cache:NAME`` or an exchange id (its cached candles). Loading never substitutes one source
for another: a source with no data is an error that says what to do."""

from __future__ import annotations

import time
import zlib
from pathlib import Path

from ..errors import WorkstationError
from ..paths import app_paths
from .cache import CandleCache
from .candles import Candles
from .csv_io import read_candles_csv
from .demo import DEMO_SYMBOL, DemoMarket, demo_anchor
from .series import DEMO_SOURCE, SeriesKey
from .timeframes import Timeframe, parse_timeframe


def demo_seed(symbol: str, timeframe: str | Timeframe) -> int:
    """A stable seed per demo symbol and timeframe: each pair is its own reproducible market."""
    name = f"{symbol.strip().upper()} {parse_timeframe(timeframe).name}"
    return zlib.crc32(name.encode())


def demo_market(symbol: str | None, timeframe: str | Timeframe) -> DemoMarket:
    """The demo market of ``symbol`` (default DEMO/USDT) on ``timeframe``, on the anchor kept
    in the data dir (fixed at first use), so its candles are the same on every launch."""
    tf = parse_timeframe(timeframe)
    symbol = (symbol or DEMO_SYMBOL).strip().upper()
    return DemoMarket(tf, anchor_ms=demo_anchor(app_paths().demo_anchor),
                      seed=demo_seed(symbol, tf), symbol=symbol)


def load_series(spec: str, symbol: str | None, timeframe: str | Timeframe, *,
                max_candles: int | None = None, cache_path: Path | None = None
                ) -> tuple[Candles, SeriesKey]:
    """Candles and their key for a source ``spec`` (see the module docstring)."""
    tf = parse_timeframe(timeframe)
    spec = spec.strip()
    if spec == DEMO_SOURCE:
        market = demo_market(symbol, tf)
        return market.history(int(time.time() * 1000), max_candles), market.key
    if not symbol:
        raise WorkstationError(f"--symbol is needed for source {spec!r}")
    if spec.startswith("csv:"):
        path = Path(spec[4:]).expanduser()
        candles = read_candles_csv(path, tf)
        key = SeriesKey(f"csv:{path.name}", symbol, tf)
    else:
        with CandleCache(cache_path or app_paths().candle_cache) as cache:
            key = _cached_key(cache, spec, symbol, tf)
            candles = cache.load(key)
        if not len(candles):
            raise WorkstationError(
                f"the cache holds no {symbol} {tf.name} candles from {key.source}; fetch them "
                f"with `workstation fetch --exchange {key.source} --symbol {symbol} "
                f"--timeframe {tf.name} --since ...` or import a CSV")
    if max_candles is not None and len(candles) > max_candles:
        candles = candles.slice(len(candles) - max_candles, len(candles))
    return candles, key


def _cached_key(cache: CandleCache, spec: str, symbol: str, tf: Timeframe) -> SeriesKey:
    if spec.startswith("cache:"):
        return SeriesKey(spec[6:], symbol, tf)
    if spec != "cache":
        return SeriesKey(spec, symbol, tf)
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
