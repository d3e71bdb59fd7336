"""Blind replay in the window (issue 27): one replay clock drives every chart, nothing after it
is shown, marks made in it are blind with their decision times, and the session is kept.

The perturbed-future tests replay a series, then replay it again with every candle after the
clock changed (and marks added after it) and find every chart's candles, the annotation list,
every chart's annotation tables and the pixels of every chart unchanged. Real main window, real
store, real keys."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel

from workstation.annotations.horizon import seen_at
from workstation.annotations.model import Direction, Region, Trade
from workstation.annotations.replay_sessions import PaperResult
from workstation.backtest.engine import Costs
from workstation.backtest.paper import PaperAccount
from workstation.market.candles import Candles
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import parse_timeframe
from workstation.paths import app_paths
from workstation.timeparse import format_minute
from workstation.ui.command_registry import cheat_sheet, commands
from workstation.ui.main_window import MainWindow

from conftest import END_TS, WAIT_MS, Key, tiny_training
from live_replay import assert_paper_is_the_engine, script_position_calls, wait_live

CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier
START = 1500  # candles on screen when the replay starts
STEPS = 7  # candles it then shows one by one


OPENED: list[MainWindow] = []


@pytest.fixture(autouse=True)
def closes_every_window():
    """Each window a test opened is shut down after it, whatever the test did."""
    yield
    while OPENED:
        close(OPENED.pop())


def open_window(qtbot, paths, timeframe: str = "1m", layout: str = "one",
                timeframes: tuple[str, ...] = ("1m", "15m", "1h", "1d"), n: int = 3000,
                candles: Candles | None = None) -> MainWindow:
    settings = QSettings(str(paths.config_dir / "workstation.ini"), QSettings.Format.IniFormat)
    settings.setValue("charts/layout", layout)
    settings.setValue("charts/timeframes", list(timeframes))
    settings.sync()
    win = MainWindow(paths)
    OPENED.append(win)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    tf = parse_timeframe(timeframe)
    win.live.candles = candles if candles is not None else demo_candles(n, tf, seed=3,
                                                                        end_ts=END_TS)
    win.live.key = SeriesKey("demo", "DEMO/USDT", tf)
    win.live.candles_changed.emit("reset")
    qtbot.wait(50)
    return win


def close(win: MainWindow) -> None:
    asyncio.run(win.shutdown())  # again does nothing


def perturbed(candles: Candles, after: int, seed: int = 9) -> Candles:
    """``candles`` with every candle from row ``after`` on changed (prices scaled by a random
    factor per candle, volumes replaced)."""
    rng = np.random.default_rng(seed)
    ts, o, h, low, c, v = (col.copy() for col in candles.columns())
    k = len(ts) - after
    scale = rng.uniform(0.5, 2.0, k)
    for col in (o, h, low, c):
        col[after:] *= scale
    v[after:] = rng.uniform(1, 1e6, k)
    return Candles.from_columns([ts, o, h, low, c, v], candles.timeframe)


def marks(win: MainWindow, candles: Candles, rows: list[tuple[int, int]]) -> None:
    """Hindsight trades and a region over the candle rows given."""
    store = win.annotations.store
    market = win.live.key.market
    for i, (a, b) in enumerate(rows):
        store.add(Trade(market=market.kind, symbol=market.symbol, timeframe=candles.timeframe.name,
                        direction=Direction.LONG if i % 2 else Direction.SHORT,
                        entry_ts=int(candles.ts[a]), entry_price=float(candles.close[a]),
                        exit_ts=int(candles.ts[b]), exit_price=float(candles.close[b])))
    store.add(Region(market=market.kind, symbol=market.symbol, timeframe=candles.timeframe.name,
                     start_ts=int(candles.ts[rows[0][0]]), end_ts=int(candles.ts[rows[-1][1]]),
                     label="uptrend"))


def seen(win: MainWindow, qtbot) -> list:
    """Everything the window shows that could reveal a candle: each chart's candles, its
    pixels, the list and every chart's annotation tables, the status line."""
    qtbot.wait(30)
    out: list = [win.status.connection.text()]
    for chart in win.chart_area.shown():
        c = chart.candles
        out.append([col.tobytes() for col in c.columns()] + [c.last_closed])
        out.append(chart.grab().toImage())
    out.append(sorted((a.kind.value, a.span, a.blind, str(getattr(a, "label", "")))
                      for a in win.annotations.model.annotations()))
    layers = [win.annotations.graphics, *(win.linked_annotations.on(chart)
                                          for chart in win.chart_area.shown())]
    for g in layers:
        out.append([table.col(name).tobytes() for table, name in (
            (g.trades, "entry_ts"), (g.trades, "exit_ts"), (g.trades, "pnl"),
            (g.regions, "start_ts"), (g.regions, "end_ts"))])
    return out


def replayed(win: MainWindow, qtbot) -> list:
    assert win.replay.start(START)
    for _ in range(STEPS):
        QTest.keyClick(win.chart.view, Key.Key_Period)
    return seen(win, qtbot)


def assert_same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x == y, f"item {i} of what is shown differs"


def run_twice(qtbot, paths, tmp_path, **window) -> None:
    base = demo_candles(3000, parse_timeframe(window.get("timeframe", "1m")), seed=3,
                        end_ts=END_TS)
    clock_row = START + STEPS  # the first candle the clock has not passed
    win = open_window(qtbot, paths, candles=base, **window)
    marks(win, base, [(200, 260), (900, 1000), (START + 2, START + 5)])
    first = replayed(win, qtbot)
    close(win)
    # the same history and marks, a different future: candles and marks after the clock
    other = app_paths(tmp_path / "other").ensure()
    win = open_window(qtbot, other, candles=perturbed(base, clock_row), **window)
    marks(win, base, [(200, 260), (900, 1000), (START + 2, START + 5)])
    marks(win, base, [(clock_row - 1, clock_row + 40), (clock_row + 100, clock_row + 200)])
    second = replayed(win, qtbot)
    hidden = [a for a in win.annotations.store.list(market=win.live.key.market)
              if seen_at(a) > win.replay.clock.now]
    assert len(hidden) == 3  # two trades and a region after the clock exist, unseen
    close(win)
    assert_same(first, second)


@pytest.mark.parametrize("timeframe", ["1m", "1h"])
def test_one_chart_shows_nothing_after_the_clock(qtbot, paths, tmp_path, timeframe):
    run_twice(qtbot, paths, tmp_path, timeframe=timeframe)


@pytest.mark.parametrize("timeframes", [("1m", "3m", "5m", "15m"), ("1m", "30m", "1h", "4h"),
                                        ("1m", "1d", "1h", "15m")])
def test_four_charts_show_nothing_after_the_clock(qtbot, paths, tmp_path, timeframes):
    run_twice(qtbot, paths, tmp_path, layout="four", timeframes=timeframes)


def test_higher_timeframes_form_up_to_the_clock(qtbot, paths):
    win = open_window(qtbot, paths, layout="four", timeframes=("1m", "15m", "1h", "1d"))
    source = win.live.candles
    assert win.replay.start(START + 7)  # mid-way through a 15m and a 1h candle
    now = win.replay.clock.now
    for chart in win.chart_area.shown()[1:]:
        c, tf = chart.candles, chart.candles.timeframe
        assert int(c.ts[-1]) == tf.floor(now - 1)  # the candle the clock is inside
        assert not c.last_closed
        assert float(c.close[-1]) == float(source.close[START + 6])
        built = source.slice(0, START + 7).resample(tf)
        assert float(c.high[-1]) == float(built.high[-1])
    close(win)


def test_blind_marks_with_keys_keep_their_decision_times(qtbot, paths):
    win = open_window(qtbot, paths)
    QTest.keyClick(win.chart.view, Key.Key_R, CTRL)  # a random start
    clock = win.replay.clock
    assert clock is not None and win.status.connection.text().startswith(
        "REPLAY ") and " · 5/s · blind" in win.status.connection.text()
    assert len(win.chart.candles) == clock.shown
    QTest.keyClick(win.chart.view, Key.Key_L)
    entry_clock, entry_ts = clock.now, int(win.chart.candles.ts[-1])
    for _ in range(4):
        QTest.keyClick(win.chart.view, Key.Key_Period)
    QTest.keyClick(win.chart.view, Key.Key_End)
    QTest.keyClick(win.chart.view, Key.Key_X)
    exit_clock, exit_ts = clock.now, int(win.chart.candles.ts[-1])
    [trade] = win.annotations.store.trades(win.live.key.market)
    assert (trade.entry_ts, trade.exit_ts) == (entry_ts, exit_ts)
    assert trade.blind and trade.decided_at == (entry_clock, exit_clock)
    assert exit_clock == entry_clock + 4 * 60_000
    assert "2 decisions" in win.status.connection.text()
    # the span the clock passed is one blind reviewed region, exactly
    QTest.keyClick(win.chart.view, Key.Key_E, CTRL | SHIFT)
    [region] = win.annotations.store.list(market=win.live.key.market, kind="region")
    source = win.replay.sessions.all()[-1]
    assert region.label == "reviewed" and region.blind
    assert (region.start_ts, region.end_ts) == (entry_ts + 60_000, exit_ts)
    assert source.ended_at is not None and source.decisions == 2
    assert win.status.connection.text() != "" and not win.replay.active
    close(win)


def test_nothing_is_marked_after_the_clock(qtbot, paths):
    win = open_window(qtbot, paths, layout="four")
    assert win.replay.start(START + 7)
    chart = win.chart_area.charts[1]  # 15m: its last candle forms until after the clock
    chart.view.setFocus()
    qtbot.waitUntil(lambda: win.chart_area.active == 1)
    QTest.keyClick(chart.view, Key.Key_End)
    QTest.keyClick(chart.view, Key.Key_M)
    assert "after the replay clock" in win.statusBar().currentMessage()
    close(win)


def test_play_speed_and_steps(qtbot, paths):
    win = open_window(qtbot, paths)
    assert win.replay.start(START)
    view = win.chart.view
    for _ in range(3):
        QTest.keyClick(view, Key.Key_Up, CTRL)
    assert str(win.replay.clock.speed) == "25/s"
    QTest.keyClick(view, Key.Key_Space)
    qtbot.waitUntil(lambda: win.replay.clock.shown >= START + 10)
    QTest.keyClick(view, Key.Key_Space)
    shown = win.replay.clock.shown
    qtbot.wait(200)
    assert win.replay.clock.shown == shown and "paused" in win.status.connection.text()
    assert len(win.chart.candles) == shown
    QTest.keyClick(view, Key.Key_Down, CTRL)
    assert str(win.replay.clock.speed) == "1000x"  # 16.7 candles a second on 1m
    close(win)


def test_replay_resumes_after_a_restart_where_it_stopped(qtbot, paths):
    win = open_window(qtbot, paths)
    assert win.replay.start(START)
    win.replay.step(12)
    stopped = win.replay.clock.now
    close(win)  # the window closes mid-replay
    win = open_window(qtbot, paths)
    assert win.replay.resume()
    assert win.replay.clock.now == stopped and len(win.chart.candles) == START + 12
    assert len(win.replay.sessions.all()) == 1
    close(win)


def test_every_replay_command_is_in_the_cheat_sheet_and_the_palette():
    ids = {c.id for c in commands("Blind replay")}
    assert {"replay.start_random", "replay.start_cursor", "replay.play", "replay.step",
            "replay.step_many", "replay.faster", "replay.slower", "replay.span",
            "replay.resume", "replay.end", "replay.consistency",
            "replay.consistency_report"} == ids
    sheet = dict(cheat_sheet())["Blind replay"]
    assert ("Space", "Play / pause the replay") in sheet


def test_the_command_line_starts_a_random_replay_inside_the_span(qtbot, paths):
    win = open_window(qtbot, paths)
    c = win.live.candles
    span = f"{int(c.ts[1000])}..{int(c.ts[1200])}"
    assert asyncio.run(win.replay.from_command_line("random", span, "60x"))
    clock = win.replay.clock
    assert 999 <= clock.shown <= 1201 and str(clock.speed) == "60x"
    assert win.replay.sessions.latest().span == (int(c.ts[1000]), int(c.ts[1200]))
    at = int(c.ts[700]) + 60_000
    assert asyncio.run(win.replay.from_command_line(str(at), None, None))
    assert win.replay.clock.now == at and len(win.chart.candles) == 701


def idle(panel, qtbot) -> None:
    qtbot.waitUntil(lambda: panel.state in ("idle", "failed") and not panel.busy,
                    timeout=WAIT_MS)
    assert panel.state == "idle", panel.detail


def test_live_mode_and_paper_trading_run_on_the_replay_clock_with_a_model_blind_to_it(
        qtbot, paths, monkeypatch):
    calls = script_position_calls(monkeypatch)
    win = open_window(qtbot, paths)
    panel, c = win.training, win.live.candles
    tiny_training(win, qtbot)
    panel.settings.set_train_until(int(c.ts[1200]))  # the run learns nothing after it
    panel.start_training()
    idle(panel, qtbot)
    run = panel.current_run_id
    panel.settings.set_train_until(None)

    assert win.replay.start(1000)  # the clock before what the run learned
    covers = win.findChildren(QLabel, "blindCover")
    assert {c.parent() for c in covers} == {win.training_workspace.page, win.backtest.view}
    panel.start_live()
    assert panel.state == "idle" and "live inference during blind replay" in panel.detail
    learned = format_minute(int(c.ts[1200]) + 60_000)  # the close of its last candle
    assert (f"run {run} learned {win.live.key.provenance} up to {learned} UTC, after the "
            f"replay clock ({format_minute(win.replay.clock.now)} UTC)") in panel.detail
    panel.start_live_training()  # a fresh model learns only the candles the clock passed
    wait_live(qtbot, panel)
    first = win.replay.session
    assert panel._live_account.startswith("a fresh model started ")
    assert panel._live_account.endswith(f" + per-candle training · blind replay {first.id}")

    assert win.replay.start(START)  # a new replay, after everything the run learned
    assert panel.state != "live"  # live mode stopped before the new replay's candles showed
    idle(panel, qtbot)
    panel.paper.set_enabled(True)
    calls.clear()
    panel.start_live()  # F6
    wait_live(qtbot, panel)
    session = win.replay.session
    assert f"run {run}" in panel.detail
    account = panel.paper.account
    assert account.run == f"run {run} · blind replay {session.id}"
    assert win.chart.isVisible()  # the replay brought the charts forward from the training
    for _ in range(30):
        QTest.keyClick(win.chart.view, Key.Key_Period)
        shown = int(win.live.candles.ts[-1])
        qtbot.waitUntil(lambda shown=shown: account.state.closed_ts == shown, timeout=WAIT_MS)
    clock = win.replay.clock.now
    assert all(t.exit_ts < clock for t in account.trades) and len(account.trades) >= 4
    assert assert_paper_is_the_engine(account, win.live.candles, calls) >= 4
    kept = win.replay.sessions.paper(session.id)
    assert kept == [PaperResult(account.label, len(account.trades),
                                sum(t.pnl > 0 for t in account.trades), account.pnl,
                                account.return_pct, account.equity, account.state.held,
                                account.state.closed_ts)]
    assert (f"PAPER {account.return_pct:+.2f} % · {len(account.trades)} trades"
            in win.status.connection.text())
    state = account.state

    win.replay.end()  # live mode stops before the hidden candles show; nothing more traded
    assert panel.paper.account is None and not panel.blind_replay
    idle(panel, qtbot)
    qtbot.waitUntil(lambda: not win.findChildren(QLabel, "blindCover"))
    assert len(win.live.candles) == 3000
    with PaperAccount(paths.paper_db, account.series, account.run, costs=Costs(0.0)) as saved:
        assert saved.state == state
    assert win.replay.sessions.paper(session.id) == kept


def test_the_marks_setting_asks_for_blind_marks_only(qtbot, paths):
    win = open_window(qtbot, paths)
    form = win.training.settings
    assert form.request().marks == "all"  # the default
    form.marks.setCurrentIndex(form.marks.findData("blind"))
    assert form.request().marks == "blind" and form.marks.currentText() == "blind marks only"
