"""Walk-forward evaluation: does a model have an edge on spans it was never tuned on?

The series is cut into ``folds + 1`` blocks of equal time (``folds``). Fold ``k`` trains on
everything before block ``k + 1`` (an expanding window) and is tested on block ``k + 1``:

- between the training span and the test span lies an embargo of ``seq_len`` + the longest
  look-ahead of any target: the market heads' horizon, or the longest mark of the trader's
  heads (``hindsight.label_reach``; capped at ``EvaluationConfig.max_embargo``), so no
  training window or training target reaches into the test span (a purge of the training
  targets that would look into it);
- inside the training span the trainer keeps its own validation slice (the end of the span,
  after a gap of the same size) and the epoch with the lowest validation loss is the one
  tested (the loss of ``primary`` when it is given, else ``epoch_choice``'s default: the
  trader's heads where they have marks): model and epoch are chosen on validation, never on
  the test span;
- the baselines (``baselines``) are fitted on the whole training span, the lagged ones (up
  to ``seq_len`` lags) after choosing their lag count on the span's own validation slice;
- each fold trains ``EvaluationConfig.seeds`` models (seeds ``seed``, ``seed + 1``, ...);
  each head is scored on the test span beside the baselines (``scoring``): accuracy and
  margin over the best baseline as means over the seeds, a 95 % interval from a stationary
  bootstrap of the days (block length from the data) that also draws one seed per resample,
  and the verdict. The backtest (``on_test_predictions``) trades the first seed's model;
- the position head's entries and exits are scored as events on the test span
  (``entry_events``: recall, precision and timing within ``EVENT_WINDOW`` candles, beside
  random events at the model's rate, of the first seed's model); given the positions of the
  trader's blind marks alone (``blind_position``, ``blind_marks``), also against those, the
  same way (``blind_marks.ScoredTradeEvents.blind``: None where no blind mark labels the
  span).

The summary pools the test spans of every fold (bootstrapping their days together; the
entries and exits too, ``EvaluationFinished.trade_events``). One
verdict is the run's primary one, unadjusted: the pooled verdict of ``primary`` (default
position when the trader's marks label any candle, else candle). Every other verdict (the other
heads pooled, every head per fold) is adjusted together with Holm's step-down method on the
bootstrap p-values (``scoring.holm_adjusted``). ``EvaluationFinished.labels`` says how far the
trader's labels read ahead and whether they look like hindsight (``hindsight``).
``evaluate`` reports ``FoldScored`` per fold and ``EvaluationFinished`` at the end through
``on_event``, with the trainer's own events of each fold in between.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..errors import WorkstationError
from .baselines import fit_baselines
from .blind_marks import blind_tallies, pooled_blind_events, with_blind
from .config import EvaluationConfig, TradingTransformerConfig, TrainConfig
from .dataset import TrainingData
from .entry_events import EventTally, span_tallies, trade_events
from .events import EvaluationFinished, FoldScored, HeadScore, TradeEvents
from .folds import Fold, run_fold, walk_forward_folds
from .hindsight import label_reach, marks_longer
from .parallel_folds import tested_in_parallel
from .ray_folds import tested_on_ray
from .scoring import MarginBootstrap, day_blocks, holm_adjusted, scored_head
from .split import reviewed_stretch
from .targets import CLASS_HEADS, MASKED

_Scored = tuple[HeadScore, MarginBootstrap | None]


def evaluate(data: TrainingData, model_config: TradingTransformerConfig,
             train_config: TrainConfig, *, folds: int, device: str = "cpu",
             provenance: str, on_event: Callable[[object], None],
             stop: threading.Event | None = None,
             on_test_predictions: Callable[[Fold, np.ndarray, np.ndarray], None] | None = None,
             workers: int = 1, on_ray: bool = False,
             settings: EvaluationConfig | None = None,
             blind_position: np.ndarray | None = None,
             on_held_out: Callable[[Fold, dict[str, np.ndarray]], None] | None = None
             ) -> EvaluationFinished:
    """Train and test every fold (see the module docstring); imports torch.
    ``on_test_predictions(fold, classes, confidence)`` receives each fold's predictions on
    its test span (``[C, test candles]`` per class head, ``CLASS_HEADS`` order): what a
    backtest of the walk-forward needs. ``workers`` > 1 trains the folds in that many
    processes at once (``parallel_folds``); ``on_ray`` trains each as a task on the Ray cluster
    this process is connected to (``ray_folds``); the results are the same, fold by fold.
    ``settings``: seeds per fold, embargo cap and primary head (default ``EvaluationConfig()``).
    ``blind_position``: the trader's blind marks' position per candle of ``data``
    (``blind_marks.blind_position``); with it every ``trade_events`` is a
    ``blind_marks.ScoredTradeEvents``, scored against them too. ``on_held_out(fold,
    probabilities)`` receives the trader heads' probability of every class on each fold's
    test span, the mean over the fold's seeds (head name to ``[classes, test candles]``):
    what ``annotations.suspects`` reads."""
    stop = stop or threading.Event()
    settings = settings or EvaluationConfig()
    if blind_position is not None and len(blind_position) != len(data):
        raise WorkstationError(f"{len(blind_position)} blind positions for {len(data)} "
                               "candles: they must be one per candle")
    labels = label_reach(data.targets)
    plan = walk_forward_folds(len(data), folds, model_config.seq_len, data.target_spec.horizon,
                              longest_mark=max((r.longest for r in labels), default=0),
                              over_cap=marks_longer(data.targets, settings.max_embargo),
                              max_embargo=settings.max_embargo,
                              within=reviewed_stretch(data.targets))
    if settings.primary is not None:  # each fold keeps the epoch best at the primary head
        train_config = replace(train_config, choose_epoch_by=settings.primary)
    configs = [replace(train_config, seed=train_config.seed + s) for s in range(settings.seeds)]
    jobs = [(fold, config) for fold in plan for config in configs]
    started = time.monotonic()
    if on_ray:
        tested = tested_on_ray(data, model_config, jobs, folds=len(plan), device=device,
                               provenance=provenance, on_event=on_event, stop=stop)
    elif workers > 1:
        tested = tested_in_parallel(data, model_config, jobs, folds=len(plan), device=device,
                                    provenance=provenance, on_event=on_event, stop=stop,
                                    workers=workers)
    else:
        tested = (run_fold(data, model_config, config, fold, len(plan), device=device,
                           provenance=provenance, on_event=on_event, stop=stop)
                  for fold, config in jobs)
    results = iter(tested)
    marked = bool((data.targets.position != MASKED).any())  # entries and exits to score
    pooled: dict[str, list] = {head: [] for head in CLASS_HEADS}
    per_fold: list[dict[str, _Scored]] = []
    spans: list[dict[str, EventTally]] = []
    blind_spans: list[dict[str, EventTally] | None] = []
    fold_events: list[TradeEvents] = []
    for fold in plan:
        runs = [next(results) for _ in configs]
        predicted = np.stack([run[0] for run in runs])  # [seeds, heads, candles]
        if on_test_predictions is not None:
            on_test_predictions(fold, runs[0][0], runs[0][1])
        if on_held_out is not None:
            on_held_out(fold, {head: np.mean([run[3][head] for run in runs], axis=0)
                               for head in runs[0][3]})
        fitted = fit_baselines(data, fold.train, max_lags=model_config.seq_len,
                               gap=fold.embargo)
        days = day_blocks(data.ts[slice(*fold.test)])
        scored = {}
        for h, head in enumerate(CLASS_HEADS):
            truth = data.targets.classes(head)[slice(*fold.test)]
            baselines = fitted.predict(head, *fold.test)
            scored[head] = scored_head(head, truth, predicted[:, h], baselines, days,
                                       seed=train_config.seed + fold.index)
            pooled[head].append((fold.test, _compact(predicted[:, h]),
                                 {name: _compact(b) for name, b in baselines.items()}))
        per_fold.append(scored)
        positions = data.targets.position[slice(*fold.test)]
        predicted_positions = predicted[:, CLASS_HEADS.index("position")]
        fold_seed = train_config.seed + fold.index
        spans.append(span_tallies(positions, predicted_positions, data.ts[slice(*fold.test)],
                                  seed=fold_seed))
        fold_events.append(trade_events(spans[-1:], fold_seed))
        if blind_position is not None:
            blind_spans.append(blind_tallies(blind_position[slice(*fold.test)],
                                             predicted_positions, data.ts[slice(*fold.test)],
                                             seed=fold_seed))
            fold_events[-1] = with_blind(fold_events[-1],
                                         pooled_blind_events(blind_spans[-1:], fold_seed))
        epochs = tuple(run[2] for run in runs)
        on_event(FoldScored(fold.index, folds, fold.train, fold.test, fold.embargo, epochs[0],
                            {head: score for head, (score, _) in scored.items()},
                            fold.words, epochs, fitted.lags,
                            fold_events[-1] if marked else None))
    primary = settings.primary or ("position" if marked else "candle")
    summary, fold_heads = _adjusted(
        {head: _pooled_score(data, head, parts, train_config.seed)
         for head, parts in pooled.items()},
        per_fold, primary)
    pooled_events = trade_events(spans, train_config.seed) if marked else None
    if pooled_events is not None and blind_position is not None:
        pooled_events = with_blind(pooled_events,
                                   pooled_blind_events(blind_spans, train_config.seed))
    finished = EvaluationFinished(
        folds, summary, time.monotonic() - started, primary, fold_heads, labels,
        pooled_events, tuple(fold_events) if marked else ())
    on_event(finished)
    return finished


def _adjusted(summary: dict[str, _Scored], per_fold: list[dict[str, _Scored]], primary: str
              ) -> tuple[dict[str, HeadScore], tuple[dict[str, HeadScore], ...]]:
    """The pooled and per-fold scores, the primary head's pooled one labelled "primary" and
    every other one with a bootstrap adjusted together by Holm's method."""
    tables = [summary, *per_fold]
    family = {(t, head): (score, boot) for t, table in enumerate(tables)
              for head, (score, boot) in table.items()
              if boot is not None and (t, head) != (0, primary)}
    adjusted = dict(zip(family, holm_adjusted(list(family.values())), strict=True))
    out = [{head: adjusted.get((t, head), score) for head, (score, _) in table.items()}
           for t, table in enumerate(tables)]
    if summary[primary][1] is not None:
        out[0][primary] = replace(out[0][primary], multiplicity="primary")
    return out[0], tuple(out[1:])


def _compact(classes: np.ndarray) -> np.ndarray:
    """Predicted classes (-1 to 2) as int8 while they wait to be pooled: every fold's test
    span is kept, so they take an eighth of the memory."""
    return np.asarray(classes).astype(np.int8)


def _pooled_score(data: TrainingData, head: str, parts: list, seed: int) -> _Scored:
    """One score over every fold's test span (baselines missing in a fold count as wrong);
    ``parts``: each fold's test span, predicted classes and baselines' classes."""
    names = sorted({name for _, _, baselines in parts for name in baselines})
    truth = np.concatenate([data.targets.classes(head)[slice(*span)] for span, _, _ in parts])
    predicted = np.concatenate([p for _, p, _ in parts], axis=1)
    days = np.concatenate([day_blocks(data.ts[slice(*span)]) for span, _, _ in parts])
    baselines = {name: np.concatenate([b.get(name, np.full(span[1] - span[0], MASKED, np.int8))
                                       for span, _, b in parts]) for name in names}
    return scored_head(head, truth, predicted, baselines, days, seed=seed)
