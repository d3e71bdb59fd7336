"""Baselines that see the window (``ml.lagged_baselines``): the lag count chosen on the training
span's validation slice, trees that learn what a linear rule cannot, causality, fitting on
the training span only, and both in the evaluation's table and bar."""

from __future__ import annotations

import json

import numpy as np

from workstation.cli import main
from workstation.market.demo import demo_candles
from workstation.market.perturb import changed_after
from workstation.market.timeframes import parse_timeframe
from workstation.ml.dataset import TrainingData
from workstation.ml.lagged_baselines import fit_lagged, lagged_features
from workstation.ml.targets import MASKED

N, TRAIN, GAP = 8000, (0, 6000), 20
N_CANDLES = 2000


def accuracy(fit, features, classes, start=6000, stop=N) -> dict[str, float]:
    return {name: float((got == classes[start:stop]).mean())
            for name, got in fit.predict(features, start, stop).items()}


def test_lagged_features_are_the_rows_at_t_and_before():
    features = np.arange(12, dtype=np.float32).reshape(6, 2)
    got = lagged_features(features, np.array([0, 4]), 3)
    assert got.tolist() == [[0, 1, 0, 1, 0, 1], [8, 9, 6, 7, 4, 5]]  # before row 0: row 0


def test_the_lag_count_is_chosen_on_validation_and_finds_a_rule_three_candles_back():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(N, 3)).astype(np.float32)
    back = np.roll(features[:, 0], 3)  # the first feature at t-3
    classes = np.where(back > 0.5, 2, np.where(back < -0.5, 0, 1)).astype(np.int64)
    classes[:3] = MASKED
    fit = fit_lagged(features, classes, TRAIN, max_lags=10, gap=GAP)
    assert fit.lags >= 4 and set(fit.validation) == {1, 5, 10}
    assert fit.validation[fit.lags] > 0.9 > 0.5 > fit.validation[1]
    assert accuracy(fit, features, classes)["lagged_logistic"] > 0.9
    one = fit_lagged(features, classes, TRAIN, max_lags=1, gap=GAP)
    assert one.lags == 1 and accuracy(one, features, classes)["lagged_logistic"] < 0.5


def test_boosted_trees_learn_an_xor_of_lagged_features_that_the_logistic_cannot():
    rng = np.random.default_rng(1)
    features = rng.normal(size=(N, 3)).astype(np.float32)
    f0, f1, f2 = np.roll(features[:, 0], 3), np.roll(features[:, 1], 1), np.roll(features[:, 2], 2)
    # class 2 when the first feature three candles back is high (a linear rule: the lags are
    # chosen on it), else the XOR of the signs of two other features, one and two back
    classes = np.where(f0 > 1.0, 2, ((f1 > 0) ^ (f2 > 0)).astype(np.int64))
    classes[:3] = MASKED
    fit = fit_lagged(features, classes, TRAIN, max_lags=10, gap=GAP)
    assert fit.lags >= 4
    scores = accuracy(fit, features, classes)
    assert scores["boosted_trees"] > 0.9
    assert scores["lagged_logistic"] < 0.7


def _data(candles) -> TrainingData:
    return TrainingData.from_candles(candles)


def test_a_prediction_at_t_reads_no_candle_after_t():
    candles = demo_candles(N_CANDLES, parse_timeframe("1h"), seed=5, end_ts=1_700_000_000_000)
    data = _data(candles)
    fitted = fit_lagged(data.features, data.targets.classes("candle"), (0, 1400), max_lags=10,
                        gap=30)
    whole = fitted.predict(data.features, 1400, N_CANDLES)
    t = 1700
    changed_data = _data(changed_after(candles, int(candles.ts[t]), seed=2, drop=0.0))
    assert not np.array_equal(changed_data.features[t + 1:], data.features[t + 1:])
    refitted = fit_lagged(changed_data.features, changed_data.targets.classes("candle"), (0, 1400),
                          max_lags=10, gap=30)
    assert refitted.lags == fitted.lags
    changed = refitted.predict(changed_data.features, 1400, N_CANDLES)
    upto = t + 1 - 1400
    for name in ("lagged_logistic", "boosted_trees"):
        assert np.array_equal(whole[name][:upto], changed[name][:upto])
    assert any(not np.array_equal(whole[n][upto:], changed[n][upto:])
               for n in ("lagged_logistic", "boosted_trees"))  # the change did reach later


def test_fitting_reads_the_training_span_only():
    rng = np.random.default_rng(3)
    features = rng.normal(size=(N, 3)).astype(np.float32)
    classes = np.where(np.roll(features[:, 1], 2) > 0, 2, 0).astype(np.int64)
    fit = fit_lagged(features, classes, TRAIN, max_lags=10, gap=GAP)
    garbage_features, garbage_classes = features.copy(), classes.copy()
    garbage_features[TRAIN[1]:] = rng.normal(0, 1e3, size=(N - TRAIN[1], 3))
    garbage_classes[TRAIN[1]:] = 1
    garbage = fit_lagged(garbage_features, garbage_classes, TRAIN, max_lags=10, gap=GAP)
    assert garbage.lags == fit.lags and garbage.validation == fit.validation
    assert np.array_equal(garbage.logistic.coef_, fit.logistic.coef_)
    # the same trees: the same predictions on any rows (here the training span's)
    assert all(np.array_equal(a, b) for a, b in zip(
        fit.predict(features, 0, TRAIN[1]).values(),
        garbage.predict(features, 0, TRAIN[1]).values(), strict=True))


def test_evaluate_lists_the_lagged_baselines_and_bars_on_the_best_of_all(capsys):
    code = main(["evaluate", "--source", "demo", "--timeframe", "1h", "--max-candles", "2000",
                 "--seq-len", "16", "--batch-size", "32", "--folds", "2", "--epochs", "1",
                 "--stride", "16", "--seeds", "1", "--threads", "1", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    objects = [json.loads(line) for line in out.out.splitlines()]
    per_fold = [o for o in objects if "fold" in o and o["head"] in ("candle", "trend")]
    (summary,) = [o for o in objects if o.get("summary")]
    scores = [*per_fold, *(summary["heads"][h] for h in ("candle", "trend"))]
    for score in scores:
        assert {"lagged_logistic", "boosted_trees"} <= set(score["baselines"])
        best = max(score["baselines"].values())
        assert score["baselines"][score["best_baseline"]] == best  # the best of all six
        assert abs(score["margin"] - (score["accuracy"] - best)) < 1e-12
    for o in per_fold:
        assert o["baseline_lags"] in (1, 5, 10, 16)  # the grid, capped at the window
    assert summary["baseline_lags"]["candle"] == [o["baseline_lags"] for o in per_fold
                                                  if o["head"] == "candle"]
    lines = [line for line in out.err.splitlines() if line.strip().startswith("baselines ")]
    assert len(lines) == 3 * 4  # every head, per fold and pooled
    assert "lagged_logistic" in lines[0] and "boosted_trees" in lines[0] and " lags)" in lines[0]
