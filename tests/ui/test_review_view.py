"""The Review tab in the real main window: Shift+F8 ranks the stretches not yet reviewed with
the run shown (tiny preset, CPU, a real run trained here), exactly as the core ranks them, and
Enter opens the one selected in blind replay at its start."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from workstation.annotations.model import Trade
from workstation.annotations.targets import trader_targets
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.review_next import RULE
from workstation.ui.help import palette_entries
from workstation.ui.training.review_view import COLUMNS, stretch_cells

from conftest import WAIT_MS

COMMON = {"market": "demo", "symbol": "DEMO/USDT", "timeframe": "1m"}


@pytest.fixture
def window(demo_window):
    return demo_window(1200)


def test_shift_f8_ranks_what_to_review_next_and_enter_replays_it_blind(qtbot, window):
    ts, close = window.live.candles.ts, window.live.candles.close
    marks = [Trade(**COMMON, direction="long" if k % 2 else "short", entry_ts=int(ts[i]),
                   entry_price=float(close[i]), exit_ts=int(ts[i + 15]),
                   exit_price=float(close[i + 15])) for k, i in enumerate(range(20, 700, 30))]
    for mark in marks:
        window.annotations.store.add(mark)
    panel, review = window.training, window.training.review
    panel.start_training()
    qtbot.waitUntil(lambda: panel.state in ("idle", "failed") and not panel.busy
                    and not panel.tasks_running, timeout=WAIT_MS)
    assert panel.state == "idle", panel.detail
    window.chart.view.setFocus()
    QTest.keyClick(window.chart.view, Qt.Key.Key_F8, Qt.KeyboardModifier.ShiftModifier)
    assert panel.curves.tabs.currentWidget() is review
    qtbot.waitUntil(lambda: not review.busy, timeout=WAIT_MS)
    queue = review.queue
    assert queue is not None and queue.run_id == panel.current_run_id, review.status.text()
    assert 0 < len(queue.stretches) <= 10 and RULE in review.status.text()
    assert review.rows() == [stretch_cells(k, s) for k, s in enumerate(queue.stretches, 1)]
    reviewed = trader_targets(marks, ts, ONE_MINUTE).reviewed
    assert all(not reviewed[s.start:s.stop].any() for s in queue.stretches)
    assert [s.score for s in queue.stretches] == sorted((s.score for s in queue.stretches),
                                                        reverse=True)
    # the list has the keys; Enter on the second stretch: a blind replay whose clock stands at
    # its first candle's open
    qtbot.waitUntil(review.table.hasFocus, timeout=WAIT_MS)
    QTest.keyClick(review.table, Qt.Key.Key_Down)
    QTest.keyClick(review.table, Qt.Key.Key_Return)
    chosen = queue.stretches[1]
    assert window.replay.active and window.replay.clock.now == chosen.start_ts
    assert int(window.live.candles.ts[-1]) < chosen.start_ts  # the stretch itself is hidden
    assert review.rows()[1][COLUMNS.index("Now")] == "opened"
    window.replay.end()
    labels = {label for label, _ in palette_entries(window)}
    assert {"Review next: Rank what to review next (the run shown)",
            "Review next: Open the stretch in blind replay",
            "View: Training workspace: Review"} <= labels
