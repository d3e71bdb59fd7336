"""Baselines that see the window: the model's own per-candle features at ``t, t-1, …, t-L+1``.

- ``lagged_logistic``: multinomial logistic regression with an L2 penalty (scikit-learn's
  ``LogisticRegression``: lbfgs, ``C`` = ``C``) on the lagged features, each column
  standardised on the fitting rows. ``L`` is chosen from ``LAG_GRID`` (capped at the
  window, ``max_lags``) on the training span's own validation slice: its last
  ``VAL_FRACTION``, after a gap of ``gap`` candles (the evaluation passes its embargo,
  ``seq_len`` + horizon >= ``L`` + horizon), so no validation row's lags or target overlap a
  fitting row. The highest validation accuracy wins, the fewer lags on a tie; then it is
  refitted on the whole training span with that ``L`` (``LaggedFit.lags`` records it).
- ``boosted_trees``: gradient-boosted trees on the same lagged features (the chosen ``L``),
  scikit-learn's ``HistGradientBoostingClassifier``, fitted on the whole training span.
  Why this one: it is BSD-3 like the rest of scikit-learn (which also gives the logistic
  regression), a wheel on every platform the app runs on with no new native build to ship
  (LightGBM would add its own library); histogram binning fits ``TREE_ROWS`` rows of up to
  540 columns in seconds; with early stopping off (no internal split of the data) and a fixed
  ``random_state`` the fit is deterministic.

Rows are evenly spaced samples of the labelled candles (at most ``SELECT_ROWS`` fitted and
``VAL_ROWS`` validated per ``L`` tried, ``FIT_ROWS`` for the final logistic regression,
``TREE_ROWS`` for the trees); iterations are fixed (``LOGISTIC_ITERATIONS``,
``TREE_ITERATIONS``), so a fit that has not converged by then stands as it is. The logistic
regression's linear algebra and the trees' OpenMP loops run on one thread (on a busy 2-core
machine several times faster than two, and the same numbers on any machine). Row ``t``
reads features ``<= t`` only; lags before the series' first candle repeat its first row.
scikit-learn is imported only when a fit is made.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .targets import MASKED

LAGGED_BASELINES = ("lagged_logistic", "boosted_trees")
LAG_GRID = (1, 5, 10, 20, 40, 60)
VAL_FRACTION = 0.1      # the end of the training span that chooses L
SELECT_ROWS, VAL_ROWS, FIT_ROWS, TREE_ROWS = 10_000, 10_000, 20_000, 8_000
MIN_ROWS = 30           # fewer labelled rows than this: no fit
C = 1.0                 # inverse L2 strength of the logistic regression (scikit-learn's default)
LOGISTIC_ITERATIONS = 100
TREE_ITERATIONS, TREE_LEAVES, TREE_LEARNING_RATE, TREE_SEED = 40, 15, 0.1, 0
_CHUNK = 20_000         # rows predicted at a time (bounds the memory of the lagged matrix)


def lag_grid(max_lags: int) -> tuple[int, ...]:
    """The lag counts tried: ``LAG_GRID`` capped at ``max_lags``."""
    return tuple(sorted({min(lags, max_lags) for lags in LAG_GRID}))


def lagged_features(features: np.ndarray, rows: np.ndarray, lags: int) -> np.ndarray:
    """``[len(rows), lags * F]``: for each row ``t`` the features at ``t, t-1, …, t-lags+1``
    (before the first candle: the first row's)."""
    back = np.maximum(rows[:, None] - np.arange(lags)[None, :], 0)
    return features[back].reshape(len(rows), lags * features.shape[1])


@dataclass
class LaggedFit:
    """One head's fitted lagged baselines; ``validation``: accuracy on the validation slice
    by ``L`` tried."""

    lags: int
    mean: np.ndarray
    scale: np.ndarray
    logistic: Any
    trees: Any
    validation: dict[int, float] = field(default_factory=dict)

    def predict(self, features: np.ndarray, start: int, stop: int) -> dict[str, np.ndarray]:
        """``lagged_logistic`` and ``boosted_trees`` class per candle of ``[start, stop)``."""
        out = {name: np.empty(stop - start, dtype=np.int64) for name in LAGGED_BASELINES}
        for begin in range(start, stop, _CHUNK):
            end = min(begin + _CHUNK, stop)
            x = lagged_features(features, np.arange(begin, end), self.lags)
            at = slice(begin - start, end - start)
            with _one_thread():
                out["lagged_logistic"][at] = self.logistic.predict((x - self.mean) / self.scale)
                out["boosted_trees"][at] = self.trees.predict(x)
        return out


def _one_thread() -> Any:
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def _evenly(rows: np.ndarray, most: int) -> np.ndarray:
    return rows[np.linspace(0, rows.size - 1, min(rows.size, most)).astype(int)]


def _fit_logistic(x: np.ndarray, y: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    x = x.astype(np.float64)
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    model = LogisticRegression(C=C, max_iter=LOGISTIC_ITERATIONS)
    with warnings.catch_warnings(), _one_thread():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a fixed budget, see above
        model.fit((x - mean) / scale, y)
    return model, mean, scale


def _fit_trees(x: np.ndarray, y: np.ndarray) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier

    with _one_thread():
        return HistGradientBoostingClassifier(
            max_iter=TREE_ITERATIONS, max_leaf_nodes=TREE_LEAVES,
            learning_rate=TREE_LEARNING_RATE, early_stopping=False,
            random_state=TREE_SEED).fit(x, y)


def _two_classes(y: np.ndarray) -> bool:
    return y.size >= MIN_ROWS and np.unique(y).size > 1


def choose_lags(features: np.ndarray, classes: np.ndarray, train: tuple[int, int],
                max_lags: int, gap: int) -> tuple[int, dict[int, float]]:
    """``L`` of the best validation accuracy (see the module docstring) and the accuracy of
    every ``L`` tried; without enough labelled rows on either side, the smallest ``L``."""
    grid = lag_grid(max_lags)
    start, stop = train
    val_start = stop - max(1, int((stop - start) * VAL_FRACTION))
    labelled = np.flatnonzero(classes[start:stop] != MASKED) + start
    fit_rows = _evenly(labelled[labelled < val_start - gap], SELECT_ROWS)
    val_rows = _evenly(labelled[labelled >= val_start], VAL_ROWS)
    scores: dict[int, float] = {}
    if fit_rows.size and val_rows.size >= MIN_ROWS and _two_classes(classes[fit_rows]):
        for lags in grid:
            model, mean, scale = _fit_logistic(lagged_features(features, fit_rows, lags),
                                               classes[fit_rows])
            x = (lagged_features(features, val_rows, lags) - mean) / scale
            with _one_thread():
                scores[lags] = float((model.predict(x) == classes[val_rows]).mean())
    best = max(scores, key=lambda lags: (scores[lags], -lags)) if scores else grid[0]
    return best, scores


def fit_lagged(features: np.ndarray, classes: np.ndarray, train: tuple[int, int],
               max_lags: int, gap: int) -> LaggedFit | None:
    """Both lagged baselines of one head, fitted on the targets ``classes`` (``MASKED``
    where none) of candles ``train`` only; None with fewer than two classes there."""
    start, stop = train
    span = classes[start:stop]
    if not _two_classes(span[span != MASKED]):
        return None
    lags, scores = choose_lags(features, classes, train, max_lags, gap)
    labelled = np.flatnonzero(span != MASKED) + start  # after: one such index at a time
    rows, tree_rows = _evenly(labelled, FIT_ROWS), _evenly(labelled, TREE_ROWS)
    if not (_two_classes(classes[rows]) and _two_classes(classes[tree_rows])):
        return None
    logistic, mean, scale = _fit_logistic(lagged_features(features, rows, lags),
                                          classes[rows])
    trees = _fit_trees(lagged_features(features, tree_rows, lags), classes[tree_rows])
    return LaggedFit(lags, mean, scale, logistic, trees, scores)
