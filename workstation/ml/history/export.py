"""A recorded run history exported: its numbers by TensorBoard tag (``scalars``), its words
(``texts``), a CSV file (``export_csv``) and TensorBoard event files (``export_tensorboard``)."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...atomic import atomic_writer, fsync_dir
from ...errors import WorkstationError
from .reader import History


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
