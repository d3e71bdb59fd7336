"""Checkpoints: one folder per training run, saved so that a crash never loses the last one.

Layout under ``<data dir>/checkpoints/<model>/<run id>/``::

    snapshots/<step>-<token>/model.safetensors   weights (no pickle)
                            training_state.pt    optimizer, scheduler, RNG states
                                                 (loadable with torch.load(weights_only=True))
                            meta.json            config, feature and target settings, data
                                                 provenance, metrics, step, versions, and the
                                                 size and SHA-256 of the two files above
    latest.json                                  {"snapshot": "<step>-<token>"}
    best.json                                    the same, for the lowest validation loss

A save writes a complete snapshot into a hidden ``.tmp-*`` folder (every file fsynced, then
the folder), renames that folder into ``snapshots/`` and then switches the pointer
``latest.json`` (and ``best.json``) by writing a temporary file in the same folder, fsyncing it
and ``os.replace``-ing it over the old pointer (``workstation.atomic``). Until that replace the
old pointer names the old, untouched snapshot, so a process killed at any moment leaves the
previous checkpoint loadable; the next save removes hidden leftovers and the snapshots no
pointer names. ``latest`` and ``best`` of one save share a snapshot. One process at a time
writes a run: its writers (the trainer for the run's life, a live session's save, delete and
clear) hold ``lock(run_id)``, an OS file lock a second writer is refused by at once.

Loading verifies sizes and hashes before parsing anything, reads weights with safetensors and
the training state with ``torch.load(weights_only=True)`` (a pickle that would run code is
refused), and turns every failure into a :class:`CheckpointError` that names the file.

The store also holds the rules about runs that the window and the command line share: which
run can be resumed and how far it got (``resume_point``, ``newest_resumable``), whether a
run has a checkpoint to predict with (``has_checkpoint``, ``newest_with_checkpoint``). Those
read only ``meta.json`` and the pointers, so they work before torch is loaded; torch is
imported by the functions that read or write tensors.

Whether a run is damaged is one judgement, ``check_snapshot`` (``CheckpointStore.check`` and
``problem``): meta.json, the file sizes, the safetensors header against the model settings and
the training state's zip directory, without reading tensor data; ``verify`` also hashes and
reads everything. ``checkpoints list``, ``runs list``, the Runs tab and every resume rely on it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import math
import os
import platform
import re
import secrets
import shutil
import threading
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..atomic import atomic_write_bytes, fsync_dir
from ..errors import WorkstationError
from ..locking import FileLock
from ..paths import app_paths
from ..storage import DiskFullError, is_disk_full
from .config import TradingTransformerConfig, TrainConfig
from .features import FeatureSpec
from .model_shapes import weight_shapes
from .safetensors_header import HeaderError, read_header
from .targets import TargetSpec

if TYPE_CHECKING:
    import torch

FORMAT = 1
DEFAULT_MODEL = "transformer"
WEIGHTS_FILE = "model.safetensors"
STATE_FILE = "training_state.pt"
META_FILE = "meta.json"
LOCKS = ".locks"
SLOTS = ("latest", "best")
SNAPSHOTS = "snapshots"
_TMP_PREFIX = ".tmp-"
_RUN_ID = re.compile(r"^\d{8}-\d{6}-\d{3}-[0-9a-f]{4}$")
_SNAPSHOT = re.compile(r"^\d{10,}-[0-9a-f]{6}$")  # <step>-<token>, as ``save`` names them
# what an interrupted save leaves: a snapshot being written, a pointer being replaced
_LEFTOVER = re.compile(r"^\.tmp-\d{10,}-[0-9a-f]{6}$|^\.(latest|best)\.json\.[^/]+\.tmp$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# Configuration fields that do not change what the weights mean.
RUNTIME_CONFIG_FIELDS = frozenset({"dropout", "use_gradient_checkpointing"})


class CheckpointError(WorkstationError):
    """A checkpoint that cannot be written or loaded; ``path`` is the file (or folder) at fault."""

    def __init__(self, path: str | os.PathLike, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"checkpoint {self.path}: {reason}")


@dataclass
class LoadedCheckpoint:
    """What :meth:`CheckpointStore.load` read: CPU tensors and plain data, nothing executed."""

    weights: dict[str, torch.Tensor]
    optimizer_state: dict | None
    scheduler_state: dict | None
    meta: dict
    path: Path
    rng_state: dict | None = None

    @property
    def run_id(self) -> str:
        return self.meta["run_id"]

    @property
    def step(self) -> int:
        return int(self.meta.get("step", 0))

    def restore_rng(self) -> None:
        """Put the torch RNGs back where they were at the save, for an exact resume."""
        if not self.rng_state:
            return
        import torch

        torch.set_rng_state(self.rng_state["cpu"])
        cuda = self.rng_state.get("cuda") or []
        if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(cuda)


@dataclass(frozen=True)
class ResumePoint:
    """Where run ``run_id`` continues: ``epoch`` epochs and ``batch`` batches of the next one
    done, ``step`` optimizer steps in all, of ``total_epochs`` planned."""

    run_id: str
    epoch: int
    batch: int
    step: int
    total_epochs: int


@dataclass(frozen=True)
class RunInfo:
    """One run as ``checkpoints list`` shows it; ``error`` says why its latest cannot be read
    (listed with ``check``: why the run fails ``CheckpointStore.problem``)."""

    run_id: str
    model: str
    path: Path
    created: str
    step: int | None
    epoch: int | None
    metrics: dict = field(default_factory=dict)
    provenance: Any = None
    size_bytes: int = 0
    has_best: bool = False
    error: str | None = None


# -- file helpers ----------------------------------------------------------------------------
def _save_safetensors(tensors: dict, filename: str, metadata: dict) -> None:
    from safetensors.torch import save_file

    save_file(tensors, filename, metadata=metadata)


def _load_safetensors(filename: str, device: str) -> dict:
    from safetensors.torch import load_file

    return load_file(filename, device=device)


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _remove(path: Path) -> None:
    """Delete a file, a link (as the link) or a folder (never following links inside it)."""
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path)


def _folder_size(folder: Path) -> int:
    """Bytes of the files under ``folder`` (links not followed)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def _plain_problem(value: Any, where: str) -> str | None:
    """Where ``value`` holds something ``torch.load(weights_only=True)`` would refuse."""
    import torch

    if value is None or isinstance(value, (bool, int, float, str, torch.Tensor, torch.dtype,
                                           torch.device, torch.Size)):
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, (str, int)):
                return f"{where}: key {key!r} is a {type(key).__name__}"
            problem = _plain_problem(item, f"{where}.{key}")
            if problem:
                return problem
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            problem = _plain_problem(item, f"{where}[{i}]")
            if problem:
                return problem
        return None
    return f"{where} is a {type(value).__name__}"


def _cpu_weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The state dict as contiguous CPU tensors, none sharing storage (safetensors needs it)."""
    out: dict[str, torch.Tensor] = {}
    seen: set[tuple[int, int]] = set()
    for name, tensor in model.state_dict().items():
        tensor = tensor.detach().to("cpu").contiguous()
        key = (tensor.untyped_storage().data_ptr(), tensor.untyped_storage().nbytes())
        if key in seen:
            tensor = tensor.clone()
        seen.add(key)
        out[name] = tensor
    return out


def _rng_state() -> dict:
    import torch

    state = {"cpu": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def versions() -> dict[str, str]:
    import numpy
    import safetensors
    import torch

    return {
        "workstation": __version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "safetensors": safetensors.__version__,
    }


def _checkpoint_words(meta: dict) -> str:
    """``"epoch 3, step 120"`` (or ``"step 120"``) of a checkpoint's meta."""
    epoch, step = meta.get("epoch"), meta.get("step", 0)
    return f"epoch {epoch}, step {step}" if epoch is not None else f"step {step}"


def _utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _created_from_run_id(run_id: str) -> str:
    stamp = _dt.datetime.strptime(run_id[:19], "%Y%m%d-%H%M%S-%f")
    return stamp.replace(tzinfo=_dt.UTC).isoformat(timespec="seconds")


# -- the store -------------------------------------------------------------------------------
class CheckpointStore:
    """The runs of one model under ``root`` (default: the data dir's ``checkpoints``)."""

    _id_lock = threading.Lock()
    _last_stamp = ""

    def __init__(self, root: str | os.PathLike | None = None, model: str = DEFAULT_MODEL):
        if not _NAME.match(model):
            raise WorkstationError(f"bad model name {model!r}: use letters, digits, '_', '-', '.'")
        self.root = Path(root) if root is not None else app_paths().checkpoints_dir
        self.model = model
        self.folder = self.root / model

    # runs
    def new_run_id(self) -> str:
        """A fresh run id that sorts after every run id this store has (UTC time + random)."""
        with CheckpointStore._id_lock:
            now = _dt.datetime.now(_dt.UTC)
            stamp = now.strftime("%Y%m%d-%H%M%S-") + f"{now.microsecond // 1000:03d}"
            newest = max([CheckpointStore._last_stamp] + [r[:19] for r in self.run_ids()])
            if stamp <= newest:
                later = _dt.datetime.strptime(newest, "%Y%m%d-%H%M%S-%f")
                later += _dt.timedelta(milliseconds=1)
                stamp = later.strftime("%Y%m%d-%H%M%S-") + f"{later.microsecond // 1000:03d}"
            CheckpointStore._last_stamp = stamp
            return f"{stamp}-{secrets.token_hex(2)}"

    def run_ids(self) -> list[str]:
        """Ids of the runs on disk, oldest first."""
        if not self.folder.is_dir():
            return []
        return sorted(p.name for p in self.folder.iterdir() if p.is_dir() and _RUN_ID.match(p.name))

    def run_dir(self, run_id: str) -> Path:
        if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
            raise CheckpointError(self.folder / str(run_id),
                                  "not a run id (expected e.g. 20261130-011500-000-ab12)")
        return self.folder / run_id

    def latest_run_id(self) -> str | None:
        """The newest run that has a ``latest`` checkpoint, or None."""
        return self.newest_with_checkpoint()

    def lock(self, run_id: str) -> FileLock:
        """The one-writer lock of a run (acquire it, or use it as a context manager); its
        file lives beside the runs (``.locks``), so locking creates no run."""
        self.run_dir(run_id)  # a valid id, or the error
        return FileLock(self.folder / LOCKS / f"{run_id}.lock", f"run {run_id}")

    def has_checkpoint(self, run_id: str, which: str = "latest") -> bool:
        """Whether run ``run_id`` has a ``which`` (latest or best) checkpoint to load."""
        return (self.run_dir(run_id) / f"{which}.json").is_file()

    def newest_with_checkpoint(self, first: str | None = None) -> str | None:
        """``first`` if it has a latest checkpoint, else the newest run that has one."""
        return next(self.with_checkpoint(first), None)

    def with_checkpoint(self, first: str | None = None) -> Iterator[str]:
        """The runs that have a latest checkpoint: ``first`` (if it has one), then the others,
        newest first."""
        return (run_id for run_id in self._candidates(first) if self.has_checkpoint(run_id))

    def resume_point(self, run_id: str) -> ResumePoint | None:
        """Where a run would continue from its latest checkpoint; None if that checkpoint
        has no resume position (a per-candle trained run); ``CheckpointError`` if the run
        or its meta.json cannot be read."""
        folder = self.snapshot_dir(run_id)
        meta = read_meta(folder)
        resume = meta.get("resume")
        if resume is None:
            return None
        try:
            epoch, batch = int(resume["epoch"]), int(resume["batch"])
            step = int(meta["step"])
            total = int((meta.get("train_config") or {})["epochs"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(folder / META_FILE,
                                  f"unreadable resume position ({type(exc).__name__}: {exc})"
                                  ) from None
        return ResumePoint(run_id, epoch, batch, step, total)

    def newest_resumable(self, first: str | None = None) -> ResumePoint | None:
        """``first``'s resume point if it has one, else the newest run's that has one;
        runs whose checkpoint cannot be read or fails ``check`` are passed over."""
        for run_id in self._candidates(first):
            try:
                point = self.resume_point(run_id)
                if point is not None:
                    self.check(run_id)
            except CheckpointError:
                continue
            if point is not None:
                return point
        return None

    def check_resumable(self, run_id: str, epochs: int | None) -> ResumePoint:
        """The resume point of ``run_id`` if it can train on to ``epochs`` in total (None: the
        run's own total) and its latest checkpoint passes ``check``; otherwise an error
        saying why."""
        self.check(run_id)
        point = self.resume_point(run_id)
        if point is None:
            raise CheckpointError(self.snapshot_dir(run_id) / META_FILE,
                                  "has no resume position (a per-candle trained run cannot "
                                  "be resumed; start a new run)")
        total = point.total_epochs if epochs is None else int(epochs)
        if point.epoch >= total:
            done = f"{point.epoch} epoch" + ("s" if point.epoch != 1 else "")
            raise WorkstationError(f"run {run_id} has already trained {done}; raise the total "
                                   f"epochs (Epochs, --epochs) above {point.epoch} to "
                                   f"continue it")
        return point

    def settings(self, run_id: str, which: str = "latest") -> RunSettings:
        """The model, feature and target settings of a run's ``which`` checkpoint (no
        torch): what a prediction with it needs to know before loading the weights."""
        folder = self.snapshot_dir(run_id, which)
        return settings_from_meta(read_meta(folder), folder / META_FILE)

    def check(self, run_id: str, which: str = "latest", *, verify: bool = False) -> dict:
        """The meta.json of a run's ``which`` checkpoint once it passes ``check_snapshot``
        (``verify``: every byte read too); otherwise the ``CheckpointError`` naming the file
        and what is wrong with it."""
        return self._current(run_id, which,
                             lambda folder: check_snapshot(folder, verify=verify))

    def problem(self, run_id: str, *, verify: bool = False) -> str | None:
        """Why run ``run_id``'s latest checkpoint, or its best, fails ``check``; None if both
        pass. The one judgement of "damaged" that every list of runs shows."""
        checked: set[str] = set()
        for which in SLOTS:
            if which == "best" and not self.has_checkpoint(run_id, "best"):
                continue
            try:
                name = self.snapshot_dir(run_id, which).name
                if name not in checked:
                    checked.add(name)
                    self.check(run_id, which, verify=verify)
            except CheckpointError as exc:
                return str(exc) + (" (its best checkpoint)" if which == "best" else "")
        return None

    def _candidates(self, first: str | None) -> list[str]:
        ids = list(reversed(self.run_ids()))
        if first is not None and first in ids:
            ids.remove(first)
            ids.insert(0, first)
        return ids

    # save
    def save(self, run_id: str, model: torch.nn.Module, optimizer=None, scheduler=None,
             meta: dict | None = None, *, is_best: bool = False) -> Path:
        """Write a snapshot of the run and point ``latest`` (and ``best`` if ``is_best``) at it.

        ``meta`` is the caller's JSON-able description (``config``, ``features``, ``targets``,
        ``provenance``, ``metrics``, ``step``, ``epoch`` ...); the store adds the run id, model
        name, time, versions and file hashes. Returns the snapshot folder. A full disk, met
        in any file (the weights, the optimizer state, meta.json, a pointer; torch's writer
        says "unexpected pos", safetensors "os error 28"), is a ``DiskFullError`` naming the
        run and the checkpoint that is intact: the half-written snapshot is removed and the
        pointers still name the previous one.
        """
        run = self.run_dir(run_id)
        try:
            return self._save(run, run_id, model, optimizer, scheduler, meta, is_best)
        except Exception as exc:
            if isinstance(exc, DiskFullError) and exc.where == run:  # said already
                raise
            if not is_disk_full(exc, run):
                raise
            raise DiskFullError(run, self._kept_after_full_disk(run, meta or {})) from exc

    def _kept_after_full_disk(self, run: Path, meta: dict) -> str:
        """What a save that met a full disk leaves: the previous checkpoint, as it was."""
        this = _checkpoint_words(meta)
        try:
            name = self._pointer(run, "latest", missing_ok=True)
            before = None if name is None else read_meta(run / SNAPSHOTS / name)
        except CheckpointError:
            return f"the previous checkpoint is as it was; this save ({this}) was discarded"
        if before is None:
            return f"the run has no earlier checkpoint; this save ({this}) was discarded"
        return (f"the previous checkpoint is intact ({_checkpoint_words(before)}); this save "
                f"({this}) was discarded")

    def _save(self, run: Path, run_id: str, model, optimizer, scheduler, meta: dict | None,
              is_best: bool) -> Path:
        import torch

        meta = dict(meta or {})
        step = int(meta.get("step", 0))
        state = {
            "optimizer": optimizer.state_dict() if optimizer is not None else None,
            "scheduler": scheduler.state_dict() if scheduler is not None else None,
            "rng": _rng_state(),
        }
        problem = _plain_problem(state, "training state")
        if problem:
            raise CheckpointError(run / STATE_FILE, f"cannot be saved without pickle: {problem}")
        try:
            json.dumps(meta, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise CheckpointError(run / META_FILE, f"meta is not plain JSON: {exc}") from None
        snapshots = run / SNAPSHOTS
        snapshots.mkdir(parents=True, exist_ok=True)
        name = f"{step:010d}-{secrets.token_hex(3)}"
        tmp = run / f"{_TMP_PREFIX}{name}"
        tmp.mkdir()
        try:
            _save_safetensors(_cpu_weights(model), str(tmp / WEIGHTS_FILE),
                              metadata={"format": "pt", "workstation_format": str(FORMAT),
                                        "run_id": run_id})
            _fsync_file(tmp / WEIGHTS_FILE)
            with open(tmp / STATE_FILE, "wb") as fh:
                torch.save(state, fh)
                fh.flush()
                os.fsync(fh.fileno())
            meta.update(
                format=FORMAT, run_id=run_id, model=self.model, step=step, saved=_utc_now(),
                versions=versions(),
                files={n: {"bytes": (tmp / n).stat().st_size, "sha256": _sha256(tmp / n)}
                       for n in (WEIGHTS_FILE, STATE_FILE)},
            )
            with open(tmp / META_FILE, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(meta, indent=1, sort_keys=True, allow_nan=False))
                fh.flush()
                os.fsync(fh.fileno())
            fsync_dir(tmp)
            final = snapshots / name
            os.rename(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        fsync_dir(snapshots)
        fsync_dir(run)
        pointer = json.dumps({"format": FORMAT, "snapshot": name, "step": step}).encode()
        try:
            atomic_write_bytes(run / "latest.json", pointer)
        except DiskFullError:  # the pointer was left as it was: nothing names the snapshot
            _remove(final)  # its space goes back at once
            raise
        if is_best:
            try:
                atomic_write_bytes(run / "best.json", pointer)
            except DiskFullError as exc:
                raise DiskFullError(run, f"this checkpoint ({_checkpoint_words(meta)}) is "
                                         f"saved as the latest, the best one is intact",
                                    doing=f"cannot mark the best checkpoint of {run}") from exc
        self._collect_garbage(run)
        return final

    def _collect_garbage(self, run: Path) -> None:
        """Remove snapshots no pointer names, and folders left by interrupted saves: only
        entries named as this store names them, only inside the checkpoints folder (a run or
        ``snapshots`` folder that is a link to elsewhere is left alone: what lies there may
        not be ours)."""
        try:
            keep = {self._pointer(run, slot, missing_ok=True) for slot in SLOTS}
        except CheckpointError:
            return  # a damaged pointer: keep every snapshot, the user decides
        snapshots = run / SNAPSHOTS
        if run.is_symlink() or snapshots.is_symlink():
            return
        for entry in run.iterdir():
            if _LEFTOVER.match(entry.name):  # temporaries of an interrupted save
                _remove(entry)
        for entry in snapshots.iterdir():
            if _SNAPSHOT.match(entry.name) and entry.name not in keep:
                _remove(entry)

    # load
    def _pointer(self, run: Path, which: str, *, missing_ok: bool = False) -> str | None:
        if which not in SLOTS:
            raise CheckpointError(run, f"unknown checkpoint {which!r}; use one of {SLOTS}")
        path = run / f"{which}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            if missing_ok:
                return None
            if not run.is_dir():
                raise CheckpointError(run, "no such run") from None
            raise CheckpointError(path, f"run has no {which} checkpoint") from None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise CheckpointError(path, f"unreadable pointer: {exc}") from None
        name = data.get("snapshot") if isinstance(data, dict) else None
        if not isinstance(name, str) or not _NAME.match(name):
            raise CheckpointError(path, "not a checkpoint pointer (no valid 'snapshot')")
        return name

    def snapshot_dir(self, run_id: str, which: str = "latest") -> Path:
        run = self.run_dir(run_id)
        name = self._pointer(run, which)
        if name is None:  # only with missing_ok; kept for the type checker
            raise CheckpointError(run / f"{which}.json", f"run has no {which} checkpoint")
        return run / SNAPSHOTS / name

    def _current(self, run_id: str, which: str, read):
        """``read(snapshot folder)``, again if a concurrent save replaced the snapshot."""
        for attempt in range(3):
            folder = self.snapshot_dir(run_id, which)
            try:
                return read(folder)
            except CheckpointError:
                if attempt == 2 or folder.is_dir():
                    raise

    def load(self, run_id: str, which: str = "latest", *, map_location="cpu") -> LoadedCheckpoint:
        """Read and verify checkpoint ``which`` (``latest`` or ``best``) of a run."""
        return self._current(run_id, which,
                             lambda folder: load_snapshot(folder, map_location=map_location))

    # list, delete, clear
    def list_runs(self, *, check: bool = False, verify: bool = False) -> list[RunInfo]:
        """Every run of this model, oldest first, described from its ``latest`` meta;
        ``check`` (or ``verify``): a run that fails ``problem`` has it as its ``error``."""
        out = []
        for run_id in self.run_ids():
            run = self.folder / run_id
            meta, error = {}, None
            try:
                meta = self._current(run_id, "latest", read_meta)
            except CheckpointError as exc:
                error = str(exc)
            if error is None and (check or verify):
                error = self.problem(run_id, verify=verify)
            out.append(RunInfo(
                run_id=run_id, model=self.model, path=run,
                created=_created_from_run_id(run_id),
                step=meta.get("step"), epoch=meta.get("epoch"),
                metrics=meta.get("metrics") or {}, provenance=meta.get("provenance"),
                size_bytes=_folder_size(run), has_best=(run / "best.json").is_file(),
                error=error,
            ))
        return out

    def delete_run(self, run_id: str) -> int:
        """Remove a run; returns the bytes freed. A run folder that is a link is removed as
        the link: what it points to is never touched."""
        run = self.run_dir(run_id)
        if not (run.is_dir() or run.is_symlink()):
            raise CheckpointError(run, "no such run")
        if run.is_symlink():
            return self._delete(run_id)
        lock = self.lock(run_id).acquire()  # refused while a trainer or a save writes it
        try:
            return self._delete(run_id)
        finally:
            lock.release(remove=not run.exists())

    def _delete(self, run_id: str) -> int:
        """Remove a run (its lock held by the caller); a link goes as the link."""
        run = self.run_dir(run_id)
        size = 0 if run.is_symlink() else _folder_size(run)
        try:
            _remove(run)
        except OSError as exc:
            raise CheckpointError(run, f"cannot delete it: {exc.strerror or exc}") from None
        return size

    def clear(self) -> tuple[int, int]:
        """Remove every run of this model; returns ``(runs, bytes)`` freed. Nothing is
        removed while any run is being written (its lock is held)."""
        runs = self.run_ids()
        locks: list[FileLock] = []
        try:
            for run_id in runs:
                if not self.run_dir(run_id).is_symlink():
                    locks.append(self.lock(run_id).acquire())
            return len(runs), sum(self._delete(r) for r in runs)
        finally:
            for lock in locks:
                lock.release(remove=not self.folder.joinpath(lock.path.stem).exists())


def model_stores(root: str | os.PathLike | None = None) -> list[CheckpointStore]:
    """One store per model folder under ``root`` (default: the data dir's ``checkpoints``)."""
    root = Path(root) if root is not None else app_paths().checkpoints_dir
    if not root.is_dir():
        return []
    return [CheckpointStore(root, p.name) for p in sorted(root.iterdir())
            if p.is_dir() and _NAME.match(p.name)]


# -- reading one snapshot ----------------------------------------------------------------------
def read_meta(folder: Path) -> dict:
    """A snapshot's meta.json, checked to be a Workstation checkpoint of a known format."""
    path = folder / META_FILE
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if not folder.is_dir():
            raise CheckpointError(folder, "no such snapshot (its pointer names a missing "
                                          "folder)") from None
        raise CheckpointError(path, "missing") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CheckpointError(path, f"not valid JSON: {exc}") from None
    if not isinstance(meta, dict) or "format" not in meta or "files" not in meta:
        raise CheckpointError(path, "not a Workstation checkpoint (no 'format'/'files')")
    if meta["format"] != FORMAT:
        raise CheckpointError(path, f"checkpoint format {meta['format']!r}; this version of "
                                    f"Workstation reads format {FORMAT}")
    problem = _meta_problem(meta)
    if problem:
        raise CheckpointError(path, problem)
    return meta


def _count(value, *, optional: bool = False) -> bool:
    return (optional and value is None) or (type(value) is int and value >= 0)


_SECTIONS = ("config", "train_config", "features", "targets", "metrics", "versions")


def _meta_problem(meta: dict) -> str | None:
    """What is wrong with the fields every snapshot's meta.json holds (their types and
    ranges), or None; the settings are checked where they are read (``settings_from_meta``)."""
    if not isinstance(meta.get("run_id"), str) or not _RUN_ID.match(meta["run_id"]):
        return f"run_id must be a run id, got {meta.get('run_id')!r}"
    if not isinstance(meta.get("model"), str) or not _NAME.match(meta["model"]):
        return f"model must be a model name, got {meta.get('model')!r}"
    if not _count(meta.get("step")):
        return f"step must be a whole number >= 0, got {meta.get('step')!r}"
    if not _count(meta.get("epoch"), optional=True):
        return f"epoch must be a whole number >= 0 or null, got {meta.get('epoch')!r}"
    resume = meta.get("resume")
    if resume is not None and not (isinstance(resume, dict) and _count(resume.get("epoch"))
                                   and _count(resume.get("batch"))):
        return f"resume must hold whole numbers epoch and batch, got {resume!r}"
    files = meta.get("files")
    if not isinstance(files, dict):
        return f"files must be an object, got {files!r}"
    for name in (WEIGHTS_FILE, STATE_FILE):
        entry = files.get(name)
        if not (isinstance(entry, dict) and _count(entry.get("bytes"))
                and isinstance(entry.get("sha256"), str)
                and re.fullmatch(r"[0-9a-f]{64}", entry["sha256"])):
            return f"files.{name} must hold its bytes and SHA-256, got {entry!r}"
    for section in _SECTIONS:
        if section in meta and not isinstance(meta[section], dict):
            return f"{section} must be an object, got {type(meta[section]).__name__}"
    for name in ("provenance", "reason", "saved"):
        if meta.get(name) is not None and not isinstance(meta[name], str):
            return f"{name} must be text, got {meta[name]!r}"
    if meta.get("series") is not None and not isinstance(meta["series"], dict):
        return f"series must be an object or null, got {meta['series']!r}"
    return _metrics_problem(meta.get("metrics"))


def _loss(value) -> bool:
    return value is None or (type(value) in (int, float) and math.isfinite(value))


def _metrics_problem(metrics) -> str | None:
    """What is wrong with the losses ``metrics`` records (every list of runs shows them, and
    a resume compares with the best), or None."""
    if not isinstance(metrics, dict):
        return None  # absent, or named with the other sections
    if not _loss(metrics.get("best_val_loss")):
        return f"metrics.best_val_loss must be a number or null, got " \
               f"{metrics['best_val_loss']!r}"
    for split, values in metrics.items():
        if isinstance(values, dict) and not _loss(values.get("loss")):
            return f"metrics.{split}.loss must be a number or null, got {values['loss']!r}"
    return None


RunSettings = tuple[TradingTransformerConfig, FeatureSpec, TargetSpec]


def settings_from_meta(meta: dict, path: Path) -> RunSettings:
    """Model config, feature and target settings a snapshot's meta.json (``path``) records,
    checked to fit together and this Workstation; no torch."""
    for section, cls in (("config", TradingTransformerConfig), ("features", FeatureSpec),
                         ("targets", TargetSpec)):
        problem = _types_problem(cls, meta.get(section), section)
        if problem:
            raise CheckpointError(path, f"incompatible settings: {problem}")
    try:
        settings = (TradingTransformerConfig.from_dict(meta["config"]),
                    FeatureSpec.from_dict(meta["features"]), TargetSpec.from_dict(meta["targets"]))
    except KeyError as exc:
        raise CheckpointError(path, f"has no {exc.args[0]!r} settings") from None
    except (WorkstationError, TypeError, ValueError, OverflowError) as exc:
        raise CheckpointError(path, f"incompatible settings: {exc}"[:300]) from None
    if settings[0].n_features != settings[1].n_features:
        raise CheckpointError(path, f"incompatible settings: the model takes "
                                    f"{settings[0].n_features} features, this Workstation "
                                    f"computes {settings[1].n_features}")
    return settings


_KINDS = {"int": "a whole number", "float": "a number", "bool": "true or false", "str": "text",
          "tuple[str, ...]": "a list of texts"}


def _fits(kind: str, value: Any) -> bool:
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return type(value) is int
    if kind == "float":
        return type(value) is int or (type(value) is float and math.isfinite(value))
    if kind == "str":
        return isinstance(value, str)
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _types_problem(cls: type, section: Any, name: str) -> str | None:
    """Which value of a settings section (``name`` in meta.json) is not of its field's type
    (a number as text, a list for a flag ...), or None; unknown and missing keys are left to
    ``from_dict``."""
    if not isinstance(section, dict):
        return None
    for f in fields(cls):
        kind = str(f.type)
        optional = kind.endswith(" | None")
        kind = kind.removesuffix(" | None")
        if f.name not in section or kind not in _KINDS:
            continue
        value = section[f.name]
        if not ((value is None and optional) or _fits(kind, value)):
            return f"{name}.{f.name} must be {_KINDS[kind]}, got {value!r}"[:300]
    return None


def _sized(folder: Path, meta: dict, name: str) -> Path:
    """``folder / name``, there and of the size meta.json records."""
    path = folder / name
    expected = meta["files"].get(name) if isinstance(meta["files"], dict) else None
    if not isinstance(expected, dict):
        raise CheckpointError(folder / META_FILE, f"does not describe {name}")
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise CheckpointError(path, "missing") from None
    if size != expected.get("bytes"):
        raise CheckpointError(path, f"truncated or altered: {size} bytes, meta.json says "
                                    f"{expected.get('bytes')}")
    return path


def _verify(folder: Path, meta: dict, name: str) -> Path:
    path = _sized(folder, meta, name)
    try:
        digest = _sha256(path)
    except OSError as exc:
        raise CheckpointError(path, f"cannot be read: {exc.strerror or exc}") from None
    if digest != meta["files"][name].get("sha256"):
        raise CheckpointError(path, "corrupt: SHA-256 differs from meta.json")
    return path


def load_snapshot(folder: str | os.PathLike, *, map_location="cpu") -> LoadedCheckpoint:
    """Verify and read one snapshot folder (see the module docstring)."""
    import torch
    from safetensors import SafetensorError

    folder = Path(folder)
    meta = read_meta(folder)
    weights_path = _verify(folder, meta, WEIGHTS_FILE)
    state_path = _verify(folder, meta, STATE_FILE)
    try:
        weights = _load_safetensors(str(weights_path), device="cpu")
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(weights_path, f"not readable as safetensors: {exc}") from None
    for name, tensor in weights.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(weights_path, f"tensor {name} holds NaN or infinite values")
    try:
        state = torch.load(state_path, map_location=map_location, weights_only=True)
    except Exception as exc:  # noqa: BLE001 - UnpicklingError, RuntimeError, EOFError ...
        reason = " ".join(str(exc).split())[:300]
        raise CheckpointError(state_path, f"refused or unreadable training state "
                                          f"({type(exc).__name__}): {reason}") from None
    if not isinstance(state, dict) or not {"optimizer", "scheduler"} <= state.keys():
        raise CheckpointError(state_path, "not a training state (no optimizer/scheduler)")
    return LoadedCheckpoint(weights=weights, optimizer_state=state["optimizer"],
                            scheduler_state=state["scheduler"], meta=meta, path=folder,
                            rng_state=state.get("rng"))


# -- checking one snapshot ---------------------------------------------------------------------
def check_snapshot(folder: str | os.PathLike, *, verify: bool = False) -> dict:
    """Check one snapshot folder and return its meta.json; a failure is a
    ``CheckpointError`` naming the file and what is wrong.

    Without ``verify`` no tensor data is read and torch is not loaded, so a list of many
    runs stays fast: meta.json's fields and settings (model, training, feature and target
    settings sane), each file's size against meta.json, the safetensors header
    (``safetensors_header``) and its tensors' names and shapes against the model the settings
    build (``model_shapes``), and the training state's zip directory. ``verify`` also reads
    every byte as ``load_snapshot`` does: each file's SHA-256 against meta.json, every tensor
    (finite) and the training state."""
    folder = Path(folder)
    meta = read_meta(folder)
    config = settings_from_meta(meta, folder / META_FILE)[0]
    if "train_config" in meta:
        problem = _types_problem(TrainConfig, meta["train_config"], "train_config")
        if problem is None:
            try:
                TrainConfig.from_dict(meta["train_config"])
            except (WorkstationError, TypeError, ValueError, OverflowError) as exc:
                problem = str(exc)
        if problem:
            raise CheckpointError(folder / META_FILE,
                                  f"incompatible training settings: {problem}"[:300])
    weights, state = _sized(folder, meta, WEIGHTS_FILE), _sized(folder, meta, STATE_FILE)
    try:
        header = read_header(weights)
    except HeaderError as exc:
        raise CheckpointError(weights, f"not a safetensors file: {exc}") from None
    except OSError as exc:
        raise CheckpointError(weights, f"cannot be read: {exc.strerror or exc}") from None
    if config.n_layers > len(header):  # every layer has tensors: not worth listing them
        problems = [f"{config.n_layers} layers, the file holds {len(header)} tensors"]
    else:
        problems = shape_problems(weight_shapes(config),
                                  {name: entry.shape for name, entry in header.items()})
    if problems:
        raise CheckpointError(weights, "does not fit the model settings in meta.json: "
                                       + ", ".join(problems))
    _check_state_archive(state)
    if verify:
        load_snapshot(folder)
    return meta


def _check_state_archive(path: Path) -> None:
    """The training state is a torch zip archive whose members lie inside the file (only
    its central directory is read)."""
    try:
        size = path.stat().st_size
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise CheckpointError(path, f"not a torch training state: {exc}") from None
    if not any(m.filename.endswith("/data.pkl") for m in members):
        raise CheckpointError(path, "not a torch training state: the archive has no data.pkl")
    for m in members:
        if m.header_offset + m.compress_size > size:
            raise CheckpointError(path, f"not a torch training state: member {m.filename} "
                                        f"reaches past the end of the file")


# -- fitting a checkpoint to a model -----------------------------------------------------------
def config_differences(saved: dict, current: dict,
                       ignore: Iterable[str] = RUNTIME_CONFIG_FIELDS) -> list[str]:
    """``"field: saved -> current"`` for each model setting that changes the weights' meaning."""
    ignore = set(ignore)
    keys = sorted((set(saved) | set(current)) - ignore)
    return [f"{k}: {saved.get(k, '(absent)')!r} -> {current.get(k, '(absent)')!r}"
            for k in keys if saved.get(k, "(absent)") != current.get(k, "(absent)")]


def _some(items: list[str], sep: str, n: int = 3) -> str:
    return sep.join(items[:n]) + (f"{sep}... ({len(items) - n} more)" if len(items) > n else "")


def weight_problems(model: torch.nn.Module, weights: dict[str, torch.Tensor]) -> list[str]:
    """Why ``weights`` cannot be loaded into ``model`` (missing, unknown, mis-shaped tensors)."""
    return shape_problems({k: tuple(v.shape) for k, v in model.state_dict().items()},
                          {k: tuple(v.shape) for k, v in weights.items()})


def shape_problems(expected: dict[str, tuple[int, ...]], saved: dict[str, tuple[int, ...]]
                   ) -> list[str]:
    """Why tensors of the names and shapes ``saved`` do not fit a model of the names and
    shapes ``expected`` (missing, unknown, mis-shaped tensors)."""
    missing = sorted(set(expected) - set(saved))
    unexpected = sorted(set(saved) - set(expected))
    shapes = [f"{k} {saved[k]} vs {expected[k]}" for k in sorted(set(expected) & set(saved))
              if saved[k] != expected[k]]
    problems = []
    if missing:
        problems.append(f"missing {len(missing)} tensors ({_some(missing, ', ')})")
    if unexpected:
        problems.append(f"{len(unexpected)} unknown tensors ({_some(unexpected, ', ')})")
    if shapes:
        problems.append(f"shape mismatch: {_some(shapes, '; ')}")
    return problems


def apply_weights(model: torch.nn.Module, loaded: LoadedCheckpoint) -> None:
    """Load the checkpoint's weights into ``model``, or say precisely why they do not fit."""
    import torch

    problems = weight_problems(model, loaded.weights)
    if problems:
        raise CheckpointError(loaded.path / WEIGHTS_FILE,
                              "does not fit this model: " + ", ".join(problems))
    with torch.no_grad():
        model.load_state_dict(loaded.weights)
