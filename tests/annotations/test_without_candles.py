"""Imported marks of a symbol the candle cache has no candles of: named in one line."""

from __future__ import annotations

from workstation.annotations.model import Point, Trade
from workstation.annotations.without_candles import no_candles_note, symbols_without_candles
from workstation.market.cache import CandleCache
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE

from conftest import make_candles

T0 = 1_700_000_000_000
H = 3_600_000


def marks(symbol: str, n: int, market: str = "real") -> list:
    return [Point(symbol=symbol, timeframe="1m", ts=T0 + i * H, market=market)
            for i in range(n)]


def test_symbols_no_cached_series_holds_are_named(tmp_path):
    cache_path = tmp_path / "candles.sqlite"
    trades = [Trade(symbol="ETH/USDT", timeframe="1h", direction="long", entry_ts=T0,
                    entry_price=1.0, exit_ts=T0 + H, exit_price=2.0)]
    found = trades + marks("SOL/USDT", 3) + marks("ada/usdt", 1) + marks("XRP/USDT", 2, "demo")
    assert symbols_without_candles(found, cache_path) == {
        "ADA/USDT": 1, "ETH/USDT": 1, "SOL/USDT": 3}
    assert not cache_path.exists()  # asking does not make a cache
    with CandleCache(cache_path) as cache:
        cache.put(SeriesKey("binance", "ETH/USDT", ONE_MINUTE), make_candles(50))
        cache.put(SeriesKey("demo", "SOL/USDT", ONE_MINUTE), make_candles(50))
    # a series on any timeframe holds the symbol; demo candles are not the real market's
    assert symbols_without_candles(found, cache_path) == {"ADA/USDT": 1, "SOL/USDT": 3}
    assert no_candles_note(found, cache_path) == (
        "1 annotation of ADA/USDT and 3 of SOL/USDT imported; no candles of ADA/USDT or "
        "SOL/USDT are in the cache yet")
    assert no_candles_note(marks("SOL/USDT", 3), cache_path) == (
        "3 annotations of SOL/USDT imported; no candles of SOL/USDT are in the cache yet")
    assert no_candles_note(trades + marks("XRP/USDT", 2, "demo"), cache_path) is None
