"""What to review next: stretches of candles the trader has not reviewed, ranked by what a model
trained on the marks would learn most from there (``review_queue``, numpy only), a saved
model's probabilities at every candle (``trader_probabilities``) and both for a saved run on a
series (``rank_review_next``: what ``workstation annotations review-next`` and the Review tab
show); the last two import torch.

The rule. The stretches are blocks of ``length`` candles that are all unreviewed (no mark, no
reviewed region, no blind replay's span) and all predicted. A block's **uncertainty** is the
mean entropy of the position head's probabilities there, divided by log 3 (0: sure of one
class, 1: no idea between flat, long and short). Its **coverage gap** is how rare the regime
the model reads most there is among the trader's regime labels (1 minus that regime's share of
the labelled candles; 1 when no regime is labelled yet). The score is uncertainty times
(1 + coverage gap) / 2, highest first.

Why. A mark where the model is already sure repeats what it knows; one where it cannot tell
flat from long or short is where its decision moves (uncertainty sampling, the plainest
active-learning rule, and one that needs nothing but the model's own output); and a regime the
marks barely cover is where its training data is thinnest, so the same uncertainty counts more
there. Disagreement between seeds or folds would measure the same doubt with several models;
it needs them trained, while every saved run gives its entropy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..annotations.stretches import DEFAULT_LENGTH, whole_blocks
from ..market.candles import Candles
from ..market.series import SeriesKey
from ..timeparse import format_minute
from .checkpoints import CheckpointStore
from .job import manifest_reference, plan_of, training_data
from .targets import MASKED, REGIME_CLASSES

DEFAULT_TOP = 10
RULE = ("uncertainty (the position head's entropy, 0..1) times (1 + the gap in regime "
        "coverage) / 2")


@dataclass(frozen=True)
class ReviewStretch:
    """Candles ``[start, stop)`` (open times ``start_ts`` .. ``last_ts``), its ``uncertainty``,
    the ``regime`` the model reads most there, that regime's ``coverage_gap`` and the
    ``score``."""

    start: int
    stop: int
    start_ts: int
    last_ts: int
    uncertainty: float
    regime: str
    coverage_gap: float
    score: float

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        return (f"{format_minute(self.start_ts)} → {format_minute(self.last_ts)}: uncertainty "
                f"{self.uncertainty:.2f}, reads {self.regime} (coverage gap "
                f"{self.coverage_gap:.2f}), score {self.score:.2f}")


@dataclass(frozen=True)
class ReviewQueue:
    """The ``stretches`` run ``run_id`` ranks first on ``series`` (``candles`` of them, of
    which ``reviewed`` are reviewed), ``length`` candles each."""

    stretches: tuple[ReviewStretch, ...]
    run_id: str
    series: SeriesKey
    candles: int
    reviewed: int
    length: int

    def heading(self) -> str:
        return (f"{self.series.provenance}: {self.candles:,} candles, {self.reviewed:,} "
                f"reviewed; run {self.run_id} ranks the unreviewed stretches of {self.length} "
                f"candles by {RULE}")

    def replay_command(self, stretch: ReviewStretch) -> str:
        """The command that opens ``stretch`` in blind replay at its start."""
        key = self.series
        at = format_minute(stretch.start_ts).replace(" ", "T")
        return (f"workstation --source {key.source} --symbol {key.symbol} --timeframe "
                f"{key.timeframe.name} --replay-from {at}")


def _entropy(p: np.ndarray) -> np.ndarray:
    """Each candle's entropy of ``p`` ``[classes, candles]``, divided by log(classes)."""
    safe = np.clip(p, 1e-12, 1.0)
    return -(p * np.log(safe)).sum(axis=0) / np.log(p.shape[0])


def review_queue(position: np.ndarray, regime: np.ndarray, reviewed: np.ndarray,
                 regime_labels: np.ndarray, ts: np.ndarray, *, length: int = DEFAULT_LENGTH,
                 top: int = DEFAULT_TOP) -> list[ReviewStretch]:
    """The ``top`` stretches to review next (see the module docstring). ``position`` and
    ``regime``: the model's probabilities ``[3, candles]`` (NaN where not predicted);
    ``reviewed``: bool per candle; ``regime_labels``: the trader's regime label codes per candle
    (``MASKED`` where none); ``ts``: each candle's open time."""
    if length < 1 or top < 1:
        raise ValueError(f"length and top must be at least 1, got {length} and {top}")
    predicted = np.isfinite(position).all(axis=0) & np.isfinite(regime).all(axis=0)
    blocks = whole_blocks(predicted & ~np.asarray(reviewed, dtype=bool), length)
    labelled = regime_labels[regime_labels != MASKED]
    share = (np.bincount(labelled, minlength=len(REGIME_CLASSES)) / len(labelled)
             if len(labelled) else np.zeros(len(REGIME_CLASSES)))
    entropy = _entropy(np.where(predicted, position, 1.0 / 3))
    out = []
    for start, stop in blocks:
        uncertainty = float(entropy[start:stop].mean())
        read = int(regime[:, start:stop].mean(axis=1).argmax())
        gap = float(1.0 - share[read])
        out.append(ReviewStretch(start, stop, int(ts[start]), int(ts[stop - 1]), uncertainty,
                                 REGIME_CLASSES[read], gap, uncertainty * (1.0 + gap) / 2))
    out.sort(key=lambda s: (-s.score, s.start))
    return out[:top]


def trader_probabilities(predictor, data, *, should_stop: Callable[[], bool] = bool,
                         batch_size: int = 256) -> dict[str, np.ndarray]:
    """``predictor``'s (``online.Predictor``) probability of every class of the trader's heads
    at every candle of ``data`` (``dataset.TrainingData``) that has half a window of history
    (``trainer.predict_span``), NaN before; imports torch."""
    import torch

    from .dataset import DeviceSeries
    from .trainer import predict_span

    n = len(data)
    first = min(predictor.config.seq_len // 2, n)
    out = {head: np.full((3, n), np.nan) for head in ("position", "regime")}
    span = {head: np.zeros((3, n - first)) for head in out}
    if n - first > 0:
        with torch.no_grad():
            predict_span(predictor.model, DeviceSeries(data, predictor.device), (first, n),
                         predictor.config.seq_len, batch_size, predictor.device,
                         should_stop=should_stop, probabilities=span)
        for head in out:
            out[head][:, first:] = span[head]
    return out


def rank_review_next(run_id: str, store: CheckpointStore, checkpoint: str, manifest: dict,
                     candles: Candles, series: SeriesKey, *, annotations_db: Path | None,
                     reference_source: str | None = None, device: str = "auto",
                     length: int = DEFAULT_LENGTH, top: int = DEFAULT_TOP,
                     should_stop: Callable[[], bool] = bool) -> ReviewQueue:
    """Run ``run_id``'s ranking of the closed ``candles`` of ``series`` (its checkpoint
    ``checkpoint`` of ``store``, its settings from ``manifest``) against the trader's marks
    now: what to review next; imports torch."""
    from .device import resolve_device
    from .online import Predictor

    candles = candles.slice(0, candles.n_closed)
    data, labelled = training_data(plan_of(manifest, device), candles, series,
                                   annotations_db=annotations_db,
                                   reference=manifest_reference(manifest, reference_source))
    predictor = Predictor.from_checkpoint(store.load(run_id, checkpoint),
                                          resolve_device(device))
    probabilities = trader_probabilities(predictor, data, should_stop=should_stop)
    queue = review_queue(probabilities["position"], probabilities["regime"], labelled.reviewed,
                         data.targets.classes("regime"), data.ts, length=length, top=top)
    return ReviewQueue(tuple(queue), run_id, series, len(candles),
                       int(labelled.reviewed.sum()), length)
