"""What the training curves draw: one logged batch (``BatchPoint``) or one validation
(``EpochPoint``), made from the trainer's events as they arrive (``batch_point``,
``epoch_point``); ``history.reader.history_points`` makes them from a recorded run.

A value without data is None, never 0. No torch, no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass

from .events import BatchEnd, EpochEnd
from .targets import CLASS_HEADS


@dataclass(frozen=True)
class BatchPoint:
    """One logged batch: the training metrics at ``step``; ``wall``: s of the run's wall time
    (None: unknown). A value without data is None."""

    step: int
    wall: float | None
    loss: float | None
    accuracy: dict[str, float | None]
    lr: float | None
    grad_norm: float | None
    samples_per_s: float | None
    allocated_mb: float | None = None
    reserved_mb: float | None = None
    peak_mb: float | None = None


@dataclass(frozen=True)
class EpochPoint:
    """One validation: its loss and per-head accuracy, each head's best baseline (name,
    accuracy) and majority baseline."""

    step: int
    wall: float | None
    loss: float | None
    accuracy: dict[str, float | None]
    best: dict[str, tuple[str | None, float | None]]
    majority: dict[str, float | None]


def batch_point(event: BatchEnd, wall: float | None) -> BatchPoint:
    m, memory = event.metrics, event.memory
    return BatchPoint(event.step, wall, m.loss, {h: m.accuracy(h) for h in CLASS_HEADS},
                      event.lr, event.grad_norm, event.samples_per_s,
                      *((memory.allocated_mb, memory.reserved_mb, memory.peak_mb)
                        if memory is not None else (None, None, None)))


def epoch_point(event: EpochEnd, wall: float | None) -> EpochPoint:
    v = event.val
    scores = {h: v.heads[h] for h in CLASS_HEADS if h in v.heads}
    return EpochPoint(event.step, wall, v.loss, {h: v.accuracy(h) for h in CLASS_HEADS},
                      {h: (s.best_baseline, s.best_baseline_accuracy) for h, s in scores.items()},
                      {h: s.baselines.get("majority") for h, s in scores.items()})
