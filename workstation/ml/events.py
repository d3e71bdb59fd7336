"""What training and live mode report, as typed events (plain data, safe to pass between
threads; importing them does not import torch, so the window dispatches on their types).

A run emits ``RunStarted``, then ``BatchEnd`` every ``log_every`` steps, ``EpochEnd`` and
``CheckpointSaved`` after each epoch, and ends with exactly one ``Finished`` or ``Failed``.
Live mode (``live.LiveSession``) emits ``LiveReady``, a ``LiveStep`` per processed candle,
``LiveSaved`` if it trained, and ends with ``LiveEnded`` or ``Failed``. A metric that has no
data is ``None`` (shown as "—"), never 0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .device import MemoryStats


@dataclass(frozen=True)
class Event:
    run_id: str

    @property
    def kind(self) -> str:
        return type(self).__name__

    def to_dict(self) -> dict:
        """JSON-able, with ``event`` naming the type."""
        return {"event": self.kind, **asdict(self)}


@dataclass(frozen=True)
class SplitMetrics:
    """Metrics over some batches of one split. Accuracies stand beside their majority-class
    baselines (the share of the split's most common class); per-head losses are keyed by
    ``workstation.ml.targets.HEADS``."""

    loss: float | None
    head_losses: dict[str, float | None]
    candle_acc: float | None
    candle_baseline: float | None
    trend_acc: float | None
    trend_baseline: float | None
    action_acc: float | None
    action_baseline: float | None
    examples: int  # positions with a candle target


@dataclass(frozen=True)
class RunStarted(Event):
    provenance: str
    device: str
    model_config: dict
    train_config: dict
    features: dict
    targets: dict
    n_params: int
    candles: int
    train_windows: int
    val_windows: int
    steps_per_epoch: int
    total_steps: int
    start_step: int = 0      # > 0 when resumed
    resumed_from: str | None = None


@dataclass(frozen=True)
class BatchEnd(Event):
    """Training metrics averaged over the ``batches`` steps since the previous BatchEnd."""

    epoch: int            # 0-based
    step: int             # optimizer steps done in the run
    batch: int            # batches done in this epoch
    batches_per_epoch: int
    batches: int
    metrics: SplitMetrics
    lr: float
    grad_norm: float      # mean pre-clipping norm over those steps
    samples_per_s: float  # windows per second
    memory: MemoryStats


@dataclass(frozen=True)
class EpochEnd(Event):
    epoch: int
    step: int
    train: SplitMetrics
    val: SplitMetrics
    lr: float
    elapsed_s: float
    memory: MemoryStats
    is_best: bool         # lowest validation loss so far


@dataclass(frozen=True)
class CheckpointSaved(Event):
    path: str
    step: int
    epoch: int
    reason: str           # "epoch" or "stopped"
    is_best: bool


@dataclass(frozen=True)
class Finished(Event):
    status: str           # "completed" or "stopped"
    step: int
    epoch: int
    elapsed_s: float
    best_val_loss: float | None
    checkpoint: str | None = None

    @property
    def ok(self) -> bool:
        return True


@dataclass(frozen=True)
class Failed(Event):
    """The run stopped on an error. ``nonfinite`` names the heads (and/or ``grad_norm``)
    that went NaN/inf, when that was the cause; ``step``/``batch`` locate it."""

    message: str
    traceback: str
    step: int
    epoch: int
    batch: int | None
    nonfinite: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return False


# -- live mode ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LiveReady:
    """The online learner is built: ``history`` closed candles before the newest unprocessed
    one are all it needs to see."""

    source_run: str | None
    device: str
    train: bool
    history: int
    seq_len: int
    trend_horizon: int


@dataclass(frozen=True)
class LiveStep:
    """One ``online.OnlineStep`` of the learner, on the series of ``generation``."""

    generation: int
    step: Any


@dataclass(frozen=True)
class LiveSaved:
    """The per-candle-trained model was saved as run ``run_id``."""

    run_id: str
    path: str
    steps: int


@dataclass(frozen=True)
class LiveEnded:
    steps: int
    predictions: int
