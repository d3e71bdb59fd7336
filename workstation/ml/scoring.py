"""Scores that say honestly whether a head has an edge (numpy only).

``score_head`` scores a head's predictions on its targets beside the baselines' predictions
(``baselines``) on exactly the same candles: accuracy, each baseline's accuracy, the margin
over the best of them (the best on the scored span itself, the hardest bar), a 95 % interval
of that margin from a bootstrap that resamples whole UTC days (neighbouring candles are not
independent; a day is the block), and the verdict: "edge" only when the interval excludes 0
and the margin is at least ``MIN_EDGE`` (on a million candles a 0.1 pp margin can be certain
and still worth nothing: that is "edge too small to use").
Market heads also get the direction accuracy (up/down truths predicted up/down), the
position head how it finds the trader's entries and exits.
"""

from __future__ import annotations

import numpy as np

from ..display import NO_DATA, percent, points
from .events import HeadScore, Transitions
from .targets import CLASSES, MARKET_HEADS, MASKED

MIN_EDGE = 0.005        # half a percentage point of accuracy over the best baseline
EDGE, NO_EDGE = "edge", "no edge shown"
SMALL_EDGE = f"edge too small to use (under {MIN_EDGE * 100:.1f} pp)"
VERDICTS = (EDGE, SMALL_EDGE, NO_EDGE)
BOOTSTRAP_SAMPLES = 1000
MIN_DAYS = 5            # fewer days than this give no interval (and so no verdict)
TRANSITION_WINDOW = 5   # candles a predicted change may be off and still find a true one
_DAY_MS = 86_400_000
_DOWN, _UP = 0, 2


def day_blocks(ts: np.ndarray) -> np.ndarray:
    """The UTC day of each candle (its bootstrap block)."""
    return np.asarray(ts, dtype=np.int64) // _DAY_MS


def margin_interval(model_right: np.ndarray, base_right: np.ndarray, days: np.ndarray,
                    seed: int = 0) -> tuple[float, float] | None:
    """95 % interval of mean(model_right) - mean(base_right), resampling whole days."""
    _, block = np.unique(days, return_inverse=True)
    n_days = int(block.max()) + 1 if block.size else 0
    if n_days < MIN_DAYS:
        return None
    count = np.bincount(block, minlength=n_days).astype(np.float64)
    diff = np.bincount(block, weights=model_right.astype(np.float64) - base_right,
                       minlength=n_days)
    picks = np.random.default_rng(seed).integers(0, n_days, size=(BOOTSTRAP_SAMPLES, n_days))
    margins = diff[picks].sum(axis=1) / count[picks].sum(axis=1)
    low, high = np.percentile(margins, [2.5, 97.5])
    return float(low), float(high)


def verdict_of(margin: float, interval: tuple[float, float]) -> str:
    """See the module docstring."""
    if interval[0] <= 0:
        return NO_EDGE
    return EDGE if margin >= MIN_EDGE else SMALL_EDGE


def transitions(truth: np.ndarray, predicted: np.ndarray, window: int = TRANSITION_WINDOW
                ) -> Transitions:
    """Changes of the true position (between consecutive labelled candles) that the predicted
    positions also make, to the same position, within ``window`` candles."""
    labelled = np.flatnonzero((truth != MASKED) & (predicted != MASKED))
    consecutive = labelled[1:][np.diff(labelled) == 1]
    true_at = consecutive[truth[consecutive] != truth[consecutive - 1]]
    changed = np.flatnonzero(predicted[1:] != predicted[:-1]) + 1
    errors = []
    for i in true_at:
        near = changed[(changed >= i - window) & (changed <= i + window)]
        near = near[predicted[near] == truth[i]]
        if near.size:
            errors.append(int(np.abs(near - i).min()))
    return Transitions(int(true_at.size), len(errors), window,
                       float(np.mean(errors)) if errors else None)


def score_head(head: str, truth: np.ndarray, predicted: np.ndarray,
               baselines: dict[str, np.ndarray], days: np.ndarray, *, seed: int = 0
               ) -> HeadScore:
    """See the module docstring. ``truth``/``predicted``/each baseline are class indices per
    candle (``MASKED`` where there is none); only candles where the truth and the model's
    prediction exist are scored, and a baseline without a prediction there counts as wrong."""
    scored = (truth != MASKED) & (predicted != MASKED)
    n = int(scored.sum())
    if not n:
        return HeadScore(None, 0, dict.fromkeys(baselines))
    y, p = truth[scored], predicted[scored]
    right = p == y
    base_right = {name: pred[scored] == y for name, pred in baselines.items()}
    accuracy: dict[str, float | None] = {name: float(r.mean()) for name, r in
                                         base_right.items()}
    best = max(base_right, key=lambda name: float(base_right[name].mean())) \
        if base_right else None
    margin = interval = verdict = None
    if best is not None:
        margin = float(right.mean()) - float(base_right[best].mean())
        interval = margin_interval(right, base_right[best], days[scored], seed)
        if interval is not None:
            verdict = verdict_of(margin, interval)
    k = len(CLASSES[head])
    confusion = np.zeros((k, k), dtype=np.int64)
    np.add.at(confusion, (y, p), 1)
    direction = None
    if head in MARKET_HEADS:
        sided = ((y == _DOWN) | (y == _UP)) & ((p == _DOWN) | (p == _UP))
        direction = float((y[sided] == p[sided]).mean()) if sided.any() else None
    return HeadScore(
        accuracy=float(right.mean()), n=n, baselines=accuracy, best_baseline=best,
        margin=margin, interval=interval, verdict=verdict, direction_accuracy=direction,
        confusion=tuple(tuple(int(c) for c in row) for row in confusion),
        transitions=transitions(truth, predicted) if head == "position" else None)


def describe(head: str, score: HeadScore | None) -> str:
    """One head's score in words, the same in the CLI and the window: its accuracy beside the
    best baseline, and with an interval the margin and the verdict; "—" without data."""
    if score is None or score.accuracy is None:
        return f"{head} {NO_DATA}"
    best = score.best_baseline
    if best is None:
        return f"{head} {percent(score.accuracy)} (no baseline)"
    text = f"{head} {percent(score.accuracy)} ({best} {percent(score.best_baseline_accuracy)}"
    if score.margin is not None and (score.interval is not None or len(score.baselines) > 1):
        text += f", margin {points(score.margin)}"  # 2 places: 0.49 is not 0.5
        if score.interval is not None:
            low, high = score.interval
            text += f" [{low * 100:+.2f}, {high * 100:+.2f}]"
        text += f": {score.verdict or 'too few days for an interval'}"
    text += ")"
    found = score.transitions
    if found is not None and found.true:
        off = "" if found.timing_error is None else f", {found.timing_error:.1f} candles off"
        text += (f"; entries and exits found {found.hits}/{found.true} within {found.window} "
                 f"candles{off}")
    return text
