"""Walk-forward evaluation: does a model have an edge on spans it was never tuned on?

The series is cut into ``folds + 1`` blocks of equal time. Fold ``k`` trains on everything
before block ``k + 1`` (an expanding window) and is tested on block ``k + 1``:

- between the training span and the test span lies an embargo of ``seq_len`` + the longest
  target horizon candles, so no training window or training target reaches into the test
  span (a purge of the training targets that would look into it);
- inside the training span the trainer keeps its own validation slice (the end of the span,
  after a gap of the same size) and the epoch with the lowest validation loss is the one
  tested: model and epoch are chosen on validation, never on the test span;
- the baselines (``baselines``) are fitted on the whole training span;
- each head is scored on the test span beside them (``scoring``): accuracy, each baseline,
  the margin over the best one with a 95 % day-block bootstrap interval, and the verdict.

The summary pools the test spans of every fold (bootstrapping their days together).
``evaluate`` reports ``FoldScored`` per fold and ``EvaluationFinished`` at the end through
``on_event``, with the trainer's own events of each fold in between.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..errors import WorkstationError
from .baselines import fit_baselines
from .config import TradingTransformerConfig, TrainConfig
from .dataset import TrainingData
from .events import EvaluationFinished, Failed, FoldScored, FoldStarted, HeadScore
from .scoring import day_blocks, score_head
from .targets import CLASS_HEADS, MASKED

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


def walk_forward_folds(n: int, folds: int, seq_len: int, horizon: int) -> list[Fold]:
    """The folds of an ``n``-candle series (see the module docstring)."""
    if folds < MIN_FOLDS:
        raise WorkstationError(f"walk-forward evaluation needs at least {MIN_FOLDS} folds, got "
                               f"{folds}")
    embargo = seq_len + horizon
    edges = np.linspace(0, n, folds + 2).astype(int)
    out = []
    for k in range(folds):
        train_stop = int(edges[k + 1]) - embargo
        test = (int(edges[k + 1]), int(edges[k + 2]))
        if train_stop < 3 * seq_len + 2 * embargo or test[1] - test[0] < seq_len:
            raise WorkstationError(
                f"{n} candles are too few for {folds} folds with windows of {seq_len}: each "
                f"fold needs a training span of at least {3 * seq_len + 2 * embargo} candles "
                f"and a test span of {seq_len}; use fewer folds or more candles")
        out.append(Fold(k, (0, train_stop), test, embargo))
    return out


def _subset(data: TrainingData, start: int, stop: int) -> TrainingData:
    return replace(data, features=data.features[start:stop],
                   targets=data.targets.slice(start, stop), ts=data.ts[start:stop])


def evaluate(data: TrainingData, model_config: TradingTransformerConfig,
             train_config: TrainConfig, *, folds: int, device: str = "cpu",
             provenance: str, on_event: Callable[[object], None],
             stop: threading.Event | None = None,
             on_test_predictions: Callable[[Fold, np.ndarray, np.ndarray], None] | None = None,
             workers: int = 1) -> EvaluationFinished:
    """Train and test every fold (see the module docstring); imports torch.
    ``on_test_predictions(fold, classes, confidence)`` receives each fold's predictions on
    its test span (``[C, test candles]`` per class head, ``CLASS_HEADS`` order): what a
    backtest of the walk-forward needs. ``workers`` > 1 trains the folds in that many
    processes at once (``parallel_folds``); the results are the same, fold by fold."""
    stop = stop or threading.Event()
    plan = walk_forward_folds(len(data), folds, model_config.seq_len, data.target_spec.horizon)
    started = time.monotonic()
    if workers > 1:
        from .parallel_folds import tested_in_parallel

        tested = tested_in_parallel(data, model_config, train_config, plan, device=device,
                                    provenance=provenance, on_event=on_event, stop=stop,
                                    workers=workers)
    else:
        tested = (run_fold(data, model_config, train_config, fold, len(plan), device=device,
                            provenance=provenance, on_event=on_event, stop=stop)
                  for fold in plan)
    pooled: dict[str, list] = {head: [] for head in CLASS_HEADS}
    for fold, (predicted, confidence, epoch) in zip(plan, tested, strict=True):
        if on_test_predictions is not None:
            on_test_predictions(fold, predicted, confidence)
        fitted = fit_baselines(data, fold.train)
        days = day_blocks(data.ts[slice(*fold.test)])
        heads = {}
        for h, head in enumerate(CLASS_HEADS):
            truth = data.targets.classes(head)[slice(*fold.test)]
            baselines = fitted.predict(head, *fold.test)
            heads[head] = score_head(head, truth, predicted[h], baselines, days,
                                     seed=train_config.seed + fold.index)
            pooled[head].append((truth, predicted[h], baselines, days))
        on_event(FoldScored(fold.index, folds, fold.train, fold.test, fold.embargo, epoch,
                            heads))
    summary = {head: _pooled_score(head, parts, train_config.seed)
               for head, parts in pooled.items()}
    finished = EvaluationFinished(folds, summary, time.monotonic() - started)
    on_event(finished)
    return finished


def run_fold(data: TrainingData, model_config: TradingTransformerConfig,
              train_config: TrainConfig, fold: Fold, folds: int, *, device: str,
              provenance: str, on_event: Callable[[object], None], stop
              ) -> tuple[np.ndarray, np.ndarray, int]:
    """Train fold ``fold`` on its training span and predict its test span: the predicted
    classes and their confidence (``[C, test candles]``) and the epoch tested."""
    import torch

    from .checkpoints import CheckpointStore, apply_weights
    from .dataset import DeviceSeries
    from .device import resolve_device
    from .model import TradingTransformer
    from .trainer import Trainer, predict_span

    device_ = resolve_device(device)
    with tempfile.TemporaryDirectory(prefix="workstation-fold-") as tmp:
        store = CheckpointStore(tmp)
        trainer = Trainer(model_config, train_config, _subset(data, *fold.train), device_,
                          on_event=on_event, stop=stop, checkpoints=store,
                          provenance=f"{provenance} (fold {fold.index + 1}/{folds})")
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
    confidence = np.zeros((len(CLASS_HEADS), fold.test[1] - fold.test[0]))
    with torch.no_grad():
        predicted = predict_span(model, DeviceSeries(data, device_), fold.test,
                                 model_config.seq_len, train_config.batch_size, device_,
                                 confidence=confidence)
    return predicted, confidence, int(loaded.meta.get("epoch") or 0)


def _pooled_score(head: str, parts: list, seed: int) -> HeadScore:
    """One score over every fold's test span (baselines missing in a fold count as wrong)."""
    names = sorted({name for _, _, baselines, _ in parts for name in baselines})
    truth = np.concatenate([t for t, _, _, _ in parts])
    predicted = np.concatenate([p for _, p, _, _ in parts])
    days = np.concatenate([d for _, _, _, d in parts])
    baselines = {name: np.concatenate([b.get(name, np.full(len(t), MASKED)) for t, _, b, _ in
                                       parts]) for name in names}
    return score_head(head, truth, predicted, baselines, days, seed=seed)
