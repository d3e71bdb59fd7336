"""The run history's format: one file per run, its records, and ``HistoryError``.

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
  accuracy ``best_baseline_accuracy``, ``margin``, ``interval``, ``verdict`` ..., and for
  the trader heads ``marks`` (the counts of ``MarkCount``) and ``too_few``).
- ``checkpoint``: one per ``CheckpointSaved`` (``step``, ``epoch``, ``reason``, ``is_best``,
  ``path``).
- ``end``: how the run ended: ``state`` "completed", "stopped" or "failed" (then
  ``message``, ``nonfinite``, ``traceback``), ``step``, ``epoch``, ``best_val_loss``.
- ``evaluation``: a walk-forward evaluation's verdict per head (``verdicts``, ``heads``) and
  the position head's entries and exits pooled (``trade_events``: ``entries``, ``exits``, each
  an ``EventMatch``; null without one) and per fold (``fold_trade_events``).

A metric without data is null, never 0. Unknown types are passed over by the reader (a
newer Workstation may write more).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from ...errors import WorkstationError
from ..config import PRESETS
from ..events import (
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

HISTORY_FILE = "history.jsonl"
FORMAT = 1
STATES = ("running", "completed", "stopped", "failed", "unknown")
_PRESET_FIELDS = ("d_model", "n_heads", "n_layers", "d_ff")


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


def parse_line(line: bytes) -> dict | None:
    """A record from one line, or None if it is not one."""
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) and isinstance(value.get("type"), str) else None


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
    return dict(_plain(score), best_baseline_accuracy=_plain(score.best_baseline_accuracy),
                too_few=score.too_few)


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
                    "heads": {h: _head_score(s) for h, s in event.summary.items()},
                    "trade_events": _plain(event.trade_events),
                    "fold_trade_events": _plain(event.fold_trade_events)}
    return None
