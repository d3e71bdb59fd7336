"""Simple baselines every head is scored against, fitted on a training span only.

- ``majority``: the most common class of the training targets.
- ``volatility``: one class below a trailing-volatility threshold and one above it (threshold
  and classes fitted on the training targets): the rule a volatility detector amounts to.
- ``logistic``: multinomial logistic regression on the model's own per-candle features.
- ``persistence``: for the market heads the class of the move that has just completed at
  ``t`` (the previous candle's direction; the trend of the last H candles); for the trader's
  heads the label of the most recent labelled (reviewed) candle before ``t`` (``MASKED``
  when there is none), wherever it lies. The trader's past labels are no input of the model,
  but a trader who keeps doing what he did sets exactly this bar, and live he knows his own
  previous labels: a head that cannot beat it has learned nothing he would not do anyway.
  Not fitted: it stands even when the training span holds no targets.
- ``hour_of_day`` (position only): the most common position of the training targets at the
  UTC hour of the day of each candle's open time (an hour without training targets: the
  majority class), the bar of a trader who trades at fixed times.
- ``lagged_logistic`` and ``boosted_trees`` (only with ``max_lags``, for the heads in
  ``lagged_heads``): baselines that see the window, on up to ``max_lags`` lags of the
  per-candle features (``lagged_baselines``; scikit-learn). The walk-forward evaluation fits
  them for every head, the trainer's validation for the trader's heads only.

``fit_baselines(data, train)`` fits them; ``predict(head, start, stop)`` gives each one's class
per candle (``MASKED`` where it has none); ``lags`` the lagged baselines' chosen lag count per
head. numpy only, but for the lagged baselines.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

from .lagged_baselines import LaggedFit, fit_lagged
from .targets import CLASS_HEADS, CLASSES, MARKET_HEADS, MASKED, Targets

QUANTILES = np.linspace(0.025, 0.975, 39)
MAX_ROWS = 50_000       # training rows a logistic regression is fitted on (evenly spaced)
PREDICT_ROWS = 1 << 16  # rows a baseline predicts at once
MIN_ROWS = 30           # fewer targets than this: no logistic fit (the majority stands in)
STEPS, LEARNING_RATE, L2 = 300, 0.5, 1e-4
_HOUR_MS, HOURS = 3_600_000, 24


@dataclass
class _Fitted:
    majority: int | None = None
    threshold: float | None = None
    below: int | None = None
    above: int | None = None
    weights: np.ndarray | None = None      # [features + 1, classes]
    mean: np.ndarray | None = None
    scale: np.ndarray | None = None
    hours: np.ndarray | None = None         # [HOURS] class by UTC hour of the day
    lagged: LaggedFit | None = None


@dataclass
class Baselines:
    """Fitted baselines of every class head (see the module docstring)."""

    features: np.ndarray
    targets: Targets
    horizon: int  # the trend head's horizon (its persistence looks that far back)
    ts: np.ndarray  # open times (int64 ms), for the hour of the day
    fitted: dict[str, _Fitted] = field(default_factory=dict)

    @property
    def lags(self) -> dict[str, int]:
        """The lag count chosen on validation for each head with lagged baselines."""
        return {head: fit.lagged.lags for head, fit in self.fitted.items()
                if fit.lagged is not None}

    def predict(self, head: str, start: int = 0, stop: int | None = None
                ) -> dict[str, np.ndarray]:
        """Each baseline's class for candles ``[start, stop)``."""
        stop = len(self.features) if stop is None else stop
        n = stop - start
        fit = self.fitted[head]
        out: dict[str, np.ndarray] = {}
        if fit.majority is None:
            if head not in MARKET_HEADS:
                out["persistence"] = last_label_before(self.targets.classes(head), start, stop)
            return out
        out["majority"] = np.full(n, fit.majority, dtype=np.int64)
        volatility = self.targets.volatility_bps[start:stop]
        if fit.threshold is not None and fit.below is not None and fit.above is not None:
            rule = np.where(volatility < fit.threshold, fit.below, fit.above)
            out["volatility"] = np.where(np.isfinite(volatility), rule, MASKED).astype(np.int64)
        if fit.weights is not None and fit.mean is not None and fit.scale is not None:
            out["logistic"] = self._logistic(fit.weights, fit.mean, fit.scale, start, stop)
        classes = self.targets.classes(head)
        if head in MARKET_HEADS:
            back = np.arange(start, stop) - (1 if head == "candle" else self.horizon)
            out["persistence"] = np.where(back >= 0, classes[np.maximum(back, 0)], MASKED)
        else:
            out["persistence"] = last_label_before(classes, start, stop)
        if fit.hours is not None:
            out["hour_of_day"] = fit.hours[hour_of_day(self.ts[start:stop])]
        if fit.lagged is not None:
            out.update(fit.lagged.predict(self.features, start, stop))
        return out

    def _logistic(self, weights: np.ndarray, mean: np.ndarray, scale: np.ndarray, start: int,
                  stop: int) -> np.ndarray:
        """The logistic baseline's class for ``[start, stop)``, ``PREDICT_ROWS`` at a time
        (the features may be memory-mapped and longer than memory, ``feature_store``)."""
        out = np.empty(stop - start, dtype=np.int64)
        for begin in range(start, stop, PREDICT_ROWS):
            end = min(begin + PREDICT_ROWS, stop)
            x = (self.features[begin:end].astype(np.float64) - mean) / scale
            out[begin - start:end - start] = np.argmax(_logits(x, weights), axis=1)
        return out


def last_label_before(classes: np.ndarray, start: int, stop: int) -> np.ndarray:
    """For each candle of ``[start, stop)`` the label of the most recent labelled candle
    before it (``MASKED`` where there is none)."""
    at = np.arange(stop)
    last = np.maximum.accumulate(np.where(classes[:stop] != MASKED, at, -1))
    before = np.concatenate(([-1], last[:-1]))[start:stop]
    return np.where(before >= 0, classes[np.maximum(before, 0)], MASKED).astype(np.int64)


def hour_of_day(ts: np.ndarray) -> np.ndarray:
    """The UTC hour of the day (0-23) of open times ``ts`` (int64 ms)."""
    return (np.asarray(ts, dtype=np.int64) // _HOUR_MS) % HOURS


def _fit_hours(hours: np.ndarray, y: np.ndarray, n_classes: int, majority: int) -> np.ndarray:
    """The most common class of ``y`` per hour of the day (``majority`` where none)."""
    counts = np.zeros((HOURS, n_classes), dtype=np.int64)
    np.add.at(counts, (hours, y), 1)
    return np.where(counts.any(axis=1), counts.argmax(axis=1), majority).astype(np.int64)


def _logits(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return x @ weights[:-1] + weights[-1]


def _fit_logistic(x: np.ndarray, y: np.ndarray, n_classes: int) -> np.ndarray:
    """Weights of a multinomial logistic regression (full-batch gradient descent with
    momentum on the mean cross-entropy plus a small L2 penalty)."""
    onehot = np.eye(n_classes)[y]
    weights = np.zeros((x.shape[1] + 1, n_classes))
    velocity = np.zeros_like(weights)
    for _ in range(STEPS):
        z = _logits(x, weights)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        err = (p - onehot) / len(y)
        grad = np.vstack((x.T @ err + L2 * weights[:-1], err.sum(axis=0, keepdims=True)))
        velocity = 0.9 * velocity - LEARNING_RATE * grad
        weights += velocity
    return weights


def _fit_volatility(volatility: np.ndarray, y: np.ndarray, n_classes: int
                    ) -> tuple[float, int, int]:
    """The threshold and the two classes that best fit "class A below, class B above", among
    the ``QUANTILES`` of ``volatility`` (a pass over the rows for each: no sorted copy)."""
    total = np.bincount(y, minlength=n_classes)
    best: tuple[int, float, int, int] = (-1, float(volatility.min()), int(total.argmax()),
                                         int(total.argmax()))
    for threshold in np.quantile(volatility, QUANTILES):
        under = volatility < threshold
        k = int(np.count_nonzero(under))
        below = np.bincount(y[under], minlength=n_classes)
        above = total - below
        right = int(below.max() + above.max())
        if right > best[0]:
            at = float(volatility[~under].min()) if k < len(volatility) else \
                float(volatility.max())
            best = (right, at, int(below.argmax()) if k else int(above.argmax()),
                    int(above.argmax()))
    return best[1:]


def fit_baselines(data, train: tuple[int, int], *, max_lags: int = 0, gap: int = 0,
                  lagged_heads: Collection[str] = CLASS_HEADS) -> Baselines:
    """Fit every head's baselines on the targets of candles ``train = (start, stop)``; with
    ``max_lags`` also the lagged ones of ``lagged_heads`` (their validation slice ``gap``
    candles after the rows they are fitted on while choosing the lags, ``lagged_baselines``)."""
    start, stop = train
    targets = data.targets
    baselines = Baselines(data.features, targets, data.target_spec.horizon, data.ts)
    for head in CLASS_HEADS:
        fit = _Fitted()
        baselines.fitted[head] = fit
        y = targets.classes(head)[start:stop]
        rows = np.flatnonzero(y != MASKED)
        if not rows.size:
            continue
        n_classes = len(CLASSES[head])
        labels = y[rows]
        fit.majority = int(np.bincount(labels, minlength=n_classes).argmax())
        if head == "position":
            fit.hours = _fit_hours(hour_of_day(data.ts[start:stop][rows]), labels, n_classes,
                                   fit.majority)
        volatility = targets.volatility_bps[start:stop][rows]
        known = np.isfinite(volatility)
        if known.sum() >= MIN_ROWS:
            fit.threshold, fit.below, fit.above = _fit_volatility(volatility[known],
                                                                 labels[known], n_classes)
        if rows.size >= MIN_ROWS and len(np.unique(labels)) > 1:
            pick = rows[np.linspace(0, rows.size - 1, min(rows.size, MAX_ROWS)).astype(int)]
            x = data.features[start:stop][pick].astype(np.float64)
            fit.mean, fit.scale = x.mean(axis=0), x.std(axis=0) + 1e-9
            fit.weights = _fit_logistic((x - fit.mean) / fit.scale, y[pick], n_classes)
        if max_lags and head in lagged_heads:
            fit.lagged = fit_lagged(data.features, targets.classes(head), train, max_lags, gap)
    return baselines
