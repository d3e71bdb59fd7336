"""A recorded run history exported: its numbers by TensorBoard tag (``scalars``), its words
(``texts``), a CSV file (``export_csv``) and TensorBoard event files (``export_tensorboard``)."""

from __future__ import annotations

import contextlib
import math
import os
import struct
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ...atomic import atomic_write_bytes, atomic_writer, fsync_dir
from ...errors import WorkstationError
from ...storage import DiskFullError
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
    at its record's step, with the recorded UTC time as the event's wall time. The file is
    made in memory and written atomically, then a previous export of the run there is
    removed (only files this function names): a full disk is a ``DiskFullError`` that leaves
    the previous export as it was. Returns the file. Imports tensorboardX (and with it
    torch)."""
    import socket
    import time

    try:
        from tensorboardX.proto import event_pb2
        from tensorboardX.record_writer import masked_crc32c
        from tensorboardX.summary import scalar
    except ImportError as exc:
        raise WorkstationError(f"TensorBoard export needs tensorboardX (pip install "
                               f"'tensorboardX>=2.6'): {exc}") from None

    run = history.run_id or history.path.parent.name
    target = Path(folder) / run
    target.mkdir(parents=True, exist_ok=True)
    now = time.time()
    events = [event_pb2.Event(wall_time=now, file_version="brain.Event:2")]
    for record in _ordered(history):
        walltime = record["utc_ms"] / 1000 if isinstance(record.get("utc_ms"), int) else now
        for tag, value in scalars(record).items():
            events.append(event_pb2.Event(wall_time=walltime, step=int(record["step"]),
                                          summary=scalar(tag, value)))
    final = target / (f"events.out.tfevents.{int(now)}.{socket.gethostname()}"
                      f"{TENSORBOARD_SUFFIX}")
    old = [p for p in _exports(target) if p.name != final.name]
    try:
        atomic_write_bytes(final, b"".join(_record(e.SerializeToString(), masked_crc32c)
                                           for e in events))
    except DiskFullError as exc:
        raise DiskFullError(target, "an earlier export there is as it was",
                            doing=f"cannot write TensorBoard files to {target}") from exc
    for path in old:
        path.unlink()
    fsync_dir(target)
    return final


def _record(data: bytes, masked_crc32c: Callable[[bytes], int]) -> bytes:
    """One TFRecord: the length (u64), its masked CRC-32C (u32), the data, the data's."""
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + data
            + struct.pack("<I", masked_crc32c(data)))


def _exports(folder: Path) -> Iterable[Path]:
    with contextlib.suppress(OSError):
        yield from [p for p in folder.iterdir() if p.is_file()
                    and p.name.startswith("events.out.tfevents.")
                    and p.name.endswith(TENSORBOARD_SUFFIX)]
