"""The teaching loop in minutes (issue 26, item 8): from the palette on the demo market, "Teach
a rule" puts the trades of the 10/50 + 20/100 agreement rule, and the reviewed region over
them, in place of the demo marks (the trader's are written to a file first), holds out the
newest days, trains tiny on the CPU with the window's defaults and reports on the held-out
days: the position head shows an edge; "Teach shuffled marks" does the same with the trades
shuffled in time and shows none. Real markets are refused. Real main window, real store,
real training; 20,000 demo candles (13.9 days)."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtTest import QTest

from workstation.annotations.io import read_json
from workstation.annotations.model import Direction, Trade
from workstation.market.demo import demo_candles
from workstation.market.series import MarketKind, SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.lessons import SHUFFLE_SEED, TEACH_RULE, lesson
from workstation.ml.scoring import EDGE, NO_EDGE
from workstation.ui.main_window import MainWindow

from conftest import END_TS, WAIT_MS, Key

DEMO = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
TRAINED_MS = 600_000  # a lesson trains and reports in about 1.5 minutes here, alone


@pytest.fixture
def window(qtbot, paths):
    win = MainWindow(paths)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.live.candles = demo_candles(20_000, seed=3, end_ts=END_TS)
    win.live.key = DEMO
    win.live.candles_changed.emit("reset")
    qtbot.waitUntil(lambda: win.training.state == "idle" and not win.training.tasks_running,
                    timeout=WAIT_MS)
    win.training.settings.device.setCurrentIndex(win.training.settings.device.findData("cpu"))
    yield win
    asyncio.run(win.shutdown())


def from_palette(window, qtbot, text: str) -> None:
    window.command_palette.open_palette()
    qtbot.waitUntil(window.command_palette.query.hasFocus)
    QTest.keyClicks(window.command_palette.query, text)
    QTest.keyClick(window.command_palette.query, Key.Key_Return)


def position_verdict(window, qtbot) -> str:
    """The verdict of the position head's line in the Report tab, once it is there."""
    report = window.training.report
    qtbot.waitUntil(lambda: "position" in report.text.toPlainText() and not report.busy,
                    timeout=TRAINED_MS)
    lines = report.text.toPlainText().splitlines()
    assert any(line.startswith("scored on the held-out span") for line in lines)
    line = next(line.strip() for line in lines if line.strip().startswith("position "))
    return line


def test_teach_a_rule_from_the_palette_shows_an_edge_on_the_held_out_days(window, qtbot, paths):
    mine = Trade(market=MarketKind.DEMO, symbol="DEMO/USDT", timeframe="1m",
                 direction=Direction.LONG, entry_ts=int(window.live.candles.ts[100]),
                 entry_price=100.0, exit_ts=int(window.live.candles.ts[120]), exit_price=101.0)
    window.annotations.store.add(mine)
    from_palette(window, qtbot, "teach a rule")
    expected = lesson(window.live.candles, DEMO.market)
    assert window.training.settings.train_until_ms() == expected.train_until
    assert "held out for the report" in window.statusBar().currentMessage()
    stored = window.annotations.store.trades(DEMO.market)
    assert [t.id for t in stored] == [t.id for t in expected.trades]
    assert all(TEACH_RULE.tag in t.tags for t in stored)
    regions = window.annotations.store.list(market=DEMO.market, kind="region")
    assert [(r.label, r.start_ts, r.end_ts) for r in regions] == [
        ("reviewed", stored[0].entry_ts, stored[-1].exit_ts)]
    backups = list(paths.data_dir.glob("demo-marks-before-teaching-*.json"))
    assert [a.id for a in read_json(backups[0])] == [mine.id]  # the trader's mark, kept
    line = position_verdict(window, qtbot)
    assert f": {EDGE})" in line, line
    assert window.training_workspace.mode == "tab"
    assert window.centre_tabs.currentWidget() is window.training_workspace.page


def test_teach_shuffled_marks_shows_no_edge(window, qtbot):
    from_palette(window, qtbot, "teach shuffled")
    stored = window.annotations.store.trades(DEMO.market)
    assert stored and all(f"shuffled seed {SHUFFLE_SEED}" in t.tags for t in stored)
    line = position_verdict(window, qtbot)
    assert f": {NO_EDGE}" in line, line


def test_a_real_market_and_a_short_history_are_refused_and_no_mark_changes(window, qtbot):
    window.live.key = SeriesKey("binance", "ETH/USDT", ONE_MINUTE)
    window.teacher.teach(False)
    assert "works on the demo market" in window.statusBar().currentMessage()
    window.live.key = DEMO
    window.live.candles = demo_candles(5000, seed=3, end_ts=END_TS)  # 3.5 days
    window.teacher.teach(False)
    assert "a lesson needs 9 days of closed candles (3 to learn from, 6 held out), these " \
        "span 3.5" in window.statusBar().currentMessage()
    assert window.training.state == "idle" and not window.annotations.store.list()
