"""Scores that say honestly whether a head has an edge (numpy only).

``score_head`` scores a head's predictions on its targets beside the baselines' predictions
(``baselines``) on exactly the same candles: accuracy, each baseline's accuracy, the margin
over the best of them (the best on the scored span itself, the hardest bar), a 95 % interval
of that margin, and the verdict: "edge" only when the interval excludes 0 and the margin is at
least ``MIN_EDGE`` (on a million candles a 0.1 pp margin can be certain and still worth
nothing: that is "edge too small to use").
Market heads also get the direction accuracy (up/down truths predicted up/down), the
position head how it finds the trader's entries and exits.

Too few marks (``mark_count``): a trader head is scored only when the scored candles hold at
least ``MIN_MARKS`` marks on at least ``MIN_LABELLED`` labelled candles. The position head's
marks are the trader's entries: labelled candles whose true position is long or short while
the candle before is unlabelled or labelled otherwise (flat, or the other side); the regime
head's are its regions: maximal runs of one class over consecutive labelled candles. With
fewer, a margin and its interval would be the noise of a handful of decisions: the score
keeps ``n``, the confusion counts and the entries found, but has no accuracy, no baseline
accuracy, no margin, no interval and so no verdict (and no p-value for Holm's family);
``describe`` says "too few marks (...)".

The interval (``bootstrap_margin``) is a stationary bootstrap (Politis & Romano 1994) of the
UTC days: neighbouring candles and days are not independent, so days are drawn in blocks of
random length with a mean ``block_length`` chosen from the daily margins' own autocorrelation
(Politis & White 2004, with the correction of Patton, Politis & White 2009: a flat-top lag
window up to twice the first lag after which ``K_N`` autocorrelations are insignificant).
Training noise: with S seeds per fold (``predicted`` is ``[S, candles]``) the margin is the
mean over the seeds, and each bootstrap resample also draws one seed, so the interval covers
the spread of one training run (wider than that of the S-seed mean: conservative). Its
one-sided p-value (share of resamples at or below 0) feeds Holm's step-down adjustment
(``holm``) of every verdict but the run's primary one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..display import NO_DATA, number, percent, points
from .events import HeadScore, MarkCount, Transitions
from .lagged_baselines import LAGGED_BASELINES
from .targets import CLASSES, MARKET_HEADS, MASKED, run_starts, trade_starts

MIN_EDGE = 0.005        # half a percentage point of accuracy over the best baseline
EDGE, NO_EDGE = "edge", "no edge shown"
SMALL_EDGE = f"edge too small to use (under {MIN_EDGE * 100:.1f} pp)"
VERDICTS = (EDGE, SMALL_EDGE, NO_EDGE)
BOOTSTRAP_SAMPLES = 1000
ALPHA = 0.025           # one-sided level of a verdict: the lower end of a 95 % interval
MIN_DAYS = 5            # fewer days than this give no interval (and so no verdict)
TRANSITION_WINDOW = 5   # candles a predicted change may be off and still find a true one
MIN_MARKS = 5           # trades (position) or regions (regime) a trader head needs to be scored
MIN_LABELLED = 200      # labelled candles a trader head needs to be scored
MARK_KINDS = {"position": "trades", "regime": "regions"}
_DAY_MS = 86_400_000
_DOWN, _UP = 0, 2


def day_blocks(ts: np.ndarray) -> np.ndarray:
    """The UTC day of each candle (its bootstrap block)."""
    return np.asarray(ts, dtype=np.int64) // _DAY_MS


def block_length(series: np.ndarray) -> float:
    """The stationary bootstrap's mean block length for ``series`` (Politis & White 2004,
    corrected by Patton, Politis & White 2009), at least 1 and at most min(3 sqrt(n), n / 3)."""
    x = np.asarray(series, dtype=np.float64)
    n = x.size
    if n < MIN_DAYS:
        return 1.0
    x = x - x.mean()
    k_n = max(5, int(np.ceil(np.sqrt(np.log10(n)))))
    m_max = min(int(np.ceil(np.sqrt(n))) + k_n, n - 1)
    acov = np.array([x[:n - k] @ x[k:] / n for k in range(m_max + 1)])
    if acov[0] <= 0:
        return 1.0
    small = np.abs(acov[1:] / acov[0]) < 2 * np.sqrt(np.log10(n) / n)  # lags 1 .. m_max
    m_hat = next((m for m in range(small.size - k_n + 1) if small[m:m + k_n].all()), m_max)
    big_m = min(2 * m_hat, m_max)
    if big_m == 0:
        return 1.0
    lags = np.arange(-big_m, big_m + 1)
    window = np.clip(2 * (1 - np.abs(lags) / big_m), 0, 1)  # flat-top: 1 up to M / 2
    r = acov[np.abs(lags)]
    g = float(np.sum(window * np.abs(lags) * r))
    long_run = float(np.sum(window * r))
    if long_run <= 0:
        return 1.0
    b = (2 * g * g / (2 * long_run * long_run)) ** (1 / 3) * n ** (1 / 3)
    return float(min(max(b, 1.0), np.ceil(min(3 * np.sqrt(n), n / 3))))


def stationary_picks(n: int, mean_block: float, samples: int, rng: np.random.Generator
                     ) -> np.ndarray:
    """``[samples, n]`` indices of a stationary bootstrap: blocks start anywhere, last a
    geometric number of steps of mean ``mean_block`` and wrap around the end."""
    steps = np.arange(n)
    new = rng.random((samples, n)) < 1 / mean_block
    new[:, 0] = True
    began = np.maximum.accumulate(np.where(new, steps, 0), axis=1)
    starts = np.take_along_axis(rng.integers(0, n, size=(samples, n)), began, axis=1)
    return (starts + steps - began) % n


@dataclass(frozen=True)
class MarginBootstrap:
    """A margin's bootstrap (see the module docstring): the ``resampled`` margins, the mean
    block length ``block_days`` and the one-sided ``p_value`` of margin <= 0."""

    resampled: np.ndarray
    block_days: float
    p_value: float

    def interval(self, alpha: float = ALPHA) -> tuple[float, float]:
        """The percentile interval from ``alpha`` to ``1 - alpha`` (95 % at ``ALPHA``)."""
        low, high = np.percentile(self.resampled, [100 * alpha, 100 * (1 - alpha)])
        return float(low), float(high)


def bootstrap_margin(model_right: np.ndarray, base_right: np.ndarray, days: np.ndarray,
                     seed: int = 0) -> MarginBootstrap | None:
    """The bootstrap of mean(model_right) - mean(base_right) over the UTC ``days`` (None
    with fewer than ``MIN_DAYS``); ``model_right`` is ``[candles]`` or ``[seeds, candles]``."""
    model = np.atleast_2d(np.asarray(model_right, dtype=np.float64))
    base = np.asarray(base_right, dtype=np.float64)
    _, block = np.unique(days, return_inverse=True)
    n_days = int(block.max()) + 1 if block.size else 0
    if n_days < MIN_DAYS:
        return None
    count = np.bincount(block, minlength=n_days).astype(np.float64)
    diff = np.stack([np.bincount(block, weights=m - base, minlength=n_days) for m in model])
    block_days = block_length(diff.mean(axis=0) / count)
    rng = np.random.default_rng(seed)
    picks = stationary_picks(n_days, block_days, BOOTSTRAP_SAMPLES, rng)
    seed_of = rng.integers(0, len(model), size=(BOOTSTRAP_SAMPLES, 1))
    margins = diff[seed_of, picks].sum(axis=1) / count[picks].sum(axis=1)
    p_value = (1 + np.count_nonzero(margins <= 0)) / (1 + BOOTSTRAP_SAMPLES)
    return MarginBootstrap(margins, block_days, float(p_value))


def verdict_of(margin: float, interval: tuple[float, float]) -> str:
    """See the module docstring."""
    if interval[0] <= 0:
        return NO_EDGE
    return EDGE if margin >= MIN_EDGE else SMALL_EDGE


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    order = np.argsort(np.asarray(p_values, dtype=np.float64), kind="stable")
    m, running = len(order), 0.0
    adjusted = [0.0] * m
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))
        adjusted[i] = running
    return adjusted


def holm_adjusted(scored: Sequence[tuple[HeadScore, MarginBootstrap]]) -> list[HeadScore]:
    """Each score with its verdict from Holm's adjusted p-value over all of ``scored`` (an
    edge needs adjusted p <= ``ALPHA``) and its interval at the level Holm tests it at
    (``ALPHA / (m - rank)``, rank 0 for the smallest p-value)."""
    p_values = [boot.p_value for _, boot in scored]
    adjusted = holm(p_values)
    rank_of = {int(i): r for r, i in enumerate(np.argsort(p_values, kind="stable"))}
    m, label = len(scored), f"adjusted (Holm, {len(scored)} verdicts)"
    out = []
    for k, (score, boot) in enumerate(scored):
        assert score.margin is not None
        verdict = NO_EDGE if adjusted[k] > ALPHA else (
            EDGE if score.margin >= MIN_EDGE else SMALL_EDGE)
        out.append(replace(score, interval=boot.interval(ALPHA / (m - rank_of[k])),
                           verdict=verdict, adjusted_p=adjusted[k], multiplicity=label))
    return out


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


def mark_count(head: str, truth: np.ndarray) -> MarkCount | None:
    """The marks in ``truth`` (``MASKED`` where unlabelled) of a trader head (see the module
    docstring); None for a market head."""
    kind = MARK_KINDS.get(head)
    if kind is None:
        return None
    starts = trade_starts(truth) if head == "position" else run_starts(truth)
    return MarkCount(kind, int(starts.sum()), int(np.count_nonzero(truth != MASKED)),
                     MIN_MARKS, MIN_LABELLED)


def score_head(head: str, truth: np.ndarray, predicted: np.ndarray,
               baselines: dict[str, np.ndarray], days: np.ndarray, *, seed: int = 0
               ) -> HeadScore:
    """See the module docstring. ``truth``/``predicted``/each baseline are class indices per
    candle (``MASKED`` where there is none; ``predicted`` may be ``[seeds, candles]``); only
    candles where the truth and the model's prediction exist are scored, and a baseline
    without a prediction there counts as wrong."""
    return scored_head(head, truth, predicted, baselines, days, seed=seed)[0]


def scored_head(head: str, truth: np.ndarray, predicted: np.ndarray,
                baselines: dict[str, np.ndarray], days: np.ndarray, *, seed: int = 0
                ) -> tuple[HeadScore, MarginBootstrap | None]:
    """``score_head`` and its margin's bootstrap (None without an interval or with too few
    marks)."""
    seeds = np.atleast_2d(predicted)
    scored = (truth != MASKED) & (seeds != MASKED).all(axis=0)
    n = int(scored.sum())
    marks = mark_count(head, np.where(scored, truth, MASKED))
    if not n:
        return HeadScore(None, 0, dict.fromkeys(baselines), marks=marks), None
    y, p = truth[scored], seeds[0, scored]
    found = transitions(truth, seeds[0]) if head == "position" else None
    k = len(CLASSES[head])
    confusion = np.zeros((k, k), dtype=np.int64)
    np.add.at(confusion, (y, p), 1)
    counts = tuple(tuple(int(c) for c in row) for row in confusion)
    if marks is not None and marks.too_few:
        return HeadScore(None, n, dict.fromkeys(baselines), confusion=counts,
                         transitions=found, marks=marks), None
    rights = seeds[:, scored] == y
    base_right = {name: pred[scored] == y for name, pred in baselines.items()}
    accuracy: dict[str, float | None] = {name: float(r.mean()) for name, r in
                                         base_right.items()}
    best = max(base_right, key=lambda name: float(base_right[name].mean())) \
        if base_right else None
    margin = interval = verdict = boot = seed_margins = None
    if best is not None:
        seed_margins = tuple(float(r.mean()) - float(base_right[best].mean()) for r in rights)
        margin = float(np.mean(seed_margins))
        boot = bootstrap_margin(rights, base_right[best], days[scored], seed)
        if boot is not None:
            interval = boot.interval()
            verdict = verdict_of(margin, interval)
    direction = None
    if head in MARKET_HEADS:
        sided = ((y == _DOWN) | (y == _UP)) & ((p == _DOWN) | (p == _UP))
        direction = float((y[sided] == p[sided]).mean()) if sided.any() else None
    return HeadScore(
        accuracy=float(rights.mean()), n=n, baselines=accuracy, best_baseline=best,
        margin=margin, interval=interval, verdict=verdict, direction_accuracy=direction,
        confusion=counts, transitions=found,
        block_days=None if boot is None else boot.block_days,
        p_value=None if boot is None else boot.p_value, seed_margins=seed_margins,
        marks=marks), boot


def mark_words(marks: MarkCount) -> str:
    """"3 trades", "1 region"."""
    return f"{marks.marks:,} {marks.kind if marks.marks != 1 else marks.kind[:-1]}"


def too_few_text(marks: MarkCount) -> str:
    """"too few marks (3 trades, 140 reviewed candles; need 5 and 200)"."""
    candles = "reviewed" if marks.kind == "trades" else "labelled"
    return (f"too few marks ({mark_words(marks)}, {marks.labelled:,} {candles} candles; "
            f"need {marks.min_marks} and {marks.min_labelled})")


def describe(head: str, score: HeadScore | None) -> str:
    """One head's score in words, the same in the CLI and the window: its accuracy beside the
    best baseline, and with an interval the margin and the verdict; "—" without data, and
    "too few marks (...)" for a trader head with too few ("no marks" with none)."""
    if score is not None and score.marks is not None and score.too_few:
        if not score.marks.labelled:
            return f"{head}: no marks"
        return f"{head}: {too_few_text(score.marks)}"
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
        if score.block_days is not None:
            text += f" (blocks of {number(score.block_days, '.1f')} days)"
        text += f": {score.verdict or 'too few days for an interval'}"
        if score.multiplicity is not None:
            text += f", {score.multiplicity}"
    text += ")"
    if score.seed_margins is not None and len(score.seed_margins) > 1:
        text += "; margin per seed " + " / ".join(points(m) for m in score.seed_margins)
    found = score.transitions
    if found is not None and found.true:
        off = "" if found.timing_error is None else f", {found.timing_error:.1f} candles off"
        text += (f"; entries and exits found {found.hits}/{found.true} within {found.window} "
                 f"candles{off}")
    return text


def describe_baselines(score: HeadScore | None, lags: int | str | None = None) -> str:
    """Every baseline's accuracy on the scored candles, in the CLI and the window ("—"
    without data); ``lags``: the lag count the lagged baselines chose ("5/10": by fold)."""
    if score is None or score.accuracy is None or not score.baselines:
        return f"baselines {NO_DATA}"
    on_lags = f" ({lags} lags)" if lags else ""
    return "baselines " + ", ".join(
        f"{name} {percent(accuracy)}" + (on_lags if name in LAGGED_BASELINES else "")
        for name, accuracy in score.baselines.items())
