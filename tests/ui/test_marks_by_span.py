"""Where the marks fall, in the training dock: each span's trades, regions and reviewed
candles before a run starts (a preview by the trainer's own rule) and once it has, Ctrl+U
holding out the candles after the cursor, the warning of a validation span without trades, and
a run without a training trade refused in one line (tiny preset, CPU, real worker thread)."""

from __future__ import annotations

from workstation.annotations.model import Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.timeparse import format_minute
from workstation.ui.chart.chart_widget import ChartWidget

from conftest import WAIT_MS, demo_live

DEMO = {"market": "demo", "symbol": "DEMO/USDT", "timeframe": "1m"}


def mark(paths, candles, trades: list[tuple[int, int]], reviewed: tuple[int, int] | None = None
         ) -> None:
    ts, close = candles.ts, candles.close
    marks = [Trade(**DEMO, direction="long" if k % 2 else "short", entry_ts=int(ts[i]),
                   entry_price=float(close[i]), exit_ts=int(ts[j]), exit_price=float(close[j]))
             for k, (i, j) in enumerate(trades)]
    if reviewed is not None:
        marks.append(Region(**DEMO, start_ts=int(ts[reviewed[0]]), end_ts=int(ts[reviewed[1]]),
                            label="reviewed"))
    with AnnotationStore(paths.annotations_db) as store:
        store.merge(marks)


def previewed(qtbot, dock) -> list[str]:
    """The box's lines once the preview asked for last has come."""
    seen = dock.marks_box.previews
    dock.marks_box.refresh()
    qtbot.waitUntil(lambda: dock.marks_box.previews > seen, timeout=WAIT_MS)
    return dock.marks_box.label.text().splitlines()


def finished(qtbot, dock) -> None:
    qtbot.waitUntil(lambda: dock.state in ("idle", "failed") and not dock.busy,
                    timeout=WAIT_MS)


def test_the_dock_shows_each_spans_marks_and_ctrl_u_holds_out_the_later_candles(
        qtbot, make_dock, paths):
    live = demo_live(paths, n=1500)
    mark(paths, live.candles, [(300 + 60 * k, 330 + 60 * k) for k in range(18)])
    chart = ChartWidget()
    qtbot.addWidget(chart)
    chart.set_candles(live.candles, live.key)
    dock = make_dock(live, chart, epochs=1)
    before = previewed(qtbot, dock)  # before any run: what a new one would have
    assert before[0] == "A new run would have:"
    assert [line.split(":")[0] for line in before[1:3]] == ["train", "validation"]
    assert " trades, 0 regions, " in before[1] and dock.marks_box.warning.isHidden()
    chart.set_cursor(1200)
    dock.command_actions["train.until_cursor"].trigger()
    when = int(live.candles.ts[1200])
    assert dock.settings.train_until.text() == format_minute(when)
    assert dock.settings.train_until_ms() == when - when % 60_000
    assert f"new runs train until {format_minute(when)}" in dock.detail_label.text()
    held = previewed(qtbot, dock)
    assert held[3].startswith("held out: ")
    dock.start_training()
    finished(qtbot, dock)
    assert dock.state == "idle", dock.detail
    lines = dock.marks_box.label.text().splitlines()
    assert lines[0] == f"run {dock.current_run_id}:" and lines[1:4] == held[1:4]
    assert [line.split(":")[0] for line in lines[1:4]] == ["train", "validation", "held out"]
    assert " trades, 0 regions, " in lines[1] and "reviewed candles" in lines[1]
    assert lines[-1].startswith("(the validation span is the last 10 % of the reviewed "
                                "candles; gaps of ")
    assert dock.marks_warning.isHidden()
    # again on the same candle: every candle trains
    dock.command_actions["train.until_cursor"].trigger()
    assert dock.settings.train_until.text() == "" and dock.settings.train_until_ms() is None
    assert "new runs train on every candle" in dock.detail_label.text()


def test_a_validation_span_without_trades_is_warned_and_stays_warned(qtbot, make_dock, paths):
    live = demo_live(paths, n=1500)
    mark(paths, live.candles, [(300 + 60 * k, 330 + 60 * k) for k in range(8)],
         reviewed=(300, 1450))  # the end reviewed, but no trade there
    dock = make_dock(live, epochs=1)
    previewed(qtbot, dock)
    assert dock.marks_box.warning.text().startswith("⚠ the validation span (")
    dock.start_training()
    finished(qtbot, dock)
    assert dock.state == "idle", dock.detail
    assert not dock.marks_warning.isHidden()
    assert dock.marks_warning.text().startswith("⚠ the validation span (")
    assert "holds no trade" in dock.marks_warning.text()


def test_a_run_whose_training_span_holds_no_trade_is_refused(qtbot, make_dock, paths):
    live = demo_live(paths, n=1500)
    mark(paths, live.candles, [(1400, 1450)])
    dock = make_dock(live, epochs=1)
    assert previewed(qtbot, dock) == ["A new run would be refused:"]  # said before F5
    assert "none of the 1 trades lies in the training span" in dock.marks_box.warning.text()
    dock.start_training()
    finished(qtbot, dock)
    assert dock.state == "failed"
    assert "none of the 1 trades lies in the training span" in dock.detail
    assert "mark trades earlier in the history" in dock.detail
