"""The Evaluation tab's Ray cluster: an evaluation whose folds train on a local Ray cluster
(started by the worker) scores exactly as one in the panel's process; a fold retried on Ray is
said in the tab, the status and the log; Ray missing fails the evaluation in one line."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest
from PySide6.QtWidgets import QLabel

from workstation.errors import WorkstationError
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import parse_timeframe
from workstation.ml import evaluation, ray_folds
from workstation.ml.config import CPU_THREADS
from workstation.ml.events import EvaluationFinished, FoldRetried, FoldScored
from workstation.ml.folds import EvaluationStopped
from workstation.ml.parallel_folds import default_workers
from workstation.ui.live_data import LiveData

from conftest import END_TS, WAIT_MS


@pytest.fixture
def dock(make_dock, paths):
    """The panel on 1800 demo candles of 15m, evaluating 2 folds of 1 epoch, 1 seed each."""
    live = LiveData(paths.candle_cache)
    live.candles = demo_candles(1800, parse_timeframe("15m"), seed=3, end_ts=END_TS)
    live.key = SeriesKey("demo", "DEMO/USDT", parse_timeframe("15m"))
    live.candles_changed.emit("reset")
    d = make_dock(live)
    d.settings.seq_len.setValue(16)
    d.settings.stride.setValue(16)
    d.evaluation.folds.setValue(2)
    d.evaluation.epochs.setValue(1)
    d.evaluation.seeds.setValue(1)
    return d


def evaluated(qtbot, dock, ray: str) -> tuple[list, EvaluationFinished]:
    """The scored folds and the end of an evaluation with the Ray cluster field ``ray``."""
    events: list = []
    dock.relay.delivered.connect(events.extend)
    dock.evaluation.ray.setText(ray)
    dock.toggle_evaluation()
    assert not dock.evaluation.ray.isEnabled()
    qtbot.waitUntil(lambda: dock.state in ("idle", "failed") and not dock.busy,
                    timeout=WAIT_MS)
    assert dock.state == "idle", dock.detail
    dock.relay.delivered.disconnect(events.extend)
    (finished,) = [e for e in events if isinstance(e, EvaluationFinished)]
    return [e for e in events if isinstance(e, FoldScored)], finished


def test_folds_on_a_local_ray_cluster_score_exactly_as_in_the_panel(qtbot, dock, caplog):
    import ray  # the test extra brings it
    (label,) = [w for w in dock.evaluation.findChildren(QLabel)
                if w.buddy() is dock.evaluation.ray]
    assert label.text() == "Ray cluster"
    assert 'pip install "workstation[ray]"' in dock.evaluation.ray.toolTip()
    here = evaluated(qtbot, dock, "")
    with caplog.at_level(logging.INFO, logger="workstation"):
        on_ray = evaluated(qtbot, dock, " local ")
    assert ("walk-forward evaluation: 2 folds of 1,800 candles of DEMO (simulated market) "
            "DEMO/USDT 15m on cpu, as tasks on a local Ray cluster\n") in caplog.text
    cpus = default_workers("cpu", CPU_THREADS) * CPU_THREADS  # as evaluate --ray local: 2
    assert f"the folds train as tasks on a local Ray cluster of {cpus} CPUs" in caplog.text
    assert not ray.is_initialized()  # the worker's cluster is shut down

    def exact(scored, finished):  # repr: every float to its last bit
        return repr(scored), repr(replace(finished, elapsed_s=0.0))

    assert len(here[0]) == 2
    assert exact(*on_ray) == exact(*here)


def test_a_fold_retried_on_ray_is_said_in_the_tab_the_status_and_the_log(qtbot, dock,
                                                                         monkeypatch, caplog):
    def retrying(*args, on_event, stop, **kwargs):
        on_event(FoldRetried(1, 2, 0, 2, "WorkerCrashedError: the worker died"))
        stop.wait(WAIT_MS / 1000)
        raise EvaluationStopped("evaluation stopped in fold 2 of 2")

    monkeypatch.setattr(evaluation, "evaluate", retrying)
    said = ("fold 2 of 2, seed 0, failed on Ray (WorkerCrashedError: the worker died); running "
            "it again (attempt 2)")
    with caplog.at_level(logging.WARNING, logger="workstation"):
        dock.toggle_evaluation()
        qtbot.waitUntil(lambda: dock.evaluation.progress.text() == said, timeout=WAIT_MS)
    assert dock.state == "evaluating" and dock.detail == said
    assert f"walk-forward evaluation: {said}" in caplog.text
    dock.toggle_evaluation()  # stop
    qtbot.waitUntil(lambda: not dock.busy, timeout=WAIT_MS)
    assert dock.state == "idle"


def test_ray_missing_fails_the_evaluation_in_one_line(qtbot, dock, monkeypatch):
    def missing():
        raise WorkstationError('training on a Ray cluster needs Ray, an optional extra: '
                               'pip install "workstation[ray]"')

    monkeypatch.setattr(ray_folds, "require_ray", missing)
    dock.evaluation.ray.setText("10.0.0.5:6379")
    dock.toggle_evaluation()
    assert dock.detail.endswith("on cpu, as tasks on the Ray cluster at 10.0.0.5:6379")
    qtbot.waitUntil(lambda: not dock.busy, timeout=WAIT_MS)
    assert dock.state == "failed"
    assert dock.last_error == ('training on a Ray cluster needs Ray, an optional extra: '
                               'pip install "workstation[ray]"')
    assert dock.evaluation.progress.text() == f"evaluation failed: {dock.last_error}"
    assert dock.evaluation.ray.isEnabled()  # it can be changed and run again
