"""The consistency check in the window (issue 32): Shift+F9 replays, blind, stretches the
trader labelled, with the old marks hidden on every chart and in the list; the fresh marks and
the replay's reviewed regions go to the check's own store, never to the trader's; each stretch
stops at its end, the last opens the report, and a pause or a restart never leaks into the
trader's marks. Real main window, real stores, real keys."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QInputDialog
from test_blind_replay import close, closes_every_window, open_window  # noqa: F401

from workstation.annotations.model import Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.market.replay_clock import index_at

from conftest import Key

SHIFT, CTRL = Qt.KeyboardModifier.ShiftModifier, Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def two_stretches(monkeypatch):
    monkeypatch.setattr(QInputDialog, "getInt", lambda *a, **k: (2, True))


def labelled(qtbot, paths):
    """A window on 1h demo candles with candles 1000..1095 (two stretches) labelled, and a
    trade too short for a stretch before them."""
    win = open_window(qtbot, paths, timeframe="1h")
    ts, kw = win.live.candles.ts, {"market": "demo", "symbol": "DEMO/USDT", "timeframe": "1h"}
    win.annotations.store.merge([
        Region(**kw, start_ts=int(ts[1000]), end_ts=int(ts[1095]), label="reviewed"),
        Trade(**kw, direction="long", entry_ts=int(ts[1020]), entry_price=1.0,
              exit_ts=int(ts[1030]), exit_price=2.0),
        Trade(**kw, direction="short", entry_ts=int(ts[1060]), entry_price=2.0,
              exit_ts=int(ts[1070]), exit_price=1.0),
        # before the stretches: a replay's clock alone would show it; the check hides it
        Trade(**kw, direction="long", entry_ts=int(ts[900]), entry_price=1.0,
              exit_ts=int(ts[905]), exit_price=2.0)])
    qtbot.wait(20)
    return win


def check_key(win) -> None:
    QTest.keyClick(win.chart.view, Key.Key_F9, SHIFT)


def test_a_check_replays_each_stretch_blind_and_keeps_the_fresh_marks_apart(
        qtbot, paths, two_stretches):
    win = labelled(qtbot, paths)
    own = win.annotations.own_store
    before = own.list()
    ts = win.live.candles.ts
    check_key(win)
    assert win.consistency.active and win.replay.active
    plan = win.consistency.plan
    assert [s.start_ts for s in plan.stretches] == [int(ts[1000]), int(ts[1048])]
    assert win.replay.clock.shown == 1000 and win.replay.clock.left == 48
    # the old marks are hidden everywhere; what is shown and edited is the check's store
    assert win.annotations.store is win.consistency.store and not win.annotations.annotations
    assert len(win.annotations.graphics) == 0
    assert all(len(g) == 0 for g in win.linked_annotations.graphics.values())
    assert "stretch 1 of 2" in win.statusBar().currentMessage()
    view = win.chart.view
    QTest.keyClick(view, Key.Key_L)
    for _ in range(5):
        QTest.keyClick(view, Key.Key_Period)
    QTest.keyClick(view, Key.Key_End)
    QTest.keyClick(view, Key.Key_X)
    [fresh_trade] = win.consistency.store.trades(win.live.key.market)
    assert fresh_trade.blind and own.list() == before  # nothing reached the trader's marks
    check_key(win)  # not at the end yet: says how far
    assert "43 candles to go" in win.statusBar().currentMessage()
    win.replay.step(100)  # stops at the stretch's end, not the series'
    assert win.replay.clock.shown == 1048 and win.replay.clock.hidden > 0
    assert "stretch 1 of 2 marked again: Shift+F9 goes on" in win.statusBar().currentMessage()
    check_key(win)
    assert win.replay.clock.shown == 1048 and win.consistency.current == 1
    win.replay.step(48)
    check_key(win)  # the last: the replay ends and the report opens
    assert not win.replay.active and not win.consistency.active
    assert win.annotations.store is own and own.list() == before
    assert len(win.annotations.annotations) == len(before)  # the old marks are back
    report = win.consistency.last_report
    assert report.overall.candles == 96 and report.fresh_marks == 3  # 1 trade, 2 regions
    assert 0 < report.overall.observed < 1 and report.overall.chance is not None
    fresh = win.consistency.store.list(kind="region")
    assert [(r.start_ts, r.end_ts) for r in fresh] == [(int(ts[1000]), int(ts[1047])),
                                                       (int(ts[1048]), int(ts[1095]))]
    assert all(s.ended_at is not None for s in win.replay.sessions.all())
    assert index_at(win.live.candles, int(ts[1095])) >= 1095  # the whole series is back
    box = win.findChild(object, "consistencyReport")
    assert box is not None and "Cohen's kappa" in box.text()
    close(win)


def test_a_pause_gives_the_marks_back_and_the_stretch_starts_again(qtbot, paths,
                                                                     two_stretches):
    win = labelled(qtbot, paths)
    own = win.annotations.own_store
    before = own.list()
    check_key(win)
    QTest.keyClick(win.chart.view, Key.Key_L)
    win.replay.step(5)
    QTest.keyClick(win.chart.view, Key.Key_E, CTRL | SHIFT)  # end the replay: a pause
    assert not win.consistency.active and win.annotations.store is own
    qtbot.waitUntil(lambda: "paused" in win.statusBar().currentMessage())
    assert "paused: 0 of 2 stretches" in win.statusBar().currentMessage()
    assert own.list() == before  # the half-made fresh marks stayed apart
    check_key(win)  # the same stretch again, its half-made marks dropped
    assert win.consistency.current == 0 and win.replay.clock.shown == 1000
    assert win.consistency.store.list() == []
    win.replay.step(3)
    close(win)  # the window closes mid-stretch: the stretch's replay is not resumable
    win = open_window(qtbot, paths, timeframe="1h")
    assert not win.replay.resume()
    with AnnotationStore(paths.annotations_db) as store:
        assert store.list() == before
    close(win)
