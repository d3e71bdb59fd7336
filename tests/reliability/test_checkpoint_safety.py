"""Damaged checkpoints are named, one bad run never hides the others, and deletes never
follow a link out of the checkpoints folder (decoy folders outside stay untouched)."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
import torch
from safetensors.torch import save_file

from workstation.cli import main
from workstation.ml.checkpoints import META_FILE, WEIGHTS_FILE, CheckpointError, CheckpointStore

from saved_runs import save_run

torch.set_num_threads(1)


def edit_meta(store: CheckpointStore, run_id: str, **changes) -> None:
    path = store.snapshot_dir(run_id) / META_FILE
    meta = json.loads(path.read_text())
    for key, value in changes.items():
        if value is ...:
            meta.pop(key)
        else:
            meta[key] = value
    path.write_text(json.dumps(meta))


@pytest.mark.parametrize("changes, reason", [
    ({"step": "12"}, "step must be a whole number >= 0, got '12'"),
    ({"epoch": 1.5}, "epoch must be a whole number >= 0 or null, got 1.5"),
    ({"resume": {"epoch": "x", "batch": 0}}, "resume must hold whole numbers"),
    ({"files": {}}, "files.model.safetensors must hold its bytes and SHA-256"),
    ({"config": [1, 2]}, "config must be an object, got list"),
])
def test_one_damaged_run_is_marked_and_every_healthy_run_listed(capsys, changes, reason):
    store = CheckpointStore()
    healthy, damaged = save_run(store, 1), save_run(store, 2)
    edit_meta(store, damaged, **changes)
    assert main(["checkpoints", "list"]) == 0
    rows = capsys.readouterr().out.splitlines()
    (good,) = [r for r in rows if healthy in r]
    (bad,) = [r for r in rows if damaged in r]
    assert "damaged" not in good and "41" in good
    assert "damaged:" in bad and META_FILE in bad and reason in bad
    with pytest.raises(CheckpointError, match=reason.split(",")[0]):
        store.load(damaged)


def test_missing_settings_and_absurd_sizes_are_named_before_anything_is_built(capsys):
    store = CheckpointStore()
    run = save_run(store, 1)
    edit_meta(store, run, config=...)
    assert main(["predict", "--run", run]) == 1
    err = capsys.readouterr().err
    assert META_FILE in err and "has no 'config' settings" in err
    huge = save_run(store, 2)
    edit_meta(store, huge, config={"d_model": 1_000_000, "n_heads": 8, "n_layers": 8,
                                   "d_ff": 4096, "seq_len": 48})
    assert main(["predict", "--run", huge]) == 1
    err = capsys.readouterr().err
    assert "incompatible settings" in err and "billion parameters" in err


def test_non_finite_weights_are_refused_with_the_tensor_named(capsys):
    store = CheckpointStore()
    run = save_run(store, 1)
    folder = store.snapshot_dir(run)
    weights = store.load(run).weights
    name = sorted(weights)[0]
    weights[name] = torch.full_like(weights[name], float("nan"))
    save_file(weights, str(folder / WEIGHTS_FILE), metadata={"format": "pt"})
    meta = json.loads((folder / META_FILE).read_text())
    data = (folder / WEIGHTS_FILE).read_bytes()
    meta["files"][WEIGHTS_FILE] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (folder / META_FILE).write_text(json.dumps(meta))  # a consistent file, with NaN weights
    with pytest.raises(CheckpointError, match=f"tensor {name} holds NaN or infinite values"):
        store.load(run)
    assert main(["predict", "--run", run]) == 1
    assert "holds NaN or infinite values" in capsys.readouterr().err


def test_empty_or_malformed_run_ids_are_refused_at_once():
    store = CheckpointStore()
    for bad in ("", "..", "../../etc", "20261130-011500-000-ab12/.."):
        with pytest.raises(CheckpointError, match="not a run id"):
            store.run_dir(bad)


def decoy(tmp_path):
    outside = tmp_path / "shared-disk"
    (outside / "someone-elses-folder").mkdir(parents=True)
    (outside / "someone-elses-folder" / "precious.txt").write_text("keep me")
    (outside / "0000000001-abcdef").mkdir()  # even a folder named like a snapshot
    return outside


def untouched(outside) -> bool:
    return ((outside / "someone-elses-folder" / "precious.txt").read_text() == "keep me"
            and (outside / "0000000001-abcdef").is_dir())


def test_clean_up_never_deletes_through_a_linked_snapshots_folder(tmp_path):
    outside = decoy(tmp_path)
    store = CheckpointStore(tmp_path / "ckpt")
    run = save_run(store, 1)
    snapshots = store.run_dir(run) / "snapshots"
    for entry in snapshots.iterdir():
        entry.rename(outside / entry.name)
    snapshots.rmdir()
    os.symlink(outside, snapshots)  # the user keeps the snapshots on a shared disk
    model = torch.nn.Linear(2, 2)
    for step in (50, 51):
        store.save(run, model, meta={"step": step})
    assert untouched(outside) and store.load(run).step == 51


def test_deleting_a_linked_run_removes_the_link_not_what_it_points_to(tmp_path, capsys):
    outside = decoy(tmp_path)
    store = CheckpointStore()
    run = save_run(store, 1)
    real = store.run_dir(run)
    real.rename(outside / run)
    os.symlink(outside / run, real)
    other = save_run(store, 2)
    linked_bytes = sum(f.stat().st_size for f in (outside / run).rglob("*") if f.is_file())
    assert main(["checkpoints", "delete", run]) == 0
    assert "freed 0 B" in capsys.readouterr().out
    assert not real.exists() and not real.is_symlink()
    assert untouched(outside) and (outside / run).is_dir()
    assert sum(f.stat().st_size for f in (outside / run).rglob("*") if f.is_file()) == \
        linked_bytes
    os.symlink(outside / run, real)
    assert main(["checkpoints", "clear", "--yes"]) == 0
    assert "cleared 2 run(s)" in capsys.readouterr().out
    assert store.run_ids() == [] and untouched(outside) and (outside / run).is_dir()
    assert other not in os.listdir(store.folder)
