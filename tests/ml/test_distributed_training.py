"""Data-parallel training under torchrun, on the CPU (gloo, two processes on two cores): the
run follows the single-process run's losses, only rank 0 writes, and the window resumes it."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from workstation.cli import main
from workstation.market.csv_io import read_candles_csv, write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.distributed import TIMEOUT_S, TIMEOUT_VARIABLE
from workstation.ml.history.reader import read_history
from workstation.ml.manifest import MANIFEST_NAME
from workstation.ui.live_data import LiveData

END = 1_700_000_040_000 - 1_700_000_040_000 % 60_000

# Two ranks each take half of every global batch and DDP averages their gradients: the mean
# of two half-batch means equals the global batch's mean wherever both halves hold the same
# number of targets of each head (here every window has them all), so the trajectories agree
# up to float32 summation order (a relative 1e-4 over two epochs is ample).
RTOL = 1e-4


def losses(run_id: str) -> list[float]:
    return [b["loss"] for b in read_history(CheckpointStore().run_dir(run_id)).batches]


def test_two_processes_under_torchrun_follow_the_single_process_run(tmp_path, capsys, qtbot,
                                                                    paths, make_dock):
    path = write_candles_csv(demo_candles(900, ONE_MINUTE, seed=2, end_ts=END),
                             tmp_path / "eth.csv")
    assert main(["train", "--source", f"csv:{path}", "--symbol", "ETH/USDT", "--seq-len", "16",
                 "--stride", "16", "--batch-size", "16", "--epochs", "2", "--threads", "1",
                 "--seed", "1",
                 "--log-every", "1", "--no-annotations", "--json"]) == 0
    single = json.loads(capsys.readouterr().out.splitlines()[-1])["run_id"]
    manifest = CheckpointStore().run_dir(single) / MANIFEST_NAME
    before = set(CheckpointStore().run_ids())

    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         "-m", "workstation", "train", "--config", str(manifest), "--source", f"csv:{path}",
         "--json"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    new = set(CheckpointStore().run_ids()) - before
    assert len(new) == 1, new  # exactly one run, one set of checkpoints: rank 0's
    (pair,) = new
    ran = json.loads((CheckpointStore().run_dir(pair) / MANIFEST_NAME).read_text())
    assert ran["world_size"] == 2
    a, b = np.array(losses(single)), np.array(losses(pair))
    assert len(a) == len(b) > 4
    np.testing.assert_allclose(b, a, rtol=RTOL)
    # each rank trained on its half: the targets counted over both ranks are the batch's
    examples = [[e["train"]["examples"] for e in read_history(
        CheckpointStore().run_dir(run)).epochs] for run in (single, pair)]
    assert examples[0] == examples[1] and examples[0][0] > 0

    # the desktop's window resumes the cluster's run, in its single process
    live = LiveData(paths.candle_cache)
    live.candles = read_candles_csv(path, ONE_MINUTE)
    live.key = SeriesKey("csv:eth.csv", "ETH/USDT", ONE_MINUTE)
    panel = make_dock(live=live, epochs=3)
    panel.resume_run(pair)
    qtbot.waitUntil(lambda: panel.state in ("idle", "failed") and not panel.busy,
                    timeout=120_000)
    assert panel.state == "idle", panel.detail
    history = read_history(CheckpointStore().run_dir(pair))
    assert [e["epoch"] for e in history.epochs] == [0, 1, 2] and history.state == "completed"


def _worker_of_rank(parent: int, rank: int) -> int | None:
    """The pid of torchrun's worker ``rank`` (a child of ``parent``), read from /proc."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and f"RANK={rank}".encode() in environ:
            return int(entry)
    return None


def _launch_and_wait_for_training(tmp_path, store, **env):
    """torchrun with two ranks on a long run, once rank 0 has recorded a trained batch:
    (the launcher, rank 1's pid)."""
    import time

    path = write_candles_csv(demo_candles(900, ONE_MINUTE, seed=2, end_ts=END),
                             tmp_path / "eth.csv")
    launcher = subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         "-m", "workstation", "train", "--source", f"csv:{path}", "--symbol", "ETH/USDT",
         "--seq-len", "16", "--batch-size", "16", "--epochs", "400", "--threads", "1",
         "--stride", "16", "--log-every", "1", "--no-annotations", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1", **env})
    for _ in range(1200):  # at most 120 s
        runs = store.run_ids()
        if runs and read_history(store.run_dir(runs[0])).batches:
            victim = _worker_of_rank(launcher.pid, 1)
            assert victim is not None, "rank 1 was not found among the launcher's children"
            return launcher, victim
        if launcher.poll() is not None:
            raise AssertionError(launcher.stderr.read()[-3000:])
        time.sleep(0.1)
    launcher.kill()
    raise AssertionError("rank 0 recorded no trained batch within 120 s")


def _outcome(launcher, timeout_s: float) -> str:
    """The launcher's stderr once it ended (killed if it outlives ``timeout_s``)."""
    try:
        return launcher.communicate(timeout=timeout_s)[1]
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.communicate()


def test_a_rank_that_dies_fails_the_whole_run_with_its_message(tmp_path, paths):
    """Rank 1 is killed mid-run: rank 0 does not wait out the rank timeout, the launcher exits
    non-zero naming the failed rank, and the run is not recorded as done."""
    import signal

    store = CheckpointStore()
    launcher, victim = _launch_and_wait_for_training(tmp_path, store)
    os.kill(victim, signal.SIGKILL)
    err = _outcome(launcher, TIMEOUT_S / 2)  # well inside the rank timeout
    assert launcher.returncode != 0
    assert "rank      : 1" in err and "SIGKILL" in err, err[-3000:]
    assert "lost the other processes" in err, err[-3000:]  # rank 0's own one-line message
    (run,) = store.run_ids()
    assert read_history(store.run_dir(run)).state == "failed"


def test_a_rank_that_hangs_fails_the_run_at_the_rank_timeout(tmp_path, paths):
    """Rank 1 is frozen (SIGSTOP) mid-run: rank 0's collective gives up after the rank timeout
    (10 s here, 300 s by default) and the whole run ends failed instead of hanging."""
    import signal

    store = CheckpointStore()
    launcher, victim = _launch_and_wait_for_training(tmp_path, store,
                                                     **{TIMEOUT_VARIABLE: "10"})
    os.kill(victim, signal.SIGSTOP)
    try:
        err = _outcome(launcher, 150)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(victim, signal.SIGKILL)
    assert launcher.returncode not in (0, None)
    assert "rank 0 of 2 lost the other processes" in err, err[-3000:]
    (run,) = store.run_ids()
    assert read_history(store.run_dir(run)).state == "failed"


def test_the_rank_timeout_is_300_s_unless_set_and_a_bad_setting_is_named():
    import pytest

    from workstation.errors import WorkstationError
    from workstation.ml.distributed import rank_timeout_s

    assert rank_timeout_s({}) == TIMEOUT_S == 300
    assert rank_timeout_s({TIMEOUT_VARIABLE: "12.5"}) == 12.5
    for bad in ("soon", "0", "-3"):
        with pytest.raises(WorkstationError, match=TIMEOUT_VARIABLE):
            rank_timeout_s({TIMEOUT_VARIABLE: bad})
