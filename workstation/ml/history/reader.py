"""Reading a run history (``read_history``) and the curves' points of it (``history_points``).

A torn last line (no newline, not JSON) is ignored without an error; any other bad line is a
``HistoryError`` naming the file and the line. When a run was resumed from a checkpoint older
than its last records (killed after it), the records past the resume step are dropped from
the curves (counted in ``History.rewound``), so steps increase and no epoch appears twice.
The records are those of ``format``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ...locking import FileLock, LockedError
from ..checkpoints import LOCKS
from ..curve_points import BatchPoint, EpochPoint
from ..targets import CLASS_HEADS
from .format import HistoryError, history_path, parse_line

_ENDINGS = {"completed", "stopped", "failed"}


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
    """What a run's history file says (see ``format`` for the records' fields).

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
        record = parse_line(line)
        if record is None:
            raise HistoryError(path, "not a history record (not a JSON object with a "
                                     "'type'); the file is damaged here", number)
        problem = _problem(record)
        if problem:
            raise HistoryError(path, problem, number)
        records.append(record)
    torn = False
    if tail.strip():
        record = parse_line(tail)
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


# -- the curves' points -------------------------------------------------------------------------
def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def history_points(history: History) -> tuple[list[BatchPoint], list[EpochPoint], float]:
    """The points of a run's recorded history, and the wall time it has recorded in all
    (where a resumed run's curves continue)."""
    batches = []
    for r in history.batches:
        memory = r.get("memory") or {}
        accuracy = r.get("accuracy") or {}
        batches.append(BatchPoint(
            r["step"], _number(r.get("wall_s")), _number(r.get("loss")),
            {h: _number(accuracy.get(h)) for h in CLASS_HEADS}, _number(r.get("lr")),
            _number(r.get("grad_norm")), _number(r.get("samples_per_s")),
            _number(memory.get("allocated_mb")), _number(memory.get("reserved_mb")),
            _number(memory.get("peak_mb"))))
    epochs = []
    for r in history.epochs:
        val = r.get("val") or {}
        heads = {h: s for h, s in (val.get("heads") or {}).items() if isinstance(s, dict)}
        epochs.append(EpochPoint(
            r["step"], _number(r.get("wall_s")), _number(val.get("loss")),
            {h: _number((heads.get(h) or {}).get("accuracy")) for h in CLASS_HEADS},
            {h: (s.get("best_baseline"), _number(s.get("best_baseline_accuracy")))
             for h, s in heads.items()},
            {h: _number((s.get("baselines") or {}).get("majority")) for h, s in heads.items()}))
    walls = [w for w in (_number(r.get("wall_s")) for r in
                         [*history.batches, *history.epochs, *history.markers])
             if w is not None]
    return batches, epochs, max(walls, default=0.0)
