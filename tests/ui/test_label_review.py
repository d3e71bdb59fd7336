"""Likely label errors in the real main window: the Evaluation tab lists the marks the held-out
models read otherwise, Enter shows one on the chart, K keeps, Shift+F fixes and Shift+Del
deletes it, each an undoable change of the store (Ctrl+Z), the palette and the cheat sheet
offer every one of them."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from workstation.annotations.model import Region, Trade
from workstation.annotations.suspects import CHECKED, likely_label_errors
from workstation.annotations.targets import trader_targets
from workstation.market.timeframes import ONE_MINUTE
from workstation.ui.help import palette_entries
from workstation.ui.training.suspect_list import COLUMNS, NO_EDGE_WORDS, suspect_cells

from conftest import WAIT_MS

COMMON = {"market": "demo", "symbol": "DEMO/USDT", "timeframe": "1m"}


@pytest.fixture
def window(demo_window):
    return demo_window(600)


def marks_and_report(window):
    """Three marks in the store, and the report of held-out probabilities that read the long
    as short, the short as flat and the uptrend as range (by hand)."""
    ts, close = window.live.candles.ts, window.live.candles.close
    long_ = Trade(**COMMON, direction="long", entry_ts=int(ts[100]),
                  entry_price=float(close[100]), exit_ts=int(ts[120]),
                  exit_price=float(close[120]))
    short = Trade(**COMMON, direction="short", entry_ts=int(ts[200]),
                  entry_price=float(close[200]), exit_ts=int(ts[220]),
                  exit_price=float(close[220]))
    right = Trade(**COMMON, direction="long", entry_ts=int(ts[300]),
                  entry_price=float(close[300]), exit_ts=int(ts[320]),
                  exit_price=float(close[320]))
    up = Region(**COMMON, start_ts=int(ts[400]), end_ts=int(ts[450]), label="uptrend")
    ranged = Region(**COMMON, start_ts=int(ts[470]), end_ts=int(ts[500]), label="range")
    marks = [long_, short, right, up, ranged]
    store = window.annotations.store
    for mark in marks:
        store.add(mark)
    targets = trader_targets(marks, ts, ONE_MINUTE)
    position = np.tile(np.array([[0.8], [0.1], [0.1]]), (1, len(ts)))
    position[:, 100:120] = np.array([[0.1], [0.1], [0.8]])  # the long read short
    position[:, 300:320] = np.array([[0.1], [0.8], [0.1]])  # the right long read long
    position[:, 200:220] = np.array([[0.85], [0.1], [0.05]])  # the short read flat
    regime = np.tile(np.array([[0.1], [0.1], [0.8]]), (1, len(ts)))
    regime[:, 400:452] = np.array([[0.05], [0.05], [0.9]])  # the uptrend read range
    report = likely_label_errors(marks, ts + 60_000, {"position": (targets.position, position),
                                                      "regime": (targets.regime, regime)})
    return marks, report


def now(suspects) -> list[str]:
    return [row[COLUMNS.index("Now")] for row in suspects.rows()]


def test_suspects_are_shown_on_the_chart_kept_fixed_and_deleted_on_keys(qtbot, window):
    (long_, short, _, up, _), report = marks_and_report(window)
    store = window.annotations.store
    suspects = window.training.evaluation.suspects
    window.training.evaluation.add_events([report])
    assert suspects.isVisibleTo(window.training.evaluation)
    assert suspects.rows() == [suspect_cells(k, s) for k, s in enumerate(report.suspects, 1)]
    assert [s.annotation_id for s in report.suspects] == [up.id, short.id, long_.id]
    assert NO_EDGE_WORDS in suspects.words.text()  # no evaluation said the head has an edge
    assert report.describe() in suspects.words.text()
    window.training_workspace.show_tab("Evaluation")
    suspects.table.setFocus()
    qtbot.waitUntil(suspects.table.hasFocus, timeout=WAIT_MS)
    # Enter: the chart comes forward with its cursor on the mark's first candle, selected
    QTest.keyClick(suspects.table, Qt.Key.Key_Return)
    chart = window.chart
    assert window.centre_tabs.currentWidget() is not window.training_workspace.page
    assert chart.cursor_index == chart.candles.index_of(up.start_ts)
    assert window.annotations.selected.id == up.id
    t0, t1 = chart.time_range()
    assert t0 <= up.start_ts and up.end_ts <= t1
    window.training_workspace.show_tab("Evaluation")
    suspects.table.setFocus()
    qtbot.waitUntil(suspects.table.hasFocus, timeout=WAIT_MS)
    # Shift+F fixes the region as the model reads it: a range region now
    QTest.keyClick(suspects.table, Qt.Key.Key_F, Qt.KeyboardModifier.ShiftModifier)
    assert store.get(up.id).label == "range"
    assert now(suspects) == ["now range", "", ""]
    assert suspects.current() is report.suspects[1]  # the list stepped on
    # K keeps the short (checked: not flagged again); Shift+F on the long turns it short
    QTest.keyClick(suspects.table, Qt.Key.Key_K)
    assert CHECKED in store.get(short.id).tags
    QTest.keyClick(suspects.table, Qt.Key.Key_F, Qt.KeyboardModifier.ShiftModifier)
    assert str(store.get(long_.id).direction) == "short"
    assert now(suspects) == ["now range", "kept", "now short"]
    # every change undoes, in turn, and the list says so
    for _ in range(3):
        QTest.keyClick(suspects.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert store.get(up.id).label == "uptrend" and CHECKED not in store.get(short.id).tags
    assert str(store.get(long_.id).direction) == "long" and now(suspects) == ["", "", ""]
    QTest.keyClick(suspects.table, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)
    assert now(suspects) == ["now range", "", ""]  # redone
    # Shift+Del deletes the mark selected; Ctrl+Z brings it back
    suspects.table.selectRow(1)
    QTest.keyClick(suspects.table, Qt.Key.Key_Delete, Qt.KeyboardModifier.ShiftModifier)
    assert short.id not in {a.id for a in store.list()}
    assert now(suspects)[1] == "deleted"
    QTest.keyClick(suspects.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert store.get(short.id) == short
    # a mark gone from the store is said so, not changed
    store.delete(up.id)
    suspects.table.selectRow(0)
    QTest.keyClick(suspects.table, Qt.Key.Key_K)
    assert now(suspects)[0] == "deleted" and up.id not in {a.id for a in store.list()}


def test_every_suspect_command_is_in_the_palette_and_the_cheat_sheet(window):
    labels = {label for label, _ in palette_entries(window)}
    for text in ("Show the suspect mark on the chart", "Keep the suspect mark (it is right)",
                 "Fix the suspect mark as the model reads it", "Delete the suspect mark"):
        assert f"Likely label errors: {text}" in labels
    window.cheat_sheet.refresh()
    rows = window.cheat_sheet.rows()
    at = rows.index(("Likely label errors", ""))
    assert rows[at + 1:at + 5] == [
        ("", "Show the suspect mark on the chart"), ("K", "Keep the suspect mark (it is right)"),
        ("Shift+F", "Fix the suspect mark as the model reads it"),
        ("Shift+Del", "Delete the suspect mark")]
