"""Paths (WORKSTATION_HOME, --data-dir), the rotating log, and the data CLI end to end."""

import subprocess
import sys

import numpy as np
import pytest

from workstation.cli import main
from workstation.market.cache import CandleCache
from workstation.market.csv_io import read_candles_csv, write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.paths import app_paths


def test_home_env_puts_everything_under_one_folder(workstation_home):
    paths = app_paths()
    for folder in (paths.config_dir, paths.data_dir, paths.log_dir):
        assert folder.is_relative_to(workstation_home)
    assert paths.candle_cache.parent == paths.data_dir


def test_platform_dirs_without_home(monkeypatch):
    monkeypatch.delenv("WORKSTATION_HOME")
    paths = app_paths()
    assert "workstation" in str(paths.data_dir) and paths.config_dir != paths.data_dir


def test_data_dir_flag_wins_and_logs_rotate_there(tmp_path, capsys):
    other = tmp_path / "elsewhere"
    assert main(["--data-dir", str(other), "candles", "list"]) == 0
    assert "cache is empty" in capsys.readouterr().out
    log = other / "logs" / "workstation.log"
    assert log.exists() and "candles list" in log.read_text()


def test_import_list_export_round_trip(tmp_path, capsys):
    candles = demo_candles(3000, ONE_MINUTE, seed=9, end_ts=1_704_067_200_000)
    csv_in = write_candles_csv(candles, tmp_path / "in.csv.gz")
    assert main(["import-candles", str(csv_in), "--symbol", "ETH/USDT", "--timeframe", "1m",
                 "--source", "mycsv"]) == 0
    assert "imported 3000 candles" in capsys.readouterr().out
    assert main(["candles", "list"]) == 0
    listing = capsys.readouterr().out
    assert "mycsv" in listing and "ETH/USDT" in listing and "3000" in listing
    out = tmp_path / "out.csv"
    assert main(["candles", "export", "--source", "mycsv", "--symbol", "ETH/USDT",
                 "--timeframe", "1m", "--out", str(out)]) == 0
    again = read_candles_csv(out, ONE_MINUTE)
    assert np.array_equal(again.ts, candles.ts) and np.allclose(again.close, candles.close)
    assert out.read_text().splitlines()[0] == "ts_ms,open,high,low,close,volume"
    # export a range, --until inclusive
    until = int(candles.ts[99])
    assert main(["candles", "export", "--source", "mycsv", "--symbol", "ETH/USDT", "--timeframe",
                 "1m", "--out", str(out), "--until", str(until)]) == 0
    assert len(read_candles_csv(out, ONE_MINUTE)) == 100


def test_bad_import_exits_non_zero_with_one_line_and_stores_nothing(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("ts_ms,open,high,low,close,volume\n60000,1,2,0.5,1.5,3\n120000,1,x,1,1,1\n")
    assert main(["import-candles", str(bad), "--symbol", "ETH/USDT", "--timeframe", "1m"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 3: high: 'x' is not a number" in err[0]
    assert "Traceback" not in err[0]
    with CandleCache(app_paths().candle_cache) as cache:
        assert cache.series() == []


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(Exception, match="cannot read"):
        main(["--debug", "import-candles", str(tmp_path / "none.csv"), "--symbol", "X/Y",
              "--timeframe", "1m"])


def test_unknown_timeframe_and_export_of_nothing(capsys):
    assert main(["candles", "export", "--source", "binance", "--symbol", "ETH/USDT",
                 "--timeframe", "1m", "--out", "x.csv"]) == 1
    assert "no candles for binance ETH/USDT 1m" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["candles", "export", "--source", "b", "--symbol", "E", "--timeframe", "2m",
              "--out", "x"])


def test_python_dash_m_and_version():
    out = subprocess.run([sys.executable, "-m", "workstation", "--version"], capture_output=True,
                         text=True, check=True).stdout
    from workstation import __version__
    assert out.strip() == f"workstation {__version__}"


def test_sources_never_substitute(tmp_path):
    from workstation.errors import WorkstationError
    from workstation.market.sources import load_series

    with pytest.raises(WorkstationError, match="workstation fetch --exchange binance"):
        load_series("binance", "ETH/USDT", ONE_MINUTE)
    with pytest.raises(WorkstationError, match="cache holds no ETH/USDT 1m"):
        load_series("cache", "ETH/USDT", ONE_MINUTE)
    candles = demo_candles(500, ONE_MINUTE, seed=1, end_ts=10**12)
    with CandleCache(app_paths().candle_cache) as cache:
        cache.put(SeriesKey("binance", "ETH/USDT", ONE_MINUTE), candles)
    got, key = load_series("cache", "ETH/USDT", ONE_MINUTE, max_candles=200)
    assert key.source == "binance" and len(got) == 200 and got.ts[-1] == candles.ts[-1]
    path = write_candles_csv(candles, tmp_path / "f.csv")
    got, key = load_series(f"csv:{path}", "ETH/USDT", ONE_MINUTE)
    assert key.source == "csv:f.csv" and len(got) == 500
