"""The Evaluation tab of the training dock: a walk-forward evaluation of two folds on demo
candles (tiny preset, CPU, real worker thread), its table filled from the events, the backtest
of its test spans beside the trader's blind and hindsight marks (recomputed here from the
core's pieces), Stop, and a failure shown like a training failure."""

from __future__ import annotations

import pytest

from workstation.annotations.model import Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.annotations.suspects import SuspectReport
from workstation.backtest.costs import costs_for
from workstation.backtest.report import (
    BUY_AND_HOLD,
    backtest_signals,
    gap_cells,
    hindsight_gap,
    marks_columns,
    metric_text,
    span_gaps,
)
from workstation.backtest.signals import (
    BLIND_MARKS_SIGNAL,
    HINDSIGHT_MARKS_SIGNAL,
    market_marks_signals,
)
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import parse_timeframe
from workstation.ml.events import BatchEnd, EvaluationFinished, FoldScored
from workstation.ml.hindsight import describe_reach
from workstation.ml.scoring import VERDICTS, describe, describe_baselines
from workstation.ml.targets import CLASS_HEADS
from workstation.ui import command_registry
from workstation.ui.live_data import LiveData
from workstation.ui.training.evaluation_view import COLUMNS, score_cells
from workstation.ui.training.suspect_list import suspect_cells

from conftest import END_TS, WAIT_MS

KEY = SeriesKey("demo", "DEMO/USDT", parse_timeframe("15m"))  # 1800 candles: 6 days a span
QUARTER = 15 * 60_000


@pytest.fixture
def dock(make_dock, paths):
    live = LiveData(paths.candle_cache)
    live.candles = demo_candles(1800, parse_timeframe("15m"), seed=3, end_ts=END_TS)
    live.key = KEY
    live.candles_changed.emit("reset")
    ts, close = live.candles.ts, live.candles.close
    common = {"market": "demo", "symbol": "DEMO/USDT", "timeframe": "15m"}
    with AnnotationStore(paths.annotations_db) as store:  # the trader's heads get targets
        store.merge([Region(**common, start_ts=int(ts[0]), end_ts=int(ts[-1]),
                            label="reviewed"),
                     *(Region(**common, start_ts=int(ts[a]), end_ts=int(ts[b]), label=label)
                       for a, b, label in ((200, 350, "uptrend"), (700, 800, "downtrend"),
                                           (1300, 1420, "range")))]  # embargo: 16 + 150
                    + [Trade(**common, direction="long" if k % 2 else "short",
                             entry_ts=int(ts[i]), entry_price=float(close[i]),
                             exit_ts=int(ts[i + 20]), exit_price=float(close[i + 20]))
                       for k, i in enumerate(range(50, 1750, 60))]
                    + [Trade(**common, direction="short" if k % 3 else "long",
                             entry_ts=int(ts[i]), entry_price=float(close[i]),
                             exit_ts=int(ts[i + 12]), exit_price=float(close[i + 12]),
                             blind=True, decided_at=(int(ts[i]) + QUARTER,
                                                     int(ts[i + 12]) + QUARTER))
                       for k, i in enumerate(range(80, 1750, 120))])  # made in replay
    d = make_dock(live)
    d.settings.seq_len.setValue(16)
    d.settings.stride.setValue(16)
    d.evaluation.folds.setValue(2)
    d.evaluation.epochs.setValue(1)
    d.evaluation.seeds.setValue(2)
    return d


def record(dock) -> list:
    events: list = []
    dock.relay.delivered.connect(events.extend)
    return events


def wait_idle(qtbot, dock) -> None:
    qtbot.waitUntil(lambda: dock.state in ("idle", "failed") and not dock.busy,
                    timeout=WAIT_MS)


def test_evaluation_runs_two_folds_and_fills_the_table_from_the_events(qtbot, dock):
    action = dock.command_actions["train.evaluate"]
    assert (action.shortcut().toString() == "F7"
            == command_registry.command("train.evaluate").keys[0])
    assert dock.buttons["train.evaluate"].defaultAction() is action
    assert dock.evaluation.folds.minimum() == 2
    events = record(dock)
    action.trigger()
    assert dock.state == "evaluating" and dock.busy
    assert dock.curves.tabs.currentWidget() is dock.evaluation
    assert not dock.evaluation.folds.isEnabled() and action.isEnabled()
    qtbot.waitUntil(lambda: dock.events_seen["BatchEnd"] >= 1, timeout=WAIT_MS)
    assert dock.evaluation.progress.text().startswith("fold 1 of 2: ")
    wait_idle(qtbot, dock)
    assert dock.state == "idle", dock.detail
    assert dock.detail.startswith("evaluation finished: 2 folds")

    folds = [e for e in events if isinstance(e, FoldScored)]
    (finished,) = [e for e in events if isinstance(e, EvaluationFinished)]
    assert [f.fold for f in folds] == [0, 1]
    # at the end every fold's rows carry their Holm-adjusted verdicts, then the pooled rows
    assert len(finished.fold_heads) == 2
    expected = [(f"{k + 1}/2", head, *score_cells(heads[head]))
                for k, heads in enumerate(finished.fold_heads) for head in CLASS_HEADS]
    expected += [("all", head, *score_cells(finished.summary[head])) for head in CLASS_HEADS]
    assert dock.evaluation.rows() == expected
    verdict, interval = COLUMNS.index("Verdict"), COLUMNS.index("95 % interval")
    shown = dock.evaluation.rows()
    scores = [heads[h] for heads in finished.fold_heads for h in CLASS_HEADS] + list(
        finished.summary.values())
    assert finished.primary == "position"  # the trader marked trades
    assert shown[-2][:2] == ("all", "position")
    assert shown[-2][COLUMNS.index("Multiplicity")] == "primary"
    for row, score in zip(shown, scores, strict=True):
        assert row[COLUMNS.index("Block (days)")] == (
            "—" if score.block_days is None else f"{score.block_days:.1f}")
        if score.p_value is not None and row[:2] != ("all", "position"):
            assert row[COLUMNS.index("Multiplicity")].startswith("adjusted (Holm, ")
    assert dock.evaluation.labels.text() == "\n".join(
        describe_reach(r) for r in finished.labels)
    assert dock.evaluation.labels.text().startswith("position labels read ahead a median ")
    for row, score in zip(shown, scores, strict=True):
        assert row[COLUMNS.index("Best baseline")] == (score.best_baseline or "—")
        if score.interval is None:  # fewer than 5 days or too few marks: no verdict
            assert row[interval] == "—" and row[verdict] in ("too few days", "too few marks",
                                                             "—")
        else:
            low, high = score.interval
            assert row[interval] == f"[{low * 100:+.2f}, {high * 100:+.2f}] pp"
            assert row[verdict] == score.verdict and score.verdict in VERDICTS
    # one or two regions a test span: the regime head has too few marks to score
    assert all(row[verdict] == "too few marks" for row in shown if row[1] == "regime")
    market = [row[verdict] for row in shown if row[1] in ("candle", "trend")]
    assert len(market) == 6 and set(market) <= set(VERDICTS)
    table = dock.evaluation.table
    assert table.item(0, 0).toolTip() == describe("candle", finished.fold_heads[0]["candle"])
    every = table.item(0, COLUMNS.index("Best baseline")).toolTip()  # every baseline, the bar
    assert every == describe_baselines(finished.fold_heads[0]["candle"])
    assert "lagged_logistic" in every and "boosted_trees" in every
    assert table.item(len(shown) - 1, 0).font().bold()  # the pooled rows stand out
    assert dock.evaluation.folds.isEnabled()
    assert dock.events_seen["RunStarted"] == 4  # a fresh model per fold and seed
    assert len(dock.curves.series["loss_train"]) == 0  # the folds are not the run's curves
    assert_the_backtest_is_the_cores(dock, [f.test for f in folds])
    # the likely label errors: every regime region and trade read (or never tested), listed
    (report,) = [e for e in events if isinstance(e, SuspectReport)]
    suspects = dock.evaluation.suspects
    assert report.scored + report.untested + report.checked == 3 + 29 + 14
    assert report.untested > 0  # the marks before the first test span
    assert suspects.isVisibleTo(dock.evaluation) and report.describe() in suspects.words.text()
    assert suspects.rows() == [suspect_cells(k, s) for k, s in enumerate(report.suspects, 1)]
    dock.evaluation.start(2)  # a new evaluation: no backtest until it has one
    assert dock.evaluation.backtest is None and dock.evaluation.gap_rows() == []
    assert not dock.evaluation.backtest_metrics.isVisibleTo(dock.evaluation)
    assert not suspects.isVisibleTo(dock.evaluation) and suspects.rows() == []


def assert_the_backtest_is_the_cores(dock, tests: list[tuple[int, int]]) -> None:
    """The backtest of the test spans: every head that signals, the trader's blind and
    hindsight marks and buy & hold, on the test spans at the market's costs; the buy & hold
    and marks columns and the hindsight gap per fold recomputed from the core's pieces."""
    view, candles = dock.evaluation, dock.live_data.candles
    shown = view.backtest
    assert shown is not None and view.backtest_metrics.isVisibleTo(view)
    assert view.gap.isVisibleTo(view)
    names = [r.name for r in shown.results]
    assert names == ["model position", "model candle", BLIND_MARKS_SIGNAL,
                     HINDSIGHT_MARKS_SIGNAL, BUY_AND_HOLD]
    assert list(shown.tests) == tests and shown.span == (tests[0][0], tests[-1][1])
    costs = costs_for(KEY)
    marks = market_marks_signals(candles, KEY, dock.paths.annotations_db)
    again = backtest_signals(candles, marks_columns(marks), series=KEY.provenance,
                             span=shown.span, costs=costs)
    for result in again:  # the trader's marks and buy & hold, as the core trades them
        for label, unit in (("Return [%]", "%"), ("# Trades", "n"), ("Win Rate [%]", "%")):
            assert view.backtest_metric(label, result.name) == metric_text(result, label, unit)
    for result in shown.results[:2]:  # the models trade inside the test spans only
        trades = result.run.trades
        assert view.backtest_metric("# Trades", result.name) == f"{len(trades):,}"
        assert all(shown.span[0] <= b < shown.span[1] for b in trades.entry_bar)
        assert result.assumptions.sample == "out of sample"
    gaps = span_gaps(candles, marks, [("fold 1/2", tests[0]), ("fold 2/2", tests[1])],
                     costs=costs)
    gaps.append(hindsight_gap(again, "all"))
    assert view.gap_rows() == [gap_cells(g) for g in gaps]
    assert [row[0] for row in view.gap_rows()] == ["fold 1/2", "fold 2/2", "all"]
    assert all(g.blind.trades and g.hindsight.trades for g in gaps)  # every gap a number
    assert "fee" in view.backtest_words.text()


def test_stop_ends_the_evaluation_in_its_fold(qtbot, dock):
    dock.evaluation.epochs.setValue(500)
    events = record(dock)
    dock.toggle_evaluation()
    qtbot.waitUntil(lambda: dock.events_seen["BatchEnd"] >= 1, timeout=WAIT_MS)
    dock.toggle_evaluation()  # the same command stops it
    assert dock.state == "stopping"
    wait_idle(qtbot, dock)
    assert dock.state == "idle"
    assert dock.detail.startswith("evaluation stopped in fold 1 of 2")
    assert dock.evaluation.progress.text() == dock.detail
    assert dock.evaluation.rows() == []
    assert any(isinstance(e, BatchEnd) for e in events)
    assert not any(isinstance(e, (FoldScored, EvaluationFinished)) for e in events)
    assert dock.evaluation.backtest is None  # nothing traded


def test_a_failed_evaluation_is_shown_like_a_failed_run(qtbot, dock):
    dock.evaluation.folds.setValue(40)  # too many for 1800 candles
    dock.toggle_evaluation()
    wait_idle(qtbot, dock)
    assert dock.state == "failed"
    assert "too few for 40 folds" in dock.last_error and dock.error_box.isVisibleTo(dock)
    assert "Traceback" in dock.error_box.toPlainText()
    assert dock.evaluation.progress.text() == f"evaluation failed: {dock.last_error}"
    assert dock.command_actions["train.evaluate"].isEnabled()  # it can run again
