"""Run histories: every training run's metrics, appended as they happen, beside its checkpoints.

One file per run, ``checkpoints/<model>/<run id>/history.jsonl``: one JSON object per line,
each with ``type``, ``run_id``, ``utc_ms`` (absolute UTC time, ms) and ``wall_s`` (seconds of
the run's wall time: it starts at 0 and a resumed run continues from the recorded total, so
the time the run was not running is not counted). The types:

- ``start`` / ``resume``: the ``RunStarted`` fields (``provenance``, ``device``,
  ``model_config``, ``train_config``, ``features``, ``targets``, ``n_params``, ``candles``,
  windows, ``steps_per_epoch``, ``total_steps``, ``start_step``, ``resumed_from``) and
  ``preset`` (the model preset whose size the run has, or "custom"); ``format`` is 1.
- ``batch``: one per ``BatchEnd`` (every ``log_every`` steps, as the trainer reports):
  ``step``, ``epoch`` (0-based), ``batch``, ``batches_per_epoch``, ``batches`` (steps
  averaged), ``loss``, ``head_losses`` and ``accuracy`` (per head), ``lr``, ``grad_norm``,
  ``samples_per_s`` and ``memory`` (``device``, ``allocated_mb``, ``reserved_mb``,
  ``peak_mb``, ``total_mb``).
- ``epoch``: one per ``EpochEnd``: ``epoch``, ``step``, ``lr``, ``elapsed_s``, ``is_best``,
  ``memory`` and ``train`` / ``val`` (``loss``, ``head_losses``, ``examples``, ``batches``
  and ``heads``: per class head ``accuracy``, ``n``, ``baselines``, ``best_baseline``, its
  accuracy ``best_baseline_accuracy``, ``margin``, ``interval``, ``verdict`` ...).
- ``checkpoint``: one per ``CheckpointSaved`` (``step``, ``epoch``, ``reason``, ``is_best``,
  ``path``).
- ``end``: how the run ended: ``state`` "completed", "stopped" or "failed" (then
  ``message``, ``nonfinite``, ``traceback``), ``step``, ``epoch``, ``best_val_loss``.
- ``evaluation``: a walk-forward evaluation's verdict per head (``verdicts``, ``heads``).

A metric without data is null, never 0. Unknown types are passed over by the reader (a
newer Workstation may write more).

Writing (``RunHistory``, the trainer's, under the run's one-writer lock): each record goes
to the operating system as one ``write`` when it happens, so a process killed (even by
SIGKILL) loses nothing it recorded; ``fsync`` runs at most once a second, at every epoch and
at the end, so a machine crash loses at most about the last second. A run that trains no
step leaves no file (and so no run folder), as it leaves no checkpoint. A resumed run appends
to the same file; a line torn by a kill mid-write is cut off first.

Reading (``read_history``): a torn last line (no newline, not JSON) is ignored without an
error; any other bad line is a ``HistoryError`` naming the file and the line. When a run was
resumed from a checkpoint older than its last records (killed after it), the records past
the resume step are dropped from the curves (counted in ``History.rewound``), so steps
increase and no epoch appears twice. ``list_runs`` summarises every run of a store, newest
first; a run whose history cannot be read shows why instead.

No torch, no Qt: the window imports this at once.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any

from ..atomic import atomic_writer, fsync_dir
from ..errors import WorkstationError
from ..locking import FileLock, LockedError
from .checkpoints import LOCKS, CheckpointError, read_meta
from .config import PRESETS
from .events import (
    BatchEnd,
    CheckpointSaved,
    EpochEnd,
    EvaluationFinished,
    Failed,
    Finished,
    HeadScore,
    RunStarted,
    SplitMetrics,
)
from .targets import CLASS_HEADS

HISTORY_FILE = "history.jsonl"
FORMAT = 1
STATES = ("running", "completed", "stopped", "failed", "unknown")
SYNC_EVERY_S = 1.0
_PRESET_FIELDS = ("d_model", "n_heads", "n_layers", "d_ff")
_ENDINGS = {"completed", "stopped", "failed"}


class HistoryError(WorkstationError):
    """A run history that cannot be read: ``path`` the file, ``line`` (1-based) the line at
    fault (None: the file as a whole)."""

    def __init__(self, path: str | os.PathLike, reason: str, line: int | None = None):
        self.path = Path(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}, line {line}" if line is not None else str(self.path)
        super().__init__(f"run history {where}: {reason}")


def history_path(run_dir: str | os.PathLike) -> Path:
    return Path(run_dir) / HISTORY_FILE


def has_history(run_dir: str | os.PathLike) -> bool:
    return history_path(run_dir).is_file()


def preset_of(model_config: dict | None) -> str | None:
    """The preset whose size (width, heads, layers, feed-forward) ``model_config`` has, else
    "custom" (None without a config)."""
    if not isinstance(model_config, dict):
        return None
    for name, preset in PRESETS.items():
        if all(model_config.get(f) == getattr(preset, f) for f in _PRESET_FIELDS):
            return name
    return "custom"


# -- events to records ------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """``value`` as plain JSON data; a non-finite float (no data) becomes None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    return value


def _head_score(score: HeadScore) -> dict:
    return dict(_plain(score), best_baseline_accuracy=_plain(score.best_baseline_accuracy))


def _split(metrics: SplitMetrics) -> dict:
    return {"loss": _plain(metrics.loss), "head_losses": _plain(metrics.head_losses),
            "examples": metrics.examples, "batches": metrics.batches,
            "heads": {head: _head_score(s) for head, s in metrics.heads.items()}}


def record_of(event: object) -> dict | None:
    """The history record of an ml event without its times (None: not recorded)."""
    match event:
        case RunStarted():
            fields = event.to_dict()
            fields.pop("event")
            kind = "resume" if event.start_step > 0 or event.resumed_from else "start"
            return dict(_plain(fields), type=kind, format=FORMAT,
                        preset=preset_of(event.model_config))
        case BatchEnd(metrics=m):
            return {"type": "batch", "run_id": event.run_id, "step": event.step,
                    "epoch": event.epoch, "batch": event.batch,
                    "batches_per_epoch": event.batches_per_epoch, "batches": event.batches,
                    "loss": _plain(m.loss), "head_losses": _plain(m.head_losses),
                    "accuracy": {h: _plain(s.accuracy) for h, s in m.heads.items()},
                    "lr": _plain(event.lr),
                    "grad_norm": _plain(getattr(event, "grad_norm", None)),
                    "samples_per_s": _plain(event.samples_per_s),
                    "memory": _plain(event.memory.to_dict())}
        case EpochEnd():
            return {"type": "epoch", "run_id": event.run_id, "epoch": event.epoch,
                    "step": event.step, "batches_per_epoch": event.batches_per_epoch,
                    "lr": _plain(event.lr), "elapsed_s": _plain(event.elapsed_s),
                    "is_best": event.is_best, "memory": _plain(event.memory.to_dict()),
                    "train": _split(event.train), "val": _split(event.val)}
        case CheckpointSaved():
            return {"type": "checkpoint", "run_id": event.run_id, "step": event.step,
                    "epoch": event.epoch, "reason": event.reason, "is_best": event.is_best,
                    "path": event.path}
        case Finished():
            return {"type": "end", "run_id": event.run_id, "state": event.status,
                    "step": event.step, "epoch": event.epoch,
                    "elapsed_s": _plain(event.elapsed_s),
                    "best_val_loss": _plain(event.best_val_loss),
                    "checkpoint": event.checkpoint}
        case Failed():
            return {"type": "end", "run_id": event.run_id, "state": "failed",
                    "step": event.step, "epoch": event.epoch, "batch": event.batch,
                    "message": event.message, "nonfinite": list(event.nonfinite),
                    "traceback": event.traceback}
        case EvaluationFinished():
            return {"type": "evaluation", "folds": event.folds,
                    "elapsed_s": _plain(event.elapsed_s),
                    "verdicts": {h: s.verdict for h, s in event.summary.items()},
                    "heads": {h: _head_score(s) for h, s in event.summary.items()}}
    return None


# -- writing ------------------------------------------------------------------------------------
class RunHistory:
    """Appends a run's events to ``<run_dir>/history.jsonl`` (see the module docstring). One
    writer per run: the caller holds the run's lock (the trainer does). ``append`` takes the
    ml events (``RunStarted``, ``BatchEnd``, ``EpochEnd``, ``CheckpointSaved``, ``Finished``,
    ``Failed``, ``EvaluationFinished``; others are passed over); ``flush`` makes what was
    appended durable; ``close`` flushes and lets go of the file."""

    def __init__(self, run_dir: str | os.PathLike, on_create: Callable[[], object] | None = None):
        self.path = history_path(run_dir)
        self.on_create = on_create  # called once the run's folder holds its new history
        self._fd: int | None = None
        self._pending: list[bytes] = []
        self._unsynced = False
        self._last_sync = time.monotonic()
        self._cut_at: int | None = None  # length to cut a torn last line back to
        self._newline = False            # the last line is whole but lacks its newline
        self._offset = self._inspect()   # wall time the file has already recorded
        self._t0 = time.monotonic()

    def _inspect(self) -> float:
        """The wall time recorded so far, and how to mend a torn last line before appending."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return 0.0
        except OSError as exc:
            raise HistoryError(self.path, f"cannot be read: {exc.strerror or exc}") from None
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            if _parse(data[cut:]) is None:
                self._cut_at = cut
                data = data[:cut]
            else:
                self._newline = True
        recorded = 0.0
        for line in data.splitlines():
            record = _parse(line)
            wall = record.get("wall_s") if record is not None else None
            if isinstance(wall, (int, float)) and math.isfinite(wall):
                recorded = max(recorded, float(wall))
        return recorded

    @property
    def wall_s(self) -> float:
        """The run's wall time now: the recorded total plus the time since this writer began."""
        return self._offset + time.monotonic() - self._t0

    def append(self, event: object) -> None:
        record = record_of(event)
        if record is None:
            return
        record.update(utc_ms=int(time.time() * 1000), wall_s=round(self.wall_s, 3))
        line = (json.dumps(record, allow_nan=False, separators=(",", ":")) + "\n").encode()
        kind = record["type"]
        if self._fd is None and not self.path.exists():
            if kind in ("start", "resume"):
                self._pending.append(line)  # written with the run's first step
                return
            if kind == "end":
                self._pending.clear()  # the run trained no step: no history
                return
        if self._fd is None:
            self._open()
        self._write(line)
        if kind in ("epoch", "end", "evaluation") or \
                time.monotonic() - self._last_sync >= SYNC_EVERY_S:
            self.flush()

    def _open(self) -> None:
        created = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._cut_at is not None:
            os.truncate(self.path, self._cut_at)  # a line torn by a kill mid-write
            self._cut_at = None
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        if created:
            fsync_dir(self.path.parent)
            if self.on_create is not None:
                self.on_create()
        if self._newline:
            self._write(b"\n")
            self._newline = False
        pending, self._pending = self._pending, []
        for line in pending:
            self._write(line)

    def _write(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]
        self._unsynced = True

    def flush(self) -> None:
        """Make every appended record durable (fsync)."""
        if self._fd is not None and self._unsynced:
            os.fsync(self._fd)
            self._unsynced = False
        self._last_sync = time.monotonic()

    def close(self) -> None:
        if self._fd is None:
            return
        try:
            self.flush()
        finally:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> RunHistory:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- reading ------------------------------------------------------------------------------------
def _parse(line: bytes) -> dict | None:
    """A record from one line, or None if it is not one."""
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) and isinstance(value.get("type"), str) else None


def _problem(record: dict) -> str | None:
    """What is wrong with a record's common fields, or None."""
    for name in ("utc_ms", "step", "epoch"):
        value = record.get(name)
        if name in record and value is not None and not (type(value) is int and value >= 0):
            return f"{name} must be a whole number >= 0, got {value!r}"
    wall = record.get("wall_s")
    if not (isinstance(wall, (int, float)) and not isinstance(wall, bool)):
        return f"wall_s must be a number, got {wall!r}"
    if record["type"] in ("batch", "epoch") and type(record.get("step")) is not int:
        return f"a {record['type']} record needs its step, got {record.get('step')!r}"
    if record["type"] == "end" and record.get("state") not in _ENDINGS:
        return f"state must be one of {sorted(_ENDINGS)}, got {record.get('state')!r}"
    return None


@dataclass
class History:
    """What a run's history file says (see the module docstring for the records' fields).

    ``batches`` and ``epochs`` are the curves (records as plain dicts, steps increasing);
    ``markers`` the start, resume, checkpoint, end and evaluation records in file order.
    ``state``: "running" (no end recorded and the run's writer holds its lock), "completed",
    "stopped", "failed", or "unknown" (no end recorded and no writer: killed or crashed).
    ``started`` is the first start's UTC ms; ``steps`` the last step recorded;
    ``best_val_loss`` the lowest validation loss of the epochs; ``verdicts`` each class
    head's last known verdict (from a walk-forward evaluation when one was recorded later
    than the last epoch, else from that epoch's validation span: ``verdict_source``).
    ``rewound`` counts records dropped because the run resumed from an earlier checkpoint;
    ``torn`` says a torn last line was ignored."""

    path: Path
    run_id: str | None = None
    batches: list[dict] = field(default_factory=list)
    epochs: list[dict] = field(default_factory=list)
    markers: list[dict] = field(default_factory=list)
    state: str = "unknown"
    started: int | None = None
    provenance: str | None = None
    preset: str | None = None
    steps: int = 0
    best_val_loss: float | None = None
    verdicts: dict[str, str | None] = field(default_factory=dict)
    verdict_source: str | None = None
    resumes: int = 0
    rewound: int = 0
    torn: bool = False
    failure: str | None = None
    ended: dict | None = None


def _records(path: Path) -> tuple[list[dict], bool]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise HistoryError(path, "missing (the run recorded no history)") from None
    except OSError as exc:
        raise HistoryError(path, f"cannot be read: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        record = _parse(line)
        if record is None:
            raise HistoryError(path, "not a history record (not a JSON object with a "
                                     "'type'); the file is damaged here", number)
        problem = _problem(record)
        if problem:
            raise HistoryError(path, problem, number)
        records.append(record)
    torn = False
    if tail.strip():
        record = _parse(tail)
        if record is None or _problem(record):
            torn = True  # killed mid-write: the line never was a record
        else:
            records.append(record)
    return records, torn


def _writer_alive(run_dir: Path) -> bool:
    """Whether a writer holds the run's lock (``CheckpointStore.lock``: ``.locks`` beside the
    runs). The probe takes the lock for an instant when it is free."""
    path = run_dir.parent / LOCKS / f"{run_dir.name}.lock"
    if not path.is_file():
        return False
    probe = FileLock(path, f"run {run_dir.name}")
    try:
        probe.acquire()
    except LockedError:
        return True
    except OSError:
        return False
    probe.release()
    return False


def read_history(run_dir: str | os.PathLike) -> History:
    """The history of the run in ``run_dir``; ``HistoryError`` if it is missing or damaged
    (the message names the file and the line)."""
    run_dir = Path(run_dir)
    path = history_path(run_dir)
    records, torn = _records(path)
    h = History(path=path, torn=torn)
    last_epoch_at = evaluation_at = -1
    for index, record in enumerate(records):
        kind = record["type"]
        if kind in ("start", "resume"):
            begin = record.get("start_step") or 0
            kept_b = [b for b in h.batches if b["step"] <= begin]
            kept_e = [e for e in h.epochs if e["step"] <= begin]
            h.rewound += len(h.batches) - len(kept_b) + len(h.epochs) - len(kept_e)
            h.batches, h.epochs = kept_b, kept_e
            if h.started is None:
                h.started = record.get("utc_ms")
                h.provenance = record.get("provenance")
                h.preset = record.get("preset")
                h.run_id = record.get("run_id")
            h.resumes += kind == "resume"
            h.state, h.ended, h.failure = "running", None, None
            h.markers.append(record)
        elif kind == "batch":
            h.batches.append(record)
        elif kind == "epoch":
            h.epochs.append(record)
            last_epoch_at = index
        elif kind == "end":
            h.state, h.ended = record["state"], record
            h.failure = record.get("message") if record["state"] == "failed" else None
            h.markers.append(record)
        elif kind in ("checkpoint", "evaluation"):
            if kind == "evaluation":
                evaluation_at = index
            h.markers.append(record)
    h.run_id = h.run_id or next((r.get("run_id") for r in records if r.get("run_id")), None)
    if h.state == "running" and not _writer_alive(run_dir):
        h.state = "unknown"
    steps = [r["step"] for r in h.batches + h.epochs]
    if h.ended is not None and isinstance(h.ended.get("step"), int):
        steps.append(h.ended["step"])
    h.steps = max(steps, default=0)
    losses = [e["val"]["loss"] for e in h.epochs
              if isinstance(e.get("val"), dict) and isinstance(e["val"].get("loss"), float)]
    h.best_val_loss = min(losses, default=None)
    if evaluation_at > last_epoch_at:
        verdicts = records[evaluation_at].get("verdicts")
        h.verdicts = dict(verdicts) if isinstance(verdicts, dict) else {}
        h.verdict_source = "evaluation"
    elif h.epochs:
        heads = (h.epochs[-1].get("val") or {}).get("heads") or {}
        h.verdicts = {head: (heads.get(head) or {}).get("verdict") for head in CLASS_HEADS
                      if head in heads}
        h.verdict_source = "validation"
    return h


# -- all runs -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunSummary:
    """One run as ``runs list`` shows it. ``problem`` says why its history could not be read
    (or that it has none); the other fields are then what its checkpoint says, if anything."""

    run_id: str
    model: str
    started: int | None
    provenance: str | None
    preset: str | None
    steps: int | None
    epochs: int | None
    best_val_loss: float | None
    verdicts: dict[str, str | None]
    verdict_source: str | None
    state: str
    problem: str | None = None

    @property
    def verdict(self) -> str | None:
        """The verdicts in a few words: which heads show an edge, else the best verdict."""
        from .scoring import EDGE, NO_EDGE, SMALL_EDGE

        given = {h: v for h, v in self.verdicts.items() if v}
        if not given:
            return None
        for verdict, short in ((EDGE, "edge"), (SMALL_EDGE, "edge too small")):
            heads = [h for h, v in given.items() if v == verdict]
            if heads:
                return f"{short}: {', '.join(heads)}"
        return NO_EDGE if all(v == NO_EDGE for v in given.values()) else \
            "; ".join(f"{h} {v}" for h, v in given.items())

    def to_dict(self) -> dict:
        return dict(asdict(self), verdict=self.verdict)


def _from_checkpoint(store, run_id: str) -> dict:
    """What a run's latest checkpoint says, for a run without a readable history."""
    try:
        meta = read_meta(store.snapshot_dir(run_id))
    except CheckpointError:
        return {}
    metrics = meta.get("metrics") or {}
    best = metrics.get("best_val_loss")
    return {"provenance": meta.get("provenance"), "preset": preset_of(meta.get("config")),
            "steps": meta.get("step"), "epochs": meta.get("epoch"),
            "best_val_loss": best if isinstance(best, float) else None}


def _started_of(run_id: str) -> int | None:
    import datetime as dt

    try:
        stamp = dt.datetime.strptime(run_id[:19], "%Y%m%d-%H%M%S-%f").replace(tzinfo=dt.UTC)
    except ValueError:
        return None
    return int(stamp.timestamp() * 1000)


def summarize(store, run_id: str) -> RunSummary:
    """One run of ``store`` (a ``CheckpointStore``) as a ``RunSummary``; never raises for a
    damaged or missing history (``problem`` says what is wrong)."""
    run_dir = store.run_dir(run_id)
    try:
        h = read_history(run_dir)
    except HistoryError as exc:
        problem = str(exc) if has_history(run_dir) else \
            "no history (saved before run histories were kept, or not by batch training)"
        known = _from_checkpoint(store, run_id)
        return RunSummary(run_id=run_id, model=store.model, started=_started_of(run_id),
                          provenance=known.get("provenance"), preset=known.get("preset"),
                          steps=known.get("steps"), epochs=known.get("epochs"),
                          best_val_loss=known.get("best_val_loss"), verdicts={},
                          verdict_source=None, state="unknown", problem=problem)
    return RunSummary(run_id=run_id, model=store.model,
                      started=h.started if h.started is not None else _started_of(run_id),
                      provenance=h.provenance, preset=h.preset, steps=h.steps,
                      epochs=len(h.epochs), best_val_loss=h.best_val_loss,
                      verdicts=h.verdicts, verdict_source=h.verdict_source, state=h.state)


def list_runs(store) -> list[RunSummary]:
    """Every run of ``store`` (a ``CheckpointStore``), newest first; a run whose history is
    damaged or missing shows why (``RunSummary.problem``) and never stops the listing."""
    return [summarize(store, run_id) for run_id in reversed(store.run_ids())]


# -- export ---------------------------------------------------------------------------------------
def _put(out: dict, name: str, value: Any) -> None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        out[name] = value


def _split_scalars(out: dict, prefix: str, split: dict, *, scores: bool) -> None:
    _put(out, f"{prefix}/loss", split.get("loss"))
    for head, loss in (split.get("head_losses") or {}).items():
        _put(out, f"{prefix}/loss/{head}", loss)
    for head, score in (split.get("heads") or {}).items():
        _put(out, f"{prefix}/accuracy/{head}", score.get("accuracy"))
        if scores:
            _put(out, f"{prefix}/baseline/{head}", score.get("best_baseline_accuracy"))
            _put(out, f"{prefix}/margin/{head}", score.get("margin"))
            interval = score.get("interval")
            if isinstance(interval, list) and len(interval) == 2:
                _put(out, f"{prefix}/margin_low/{head}", interval[0])
                _put(out, f"{prefix}/margin_high/{head}", interval[1])
            _put(out, f"{prefix}/direction_accuracy/{head}", score.get("direction_accuracy"))


def scalars(record: dict) -> dict[str, float]:
    """A batch or epoch record's numbers by TensorBoard tag: ``train/loss``,
    ``train/loss/<head>``, ``train/accuracy/<head>``, ``lr``, ``grad_norm``,
    ``samples_per_s``, ``memory/allocated_mb`` (``reserved_mb``, ``peak_mb``) for a batch;
    ``epoch/train/...``, ``val/loss``, ``val/loss/<head>``, ``val/accuracy/<head>``,
    ``val/baseline/<head>`` (the best baseline's accuracy), ``val/margin/<head>``,
    ``val/margin_low/<head>``, ``val/margin_high/<head>``, ``epoch/seconds`` for an epoch.
    A metric without data has no tag."""
    out: dict[str, float] = {}
    if record.get("type") == "batch":
        _put(out, "train/loss", record.get("loss"))
        for head, loss in (record.get("head_losses") or {}).items():
            _put(out, f"train/loss/{head}", loss)
        for head, acc in (record.get("accuracy") or {}).items():
            _put(out, f"train/accuracy/{head}", acc)
        for name in ("lr", "grad_norm", "samples_per_s"):
            _put(out, name, record.get(name))
        memory = record.get("memory") or {}
        for name in ("allocated_mb", "reserved_mb", "peak_mb"):
            _put(out, f"memory/{name}", memory.get(name))
    elif record.get("type") == "epoch":
        _split_scalars(out, "epoch/train", record.get("train") or {}, scores=False)
        _split_scalars(out, "val", record.get("val") or {}, scores=True)
        _put(out, "epoch/seconds", record.get("elapsed_s"))
    return out


def texts(record: dict) -> dict[str, str]:
    """An epoch record's words by column: ``val/best_baseline/<head>``, ``val/verdict/<head>``."""
    out: dict[str, str] = {}
    if record.get("type") == "epoch":
        for head, score in ((record.get("val") or {}).get("heads") or {}).items():
            for name in ("best_baseline", "verdict"):
                if isinstance(score.get(name), str):
                    out[f"val/{name}/{head}"] = score[name]
    return out


CSV_FIXED = ("kind", "step", "epoch", "batch", "wall_s", "utc_ms")


def _ordered(history: History) -> list[dict]:
    """Batches and epochs by step, an epoch after the batches of its last step."""
    rows = [(r["step"], 0, i, r) for i, r in enumerate(history.batches)]
    rows += [(r["step"], 1, i, r) for i, r in enumerate(history.epochs)]
    return [r for *_, r in sorted(rows, key=lambda t: t[:3])]


def csv_columns(history: History) -> list[str]:
    names: dict[str, None] = {}
    for record in _ordered(history):
        names.update(dict.fromkeys(scalars(record)))
        names.update(dict.fromkeys(texts(record)))
    return list(CSV_FIXED) + list(names)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same float
    return str(value)


def export_csv(history: History, path: str | os.PathLike) -> int:
    """One row per recorded batch and epoch (``kind``), a column per metric (``scalars``,
    ``texts``); written atomically. Returns the rows written."""
    import csv

    columns = csv_columns(history)
    records = _ordered(history)
    with atomic_writer(Path(path), "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for record in records:
            values = dict(scalars(record), **texts(record), kind=record["type"],
                          step=record.get("step"), epoch=record.get("epoch"),
                          batch=record.get("batch"), wall_s=record.get("wall_s"),
                          utc_ms=record.get("utc_ms"))
            writer.writerow([_cell(values.get(c)) for c in columns])
    return len(records)


TENSORBOARD_SUFFIX = ".workstation"


def export_tensorboard(history: History, folder: str | os.PathLike) -> Path:
    """TensorBoard event files of ``history`` in ``folder/<run id>/``: every ``scalars`` tag
    at its record's step, with the recorded UTC time as the event's wall time. A previous
    export of the run there is replaced (only files this function names); returns the file.
    Imports tensorboardX (and with it torch)."""
    import secrets
    import shutil

    try:
        from tensorboardX import SummaryWriter
    except ImportError as exc:
        raise WorkstationError(f"TensorBoard export needs tensorboardX (pip install "
                               f"'tensorboardX>=2.6'): {exc}") from None

    run = history.run_id or history.path.parent.name
    target = Path(folder) / run
    target.mkdir(parents=True, exist_ok=True)
    tmp = target / f".export-{secrets.token_hex(4)}"
    try:
        writer = SummaryWriter(logdir=str(tmp), filename_suffix=TENSORBOARD_SUFFIX,
                               flush_secs=3600, max_queue=1 << 30)
        try:
            for record in _ordered(history):
                walltime = record["utc_ms"] / 1000 if isinstance(record.get("utc_ms"), int) \
                    else None
                for tag, value in scalars(record).items():
                    writer.add_scalar(tag, value, global_step=record["step"], walltime=walltime)
        finally:
            writer.close()
        (written,) = list(tmp.iterdir())
        with open(written, "rb+") as fh:
            os.fsync(fh.fileno())
        for old in _exports(target):
            old.unlink()
        final = target / written.name
        os.replace(written, final)
        fsync_dir(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _exports(folder: Path) -> Iterable[Path]:
    with contextlib.suppress(OSError):
        yield from [p for p in folder.iterdir() if p.is_file()
                    and p.name.startswith("events.out.tfevents.")
                    and p.name.endswith(TENSORBOARD_SUFFIX)]
