"""A candle file is what it says: its timeframe is told from its timestamps (a 1h file is not
taken for 1m candles, a longer timeframe is resampled from it), and a file whose name or
prices contradict the symbol it is opened as is refused before anything is stored. Files are
written into tmp_path; the cache is a real SQLite file."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.market.cache import CandleCache
from workstation.market.candles import Candles
from workstation.market.csv_io import read_candles_csv, write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.file_symbol import SymbolMismatch, symbol_contradiction
from workstation.market.file_timeframe import (
    FileTimeframeError,
    TimeframeMismatch,
    infer_timeframe,
)
from workstation.market.series import SeriesKey
from workstation.market.sources import file_key, open_candle_file
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe

DAY = 86_400_000
END = 1_700_000_000_000 - 1_700_000_000_000 % DAY
H1, H4, M3 = parse_timeframe("1h"), parse_timeframe("4h"), parse_timeframe("3m")


def scaled(candles: Candles, factor: float) -> Candles:
    """The same candles at ``factor`` times the price (another market's price level)."""
    return Candles.from_columns([candles.ts, *(c * factor for c in candles.columns()[1:5]),
                                 candles.volume], candles.timeframe)


def test_the_timeframe_is_the_most_common_step_whatever_the_gaps():
    ts = demo_candles(300, H1, seed=1, end_ts=END).ts
    gappy = np.delete(ts, [5, 6, 7, 40, 41, 100])  # gaps of 4h, 3h and 2h
    assert infer_timeframe(gappy, "eth.csv") == H1
    with pytest.raises(FileTimeframeError, match=r"^eth.csv holds 2 candles: too few to tell "
                                                 r"its timeframe \(3 or more needed\)$"):
        infer_timeframe(ts[:2], "eth.csv")
    with pytest.raises(FileTimeframeError, match="no clear step: its candles are 1h and 2h "
                                                 "apart equally often"):
        infer_timeframe(np.array([0, 1, 3, 4, 6]) * 3_600_000, "eth.csv")
    with pytest.raises(FileTimeframeError, match="no clear step: no two of its candles"):
        infer_timeframe(np.array([0, 1, 3, 6]) * 3_600_000, "eth.csv")
    with pytest.raises(FileTimeframeError, match=r"its candles are 2h apart, not a supported"):
        infer_timeframe(np.arange(10) * 7_200_000, "eth.csv")


def test_a_1h_file_read_as_1m_is_refused_in_one_line_and_a_longer_timeframe_is_resampled(
        tmp_path):
    hourly = demo_candles(500, H1, seed=2, end_ts=END)
    path = write_candles_csv(hourly, tmp_path / "ethusdt_1h.csv.gz")
    with pytest.raises(TimeframeMismatch) as refused:
        read_candles_csv(path, ONE_MINUTE)
    assert str(refused.value) == ("ethusdt_1h.csv.gz holds 1h candles, not 1m: choose 1h (or a "
                                  "longer timeframe: it is resampled)")
    own = read_candles_csv(path)
    assert own.timeframe == H1 and np.array_equal(own.ts, hourly.ts)
    four = read_candles_csv(path, H4)
    want = hourly.resample(H4)
    assert four.timeframe == H4 and np.array_equal(four.ts, want.ts)
    for got, expected in zip(four.columns()[1:], want.columns()[1:]):
        assert np.allclose(got, expected, rtol=1e-12)


def test_a_file_of_three_minute_candles_names_the_longer_timeframes_it_can_give(tmp_path):
    path = write_candles_csv(demo_candles(100, M3, seed=3, end_ts=END), tmp_path / "eth.csv")
    with pytest.raises(TimeframeMismatch, match=r"holds 3m candles, not 5m: choose 3m \(or "
                                                r"15m, 30m, 1h, 4h, 1d: it is resampled\)"):
        read_candles_csv(path, parse_timeframe("5m"))


def test_a_file_contradicts_its_symbol_by_its_name_or_by_prices_far_from_the_cached_ones():
    eth = demo_candles(400, ONE_MINUTE, seed=4, end_ts=END)
    btc = scaled(eth, 16)
    reason = symbol_contradiction("btcusdt_1m.csv.gz", "ETH/USDT", btc, eth)
    low, high = (f"{float(x):,.0f}" for x in (btc.close.min(), btc.close.max()))
    assert reason is not None
    assert reason.startswith("btcusdt_1m.csv.gz is named for BTC/USDT, not ETH/USDT; its "
                             f"prices {low}–{high} are 16x the cached ETH/USDT ")
    assert symbol_contradiction("eth.csv", "ETH/USDT", scaled(eth, 1 / 20), eth) \
        .startswith("its prices ") and "are 1/20 of the cached ETH/USDT" in \
        symbol_contradiction("eth.csv", "ETH/USDT", scaled(eth, 1 / 20), eth)
    assert symbol_contradiction("ethusdt_1m.csv", "ETH/USDT", scaled(eth, 1.5), eth) is None
    assert symbol_contradiction("candles.csv", "ETH/USDT", btc, None) is None  # nothing known


def test_a_market_that_moved_over_years_is_compared_only_where_the_cache_holds_it():
    daily = parse_timeframe("1d")
    years = demo_candles(3000, daily, seed=6, end_ts=END)
    growth = np.linspace(1.0, 20.0, len(years))
    grown = Candles.from_columns([years.ts, *(c * growth for c in years.columns()[1:5]),
                                  years.volume], daily)  # one market, grown 20x in 8 years
    early = grown.slice(0, 60)  # the cache holds two months at the start
    assert symbol_contradiction("ethusdt_1d.csv.gz", "ETH/USDT", grown, early) is None
    reason = symbol_contradiction("candles.csv", "ETH/USDT", scaled(grown, 16), early)
    assert reason is not None and "the cached ETH/USDT" in reason


def test_opening_a_file_that_contradicts_its_symbol_stores_nothing_until_allowed(tmp_path):
    cache_path = tmp_path / "cache.sqlite"
    eth = demo_candles(600, ONE_MINUTE, seed=5, end_ts=END)
    with CandleCache(cache_path) as cache:
        cache.put(SeriesKey("binance", "ETH/USDT", ONE_MINUTE), eth)
    path = write_candles_csv(scaled(eth, 16), tmp_path / "candles.csv")  # BTC-like prices
    with pytest.raises(SymbolMismatch, match="are 16x the cached ETH/USDT") as refused:
        open_candle_file(path, "ETH/USDT", ONE_MINUTE, cache_path=cache_path)
    assert refused.value.symbol == "ETH/USDT"
    key = file_key(path, "ETH/USDT", ONE_MINUTE)
    with CandleCache(cache_path) as cache:
        assert cache.keys() == [SeriesKey("binance", "ETH/USDT", ONE_MINUTE)]
    opened = open_candle_file(path, "ETH/USDT", ONE_MINUTE, cache_path=cache_path,
                              symbol_ok=True)
    assert opened.imported and opened.key == key and len(opened.candles) == 600


def test_a_file_opened_on_a_longer_timeframe_is_resampled_from_its_own_candles_in_the_cache(
        tmp_path):
    cache_path = tmp_path / "cache.sqlite"
    minutes = demo_candles(900, ONE_MINUTE, seed=6, end_ts=END)
    path = write_candles_csv(minutes, tmp_path / "ethusdt_1m.csv")
    three = open_candle_file(path, "ETH/USDT", M3, cache_path=cache_path)
    assert three.imported and three.own == ONE_MINUTE and three.key.timeframe == M3
    assert np.allclose(three.candles.close, minutes.resample(M3).close, rtol=1e-12)
    with CandleCache(cache_path) as cache:  # stored once, on the file's own timeframe
        assert cache.keys() == [file_key(path, "ETH/USDT", ONE_MINUTE)]
    again = open_candle_file(path, "ETH/USDT", M3, cache_path=cache_path)
    assert not again.imported and np.array_equal(again.candles.close, three.candles.close)
    own = open_candle_file(path, "ETH/USDT", None, cache_path=cache_path)
    assert not own.imported and own.key.timeframe == ONE_MINUTE and len(own.candles) == 900
    with pytest.raises(TimeframeMismatch, match="holds 1m candles, not 1s"):
        open_candle_file(path, "ETH/USDT", parse_timeframe("1s"), cache_path=cache_path)
