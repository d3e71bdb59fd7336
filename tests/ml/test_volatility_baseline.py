"""The volatility-rule baseline's fit (one threshold, a class below and one above) is the
exact search over the quantile thresholds: equal, threshold and classes, to a sort-and-count
reference written the obvious way, on random data with ties, one class or one value."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.ml.baselines import QUANTILES, _fit_volatility


def sorted_reference(volatility, y, n_classes):
    order = np.argsort(volatility, kind="stable")
    v, labels = volatility[order], y[order]
    counts = np.cumsum(np.eye(n_classes, dtype=np.int64)[labels], axis=0)
    total = counts[-1]
    best = (-1, float(v[0]), int(total.argmax()), int(total.argmax()))
    for q in QUANTILES:
        k = int(np.searchsorted(v, np.quantile(v, q), side="left"))
        below = counts[k - 1] if k else np.zeros(n_classes, dtype=np.int64)
        above = total - below
        right = int(below.max() + above.max())
        if right > best[0]:
            best = (right, float(v[k]) if k < len(v) else float(v[-1]),
                    int(below.argmax()) if k else int(above.argmax()), int(above.argmax()))
    return best[1:]


@pytest.mark.parametrize("seed", range(8))
def test_the_fit_equals_the_sorted_search(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 5000))
    volatility = rng.lognormal(size=n)
    if seed % 2:
        volatility = np.round(volatility, 1)  # many ties
    y = np.where(volatility > np.median(volatility), rng.integers(0, 2, n), 2)
    y = np.where(rng.random(n) < 0.2, rng.integers(0, 3, n), y).astype(np.int64)
    assert _fit_volatility(volatility, y, 3) == sorted_reference(volatility, y, 3)


def test_one_value_or_one_class_fits_the_majority():
    volatility = np.full(100, 7.0)
    y = np.r_[np.zeros(30, np.int64), np.ones(70, np.int64)]
    assert _fit_volatility(volatility, y, 3) == sorted_reference(volatility, y, 3) \
        == (7.0, 1, 1)
    ramp = np.linspace(1.0, 2.0, 100)
    assert _fit_volatility(ramp, np.full(100, 2), 3) == sorted_reference(ramp, np.full(100, 2),
                                                                         3)
