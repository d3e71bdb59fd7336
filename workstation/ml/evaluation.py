"""Walk-forward evaluation: does a model have an edge on spans it was never tuned on?

The series is cut into ``folds + 1`` blocks of equal time (``folds``). Fold ``k`` trains on
everything before block ``k + 1`` (an expanding window) and is tested on block ``k + 1``:

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

import threading
import time
from collections.abc import Callable

import numpy as np

from .baselines import fit_baselines
from .config import TradingTransformerConfig, TrainConfig
from .dataset import TrainingData
from .events import EvaluationFinished, FoldScored, HeadScore
from .folds import Fold, run_fold, walk_forward_folds
from .parallel_folds import tested_in_parallel
from .scoring import day_blocks, score_head
from .targets import CLASS_HEADS, MASKED


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


def _pooled_score(head: str, parts: list, seed: int) -> HeadScore:
    """One score over every fold's test span (baselines missing in a fold count as wrong)."""
    names = sorted({name for _, _, baselines, _ in parts for name in baselines})
    truth = np.concatenate([t for t, _, _, _ in parts])
    predicted = np.concatenate([p for _, p, _, _ in parts])
    days = np.concatenate([d for _, _, _, d in parts])
    baselines = {name: np.concatenate([b.get(name, np.full(len(t), MASKED)) for t, _, b, _ in
                                       parts]) for name in names}
    return score_head(head, truth, predicted, baselines, days, seed=seed)
