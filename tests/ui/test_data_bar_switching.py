"""Switching sources in the data bar: a source opens with a sensible symbol (the one last used
with it, else its first cached symbol, else DEMO/USDT or ETH/USDT), a failed switch empties
the chart and says so instead of leaving the old chart "(forming)", an exchange that cannot be
reached is told apart from one that answers with an error (by ccxt's error class), and a
candle file is imported into the cache once and read from it afterwards (a changed file is
imported again). Exchanges are a loopback fake or a closed local port; files are generated."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import time

import pytest
import qasync
from PySide6 import QtCore
from PySide6.QtTest import QTest

from workstation.market import csv_io
from workstation.market.cache import CandleCache, FileStamp
from workstation.market.candles import Candles
from workstation.market.csv_io import CsvFormatError, read_candles_csv, write_candles_csv
from workstation.market.retry import RetryPolicy
from workstation.market.series import SeriesKey
from workstation.market.sources import file_key, symbol_for, symbol_from_file_name
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.ui.app import run_window
from workstation.ui.data_bar import DataBar
from workstation.ui.live_data import LiveData

from conftest import make_candles, wait_for
from fake_exchange import UNKNOWN_ERROR, FakeBinance

MIN = 60_000
FAST = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.05)
Key = QtCore.Qt.Key


def window_args(**kw):
    base = dict(source="demo", symbol=None, timeframe="1m", speed=1.0)
    base.update(kw)
    return argparse.Namespace(**base)


def closed_port_urls() -> tuple[str, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    url = f"http://127.0.0.1:{port}/api/v3"
    return json.dumps({"public": url, "private": url}), json.dumps(
        {"fetchMarkets": {"types": ["spot"]}})


# -- the symbol a source opens with -------------------------------------------------------
def test_the_core_picks_the_remembered_then_a_cached_then_the_default_symbol():
    cached = [SeriesKey("binance", "SOL/USDT", ONE_MINUTE),
              SeriesKey("binance", "BTC/USDT", parse_timeframe("1h")),
              SeriesKey("binance", "BTC/USDT", ONE_MINUTE),
              SeriesKey("bybit", "XRP/USDT", parse_timeframe("5m")),
              SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)]
    assert symbol_for("binance", ONE_MINUTE, remembered="ada/usdt", cached=cached) == "ADA/USDT"
    assert symbol_for("binance", ONE_MINUTE, cached=cached) == "BTC/USDT"  # before SOL, on 1m
    assert symbol_for("bybit", ONE_MINUTE, cached=cached) == "XRP/USDT"  # another timeframe: still
    assert symbol_for("okx", ONE_MINUTE, cached=cached) == "ETH/USDT"  # nothing cached
    assert symbol_for("cache:bybit", ONE_MINUTE, cached=cached) == "XRP/USDT"
    assert symbol_for("cache", ONE_MINUTE, cached=cached) == "BTC/USDT"  # never a demo series
    assert symbol_for("cache", ONE_MINUTE, cached=[]) is None  # nothing to open
    assert symbol_for("demo", ONE_MINUTE, cached=cached) == "DEMO/USDT"
    assert symbol_for("csv:/data/solusdt_1m.csv.gz", ONE_MINUTE) == "SOL/USDT"
    assert symbol_for("csv:/data/candles.csv", ONE_MINUTE, imported=["ETH/USDT"]) == "ETH/USDT"
    assert symbol_for("csv:/data/candles.csv", ONE_MINUTE) is None
    assert symbol_from_file_name("BTC-USDT-1h.csv") == "BTC/USDT"


def test_choosing_a_source_fills_in_its_symbol_and_the_last_one_used_is_remembered(
        qtbot, paths, tmp_path):
    with CandleCache(paths.candle_cache) as cache:
        cache.put(SeriesKey("binance", "BTC/USDT", ONE_MINUTE), make_candles(50))
    settings = QtCore.QSettings(str(paths.config_dir / "workstation.ini"),
                                QtCore.QSettings.Format.IniFormat)
    live = LiveData(paths.candle_cache)
    bar = DataBar()
    qtbot.addWidget(bar)
    bar.attach(live, settings)
    bar.show()

    def choose(source: str) -> str:
        edit = bar.source.lineEdit()
        edit.selectAll()
        QTest.keyClicks(edit, source)
        QTest.keyClick(edit, Key.Key_Return)  # as the user picks or types a source
        return bar.symbol.text()

    requested = []
    bar.open_requested.connect(lambda *values: requested.append(values))
    assert choose("binance") == "BTC/USDT"  # its cached symbol
    assert requested[-1][:2] == ("binance", "BTC/USDT")  # Enter opens it too
    assert choose("okx") == "ETH/USDT"
    assert choose("demo") == "DEMO/USDT"
    assert choose(f"csv:{tmp_path / 'ethusdt_1m.csv'}") == "ETH/USDT"

    asyncio.run(live.open("demo", "BTC/DEMO", "1m"))  # opened (the demo feed ends with run)
    assert live.remembered["demo"] == "BTC/DEMO"
    assert choose("binance") == "BTC/USDT"
    assert choose("demo") == "BTC/DEMO"  # the one last used with it
    settings.sync()

    again = LiveData(paths.candle_cache)  # the next launch
    bar2 = DataBar()
    qtbot.addWidget(bar2)
    bar2.attach(again, QtCore.QSettings(str(paths.config_dir / "workstation.ini"),
                                        QtCore.QSettings.Format.IniFormat))
    assert again.symbol_for("demo", ONE_MINUTE) == "BTC/DEMO"


def test_opening_without_a_symbol_opens_the_default_instead_of_failing(qapp, paths):
    with CandleCache(paths.candle_cache) as cache:
        cache.put(SeriesKey("bybit", "SOL/USDT", ONE_MINUTE), make_candles(60))
    seen = {}
    now = int(time.time() * 1000)

    async def session(window):
        async with FakeBinance(first_ms=now - 3000 * MIN, now_ms=now) as fake:
            window.live.feed_settings.update(
                urls=fake.ccxt_urls(), options=fake.ccxt_options(), retry=FAST,
                config={"enableRateLimit": False, "timeout_on_exit": 0}, clock=fake.clock)
            window.data_bar.set_values("binance", "", "1m")
            window.data_bar.open_button.click()  # no symbol typed
            await wait_for(lambda: window.live.key is not None and window.live.key.source ==
                           "binance" and window.live.state == "live")
            seen["binance"] = (window.live.key.symbol, window.data_bar.values()[1])
            await window.live.stop()
        await window.open_source("cache:bybit", None, "1m")
        seen["cache"] = (window.live.state, window.live.key.symbol, len(window.chart.candles))
        await window.open_source("demo", None, "1m")
        await wait_for(lambda: window.live.key.is_demo and window.live.state == "live")
        seen["demo"] = window.live.key.symbol
        return 0

    assert qasync.run(run_window(window_args(), on_shown=session)) == 0
    assert seen["binance"] == ("ETH/USDT", "ETH/USDT")  # and the bar shows it
    assert seen["cache"] == ("static", "SOL/USDT", 60)
    assert seen["demo"] == "DEMO/USDT"


# -- a failed switch ------------------------------------------------------------------------
def test_a_failed_switch_empties_the_chart_and_says_so_never_an_old_forming_candle(
        qapp, tmp_path):
    missing = tmp_path / "nothing_here.csv"
    seen = {}

    async def session(window):
        await wait_for(lambda: window.live.state == "live" and len(window.chart.candles) > 0)
        await wait_for(lambda: not window.live.candles.last_closed)
        seen["before"] = ("(forming)" in window.chart.readout_text(), window.data_bar.demo_shown())
        for source, symbol in (("cache", "NOPE/USDT"), (f"csv:{missing}", "ETH/USDT")):
            await window.open_source(source, symbol, "1m")
            seen[source.split(":")[0]] = dict(
                state=window.live.state, candles=len(window.chart.candles),
                readout=window.chart.readout_text(), demo=window.data_bar.demo_shown(),
                banner=window.offline.isVisible() and window.offline.message.text(),
                title=window.windowTitle())
            await window.open_source("demo", None, "1m")  # live again in between
            await wait_for(lambda: window.live.state == "live" and len(window.chart.candles) > 0)
        return 0

    assert qasync.run(run_window(window_args(), on_shown=session)) == 0
    assert seen["before"] == (True, True)
    for kind, needle in (("cache", "NOPE/USDT"), ("csv", "nothing_here.csv")):
        after = seen[kind]
        assert after["state"] == "failed" and after["candles"] == 0, after
        assert "(forming)" not in after["readout"] and after["demo"] is False
        assert after["banner"].startswith("Not live: ") and needle in after["banner"]
        assert "DEMO" not in after["title"]


# -- offline or refused, by ccxt's error class ---------------------------------------------
def test_an_unreachable_exchange_says_no_network_and_an_exchange_error_says_otherwise(qapp):
    urls, options = closed_port_urls()
    seen = {}
    now = int(time.time() * 1000)

    async def opened(window, symbol: str) -> tuple[str, str]:
        """Open binance ``symbol``; the state it ends in (offline or failed) and the banner."""
        states = []
        window.live.state_changed.connect(lambda state, _detail: states.append(state))
        await window.open_source("binance", symbol, "1m")
        await wait_for(lambda: "offline" in states or "failed" in states)
        return window.live.state, window.offline.message.text()

    async def session(window):
        window.live.feed_settings["retry"] = FAST
        seen["unreachable"] = await opened(window, "ETH/USDT")  # nothing listens there
        async with FakeBinance(first_ms=now - 3000 * MIN, now_ms=now) as fake:
            window.live.feed_settings.update(
                urls=fake.ccxt_urls(), options=fake.ccxt_options(), retry=FAST,
                config={"enableRateLimit": False, "timeout_on_exit": 0}, clock=fake.clock)
            # Binance's -1000, twice (every try): ccxt's OperationFailed, not a NetworkError
            fake.fail_next(2, 500, UNKNOWN_ERROR, path="/api/v3/exchangeInfo")
            seen["error"] = await opened(window, "ETH/USDT")
            seen["bad symbol"] = await opened(window, "NOPE/USDT")  # no such market
            await window.live.stop()
        return 0

    args = window_args(ccxt_urls=urls, ccxt_options=options)
    assert qasync.run(run_window(args, on_shown=session)) == 0
    state, text = seen["unreachable"]
    assert state == "offline" and text.startswith("Offline: binance cannot be reached")
    assert "no network" in text and "ExchangeNotAvailable" in text
    for case in ("error", "bad symbol"):
        state, text = seen[case]
        assert state == "failed" and text.startswith("Not live: "), (case, text)
        assert "cannot be reached" not in text and "no network" not in text
    assert "answered with an error" in seen["error"][1] and "OperationFailed" in seen["error"][1]
    assert "has no market NOPE/USDT" in seen["bad symbol"][1]


# -- a candle file, imported once --------------------------------------------------------------
def _open(live: LiveData, path, symbol="ETH/USDT") -> None:
    asyncio.run(live.open(f"csv:{path}", symbol, "1m"))


def test_a_csv_file_is_imported_into_the_cache_once_and_read_from_it_afterwards(paths,
                                                                               tmp_path):
    path = write_candles_csv(make_candles(3000), tmp_path / "ethusdt_1m.csv")
    key = file_key(path, "ETH/USDT", ONE_MINUTE)
    live = LiveData(paths.candle_cache)
    reports = []
    live.progress.connect(lambda done, what: reports.append((done, what)))
    _open(live, path)
    assert live.state == "static" and live.last_import is True
    assert len(live.candles) == 3000 and live.key == key
    steps = [done for done, what in reports if what]  # "": the bar hides (start and end)
    assert steps == sorted(steps) and len(steps) > 3 and reports[-1] == (1.0, "")
    assert any("importing ethusdt_1m.csv" in what for _done, what in reports)
    with CandleCache(paths.candle_cache) as cache:
        assert cache.imported(FileStamp.of(path), key)
        assert len(cache.load(key)) == 3000
        # mark the cached copy: a reading of the cache shows it, a reading of the file not
        marked = cache.load(key)
        close = marked.close.copy()
        close[10] = mark = round(float(marked.low[10] + marked.high[10]) / 2 + 0.001, 3)
        assert mark != float(marked.close[10])
        cache.put(key, Candles.from_arrays(marked.ts, marked.open, marked.high, marked.low,
                                           close, marked.volume, ONE_MINUTE))
    db = os.stat(paths.candle_cache).st_mtime_ns
    reports.clear()
    _open(live, path)
    assert live.last_import is False and float(live.candles.close[10]) == mark
    assert not [done for done, _what in reports if done < 1.0]  # no import this time
    assert os.stat(paths.candle_cache).st_mtime_ns == db  # nothing was written

    changed = make_candles(2000)  # the file changes (size and mtime): imported again
    write_candles_csv(changed, path)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    _open(live, path)
    assert live.last_import is True and len(live.candles) == 2000
    assert float(live.candles.close[10]) == float(changed.close[10])
    with CandleCache(paths.candle_cache) as cache:
        assert len(cache.load(key)) == 2000  # replaced, not merged with the old candles
        assert cache.imported_symbols(path) == ["ETH/USDT"]
    assert live.symbol_for(f"csv:{path}", ONE_MINUTE) == "ETH/USDT"


def test_a_file_that_moves_under_another_name_of_the_same_series_is_imported_again(paths,
                                                                                 tmp_path):
    first = write_candles_csv(make_candles(100), tmp_path / "a" / "eth.csv")
    second = write_candles_csv(make_candles(80), tmp_path / "b" / "eth.csv")  # same name
    live = LiveData(paths.candle_cache)
    _open(live, first)
    _open(live, second)  # the same series (csv:eth.csv ETH/USDT 1m): it takes it over
    assert live.last_import is True and len(live.candles) == 80
    _open(live, first)
    assert live.last_import is True and len(live.candles) == 100  # never the other's candles


def test_a_bad_row_far_into_a_file_is_named_by_its_line_and_nothing_is_cached(paths, tmp_path,
                                                                             monkeypatch):
    monkeypatch.setattr(csv_io, "PARSE_ROWS", 10)  # parse in many steps
    text = (csv_io.candles_to_csv_bytes(make_candles(60))).decode().splitlines()
    text[47] = text[47].replace(",", ",x", 1)  # line 48: header + 47 rows
    path = tmp_path / "eth.csv"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(CsvFormatError, match=r"line 48: open: 'x"):
        read_candles_csv(path, ONE_MINUTE)
    live = LiveData(paths.candle_cache)
    _open(live, path)
    assert live.state == "failed" and "line 48" in live.detail and len(live.candles) == 0
    with CandleCache(paths.candle_cache) as cache:
        assert not cache.imported(FileStamp.of(path), file_key(path, "ETH/USDT", ONE_MINUTE))
