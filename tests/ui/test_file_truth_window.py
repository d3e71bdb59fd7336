"""The window takes a candle file for what it is: a file of another timeframe than the one
chosen is refused in one line in the status bar, nothing stored, the chart and the data bar as
they were; ``[`` / ``]`` on chart 1 of a file resample from the file's own candles (and say
that it has none shorter); a file whose name or prices contradict its symbol is asked about in
a keyboard overlay first (Esc stores nothing); an unknown exchange is one line, no traceback.
The real main window on the offscreen platform; files and the cache are written by the test."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from PySide6 import QtWidgets
from PySide6.QtTest import QTest

from workstation.market.cache import CandleCache
from workstation.market.candles import Candles
from workstation.market.csv_io import write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.sources import file_key
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.ui.question import Question

from conftest import Key, wait_for

DAY = 86_400_000
END = 1_700_000_000_000 - 1_700_000_000_000 % DAY
M3 = parse_timeframe("3m")


def focused() -> QtWidgets.QWidget | None:
    return QtWidgets.QApplication.focusWidget()


@pytest.fixture
def window(qtbot, csv_window, tmp_path):
    """The main window on a 1m ETH/USDT file (``window.minutes``: its candles and file)."""
    candles = demo_candles(900, ONE_MINUTE, seed=7, end_ts=END)
    path = write_candles_csv(candles, tmp_path / "ethusdt_1m.csv")
    win = csv_window(path, "ETH/USDT", "1m")
    win.minutes = (candles, path)
    qtbot.waitUntil(lambda: win.live.state == "static" and len(win.chart.candles) == 900)
    qtbot.waitUntil(win.chart.view.hasFocus)
    return win


def cached_keys(window) -> list[SeriesKey]:
    with CandleCache(window.live.cache_path) as cache:
        return cache.keys()


def test_a_file_of_another_timeframe_is_refused_and_the_chart_keeps_what_it_showed(
        window, tmp_path):
    _minutes, path = window.minutes
    shown, key = window.chart.candles, window.live.key
    hourly = write_candles_csv(demo_candles(300, parse_timeframe("1h"), seed=8, end_ts=END),
                               tmp_path / "ethusdt_1h.csv.gz")
    asyncio.run(window.open_source(f"csv:{hourly}", "ETH/USDT", "1m"))
    assert window.statusBar().currentMessage() == (
        "ethusdt_1h.csv.gz holds 1h candles, not 1m: choose 1h (or a longer timeframe: it is "
        "resampled)")
    assert window.chart.candles is shown and window.live.key == key
    assert window.live.state == "static" and not window.offline.isVisible()
    assert window.data_bar.values() == (f"csv:{path}", "ETH/USDT", "1m")
    assert cached_keys(window) == [key]  # nothing of the hourly file was stored
    assert window.chart.view.hasFocus()


def test_a_file_refused_at_launch_is_said_in_the_banner_that_stays(qtbot, paths, tmp_path):
    from workstation.ui.main_window import MainWindow

    win = MainWindow(paths)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    hourly = write_candles_csv(demo_candles(300, parse_timeframe("1h"), seed=8, end_ts=END),
                               tmp_path / "ethusdt_1h.csv.gz")
    asyncio.run(win.open_source(f"csv:{hourly}", "ETH/USDT", "1m"))  # nothing shown before
    assert win.offline.isVisible()
    assert "holds 1h candles, not 1m" in win.offline.message.text()
    asyncio.run(win.shutdown())


def test_a_file_picked_in_file_import_candles_opens_on_its_own_timeframe(window, tmp_path,
                                                                         monkeypatch):
    hourly = demo_candles(300, parse_timeframe("1h"), seed=9, end_ts=END)
    path = write_candles_csv(hourly, tmp_path / "ethusdt_1h.csv")
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName",
                        staticmethod(lambda *_args, **_kw: (str(path), "")))

    async def session() -> None:
        window.import_csv()  # the data bar is on 1m: the file's own 1h is what opens
        await window._opening

    asyncio.run(session())
    assert window.live.key == file_key(path, "ETH/USDT", parse_timeframe("1h"))
    assert len(window.chart.candles) == 300
    assert window.data_bar.values() == (f"csv:{path}", "ETH/USDT", "1h")


def test_brackets_on_chart_1_of_a_file_resample_from_its_own_candles(window):
    minutes, path = window.minutes

    async def press(key) -> None:
        QTest.keyClick(focused(), key)
        if window._opening is not None:
            await window._opening

    async def session() -> None:
        await press(Key.Key_BracketRight)
        assert window.live.state == "static" and window.live.key.timeframe == M3
        assert "resampled from the file's 1m candles" in window.live.detail
        assert np.allclose(window.chart.candles.close, minutes.resample(M3).close)
        assert window.data_bar.values()[2] == "3m"
        await press(Key.Key_BracketLeft)
        assert window.live.key.timeframe == ONE_MINUTE and len(window.chart.candles) == 900
        shown, opening = window.chart.candles, window._opening
        QTest.keyClick(focused(), Key.Key_BracketLeft)  # nothing shorter than the file's 1m
        assert window._opening is opening and window.chart.candles is shown
        assert window.statusBar().currentMessage() == \
            "ethusdt_1m.csv has no candles shorter than 1m"

    asyncio.run(session())
    assert cached_keys(window) == [file_key(path, "ETH/USDT", ONE_MINUTE)]


def test_a_btc_file_opened_as_eth_is_asked_about_and_esc_stores_nothing(window, tmp_path,
                                                                        qtbot):
    minutes, path = window.minutes
    btc = Candles.from_columns([minutes.ts, *(c * 16 for c in minutes.columns()[1:5]),
                                minutes.volume], ONE_MINUTE)
    other = write_candles_csv(btc, tmp_path / "btcusdt_1m.csv.gz")
    shown, key = window.chart.candles, window.live.key

    async def session() -> None:
        await window.open_source(f"csv:{other}", "ETH/USDT", "1m")
        question = window.findChild(Question, "symbolQuestion")
        assert question is not None and question.isVisible() and question.yes.hasFocus()
        assert "btcusdt_1m.csv.gz is named for BTC/USDT, not ETH/USDT" in question.text.text()
        QTest.keyClick(focused(), Key.Key_Escape)
        assert not question.isVisible() and window._opening is None  # no second opening
        assert window.chart.candles is shown and window.live.key == key
        assert window.data_bar.values() == (f"csv:{path}", "ETH/USDT", "1m")
        assert cached_keys(window) == [key]
        await window.open_source(f"csv:{other}", "ETH/USDT", "1m")
        asked = [q for q in window.findChildren(Question, "symbolQuestion") if q.isVisible()]
        assert len(asked) == 1
        QTest.keyClick(focused(), Key.Key_Y)
        await wait_for(lambda: window.live.key == file_key(other, "ETH/USDT", ONE_MINUTE))

    window._opening = None
    asyncio.run(session())
    assert np.allclose(window.chart.candles.close, btc.close)
    assert file_key(other, "ETH/USDT", ONE_MINUTE) in cached_keys(window)
    qtbot.waitUntil(window.chart.view.hasFocus)


def test_a_question_answers_from_the_keyboard_and_gives_the_keyboard_back(window, qtbot):
    answers: list[bool] = []
    question = Question(window)
    question.answered.connect(answers.append)
    for keys, answer in (([Key.Key_Return], True), ([Key.Key_Y], True), ([Key.Key_N], False),
                         ([Key.Key_Escape], False), ([Key.Key_Tab, Key.Key_Return], False),
                         ([Key.Key_Tab, Key.Key_Tab, Key.Key_Enter], True)):
        question.ask("Open it anyway?", "Open")
        assert question.isVisible() and question.yes.hasFocus()
        for key in keys:
            QTest.keyClick(focused(), key)
        assert answers[-1] is answer and not question.isVisible(), keys
        qtbot.waitUntil(window.chart.view.hasFocus)
    assert len(answers) == 6


def test_an_unknown_exchange_is_one_line_in_the_banner_and_the_log(window, qtbot):
    async def session() -> None:
        await window.open_source("binanse", "ETH/USDT", "1m")
        await wait_for(lambda: window.live.state == "failed")

    asyncio.run(session())
    detail = window.live.detail
    assert detail.startswith("unknown exchange 'binanse': did you mean binance")
    assert "ids like binance, bybit" in detail and "\n" not in detail
    assert window.offline.isVisible() and "unknown exchange 'binanse'" in \
        window.offline.message.text()
    assert window.statusBar().currentMessage() == detail
    qtbot.waitUntil(lambda: "unknown exchange 'binanse'" in window.log_dock.visible_text())
    assert "Traceback" not in window.log_dock.visible_text()
