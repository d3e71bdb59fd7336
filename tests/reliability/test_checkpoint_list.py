"""``checkpoints list`` lists every run and never calls a damaged one good: copies of a real
run of the tiny model, each tampered in one way (its files, the safetensors header, the
settings, meta.json, the pointers), are each "damaged:" with the reason, from the headers
alone; ``--verify`` also reads every byte (NaN weights, a flipped byte in the tensor data).
``runs list``, the resume rules and ``train --resume`` go by the same check, which loads no
torch."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from workstation.cli import main
from workstation.errors import WorkstationError
from workstation.ml.checkpoints import (
    META_FILE,
    STATE_FILE,
    WEIGHTS_FILE,
    CheckpointError,
    CheckpointStore,
    apply_weights,
)
from workstation.ml.config import TrainConfig, preset_config
from workstation.ml.model import TradingTransformer

from saved_runs import save_run

torch.set_num_threads(1)


# -- tampering with one snapshot folder --------------------------------------------------------
def rehash(folder: Path, name: str) -> None:
    """meta.json made to agree with ``name`` as it now is (size and SHA-256)."""
    meta = json.loads((folder / META_FILE).read_text())
    data = (folder / name).read_bytes()
    meta["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (folder / META_FILE).write_text(json.dumps(meta))


def edit_meta(folder: Path, change) -> None:
    meta = json.loads((folder / META_FILE).read_text())
    change(meta)
    (folder / META_FILE).write_text(json.dumps(meta))


def split_weights(folder: Path) -> tuple[dict, bytes]:
    data = (folder / WEIGHTS_FILE).read_bytes()
    length = int.from_bytes(data[:8], "little")
    return json.loads(data[8:8 + length]), data[8 + length:]


def write_weights(folder: Path, header: dict | bytes, body: bytes) -> None:
    """A weights file of this header and data; meta.json made to agree with it."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    (folder / WEIGHTS_FILE).write_bytes(len(raw).to_bytes(8, "little") + raw + body)
    rehash(folder, WEIGHTS_FILE)


def edit_header(folder: Path, change) -> None:
    header, body = split_weights(folder)
    change(header)
    write_weights(folder, header, body)


def tensors(header: dict) -> list[str]:
    """The header's tensor names, in the order of their data."""
    return sorted((n for n in header if n != "__metadata__"),
                  key=lambda n: header[n]["data_offsets"])


def resave(folder: Path, change) -> None:
    """The weights saved again by safetensors after ``change(weights)``; meta.json agrees."""
    weights = load_file(str(folder / WEIGHTS_FILE))
    change(weights)
    save_file(weights, str(folder / WEIGHTS_FILE), metadata={"format": "pt"})
    rehash(folder, WEIGHTS_FILE)


def truncate(folder: Path, name: str) -> None:
    data = (folder / name).read_bytes()
    (folder / name).write_bytes(data[:len(data) // 2])


def random_bytes(folder: Path, name: str) -> None:
    size = (folder / name).stat().st_size
    (folder / name).write_bytes(random.Random(28).randbytes(size))


def header_length(folder: Path, length: int) -> None:
    data = bytearray((folder / WEIGHTS_FILE).read_bytes())
    data[:8] = length.to_bytes(8, "little")
    (folder / WEIGHTS_FILE).write_bytes(bytes(data))


def broken_header_json(folder: Path) -> None:
    data = bytearray((folder / WEIGHTS_FILE).read_bytes())
    data[8] = ord("#")  # the header's opening brace
    (folder / WEIGHTS_FILE).write_bytes(bytes(data))


def header_a_list(folder: Path) -> None:
    header, body = split_weights(folder)
    write_weights(folder, b"[]" + b" " * len(json.dumps(header)), body)


def offsets_past_the_end(header: dict) -> None:
    last = tensors(header)[-1]
    begin, end = header[last]["data_offsets"]
    header[last]["data_offsets"] = [begin + 8, end + 8]


def shape_off_its_offsets(header: dict) -> None:
    name = next(n for n in tensors(header) if len(header[n]["shape"]) == 2)
    header[name]["shape"][1] += 1


def overlapping(header: dict) -> None:
    sizes: dict[int, str] = {}
    for name in tensors(header):
        begin, end = header[name]["data_offsets"]
        if end - begin in sizes:  # the data of two tensors of one size made the same bytes
            header[name]["data_offsets"] = header[sizes[end - begin]]["data_offsets"]
            return
        sizes[end - begin] = name
    raise AssertionError("no two tensors of one size")


def wider_model(weights: dict) -> None:
    torch.manual_seed(0)
    other = TradingTransformer(preset_config("tiny", seq_len=48, d_ff=96))
    weights.clear()
    weights.update(other.state_dict())


def with_nan(weights: dict) -> None:
    name = sorted(weights)[0]
    weights[name] = torch.full_like(weights[name], float("nan"))


def flip_byte(folder: Path, name: str, at: int) -> None:
    data = bytearray((folder / name).read_bytes())
    data[at] ^= 0xFF
    (folder / name).write_bytes(bytes(data))


def flip_in_state_data(folder: Path) -> None:
    """A byte flipped inside the tensor data the training state holds (its zip directory
    stays whole)."""
    with zipfile.ZipFile(folder / STATE_FILE) as archive:
        member = next(m for m in archive.infolist() if "/data/" in m.filename)
    assert member.compress_size > 1000
    flip_byte(folder, STATE_FILE, member.header_offset + 128 + member.compress_size // 2)


def meta_text(folder: Path, text: str) -> None:
    (folder / META_FILE).write_text(text)


def remove(folder: Path, name: str) -> None:
    (folder / name).unlink()


def empty(folder: Path, name: str) -> None:
    (folder / name).write_bytes(b"")


def state_rehashed(folder: Path, damage) -> None:
    damage(folder, STATE_FILE)
    rehash(folder, STATE_FILE)


def weights_rehashed(folder: Path, damage) -> None:
    damage(folder, WEIGHTS_FILE)
    rehash(folder, WEIGHTS_FILE)


def pointer(run: Path, which: str, text: str) -> None:
    (run / f"{which}.json").write_text(text)


# name: (what is done to the latest snapshot folder or, for pointers, the run folder; the file
# the reason names; the reason). Every one is seen from the headers and meta.json alone.
SNAPSHOT = "snapshot"
RUN = "run"
TAMPERED = {
    "weights truncated": (SNAPSHOT, lambda f: truncate(f, WEIGHTS_FILE), WEIGHTS_FILE,
                          "truncated or altered"),
    "weights truncated, meta.json agreeing": (
        SNAPSHOT, lambda f: weights_rehashed(f, truncate), WEIGHTS_FILE, "reach past the end"),
    "weights random bytes": (SNAPSHOT, lambda f: random_bytes(f, WEIGHTS_FILE), WEIGHTS_FILE,
                             "does not fit a file of"),
    "header length 2^62": (SNAPSHOT, lambda f: header_length(f, 2 ** 62), WEIGHTS_FILE,
                           f"header length {2 ** 62} does not fit"),
    "header length past the end": (SNAPSHOT, lambda f: header_length(f, 1 << 20),
                                   WEIGHTS_FILE, "header length 1048576 does not fit"),
    "header JSON broken": (SNAPSHOT, broken_header_json, WEIGHTS_FILE, "header is not JSON"),
    "header a JSON list": (SNAPSHOT, header_a_list, WEIGHTS_FILE, "not an object"),
    "offsets past the end": (SNAPSHOT, lambda f: edit_header(f, offsets_past_the_end),
                             WEIGHTS_FILE, "reach past the end"),
    "shape off its offsets": (SNAPSHOT, lambda f: edit_header(f, shape_off_its_offsets),
                              WEIGHTS_FILE, "its data_offsets span"),
    "unknown dtype": (SNAPSHOT, lambda f: edit_header(
        f, lambda h: h[tensors(h)[0]].update(dtype="F31")), WEIGHTS_FILE, "unknown dtype 'F31'"),
    "overlapping tensors": (SNAPSHOT, lambda f: edit_header(f, overlapping), WEIGHTS_FILE,
                            "leave a gap or overlap"),
    "a tensor missing": (SNAPSHOT, lambda f: resave(f, lambda w: w.pop("pos")), WEIGHTS_FILE,
                         "missing 1 tensors (pos)"),
    "an unknown tensor": (SNAPSHOT, lambda f: resave(
        f, lambda w: w.update(extra=torch.zeros(2))), WEIGHTS_FILE, "1 unknown tensors (extra)"),
    "weights of another model": (SNAPSHOT, lambda f: resave(f, wider_model), WEIGHTS_FILE,
                                 "shape mismatch"),
    "wrong shapes in the config": (SNAPSHOT, lambda f: edit_meta(
        f, lambda m: m["config"].update(d_ff=128)), WEIGHTS_FILE,
        "does not fit the model settings in meta.json: shape mismatch"),
    "config not sane": (SNAPSHOT, lambda f: edit_meta(
        f, lambda m: m["config"].update(n_layers=-2)), META_FILE,
        "n_layers must be a positive integer, got -2"),
    "config number as text": (SNAPSHOT, lambda f: edit_meta(
        f, lambda m: m["config"].update(d_model="32")), META_FILE,
        "config.d_model must be a whole number, got '32'"),
    "config unknown name": (SNAPSHOT, lambda f: edit_meta(
        f, lambda m: m["config"].update(activation="gelu")), META_FILE,
        "unknown model settings: activation"),
    "training settings not sane": (SNAPSHOT, lambda f: edit_meta(
        f, lambda m: m.update(train_config={"epochs": "ten"})), META_FILE,
        "train_config.epochs must be a whole number, got 'ten'"),
    "validation loss as text": (SNAPSHOT, lambda f: edit_meta(
        f, lambda m: m["metrics"]["val"].update(loss="1.25")), META_FILE,
        "metrics.val.loss must be a number or null, got '1.25'"),
    "best validation loss as text": (SNAPSHOT, lambda f: edit_meta(
        f, lambda m: m["metrics"].update(best_val_loss="low")), META_FILE,
        "metrics.best_val_loss must be a number or null, got 'low'"),
    "meta.json not JSON": (SNAPSHOT, lambda f: meta_text(f, '{"format": 1,'), META_FILE,
                           "not valid JSON"),
    "meta.json empty": (SNAPSHOT, lambda f: meta_text(f, ""), META_FILE, "not valid JSON"),
    "meta.json a list": (SNAPSHOT, lambda f: meta_text(f, "[1, 2]"), META_FILE,
                         "not a Workstation checkpoint"),
    "meta.json missing": (SNAPSHOT, lambda f: remove(f, META_FILE), META_FILE, "missing"),
    "meta.json without step": (SNAPSHOT, lambda f: edit_meta(f, lambda m: m.pop("step")),
                               META_FILE, "step must be a whole number >= 0, got None"),
    "weights missing": (SNAPSHOT, lambda f: remove(f, WEIGHTS_FILE), WEIGHTS_FILE, "missing"),
    "weights empty": (SNAPSHOT, lambda f: empty(f, WEIGHTS_FILE), WEIGHTS_FILE,
                      "truncated or altered: 0 bytes"),
    "weights empty, meta.json agreeing": (SNAPSHOT, lambda f: weights_rehashed(f, empty),
                                          WEIGHTS_FILE, "too short for a safetensors header"),
    "training state missing": (SNAPSHOT, lambda f: remove(f, STATE_FILE), STATE_FILE,
                               "missing"),
    "training state empty": (SNAPSHOT, lambda f: empty(f, STATE_FILE), STATE_FILE,
                             "truncated or altered: 0 bytes"),
    "training state truncated, meta.json agreeing": (
        SNAPSHOT, lambda f: state_rehashed(f, truncate), STATE_FILE,
        "not a torch training state"),
    "training state random, meta.json agreeing": (
        SNAPSHOT, lambda f: state_rehashed(f, random_bytes), STATE_FILE,
        "not a torch training state"),
    "latest pointer not JSON": (RUN, lambda r: pointer(r, "latest", "{"), "latest.json",
                                "unreadable pointer"),
    "latest pointer to nothing": (RUN, lambda r: pointer(
        r, "latest", '{"snapshot": "0000000041-abcdef"}'), "0000000041-abcdef",
        "no such snapshot"),
    "best pointer to nothing": (RUN, lambda r: pointer(
        r, "best", '{"snapshot": "0000000041-abcdef"}'), "0000000041-abcdef",
        "no such snapshot (its pointer names a missing folder) (its best checkpoint)"),
}
# seen only when every byte is read (--verify)
VERIFY_ONLY = {
    "NaN weights, meta.json agreeing": (lambda f: resave(f, with_nan), WEIGHTS_FILE,
                                        "holds NaN or infinite values"),
    "a flipped byte in the tensor data": (lambda f: flip_byte(f, WEIGHTS_FILE, -1),
                                          WEIGHTS_FILE, "SHA-256 differs from meta.json"),
    "a flipped byte in the training state": (flip_in_state_data, STATE_FILE,
                                             "SHA-256 differs from meta.json"),
}


def copy_run(store: CheckpointStore, source: str) -> str:
    run = store.new_run_id()
    shutil.copytree(store.run_dir(source), store.run_dir(run))
    edit_meta(store.snapshot_dir(run), lambda m: m.update(run_id=run))
    return run


def usable(store: CheckpointStore, run: str) -> bool:
    """Whether the run's latest and best load and fit the model their settings build, and
    their training settings (a resume's) are settings: what "damaged" is never said of."""
    try:
        for which in ("latest", "best"):
            config, _, _ = store.settings(run, which)
            loaded = store.load(run, which)
            apply_weights(TradingTransformer(config), loaded)
            TrainConfig.from_dict(loaded.meta.get("train_config", {}))
    except (CheckpointError, WorkstationError, ValueError, TypeError):
        return False
    return True


@pytest.fixture
def tampered():
    """Two healthy runs and a tampered copy of the first per way of ``TAMPERED`` and
    ``VERIFY_ONLY``: ``(store, healthy ids, {way: run id})``."""
    store = CheckpointStore()
    healthy = [save_run(store, 1), save_run(store, 2, val_loss=0.75)]
    runs = {}
    for way, (where, damage, _, _) in TAMPERED.items():
        runs[way] = copy_run(store, healthy[0])
        damage(store.snapshot_dir(runs[way]) if where == SNAPSHOT else store.run_dir(runs[way]))
    for way, (damage, _, _) in VERIFY_ONLY.items():
        runs[way] = copy_run(store, healthy[0])
        damage(store.snapshot_dir(runs[way]))
    return store, healthy, runs


def listed(capsys, *flags: str) -> tuple[dict[str, str], str]:
    """``checkpoints list`` (exit 0): each run's row by run id, and the total line."""
    assert main(["checkpoints", "list", *flags]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[1]: line for line in lines[1:-1]}
    return rows, lines[-1]


def test_every_run_is_listed_and_each_tampered_one_is_damaged_with_its_reason(tampered,
                                                                              capsys):
    store, healthy, runs = tampered
    rows, total = listed(capsys)
    assert set(rows) == set(store.run_ids()) and len(rows) == 2 + len(runs)
    for run, step, loss in zip(healthy, ("41", "42"), ("1.2500", "0.7500"), strict=True):
        assert "damaged" not in rows[run] and f" {step} " in rows[run] and loss in rows[run]
        assert usable(store, run)
    for way, (_, _, file, reason) in TAMPERED.items():
        row = rows[runs[way]]
        assert "damaged: " in row and file in row and reason in row, (way, row)
        assert not usable(store, runs[way]), way  # the damage is real
    for way in VERIFY_ONLY:  # the headers and sizes cannot see these
        assert "damaged" not in rows[runs[way]], way
    assert total.startswith(f"{2 + len(runs)} run(s), ")
    assert total.endswith(f", {len(TAMPERED)} damaged")


def test_verify_reads_every_byte_and_flags_nan_weights_and_a_flipped_byte(tampered, capsys):
    store, healthy, runs = tampered
    rows, total = listed(capsys, "--verify")
    assert len(rows) == 2 + len(runs)
    for run in healthy:
        assert "damaged" not in rows[run]
    for way, (_, _, file, reason) in TAMPERED.items():
        assert "damaged: " in rows[runs[way]] and file in rows[runs[way]], way
        assert reason in rows[runs[way]], way
    for way, (_, file, reason) in VERIFY_ONLY.items():
        row = rows[runs[way]]
        assert "damaged: " in row and file in row and reason in row, (way, row)
        assert not usable(store, runs[way]), way
    assert total.endswith(f", {len(TAMPERED) + len(VERIFY_ONLY)} damaged; every file hashed "
                          f"and read")


def test_runs_list_says_which_checkpoint_is_damaged(capsys):
    store = CheckpointStore()
    good = save_run(store, 1)
    bad = copy_run(store, good)
    edit_meta(store.snapshot_dir(bad), lambda m: m["config"].update(d_ff=128))
    assert main(["runs", "list"]) == 0
    rows = {line.split()[1]: line for line in capsys.readouterr().out.splitlines()[1:-1]}
    assert "damaged" not in rows[good]
    assert "damaged: " in rows[bad] and "does not fit the model settings" in rows[bad]
    assert main(["runs", "list", "--json"]) == 0
    listed_runs = {r["run_id"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert listed_runs[good]["damaged"] is None
    assert WEIGHTS_FILE in listed_runs[bad]["damaged"]


def resumable(store: CheckpointStore, run: str) -> None:
    edit_meta(store.snapshot_dir(run), lambda m: m.update(resume={"epoch": 2, "batch": 0},
                                                          train_config={"epochs": 4}))


def test_a_damaged_run_is_never_resumed(capsys):
    store = CheckpointStore()
    older = save_run(store, 1)
    newer = save_run(store, 2)
    for run in (older, newer):
        resumable(store, run)
    edit_meta(store.snapshot_dir(newer), lambda m: m["config"].update(d_ff=128))
    point = store.newest_resumable()
    assert point is not None and point.run_id == older  # the damaged newer one passed over
    with pytest.raises(CheckpointError, match=r"does not fit the model settings in meta\.json"):
        store.check_resumable(newer, None)
    assert main(["train", "--resume", newer, "--epochs", "4", "--device", "cpu"]) == 1
    err = capsys.readouterr().err
    assert "resuming run" not in err  # refused before anything is read or built
    assert WEIGHTS_FILE in err and "does not fit the model settings in meta.json" in err


_WITHOUT_TORCH = """
import sys
from workstation.cli import main
code = main(sys.argv[1:])
print("TORCH" if "torch" in sys.modules else "NO-TORCH", code)
"""


def test_the_check_loads_no_torch():
    store = CheckpointStore()
    bad = copy_run(store, save_run(store, 1))
    resumable(store, bad)
    edit_meta(store.snapshot_dir(bad), lambda m: m["config"].update(d_ff=128))
    for argv, status in ((["checkpoints", "list"], "0"), (["train", "--resume", bad], "1")):
        result = subprocess.run([sys.executable, "-c", _WITHOUT_TORCH, *argv],
                                capture_output=True, text=True, timeout=120)
        assert result.stdout.split()[-2:] == ["NO-TORCH", status], result.stderr[-2000:]
        assert "does not fit the model settings" in result.stdout + result.stderr
