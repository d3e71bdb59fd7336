"""``evaluate --ray``: folds as Ray tasks on one local cluster, shared by the tests
of this file (``cluster``): the same scores as in sequence, the data checked by its hash, a
failed task run again, then reported with its fold, and a stop that cancels the tasks."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from workstation.cli import main
from workstation.errors import WorkstationError
from workstation.market.timeframes import parse_timeframe
from workstation.ml import ray_folds
from workstation.ml.config import TradingTransformerConfig, TrainConfig
from workstation.ml.events import FoldRetried
from workstation.ml.folds import EvaluationStopped, Fold
from workstation.ml.ray_folds import LOCAL, data_digest, ray_cluster


@pytest.fixture(scope="module")
def cluster():
    """One local Ray cluster (2 CPUs, no dashboard, this machine only) for this file's tests."""
    with ray_cluster(LOCAL, num_cpus=2) as where:
        yield where


def tiny_data():
    from workstation.market.demo import demo_candles
    from workstation.ml.dataset import TrainingData

    return TrainingData.from_candles(demo_candles(300, parse_timeframe("1h"), seed=1))


def jobs(seeds=(0,)) -> list[tuple[Fold, TrainConfig]]:
    fold = Fold(0, (0, 200), (220, 300), 20)
    return [(fold, TrainConfig(seed=seed, cpu_threads=1)) for seed in seeds]


def on_ray(run, *, seeds=(0,), stop=None, events=None):
    return list(ray_folds.tested_on_ray(
        tiny_data(), TradingTransformerConfig(), jobs(seeds), folds=2, device="cpu",
        provenance="test", on_event=(events if events is not None else []).append,
        stop=stop or threading.Event(), run=run))


def test_folds_trained_as_ray_tasks_score_exactly_as_in_sequence(cluster, capsys, tmp_path):
    from workstation.market.csv_io import write_candles_csv
    from workstation.market.demo import demo_candles

    assert cluster == "a local Ray cluster of 2 CPUs"
    import ray

    assert len(ray.nodes()) == 1  # this machine's
    end = 1_700_000_000_000 - 1_700_000_000_000 % 3_600_000
    path = write_candles_csv(demo_candles(2400, parse_timeframe("1h"), seed=4, end_ts=end),
                             tmp_path / "e.csv")
    argv = ["evaluate", "--source", f"csv:{path}", "--symbol", "ETH/USDT", "--timeframe", "1h",
            "--seq-len", "16", "--batch-size", "32", "--folds", "2", "--epochs", "1",
            "--stride", "16", "--threads", "1", "--seeds", "2", "--json"]
    results = {}
    for way in (["--workers", "1"], ["--ray", LOCAL]):
        code = main([*argv, *way])
        out = capsys.readouterr()
        assert code == 0, out.err
        objects = [json.loads(line) for line in out.out.splitlines()]
        for o in objects:
            o.pop("elapsed_s", None)
        results[way[0]] = objects
        assert "all 2 test spans" in out.err
        assert "fold 2: epoch 1 validation loss" in out.err  # the trainers' progress
    assert "as tasks on the Ray cluster this process is connected to" in out.err
    assert len(results["--workers"]) == 2 * 4 + 1
    assert results["--ray"] == results["--workers"]  # every fold's scores, exactly


def test_a_task_that_fails_once_is_run_again(cluster, tmp_path):
    attempts = tmp_path / "attempts"

    def flaky(data, *args, on_event, **kwargs):
        with attempts.open("a") as f:
            f.write("x")
        if attempts.read_text() == "x":
            raise RuntimeError("injected failure")
        on_event("trained")
        return data.features.shape, data.features.flags.writeable

    events: list = []
    assert on_ray(flaky, events=events) == [(tiny_data().features.shape, True)]
    assert attempts.read_text() == "xx"
    assert events == [FoldRetried(0, 2, 0, 2, "RuntimeError: injected failure"), "trained"]


def test_a_task_whose_process_dies_once_is_run_again(cluster, tmp_path):
    attempts = tmp_path / "attempts"

    def dies_once(data, *args, **kwargs):
        import os

        with attempts.open("a") as f:
            f.write("x")
        if attempts.read_text() == "x":
            os._exit(1)
        return "done"

    events: list = []
    assert on_ray(dies_once, events=events) == ["done"]
    assert attempts.read_text() == "xx"
    (retried,) = events
    assert retried.attempt == 2
    assert retried.message.startswith("WorkerCrashedError: The worker died unexpectedly")


def test_a_task_that_always_fails_is_reported_with_its_fold_and_seed(cluster, tmp_path):
    attempts = tmp_path / "attempts"

    def fails(data, model_config, train_config, fold, *args, **kwargs):
        with attempts.open("a") as f:
            f.write("x")
        if train_config.seed == 8:
            raise ValueError("no such luck\nsecond line")
        return "done"

    with pytest.raises(WorkstationError) as raised:
        on_ray(fails, seeds=(7, 8))
    assert str(raised.value) == ("fold 1 of 2, seed 8, failed on Ray 3 times: ValueError: "
                                 "no such luck")
    assert attempts.read_text() == "x" * (1 + ray_folds.RETRIES + 1)


def test_data_that_differ_from_their_hash_are_refused(cluster, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("trained on data that differ from their hash")

    data = tiny_data()
    assert data_digest(data) == data_digest(tiny_data())
    data.targets.position[5] = 1  # one mark more: another digest
    assert data_digest(data) != data_digest(tiny_data())
    monkeypatch.setattr(ray_folds, "data_digest", lambda data: "0" * 64)  # here, not there
    with pytest.raises(WorkstationError, match=r"^fold 1 of 2, seed 0, failed on Ray 3 times: "
                                               r"the candles and marks reached the Ray worker "
                                               r"altered \(SHA-256 [0-9a-f]{16}…, sent 0{16}…\)"
                                               r": refused$"):
        on_ray(never)


def test_a_stop_cancels_the_tasks(cluster):
    def sleeps(*args, **kwargs):
        import time

        time.sleep(60)

    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    with pytest.raises(EvaluationStopped, match="evaluation stopped in fold 1 of 2"):
        on_ray(sleeps, stop=stop)


def test_without_ray_the_default_path_works_and_ray_is_refused_in_one_line(capsys, monkeypatch):
    code = ("import sys, workstation.cli, workstation.ml.evaluation; "
            "assert 'ray' not in sys.modules, 'ray imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).parent, timeout=120)
    assert done.returncode == 0, done.stderr
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails as if not installed
    assert main(["evaluate", "--source", "demo", "--ray", LOCAL]) == 1
    assert capsys.readouterr().err.strip() == (
        'workstation: error: training on a Ray cluster needs Ray, an optional extra: '
        'pip install "workstation[ray]"')
    assert main(["evaluate", "--source", "demo", "--ray", "10.0.0.1:6379", "--workers",
                 "2"]) == 1
    assert "--workers applies to --ray local only" in capsys.readouterr().err


def test_a_sweep_on_ray_scores_exactly_as_in_sequence(cluster, capsys, tmp_path):
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"lr": [0.001, 0.0003]}))
    argv = ["sweep", "--grid", str(grid), "--source", "demo", "--timeframe", "1h",
            "--max-candles", "1500", "--seq-len", "16", "--batch-size", "32", "--folds", "2",
            "--epochs", "1", "--stride", "16", "--threads", "1", "--seeds", "1", "--json"]
    results = {}
    for way in (["--workers", "1"], ["--ray", LOCAL]):
        assert main([*argv, *way]) == 0
        out = capsys.readouterr()
        results[way[0]] = [json.loads(line) for line in out.out.splitlines()]
    assert "as tasks on the Ray cluster" in out.err
    assert len(results["--ray"]) == 3 and results["--ray"] == results["--workers"]
