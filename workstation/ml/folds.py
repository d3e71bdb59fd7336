"""Walk-forward folds: where each fold's spans lie (``walk_forward_folds``) and training and
testing one fold (``run_fold``), which ``evaluation`` does in turn and ``parallel_folds`` in
worker processes; ``evaluation``'s docstring gives the procedure. ``run_fold`` imports torch.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..errors import WorkstationError
from .config import DEFAULT_MAX_EMBARGO, TradingTransformerConfig, TrainConfig
from .dataset import DeviceSeries, TrainingData
from .events import Failed, FoldStarted
from .split import embargo_of
from .targets import CLASS_HEADS, CLASSES, TRADER_HEADS

MIN_FOLDS = 2


class EvaluationStopped(WorkstationError):
    """``stop`` was set: the evaluation ended before it scored every fold."""


@dataclass(frozen=True)
class Fold:
    """Candle ranges ``[start, stop)`` of fold ``index``: it trains (and validates inside)
    ``train`` and is tested on ``test``; ``embargo`` candles lie between them."""

    index: int
    train: tuple[int, int]
    test: tuple[int, int]
    embargo: int
    words: str = ""  # what set the embargo


def walk_forward_folds(n: int, folds: int, seq_len: int, horizon: int, *,
                       longest_mark: int = 0, over_cap: int = 0,
                       max_embargo: int = DEFAULT_MAX_EMBARGO,
                       within: tuple[int, int] | None = None) -> list[Fold]:
    """The folds of an ``n``-candle series (see ``evaluation``'s docstring); the embargo is
    ``embargo_of``'s. With ``within`` (the reviewed stretch, when there are marks) the test
    blocks cut that stretch, not the whole series: every fold trains on the trader's marks
    before its test block and is tested on marks (every candle before the stretch trains,
    the candles after it are not tested)."""
    if folds < MIN_FOLDS:
        raise WorkstationError(f"walk-forward evaluation needs at least {MIN_FOLDS} folds, got "
                               f"{folds}")
    embargo, words = embargo_of(seq_len, horizon, longest_mark, over_cap, max_embargo)
    first, last = within if within is not None else (0, n)
    edges = np.linspace(first, last, folds + 2).astype(int)
    out = []
    for k in range(folds):
        train_stop = int(edges[k + 1]) - embargo
        test = (int(edges[k + 1]), int(edges[k + 2]))
        if train_stop < 3 * seq_len + 2 * embargo or test[1] - test[0] < seq_len:
            where = (f"{n} candles are" if within is None else
                     f"the {last - first:,} candles of the reviewed stretch (from candle "
                     f"{first:,} on) are")
            raise WorkstationError(
                f"{where} too few for {folds} folds with windows of {seq_len}: each "
                f"fold needs a training span of at least {3 * seq_len + 2 * embargo} candles "
                f"and a test span of {seq_len}; use fewer folds or more candles")
        out.append(Fold(k, (0, train_stop), test, embargo, words))
    return out


def _subset(data: TrainingData, start: int, stop: int) -> TrainingData:
    return replace(data, features=data.features[start:stop],
                   targets=data.targets.slice(start, stop), ts=data.ts[start:stop])


def run_fold(data: TrainingData, model_config: TradingTransformerConfig,
              train_config: TrainConfig, fold: Fold, folds: int, *, device: str,
              provenance: str, on_event: Callable[[object], None], stop
              ) -> tuple[np.ndarray, np.ndarray, int, dict[str, np.ndarray]]:
    """Train fold ``fold`` on its training span (with ``train_config.seed``) and predict its
    test span: the predicted classes and their confidence (``[C, test candles]``), the
    epoch tested and the trader heads' probability of every class (head name to
    ``[classes, test candles]``)."""
    import torch

    from .checkpoints import CheckpointStore, apply_weights
    from .device import resolve_device
    from .model import TradingTransformer
    from .trainer import Trainer, predict_span

    device_ = resolve_device(device)
    with tempfile.TemporaryDirectory(prefix="workstation-fold-") as tmp:
        store = CheckpointStore(tmp)
        # a fold is its own held-out test: no train-until inside it, a fold whose training
        # span holds no trade trains the market heads (it says so) rather than fail, and its
        # validation is for choosing the epoch: the baselines are fitted for the test span
        trainer = Trainer(model_config, replace(train_config, train_until=None),
                          _subset(data, *fold.train), device_, strict_marks=False,
                          val_baselines=False,
                          on_event=on_event, stop=stop, checkpoints=store,
                          provenance=f"{provenance} (fold {fold.index + 1}/{folds}, seed "
                                     f"{train_config.seed})")
        on_event(FoldStarted(fold.index, folds, trainer.run_id))
        final = trainer.run()
        if isinstance(final, Failed):
            raise WorkstationError(f"fold {fold.index + 1} failed: {final.message}")
        if final.status != "completed":
            raise EvaluationStopped(f"evaluation stopped in fold {fold.index + 1} of "
                                    f"{folds}; the folds scored so far are above")
        loaded = store.load(trainer.run_id, "best")
    model = TradingTransformer(model_config).to(device_)
    apply_weights(model, loaded)
    model.eval()
    candles = fold.test[1] - fold.test[0]
    confidence = np.zeros((len(CLASS_HEADS), candles))
    probabilities = {head: np.zeros((len(CLASSES[head]), candles)) for head in TRADER_HEADS}
    with torch.no_grad():
        predicted = predict_span(model, DeviceSeries(data, device_), fold.test,
                                 model_config.seq_len, train_config.batch_size, device_,
                                 confidence=confidence, probabilities=probabilities)
    return predicted, confidence, int(loaded.meta.get("epoch") or 0), probabilities
