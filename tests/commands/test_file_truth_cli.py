"""The CLI takes a candle file for what it is: a 1h file given as 1m is refused in one line
(exit 1, nothing stored), a longer timeframe is resampled from it, a file whose name or prices
say another symbol is refused unless ``--symbol-mismatch-ok``, and a series imported into the
cache finds its reference asset there by default, whatever name the import was filed under."""

from __future__ import annotations

import numpy as np

from workstation.cli import main
from workstation.market.cache import CandleCache
from workstation.market.candles import Candles
from workstation.market.csv_io import write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.sources import load_series
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.ml import job
from workstation.ml.features import FeatureSpec
from workstation.paths import app_paths

DAY = 86_400_000
END = 1_700_000_000_000 - 1_700_000_000_000 % DAY
H1 = parse_timeframe("1h")


def _import(path, symbol: str, timeframe: str, *more: str) -> int:
    return main(["import-candles", str(path), "--symbol", symbol, "--timeframe", timeframe,
                 *more])


def _cached() -> list[SeriesKey]:
    with CandleCache(app_paths().candle_cache) as cache:
        return cache.keys()


def test_a_1h_file_imported_as_1m_is_refused_and_as_4h_is_resampled(tmp_path, capsys):
    hourly = write_candles_csv(demo_candles(200, H1, seed=1, end_ts=END),
                               tmp_path / "ethusdt_1h.csv.gz")
    assert _import(hourly, "ETH/USDT", "1m") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["workstation: error: ethusdt_1h.csv.gz holds 1h candles, not 1m: choose 1h "
                   "(or a longer timeframe: it is resampled)"]
    assert _cached() == []
    assert _import(hourly, "ETH/USDT", "4h") == 0
    assert "imported 50 candles" in capsys.readouterr().out  # 200 hours: 50 closed 4h candles
    assert _cached() == [SeriesKey("csv", "ETH/USDT", parse_timeframe("4h"))]


def test_without_timeframe_a_file_is_imported_on_its_own(tmp_path, capsys):
    hourly = write_candles_csv(demo_candles(200, H1, seed=1, end_ts=END),
                               tmp_path / "ethusdt_1h.csv.gz")
    assert main(["import-candles", str(hourly), "--symbol", "ETH/USDT"]) == 0
    assert "imported 200 candles" in capsys.readouterr().out
    assert _cached() == [SeriesKey("csv", "ETH/USDT", H1)]


def test_a_csv_source_of_another_timeframe_is_refused_before_anything_runs(tmp_path, capsys):
    hourly = write_candles_csv(demo_candles(200, H1, seed=2, end_ts=END), tmp_path / "e.csv")
    assert main(["backtest", "--source", f"csv:{hourly}", "--symbol", "ETH/USDT",
                 "--timeframe", "1m"]) == 1
    assert "e.csv holds 1h candles, not 1m" in capsys.readouterr().err


def test_a_btc_file_imported_as_eth_is_refused_unless_allowed(tmp_path, capsys):
    eth = demo_candles(500, ONE_MINUTE, seed=3, end_ts=END)
    btc = Candles.from_columns([eth.ts, *(c * 16 for c in eth.columns()[1:5]), eth.volume],
                               ONE_MINUTE)
    assert _import(write_candles_csv(eth, tmp_path / "eth.csv"), "ETH/USDT", "1m") == 0
    capsys.readouterr()
    named = write_candles_csv(btc, tmp_path / "btcusdt_1m.csv.gz")
    assert _import(named, "ETH/USDT", "1m", "--source", "other") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "btcusdt_1m.csv.gz is named for BTC/USDT, not ETH/USDT" in err[0]
    assert "are 16x the cached ETH/USDT" in err[0] and "--symbol-mismatch-ok" in err[0]
    assert _cached() == [SeriesKey("csv", "ETH/USDT", ONE_MINUTE)]  # nothing was stored
    assert _import(named, "ETH/USDT", "1m", "--source", "other", "--symbol-mismatch-ok") == 0
    assert SeriesKey("other", "ETH/USDT", ONE_MINUTE) in _cached()


def test_a_cached_import_finds_its_reference_asset_in_the_cache_by_default(tmp_path, capsys):
    eth = demo_candles(400, ONE_MINUTE, seed=4, end_ts=END)
    btc = demo_candles(400, ONE_MINUTE, seed=5, end_ts=END)
    assert _import(write_candles_csv(eth, tmp_path / "eth.csv"), "ETH/USDT", "1m") == 0
    assert _import(write_candles_csv(btc, tmp_path / "b.csv"), "BTC/USDT", "1m",
                   "--source", "mine") == 0  # filed under another name
    capsys.readouterr()
    candles, key = load_series("cache", "ETH/USDT", ONE_MINUTE)
    assert key.source == "csv" and len(candles) == 400
    reference = job.load_reference(FeatureSpec(reference="BTC/USDT"), key)
    assert reference is not None and reference.key == SeriesKey("mine", "BTC/USDT", ONE_MINUTE)
    assert np.allclose(reference.candles.close, btc.close)
    for_file = job.load_reference(FeatureSpec(reference="BTC/USDT"),
                                  SeriesKey("csv:eth.csv", "ETH/USDT", ONE_MINUTE))
    assert for_file is not None and for_file.key.source == "mine"  # a file read directly too
