"""Checkpoints: real safetensors files, real torch state, real SIGKILLed processes."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from workstation.ml import checkpoints as ck
from workstation.ml.checkpoints import (
    CheckpointError,
    CheckpointStore,
    apply_weights,
    config_differences,
    load_snapshot,
)
from workstation.paths import app_paths

torch.set_num_threads(1)


class Net(torch.nn.Module):
    """Small, with dropout so that an exact resume needs the RNG state too."""

    def __init__(self, width: int = 8):
        super().__init__()
        self.a = torch.nn.Linear(4, width)
        self.drop = torch.nn.Dropout(0.3)
        self.b = torch.nn.Linear(width, 3)

    def forward(self, x):
        return self.b(self.drop(torch.relu(self.a(x))))


def make(width: int = 8, seed: int = 0):
    torch.manual_seed(seed)
    model = Net(width)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=20)
    return model, opt, sched


def train(model, opt, sched, steps: int) -> None:
    model.train()
    for _ in range(steps):
        x = torch.randn(16, 4)
        y = torch.randint(0, 3, (16,))
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()


def meta(step: int, **extra) -> dict:
    return {"step": step, "epoch": step // 10, "config": {"width": 8, "n_features": 4},
            "features": {"version": 1}, "targets": {"horizon": 5},
            "provenance": "DEMO (simulated market) DEMO/USDT 1m",
            "metrics": {"val_loss": 1.0 / (step + 1)}, **extra}


def same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_store_lives_under_the_data_dir_per_model_and_run():
    store = CheckpointStore()
    model, opt, sched = make()
    train(model, opt, sched, 3)
    run = store.new_run_id()
    folder = store.save(run, model, opt, sched, meta(3), is_best=True)
    assert folder.parent.parent == app_paths().checkpoints_dir / "transformer" / run
    assert sorted(p.name for p in folder.iterdir()) == ["meta.json", "model.safetensors",
                                                        "training_state.pt"]
    # each file is readable by its own library without our code, and without pickle
    assert same_weights(load_file(folder / "model.safetensors"), model.state_dict())
    state = torch.load(folder / "training_state.pt", weights_only=True)
    assert state["optimizer"]["state"][0]["step"] == opt.state_dict()["state"][0]["step"]
    saved = json.loads((folder / "meta.json").read_text())
    assert saved["provenance"].startswith("DEMO")
    assert saved["versions"]["torch"] == torch.__version__
    assert {"workstation", "python"} <= saved["versions"].keys()
    assert saved["config"] == {"width": 8, "n_features": 4}
    assert saved["features"] == {"version": 1} and saved["targets"] == {"horizon": 5}
    assert saved["step"] == 3 and saved["metrics"]["val_loss"] == pytest.approx(0.25)


def test_round_trip_latest_and_best():
    store = CheckpointStore()
    model, opt, sched = make()
    run = store.new_run_id()
    train(model, opt, sched, 2)
    store.save(run, model, opt, sched, meta(2), is_best=True)
    best_weights = {k: v.clone() for k, v in model.state_dict().items()}
    train(model, opt, sched, 2)
    store.save(run, model, opt, sched, meta(4), is_best=False)

    latest = store.load(run)
    best = store.load(run, "best")
    assert same_weights(latest.weights, model.state_dict())
    assert same_weights(best.weights, best_weights)
    assert latest.step == 4 and best.step == 2 and latest.run_id == run
    assert latest.scheduler_state == sched.state_dict()
    assert latest.optimizer_state["param_groups"] == opt.state_dict()["param_groups"]
    # superseded snapshots are removed; latest and best of one save share a snapshot
    assert len(list((store.folder / run / "snapshots").iterdir())) == 2
    store.save(run, model, opt, sched, meta(5), is_best=True)
    assert len(list((store.folder / run / "snapshots").iterdir())) == 1


def test_resume_continues_a_run_exactly():
    straight = make()
    train(*straight, 6)

    first = make()
    train(*first, 3)
    store = CheckpointStore()
    run = store.new_run_id()
    store.save(run, *first, meta(3))
    torch.manual_seed(1234)  # anything that happens between stop and resume

    loaded = store.load(run)
    model, opt, sched = make(seed=99)  # fresh objects, different init
    apply_weights(model, loaded)
    opt.load_state_dict(loaded.optimizer_state)
    sched.load_state_dict(loaded.scheduler_state)
    loaded.restore_rng()
    train(model, opt, sched, 3)
    assert same_weights(model.state_dict(), straight[0].state_dict())
    assert sched.state_dict() == straight[2].state_dict()


def test_run_ids_sort_by_time_and_restart_gets_a_new_one():
    store = CheckpointStore()
    ids = [store.new_run_id() for _ in range(50)]
    assert ids == sorted(ids) and len(set(ids)) == 50
    model, *_ = make()
    store.save(ids[0], model, meta=meta(1))
    store.save(ids[1], model, meta=meta(1))
    assert store.latest_run_id() == ids[1]
    assert store.new_run_id() > ids[-1]
    assert ck._created_from_run_id(ids[0])[:4].isdigit()


def test_list_delete_and_clear_report_what_they_free():
    store = CheckpointStore()
    assert store.list_runs() == [] and store.latest_run_id() is None and store.clear() == (0, 0)
    model, opt, sched = make(width=64)
    runs = [store.new_run_id() for _ in range(3)]
    for i, run in enumerate(runs):
        store.save(run, model, opt, sched, meta(10 + i), is_best=(i != 1))
    infos = store.list_runs()
    assert [i.run_id for i in infos] == runs
    assert [i.step for i in infos] == [10, 11, 12] and [i.has_best for i in infos] == [True, False,
                                                                                       True]
    assert infos[0].provenance.startswith("DEMO") and infos[0].metrics["val_loss"] > 0
    assert infos[0].epoch == 1 and infos[0].error is None and infos[0].model == "transformer"
    sizes = [i.size_bytes for i in infos]
    assert all(s > 64 * 4 * 4 for s in sizes)

    assert store.delete_run(runs[1]) == sizes[1]
    assert not (store.folder / runs[1]).exists()
    with pytest.raises(CheckpointError, match="no such run"):
        store.delete_run(runs[1])
    with pytest.raises(CheckpointError, match="not a run id"):
        store.delete_run("../../etc")
    assert store.clear() == (2, sizes[0] + sizes[2])
    assert store.list_runs() == []


def test_a_run_with_a_damaged_latest_is_listed_with_its_error():
    store = CheckpointStore()
    model, *_ = make()
    run = store.new_run_id()
    folder = store.save(run, model, meta=meta(1))
    (folder / "meta.json").write_text("{not json")
    (info,) = store.list_runs()
    assert info.step is None and "meta.json" in info.error and "not valid JSON" in info.error
    assert store.delete_run(run) > 0


@pytest.fixture
def saved():
    store = CheckpointStore()
    model, opt, sched = make()
    run = store.new_run_id()
    folder = store.save(run, model, opt, sched, meta(1))
    return store, run, folder


def rehash(folder: Path, name: str) -> None:
    """What a careful attacker does: make meta.json agree with the swapped file."""
    meta_path = folder / "meta.json"
    data = json.loads(meta_path.read_text())
    data["files"][name] = {"bytes": (folder / name).stat().st_size,
                           "sha256": ck._sha256(folder / name)}
    meta_path.write_text(json.dumps(data))


def test_truncated_weights_are_refused_naming_the_file(saved):
    store, run, folder = saved
    weights = folder / "model.safetensors"
    os.truncate(weights, weights.stat().st_size // 2)
    with pytest.raises(CheckpointError, match="truncated") as err:
        store.load(run)
    assert err.value.path == weights and str(weights) in str(err.value)
    rehash(folder, "model.safetensors")  # even when meta.json agrees, safetensors refuses
    with pytest.raises(CheckpointError, match="not readable as safetensors") as err:
        store.load(run)
    assert err.value.path == weights


def test_a_flipped_byte_is_refused(saved):
    store, run, folder = saved
    path = folder / "training_state.pt"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="SHA-256") as err:
        store.load(run)
    assert err.value.path == path


class _Exploit:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("target", ["training_state.pt", "model.safetensors"])
def test_a_pickle_that_would_run_code_is_refused(saved, tmp_path, target):
    store, run, folder = saved
    marker = tmp_path / "pwned"
    payload = {"optimizer": _Exploit(marker), "scheduler": None}
    if target == "training_state.pt":
        torch.save(payload, folder / target)
    else:
        (folder / target).write_bytes(pickle.dumps(payload))
    rehash(folder, target)
    with pytest.raises(CheckpointError) as err:
        store.load(run)
    assert err.value.path == folder / target
    assert not marker.exists()
    if target == "training_state.pt":
        assert "refused" in str(err.value)
    # the exploit really works when unpickled without weights_only: the test can fail
    pickle.loads(pickle.dumps(payload))
    assert marker.exists()


def test_bad_meta_json_and_foreign_folders_are_refused(saved, tmp_path):
    store, run, folder = saved
    (folder / "meta.json").write_text('{"step": 1')
    with pytest.raises(CheckpointError, match="not valid JSON") as err:
        store.load(run)
    assert err.value.path == folder / "meta.json"
    (folder / "meta.json").write_text('{"step": 1}')
    with pytest.raises(CheckpointError, match="not a Workstation checkpoint"):
        store.load(run)
    (folder / "meta.json").write_text('{"format": 99, "files": {}}')
    with pytest.raises(CheckpointError, match="format 99"):
        store.load(run)
    (folder / "meta.json").unlink()
    with pytest.raises(CheckpointError, match="missing"):
        load_snapshot(folder)
    (store.folder / run / "latest.json").write_text('{"snapshot": "../../x"}')
    with pytest.raises(CheckpointError, match="not a checkpoint pointer"):
        store.load(run)
    with pytest.raises(CheckpointError, match="no best checkpoint"):
        store.load(run, "best")
    with pytest.raises(CheckpointError, match="no such run"):
        store.load(store.new_run_id())


def test_incompatible_weights_name_the_file_and_the_reason(saved):
    store, run, folder = saved
    loaded = store.load(run)
    with pytest.raises(CheckpointError, match=r"shape mismatch: a.bias \(8,\) vs \(16,\)") as err:
        apply_weights(Net(width=16), loaded)
    assert err.value.path == folder / "model.safetensors"
    other = torch.nn.Sequential(torch.nn.Linear(4, 8))
    reason = (r"missing 2 tensors \(0.bias, 0.weight\), "
              r"4 unknown tensors \(a.bias, a.weight, b.bias, ... \(1 more\)\)")
    with pytest.raises(CheckpointError, match=reason):
        apply_weights(other, loaded)
    assert config_differences({"n_features": 4, "dropout": 0.1, "d_model": 8},
                              {"n_features": 9, "dropout": 0.3, "d_model": 8}) == [
        "n_features: 4 -> 9"]


def test_unsaveable_state_and_meta_fail_before_touching_the_last_checkpoint(saved):
    store, run, folder = saved
    model, opt, _ = make()

    class Callable:
        def __call__(self, step):
            return 1.0

        def __init__(self):
            self.fn = print

    sched = torch.optim.lr_scheduler.LambdaLR(opt, Callable())
    with pytest.raises(CheckpointError, match=r"without pickle: training state\.scheduler"):
        store.save(run, model, opt, sched, meta(2))
    with pytest.raises(CheckpointError, match="meta is not plain JSON"):
        store.save(run, model, opt, None, meta(2, metrics={"loss": float("nan")}))
    assert store.snapshot_dir(run) == folder and store.load(run).step == 1
    assert not [p for p in (store.folder / run).iterdir() if p.name.startswith(".tmp-")]


CHILD = textwrap.dedent("""
    import os, sys, time, torch
    from workstation.ml import checkpoints as ck

    phase, root = sys.argv[1], sys.argv[2]
    store = ck.CheckpointStore(root)
    model = torch.nn.Linear(256, 256)
    torch.nn.init.constant_(model.weight, 1.0)
    run = store.new_run_id()
    store.save(run, model, meta={"step": 1}, is_best=True)
    print(run, flush=True)
    torch.nn.init.constant_(model.weight, 2.0)

    def hang():
        print("HANG", flush=True)
        time.sleep(60)

    if phase == "weights":  # killed with half of the new weights written
        def half_written(tensors, filename, metadata=None):
            real_save(tensors, filename, metadata=metadata)
            os.truncate(filename, os.path.getsize(filename) // 2)
            hang()
        real_save = ck._save_safetensors
        ck._save_safetensors = half_written
    elif phase == "rename":  # the new snapshot is complete but not yet in place
        real_rename = os.rename
        os.rename = lambda src, dst: hang()
    else:  # killed just before the pointer 'latest' or 'best' is replaced
        real_replace = os.replace
        def replace(src, dst):
            if str(dst).endswith(phase + ".json"):
                hang()
            real_replace(src, dst)
        os.replace = replace
    store.save(run, model, meta={"step": 2}, is_best=True)
    print("SAVED", flush=True)
""")


@pytest.mark.parametrize("phase", ["weights", "rename", "latest", "best"])
def test_sigkill_in_the_middle_of_a_save_keeps_the_previous_checkpoint(tmp_path, phase):
    root = tmp_path / "ckpt"
    child = subprocess.Popen([sys.executable, "-c", CHILD, phase, str(root)],
                             stdout=subprocess.PIPE, text=True)
    try:
        run = child.stdout.readline().strip()
        assert child.stdout.readline().strip() == "HANG"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL

    store = CheckpointStore(root)
    old = store.load(run, "best")
    assert torch.equal(old.weights["weight"], torch.ones(256, 256)) and old.step == 1
    latest = store.load(run)
    if phase == "best":  # 'latest' was switched: it is the whole new checkpoint
        assert torch.equal(latest.weights["weight"], torch.full((256, 256), 2.0))
    else:
        assert same_weights(latest.weights, old.weights)
    # the next save cleans up what the killed one left behind
    store.save(run, torch.nn.Linear(256, 256), meta={"step": 3})
    left = sorted(p.name for p in (root / "transformer" / run).iterdir())
    assert left == ["best.json", "latest.json", "snapshots"]
    assert len(list((root / "transformer" / run / "snapshots").iterdir())) == 2
