"""Named data sources as the CLI and the window take them: ``demo``, ``csv:FILE``, ``cache``,
``cache:NAME`` or an exchange id (its cached candles). Loading never substitutes one source
for another: a source with no data is an error that says what to do."""

from __future__ import annotations

from pathlib import Path

from ..errors import WorkstationError
from ..paths import app_paths
from .cache import CandleCache
from .candles import Candles
from .csv_io import read_candles_csv
from .demo import DEMO_SYMBOL, demo_candles
from .series import DEMO_SOURCE, SeriesKey
from .timeframes import Timeframe, parse_timeframe

DEMO_HISTORY = 20_000


def demo_seed(symbol: str) -> int:
    """A stable seed per demo symbol, so each symbol is its own reproducible market."""
    return sum((i + 1) * ord(ch) for i, ch in enumerate(symbol.upper())) % 2**31


def load_series(spec: str, symbol: str | None, timeframe: "str | Timeframe", *,
                max_candles: int | None = None, cache_path: Path | None = None
                ) -> tuple[Candles, SeriesKey]:
    """Candles and their key for a source ``spec`` (see the module docstring)."""
    tf = parse_timeframe(timeframe)
    spec = spec.strip()
    if spec == DEMO_SOURCE:
        symbol = symbol or DEMO_SYMBOL
        candles = demo_candles(max_candles or DEMO_HISTORY, tf, seed=demo_seed(symbol))
        return candles, SeriesKey(DEMO_SOURCE, symbol, tf)
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
