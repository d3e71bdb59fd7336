"""Data-parallel training under torchrun, on the CPU (gloo, two processes on two cores): the
run follows the single-process run's losses, only rank 0 writes, and the window resumes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from workstation.cli import main
from workstation.market.csv_io import read_candles_csv, write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.history import read_history
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
    path = write_candles_csv(demo_candles(900, "1m", seed=2, end_ts=END), tmp_path / "eth.csv")
    assert main(["train", "--source", f"csv:{path}", "--symbol", "ETH/USDT", "--seq-len", "16",
                 "--batch-size", "16", "--epochs", "2", "--threads", "1", "--seed", "1",
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
    live.candles = read_candles_csv(path, "1m")
    live.key = SeriesKey("csv:eth.csv", "ETH/USDT", "1m")
    panel = make_dock(live=live, epochs=3)
    panel.resume_run(pair)
    qtbot.waitUntil(lambda: panel.state in ("idle", "failed") and not panel.busy,
                    timeout=120_000)
    assert panel.state == "idle", panel.detail
    history = read_history(CheckpointStore().run_dir(pair))
    assert [e["epoch"] for e in history.epochs] == [0, 1, 2] and history.state == "completed"
