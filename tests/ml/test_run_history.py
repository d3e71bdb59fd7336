"""Runs keep their history: every batch-trained run appends its metrics to ``history.jsonl``
beside its checkpoints (``workstation.ml.history``), curves continue across a resume, a
killed run leaves a readable file, ``runs list`` shows each run and ``runs export`` writes
TensorBoard and CSV files that hold exactly what was recorded. Real training of a tiny model,
real files, no mocks."""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from workstation.cli import main
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml import job
from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.events import BatchEnd, EpochEnd
from workstation.ml.history.export import scalars, texts
from workstation.ml.history.format import HISTORY_FILE, HistoryError
from workstation.ml.history.listing import list_runs
from workstation.ml.history.reader import read_history

torch.set_num_threads(1)
TRAIN = ["train", "--source", "demo", "--max-candles", "3000", "--seq-len", "32", "--stride", "32",
         "--batch-size", "16", "--threads", "1", "--json"]
HEADS = ("candle", "trend", "position", "regime")


def json_lines(text: str) -> list[dict]:
    """The whole JSON lines of ``text`` (a killed writer may leave a partial last one)."""
    out = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            out.append(json.loads(line))
    return out


def of(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e["event"] == kind]


def assert_batch_recorded(record: dict, event: dict) -> None:
    """A history batch record holds exactly what the ``BatchEnd`` event said."""
    m = event["metrics"]
    assert (record["step"], record["epoch"], record["batch"]) == (event["step"], event["epoch"],
                                                                  event["batch"])
    assert record["loss"] == m["loss"] and record["head_losses"] == m["head_losses"]
    assert record["accuracy"] == {h: m["heads"][h]["accuracy"] for h in HEADS}
    assert record["lr"] == event["lr"] and record["grad_norm"] == event["grad_norm"]
    assert record["samples_per_s"] == event["samples_per_s"]
    assert record["memory"] == event["memory"]
    assert isinstance(record["utc_ms"], int) and record["wall_s"] >= 0


def assert_epoch_recorded(record: dict, event: dict) -> None:
    assert (record["epoch"], record["step"], record["is_best"]) == (
        event["epoch"], event["step"], event["is_best"])
    for split in ("train", "val"):
        got, want = record[split], event[split]
        assert got["loss"] == want["loss"] and got["head_losses"] == want["head_losses"]
        for head in HEADS:
            score, expected = got["heads"][head], want["heads"][head]
            for name in ("accuracy", "n", "baselines", "best_baseline", "margin", "interval",
                         "verdict"):
                assert score[name] == expected[name], (split, head, name)
            best = expected["best_baseline"]
            assert score["best_baseline_accuracy"] == (expected["baselines"][best]
                                                       if best else None)


def increasing(values: list) -> bool:
    return all(a < b for a, b in itertools.pairwise(values))


# -- one CLI run, resumed: shared by the listing and export tests ------------------------------
@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """``train`` for one epoch, then ``train --resume RUN --epochs 2``, in a home of its own:
    (home, run id, the first run's events, the resumed run's events)."""
    home = tmp_path_factory.mktemp("cli") / "home"
    runs = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORKSTATION_HOME", str(home))
        for argv in (TRAIN + ["--epochs", "1", "--log-every", "2"],
                     None):
            if argv is None:
                argv = TRAIN + ["--resume", runs[0][-1]["run_id"], "--epochs", "2"]
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
            assert code == 0, err.getvalue()
            runs.append(json_lines(out.getvalue()))
    first, resumed = runs
    return home, first[0]["run_id"], first, resumed


def copy_run(cli_run, name: str | None = None) -> Path:
    """The fixture's run copied into this test's home (as run ``name``); its folder."""
    home, run_id, *_ = cli_run
    source = CheckpointStore(home / "data" / "checkpoints").run_dir(run_id)
    target = CheckpointStore().run_dir(name or run_id)
    shutil.copytree(source, target)
    return target


def test_a_cli_run_records_every_report_and_its_resume_continues_the_curves(cli_run):
    home, run_id, first, resumed = cli_run
    h = read_history(CheckpointStore(home / "data" / "checkpoints").run_dir(run_id))
    events = first + resumed
    batch_events, epoch_events = of(events, "BatchEnd"), of(events, "EpochEnd")
    # every BatchEnd (every --log-every steps, never per step) and every EpochEnd, exactly
    assert [b["step"] for b in h.batches] == [e["step"] for e in batch_events] == \
        [2, 4, 6, 8, 10, 12]
    for record, event in zip(h.batches, batch_events):
        assert_batch_recorded(record, event)
    assert [e["epoch"] for e in h.epochs] == [0, 1]  # the resume did not repeat an epoch
    for record, event in zip(h.epochs, epoch_events):
        assert_epoch_recorded(record, event)
    # the markers: start, checkpoint, end, then resume, checkpoint, end
    kinds = [(m["type"], m.get("state")) for m in h.markers]
    assert kinds == [("start", None), ("checkpoint", None), ("end", "completed"),
                     ("resume", None), ("checkpoint", None), ("end", "completed")]
    assert h.markers[3]["start_step"] == 6 and h.resumes == 1 and h.rewound == 0
    assert h.state == "completed" and h.steps == 12 and not h.torn
    assert h.provenance == first[0]["provenance"] and h.provenance.startswith("DEMO")
    assert h.preset == "tiny" and h.run_id == run_id
    assert h.started == h.markers[0]["utc_ms"]
    assert h.best_val_loss == min(e["val"]["loss"] for e in epoch_events)
    assert h.best_val_loss == resumed[-1]["best_val_loss"]
    assert h.verdict_source == "validation"
    assert h.verdicts == {head: epoch_events[-1]["val"]["heads"][head]["verdict"]
                          for head in HEADS}
    # wall time goes on from the recorded total: the resumed records start where it stopped
    walls = [r["wall_s"] for r in h.batches]
    assert walls == sorted(walls) and h.markers[3]["wall_s"] >= h.markers[2]["wall_s"]


def test_the_training_job_records_a_stopped_run_and_its_resume(tmp_path):
    """The path the window's training worker takes (``ml.job`` plan, build, run), without any
    window: a stop mid-epoch, then a resume from the "stopped" checkpoint."""
    store = CheckpointStore(tmp_path)
    candles = demo_candles(3000, ONE_MINUTE, seed=3, end_ts=1_700_000_000_000)
    series = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
    stop = threading.Event()
    seen: list = []

    def on_event(event) -> None:
        seen.append(event)
        if isinstance(event, BatchEnd) and event.epoch == 1 and event.batch == 2:
            stop.set()

    request = job.TrainingRequest(preset="tiny", model_overrides={"seq_len": 32},
                                  train_overrides={"epochs": 3, "batch_size": 16,
                                                   "window_stride": 32, "log_every": 1,
                                                   "cpu_threads": 1},
                                  device="cpu", use_annotations=False)
    prepared = job.build(job.plan(request, store), candles, series, store=store,
                         annotations_db=None, on_event=on_event, stop=stop)
    final = prepared.trainer.run()
    assert final.status == "stopped"
    run_dir = store.run_dir(final.run_id)
    h = read_history(run_dir)
    assert h.state == "stopped" and h.steps == final.step
    assert [b["step"] for b in h.batches] == [e.step for e in seen if isinstance(e, BatchEnd)]
    assert [e["epoch"] for e in h.epochs] == [0]

    stop.clear()
    again = job.TrainingRequest(resume_run=final.run_id, device="cpu")
    resumed = job.build(job.plan(again, store), candles, series, store=store,
                        annotations_db=None, on_event=seen.append, stop=stop)
    done = resumed.trainer.run()
    assert done.status == "completed"
    h = read_history(run_dir)
    steps = [b["step"] for b in h.batches]
    assert steps == [e.step for e in seen if isinstance(e, BatchEnd)]
    assert increasing(steps) and steps == list(range(1, done.step + 1))  # log_every 1
    assert [e["epoch"] for e in h.epochs] == [0, 1, 2]
    assert [e["step"] for e in h.epochs] == [e.step for e in seen if isinstance(e, EpochEnd)]
    assert h.state == "completed" and h.resumes == 1 and h.rewound == 0


def test_a_failed_run_resumed_from_its_last_checkpoint_drops_the_steps_it_lost(tmp_path):
    """Records past the checkpoint a run resumes from (it failed, or was killed, after them)
    leave the curves: steps keep increasing and no epoch appears twice."""
    store = CheckpointStore(tmp_path)
    candles = demo_candles(3000, ONE_MINUTE, seed=3, end_ts=1_700_000_000_000)
    series = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)

    def on_event(event) -> None:
        if isinstance(event, BatchEnd) and event.epoch == 1 and event.batch == 3:
            raise RuntimeError("the panel broke")  # fails the run after the record was made

    request = job.TrainingRequest(preset="tiny", model_overrides={"seq_len": 32},
                                  train_overrides={"epochs": 2, "batch_size": 16,
                                                   "window_stride": 32, "log_every": 1,
                                                   "cpu_threads": 1},
                                  device="cpu", use_annotations=False)
    prepared = job.build(job.plan(request, store), candles, series, store=store,
                         annotations_db=None, on_event=on_event, stop=threading.Event())
    failed = prepared.trainer.run()
    assert not failed.ok
    run_dir = store.run_dir(failed.run_id)
    h = read_history(run_dir)
    assert h.state == "failed" and "the panel broke" in h.failure and h.steps == 9
    assert [b["step"] for b in h.batches] == list(range(1, 10))

    again = job.TrainingRequest(resume_run=failed.run_id, device="cpu")
    resumed = job.build(job.plan(again, store), candles, series, store=store,
                        annotations_db=None, on_event=lambda event: None,
                        stop=threading.Event())
    assert resumed.trainer.run().ok
    h = read_history(run_dir)
    assert [m["type"] for m in h.markers][-3:] == ["resume", "checkpoint", "end"]
    assert h.markers[-3]["start_step"] == 6
    assert h.rewound == 3 and h.state == "completed" and h.failure is None
    assert [b["step"] for b in h.batches] == list(range(1, 13))
    assert [e["epoch"] for e in h.epochs] == [0, 1]


def test_a_sigkilled_run_leaves_a_readable_history_and_resumes_without_repeats(
        workstation_home, capsys):
    env = dict(os.environ, WORKSTATION_HOME=str(workstation_home), PYTHONUNBUFFERED="1")
    argv = [sys.executable, "-m", "workstation", *TRAIN, "--epochs", "50", "--log-every", "1"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    printed, after_checkpoint = [], 0
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # kill it a few batches after its first checkpoint
            printed += json_lines(line)
            if printed and printed[-1]["event"] == "BatchEnd" and of(printed,
                                                                     "CheckpointSaved"):
                after_checkpoint += 1
                if after_checkpoint == 3:
                    proc.send_signal(signal.SIGKILL)
                    break
        printed += json_lines(proc.stdout.read())  # what it reported before it died
    finally:
        proc.kill()
        proc.wait(timeout=60)
        watchdog.cancel()
    assert proc.returncode == -signal.SIGKILL
    run_id = printed[0]["run_id"]
    store = CheckpointStore()
    run_dir = store.run_dir(run_id)
    h = read_history(run_dir)
    reported = of(printed, "BatchEnd")
    # a record is written before its event is reported: nothing reported is missing
    assert h.state == "unknown"  # no end recorded, and no writer holds the run any more
    assert h.steps >= reported[-1]["step"] and not h.torn
    for record, event in zip(h.batches, reported):
        assert_batch_recorded(record, event)
    assert len(h.batches) >= len(reported)

    # a line torn by a kill mid-write is ignored on reading, and cut before the next append
    path = run_dir / HISTORY_FILE
    with open(path, "ab") as fh:
        fh.write(b'{"type":"batch","run_id":"' + run_id.encode() + b'","step":')
    torn = read_history(run_dir)
    assert torn.torn and torn.batches == h.batches and torn.epochs == h.epochs

    point = store.resume_point(run_id)
    assert point is not None
    lost = sum(r["step"] > point.step for r in h.batches + h.epochs)
    assert main(TRAIN + ["--resume", run_id, "--epochs", str(point.epoch + 1)]) == 0
    capsys.readouterr()
    after = read_history(run_dir)
    assert after.state == "completed" and not after.torn
    assert path.read_bytes().endswith(b"\n")
    assert all(json.loads(line) for line in path.read_bytes().splitlines())  # all whole again
    assert after.rewound == lost  # records past the checkpoint it resumed from
    steps = [b["step"] for b in after.batches]
    assert increasing(steps) and steps == list(range(1, after.steps + 1))
    assert [e["epoch"] for e in after.epochs] == list(range(point.epoch + 1))
    walls = [b["wall_s"] for b in after.batches]
    assert walls == sorted(walls)


# -- runs list ------------------------------------------------------------------------------------
def test_runs_list_shows_state_and_best_validation_loss(cli_run, capsys):
    _, run_id, _, resumed = cli_run
    assert main(["runs", "list"]) == 0
    assert "no training runs" in capsys.readouterr().out
    copy_run(cli_run)
    assert main(["runs", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["model", "run", "started", "state"]
    row = out[1]
    best = resumed[-1]["best_val_loss"]
    assert run_id in row and " completed " in row and f"{best:.4f}" in row
    assert " tiny " in row and " 12 " in row and "DEMO" in row and out[2] == "1 run(s)"

    assert main(["runs", "list", "--json"]) == 0
    (listed,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert listed["run_id"] == run_id and listed["state"] == "completed"
    assert listed["best_val_loss"] == best and listed["steps"] == 12
    assert listed["preset"] == "tiny" and listed["problem"] is None
    assert listed["provenance"].startswith("DEMO")


def test_a_run_without_an_end_is_running_while_its_writer_holds_it(cli_run):
    run_dir = copy_run(cli_run)
    path = run_dir / HISTORY_FILE
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # as if killed before its end was recorded
    store = CheckpointStore()
    assert read_history(run_dir).state == "unknown"
    with store.lock(run_dir.name):
        assert read_history(run_dir).state == "running"
        assert list_runs(store)[0].state == "running"
    assert read_history(run_dir).state == "unknown"


def test_a_damaged_line_is_a_clear_error_and_the_other_runs_still_list(cli_run, capsys):
    good = copy_run(cli_run)
    other = "20200101-000000-000-abcd"
    damaged = copy_run(cli_run, other)
    path = damaged / HISTORY_FILE
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = b'{"type": "batch", "step": 4, "loss": 0.5,, "wall_s": 1}\n'
    path.write_bytes(b"".join(lines))
    with pytest.raises(HistoryError) as err:
        read_history(damaged)
    assert err.value.line == 4 and str(path) in str(err.value) and "line 4" in str(err.value)
    assert "\n" not in str(err.value)

    summaries = list_runs(CheckpointStore())
    assert [s.run_id for s in summaries] == [good.name, other]  # newest first
    assert summaries[0].state == "completed" and summaries[0].problem is None
    assert summaries[1].state == "unknown" and "line 4" in summaries[1].problem
    assert summaries[1].provenance.startswith("DEMO")  # what its checkpoint says
    assert main(["runs", "list"]) == 0
    out = capsys.readouterr().out
    assert good.name in out and " completed " in out and f"{path}, line 4" in out

    assert main(["runs", "export", other, "--csv", str(damaged.parent / "x.csv")]) == 1
    err_lines = capsys.readouterr().err.strip().splitlines()
    assert len(err_lines) == 1 and f"{path}, line 4" in err_lines[0]

    # a bad last line that ends with its newline is damage too, not a torn write
    path.write_bytes(b"".join(lines[:3]) + b"not json\n")
    with pytest.raises(HistoryError, match="line 4"):
        read_history(damaged)
    path.write_bytes(b"".join(lines[:3]) + b"not js")  # torn: no newline, ignored
    assert read_history(damaged).torn
    (damaged / HISTORY_FILE).unlink()  # no history at all: listed, saying so
    (summary,) = [s for s in list_runs(CheckpointStore()) if s.run_id == other]
    assert "no history" in summary.problem and summary.steps == 12


# -- export ---------------------------------------------------------------------------------------
def read_events(path: Path) -> list:
    """TensorBoard's record format: u64 length, u32 crc, data, u32 crc; each an Event."""
    from tensorboardX.proto import event_pb2

    data, events, at = path.read_bytes(), [], 0
    while at < len(data):
        (length,) = struct.unpack("<Q", data[at:at + 8])
        event = event_pb2.Event()
        event.ParseFromString(data[at + 12:at + 12 + length])
        events.append(event)
        at += 12 + length + 4
    assert at == len(data)
    return events


def test_tensorboard_export_holds_exactly_the_recorded_metrics(cli_run, tmp_path, capsys):
    run_dir = copy_run(cli_run)
    h = read_history(run_dir)
    out = tmp_path / "tb"
    assert main(["runs", "export", run_dir.name, "--tensorboard", str(out)]) == 0
    assert str(out / run_dir.name) in capsys.readouterr().out
    (written,) = (out / run_dir.name).iterdir()
    got = {}
    for event in read_events(written):
        for value in event.summary.value:
            assert (value.tag, event.step) not in got
            got[(value.tag, event.step)] = (value.simple_value, event.wall_time)
    expected = {}
    for record in h.batches + h.epochs:
        for tag, value in scalars(record).items():
            expected[(tag, record["step"])] = (float(np.float32(value)),
                                               record["utc_ms"] / 1000)
    assert got == expected  # TensorBoard scalars are float32: exactly the recorded ones
    tags = {tag for tag, _ in got}
    for tag in ("train/loss", "train/accuracy/candle", "train/accuracy/trend", "val/loss",
                "val/accuracy/candle", "val/baseline/trend", "lr", "grad_norm",
                "samples_per_s", "memory/allocated_mb", "epoch/train/loss"):
        assert tag in tags, tag
    assert not {t for t in tags if "position" in t or "regime" in t}  # no marks: no data, no 0
    # exporting again replaces the previous export
    assert main(["runs", "export", run_dir.name, "--tensorboard", str(out)]) == 0
    assert len(list((out / run_dir.name).iterdir())) == 1


def test_csv_export_holds_exactly_the_recorded_metrics(cli_run, tmp_path, capsys):
    run_dir = copy_run(cli_run)
    h = read_history(run_dir)
    path = tmp_path / "out" / "run.csv"
    assert main(["runs", "export", run_dir.name, "--csv", str(path)]) == 0
    assert "8 rows (6 batches, 2 epochs)" in capsys.readouterr().out
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    records = sorted(h.batches + h.epochs, key=lambda r: (r["step"], r["type"] == "epoch"))
    assert [(r["kind"], int(r["step"])) for r in rows] == [(r["type"], r["step"])
                                                           for r in records]
    for row, record in zip(rows, records):
        numbers, words = scalars(record), texts(record)
        for column, cell in row.items():
            if column in ("kind", "step", "epoch", "batch", "utc_ms"):
                want = record["type"] if column == "kind" else record.get(column)
                assert cell == ("" if want is None else str(want)), column
            elif column == "wall_s":
                assert float(cell) == record["wall_s"]
            elif column in numbers:
                assert float(cell) == numbers[column], column
            elif column in words:
                assert cell == words[column], column
            else:
                assert cell == "", column  # no data here: an empty cell, never 0
    assert sorted(p.name for p in path.parent.iterdir()) == ["run.csv"]  # no temporary left


def test_export_errors_are_one_line_naming_what_is_wrong(cli_run, tmp_path, capsys):
    run_dir = copy_run(cli_run)
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    cases = [
        (["runs", "export", "20990101-000000-000-ffff", "--csv", str(tmp_path / "x.csv")],
         "no such run"),
        (["runs", "export", run_dir.name],
         "--tensorboard DIR, --csv FILE and/or --for-cluster DIR"),
        (["runs", "export", run_dir.name, "--csv", str(blocker / "x.csv")],
         f"cannot write the CSV file to {blocker / 'x.csv'}"),
        (["runs", "export", run_dir.name, "--tensorboard", str(blocker)],
         f"cannot write TensorBoard files to {blocker}: a file is in the way"),
    ]
    for argv, message in cases:
        assert main(argv) == 1, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err
