"""The Backtest view in the real main window (offscreen): reached and run from the keyboard, its
numbers (what each edge is worth among them) are the core's and every one in sight at
1500 x 900, the trades are drawn on the chart
and Enter shows one there, a run's signals are out of sample unless the trader allows its
training span, which then reads IN-SAMPLE, and every choice is a command of the palette."""

from __future__ import annotations

import asyncio
import json

import pytest
from PySide6 import QtCore
from PySide6.QtTest import QTest

from workstation.annotations.model import Trade
from workstation.backtest.engine import NEXT_OPEN, SAME_CLOSE
from workstation.backtest.report import (
    BUY_AND_HOLD,
    IN_SAMPLE,
    OUT_OF_SAMPLE,
    SHORT_SPAN_CAGR,
    SHOWN,
    WHOLE_SPAN,
    WORTH_SHOWN,
    format_metric,
    metric_text,
    prices_line,
    worth_line,
    worth_text,
)
from workstation.backtest.request import BacktestRequest, run_request
from workstation.backtest.signals import BLIND_MARKS_SIGNAL, HINDSIGHT_MARKS_SIGNAL
from workstation.cli import main
from workstation.market.csv_io import write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE
from workstation.ui.backtest.view import GROUP
from workstation.ui.help import palette_entries

from conftest import Key

CTRL = QtCore.Qt.KeyboardModifier.ControlModifier
SHIFT = QtCore.Qt.KeyboardModifier.ShiftModifier
END = 1_700_000_040_000 - 1_700_000_040_000 % 60_000


@pytest.fixture
def candles():
    return demo_candles(1200, ONE_MINUTE, seed=7, end_ts=END)


@pytest.fixture
def window(qtbot, paths, candles, tmp_path):
    from workstation.ui.main_window import MainWindow

    path = write_candles_csv(candles, tmp_path / "eth.csv")
    win = MainWindow(paths)
    qtbot.addWidget(win)
    win.resize(1500, 900)
    win.show()
    qtbot.waitExposed(win)
    asyncio.run(win.open_source(f"csv:{path}", "ETH/USDT", "1m"))
    qtbot.waitUntil(lambda: win.chart.candles is win.live.candles and len(win.live.candles) > 0)
    win.chart.take_focus()
    qtbot.waitUntil(win.chart.view.hasFocus)
    yield win
    asyncio.run(win.shutdown())


def mark(candles, entry: int, exit_: int, direction: str) -> Trade:
    return Trade(symbol="ETH/USDT", timeframe="1m", direction=direction,
                 entry_ts=int(candles.ts[entry]), entry_price=float(candles.close[entry]),
                 exit_ts=int(candles.ts[exit_]), exit_price=float(candles.close[exit_]),
                 created_at=END, updated_at=END)


def drawn_marks(window) -> int:
    return sum(r.group == GROUP for r in window.chart.overlays.markers.records.values())


def assert_every_value_in_sight(qtbot, view) -> None:
    """Each cell of the metrics table lies whole inside the table's viewport (once the
    window has laid out), a title too wide for its column is elided with the whole title
    as its tooltip, and the summary and the assumptions are whole inside the view."""
    table = view.metrics
    qtbot.wait(50)  # the layout the new columns ask for
    seen = table.viewport().rect()
    for row in range(table.rowCount()):
        for col in range(table.columnCount()):
            cell = table.visualRect(table.model().index(row, col))
            assert seen.contains(cell), (row, col, cell, seen)
            text = table.item(row, col).text()
            assert table.fontMetrics().horizontalAdvance(text) <= cell.width(), text
    for col, result in enumerate(view.results):
        assert table.horizontalHeaderItem(col).toolTip().endswith(result.name)
    for label in (view.status, view.assumptions):  # the words beside it, whole in the view
        assert label.heightForWidth(label.width()) <= label.height(), label.text()
        assert label.mapTo(view, QtCore.QPoint(0, label.height())).y() <= view.height()


def run_from_keyboard(qtbot, view) -> object:
    view.signals.setFocus()
    qtbot.waitUntil(view.signals.hasFocus)  # Ctrl+Enter acts where the view has the keyboard
    with qtbot.waitSignal(view.finished, timeout=120_000) as done:
        QTest.keyClick(view.signals, Key.Key_Return, CTRL)
    return done.args[0]


def test_f9_then_ctrl_enter_backtests_the_marks_with_the_cores_numbers(window, candles, qtbot):
    trades = [mark(candles, 100, 160, "long"), mark(candles, 400, 420, "short"),
              mark(candles, 700, 760, "long")]
    for trade in trades:
        window.annotations.store.add(trade)
    QTest.keyClick(window.chart.view, Key.Key_F9)
    view = window.backtest.view
    assert window.centre_tabs.currentWidget() is view
    qtbot.waitUntil(view.signals.hasFocus)  # the keyboard is in the view, on its first field
    view.fee.setValue(10)
    view.slippage.setValue(2)
    results = run_from_keyboard(qtbot, view)
    assert isinstance(results, list), results
    expected = run_request(BacktestRequest(fee_bps=10, slippage_bps=2), window.live.candles,
                           window.live.key, annotations_db=window.annotations.store.path)
    assert [r.name for r in results] == [r.name for r in expected] == \
        [BLIND_MARKS_SIGNAL, HINDSIGHT_MARKS_SIGNAL, BUY_AND_HOLD]
    for label, unit in SHOWN:  # the table shows the core's numbers, for each signal
        for result in expected:
            assert view.metric_cell(label, result.name) == metric_text(result, label, unit), \
                label
    assert view.metric_cell("# Trades", HINDSIGHT_MARKS_SIGNAL) == "3"
    assert view.metric_cell("CAGR [%]", HINDSIGHT_MARKS_SIGNAL) == SHORT_SPAN_CAGR  # a day
    # no blind mark: that sample has no result ("—", never 0), nor has the hindsight gap
    assert view.metric_cell("# Trades", BLIND_MARKS_SIGNAL) == "0"
    assert {view.metric_cell(label, BLIND_MARKS_SIGNAL) for label, _ in SHOWN
            if label != "# Trades"} == {"—"}
    assert view.gap.isVisible() and view.gap_rows() == [
        (WHOLE_SPAN, "0", "3", "—", "—", "—")]
    for label in WORTH_SHOWN:  # what each edge is worth, in the same columns
        for result in expected:
            assert view.metric_cell(label, result.name) == worth_text(result, label), label
    assert view.metric_cell("Placebo Rank", HINDSIGHT_MARKS_SIGNAL).endswith(" / 201")
    assert_every_value_in_sight(qtbot, view)
    # "after costs" beside the returns after costs; buy & hold's price change said apart
    before = format_metric(expected[1].metrics["Buy & Hold Return [%]"], "%")
    after = format_metric(expected[2].metrics["Return [%]"], "%")
    assert before != after
    assert f"vs buy & hold {after} after costs ({before} before costs; mean trade " \
        in view.status.text()
    assert f"{before} after costs" not in view.status.text()
    assert prices_line(expected[0]) in view.assumptions.text()
    rank = WORTH_SHOWN.index("Placebo Rank") + 1 + len(SHOWN)
    assert [view.metrics.item(rank, col).toolTip() for col in range(3)] == \
        [worth_line(r) for r in expected]  # the placebo's verdict in words
    assert "fee 0.1 %" in view.assumptions.text() and "slippage 2 bps" in view.assumptions.text()
    assert view.plots.names() == [BLIND_MARKS_SIGNAL, HINDSIGHT_MARKS_SIGNAL, BUY_AND_HOLD]
    # each trade on the chart: its entry at the candle after the one marked (next open)
    shown = view.trade_times
    assert shown[:, 0].tolist() == [int(candles.ts[i + 1]) for i in (100, 400, 700)]
    assert drawn_marks(window) == 2 * len(trades)
    # Enter on a trade shows it on the chart
    view.trades.setFocus()
    view.trades.setCurrentCell(1, 0)
    QTest.keyClick(view.trades, Key.Key_Return)
    assert window.centre_tabs.currentIndex() == 0
    t0, t1 = window.chart.time_range()
    assert t0 <= shown[1, 0] and shown[1, 1] <= t1
    QTest.keyClick(window.chart.view, Key.Key_B, SHIFT)  # Shift+B clears them from the chart
    assert drawn_marks(window) == 0


def test_a_runs_signals_are_out_of_sample_unless_allowed_then_labelled(window, candles, qtbot,
                                                                        tmp_path, capsys):
    early = write_candles_csv(candles.slice(0, 800), tmp_path / "early.csv")
    assert main(["train", "--source", f"csv:{early}", "--symbol", "ETH/USDT", "--seq-len", "32",
                 "--stride", "32", "--batch-size", "16", "--epochs", "1", "--threads", "1",
                 "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.splitlines()[-1])["run_id"]
    QTest.keyClick(window.chart.view, Key.Key_F9)
    view = window.backtest.view
    index = view.signals.findData(f"run:{run_id}")
    assert index > 0  # the saved run is offered, after the marks
    view.signals.setCurrentIndex(index)
    assert view.head.isEnabled() and view.threshold.isEnabled()
    view.head.setCurrentIndex(view.head.findData("candle"))
    view.threshold.setValue(0.0)
    results = run_from_keyboard(qtbot, view)
    assert isinstance(results, list), results
    model = results[0]
    assert model.assumptions.sample == OUT_OF_SAMPLE
    assert model.run.span == (800, len(candles))  # the candles after its training span
    assert view.metric_cell("# Trades", model.name) == f"{len(model.run.trades):,}"
    assert "IN-SAMPLE" not in view.assumptions.text()
    assert_every_value_in_sight(qtbot, view)  # beside a run's long name at 1500 x 900
    view.in_sample.setChecked(True)
    results = run_from_keyboard(qtbot, view)
    assert results[0].assumptions.sample == IN_SAMPLE
    assert view.metrics.horizontalHeaderItem(0).text().startswith("IN-SAMPLE")
    assert_every_value_in_sight(qtbot, view)
    assert "not evidence of an edge" in view.assumptions.text()


def test_a_run_whose_files_are_broken_is_not_offered(window, paths):
    from workstation.ml.checkpoints import WEIGHTS_FILE, CheckpointStore

    from saved_runs import save_run

    store = CheckpointStore(paths.checkpoints_dir)
    good, broken = save_run(store, 1), save_run(store, 2)
    weights = store.snapshot_dir(broken) / WEIGHTS_FILE
    weights.write_bytes(weights.read_bytes()[:100])  # cut short: its size and hash are wrong
    view = window.backtest.view
    view.refresh_signals()
    assert view.signals.findData(f"run:{good}") > 0
    assert view.signals.findData(f"run:{broken}") == -1


def test_a_failure_is_said_in_one_line_and_keeps_the_last_results(window, qtbot):
    QTest.keyClick(window.chart.view, Key.Key_F9)
    view = window.backtest.view
    message = run_from_keyboard(qtbot, view)  # no marks on this market
    assert isinstance(message, str) and "no marked trade of ETH/USDT" in message
    assert "no marked trade" in view.status.text() and "\n" not in view.status.text()
    assert view.results == [] and drawn_marks(window) == 0


def test_every_choice_of_the_view_is_a_command_of_the_palette(window, candles, qtbot,
                                                              tmp_path, capsys):
    view = window.backtest.view
    entries = dict(palette_entries(window))
    for label in ("Signals: your marked trades", "Signals: the newest saved run",
                  "Head: position", "Head: candle", "Set the confidence level…",
                  "Set the costs (fee, slippage)…", "Set the trade size…",
                  "Fills: next candle's open", "Fills: same candle's close (optimistic)",
                  "Allow a run's training span (IN-SAMPLE)"):
        assert f"Backtest: {label}" in entries, label
    assert window.centre_tabs.currentWidget() is not view
    entries["Backtest: Fills: same candle's close (optimistic)"].trigger()
    assert window.centre_tabs.currentWidget() is view  # the view comes forward
    assert view.fill.currentData() == SAME_CLOSE and view.fill.hasFocus()
    entries["Backtest: Fills: next candle's open"].trigger()
    assert view.fill.currentData() == NEXT_OPEN
    entries["Backtest: Set the costs (fee, slippage)…"].trigger()
    assert view.fee.hasFocus()
    # a run's choices are enabled with their fields: only once a run's signals are chosen
    head = entries["Backtest: Head: candle"]
    assert not head.isEnabled() and not view.head.isEnabled()
    entries["Backtest: Signals: the newest saved run"].trigger()
    assert "no saved run to backtest" in view.status.text()
    early = write_candles_csv(candles.slice(0, 800), tmp_path / "early.csv")
    assert main(["train", "--source", f"csv:{early}", "--symbol", "ETH/USDT", "--seq-len", "32",
                 "--stride", "32", "--batch-size", "16", "--epochs", "1", "--threads", "1",
                 "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.splitlines()[-1])["run_id"]
    entries["Backtest: Signals: the newest saved run"].trigger()
    assert view.signals.currentData() == f"run:{run_id}"
    assert head.isEnabled() and view.head.isEnabled()
    head.trigger()
    assert view.head.currentData() == "candle"
    allow = entries["Backtest: Allow a run's training span (IN-SAMPLE)"]
    allow.trigger()
    assert view.in_sample.isChecked() and allow.isChecked()
    view.in_sample.setChecked(False)  # the field and the command are one
    assert not allow.isChecked()
    entries["Backtest: Signals: your marked trades"].trigger()
    assert view.signals.currentData() == "annotations" and not head.isEnabled()
