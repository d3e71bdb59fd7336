"""Scores that say honestly whether there is an edge: baselines fitted on the past, the margin
over the best one with a day-block bootstrap interval, walk-forward folds with an embargo,
and the ``evaluate`` and ``annotations targets`` commands."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from workstation.annotations.model import Trade
from workstation.annotations.store import AnnotationStore
from workstation.cli import main
from workstation.errors import WorkstationError
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.ml.baselines import fit_baselines
from workstation.ml.candle_columns import N_FEATURES
from workstation.ml.folds import walk_forward_folds
from workstation.ml.scoring import (
    EDGE,
    NO_EDGE,
    SMALL_EDGE,
    VERDICTS,
    bootstrap_margin,
    describe,
    score_head,
    transitions,
)
from workstation.ml.targets import MASKED, Targets, TargetSpec
from workstation.paths import app_paths

DAY = 86_400_000
M = 60_000


def days_of(n: int, per_day: int) -> np.ndarray:
    return np.arange(n) // per_day


def test_the_interval_resamples_whole_days_and_needs_enough_of_them():
    right = np.ones(1000, dtype=bool)
    assert bootstrap_margin(right, ~right, days_of(1000, 100)).interval() == (1.0, 1.0)
    assert bootstrap_margin(right, right, days_of(1000, 100)).interval() == (0.0, 0.0)
    assert bootstrap_margin(right, ~right, days_of(1000, 250)) is None  # four days: too few
    # a model right on even days, a baseline on odd ones: no margin on average, and the
    # interval straddles 0 with the day-to-day swings
    model = np.repeat(np.arange(10) % 2 == 0, 100)
    low, high = bootstrap_margin(model, ~model, days_of(1000, 100)).interval()
    assert low < 0 < high


def test_a_head_is_scored_against_its_best_baseline_on_the_same_candles():
    rng = np.random.default_rng(0)
    n = 3000
    truth = rng.integers(0, 3, n)
    truth[:100] = MASKED  # not scored
    model = np.where(rng.random(n) < 0.6, truth, (truth + 1) % 3)  # right 60 %
    weak = np.where(rng.random(n) < 0.4, truth, (truth + 1) % 3)
    strong = np.where(rng.random(n) < 0.55, truth, (truth + 2) % 3)
    strong[100:600] = MASKED  # no prediction there: counted as wrong, not skipped
    score = score_head("candle", truth, model, {"majority": weak, "logistic": strong},
                       days_of(n, 300))
    scored = truth != MASKED
    assert score.n == scored.sum() == 2900
    assert score.accuracy == pytest.approx(np.mean(model[scored] == truth[scored]))
    assert score.baselines["logistic"] == pytest.approx(np.mean(strong[scored] == truth[scored]))
    assert score.best_baseline == "logistic" and score.margin == pytest.approx(
        score.accuracy - score.baselines["logistic"])
    assert score.interval[0] > 0 and score.verdict == EDGE
    assert sum(map(sum, score.confusion)) == score.n
    sided = np.isin(truth, [0, 2]) & np.isin(model, [0, 2])
    assert score.direction_accuracy == pytest.approx(np.mean(truth[sided] == model[sided]))
    same = score_head("candle", truth, model, {"majority": model.copy()}, days_of(n, 300))
    assert same.margin == 0 and same.verdict == NO_EDGE and "no edge shown" in describe(
        "candle", same)
    # certain but tiny: on 300,000 candles the model is right on 0.3 % more of them
    big = 300_000
    truth = rng.integers(0, 3, big)
    base = np.where(rng.random(big) < 0.40, truth, (truth + 1) % 3)
    better = base.copy()
    fix = rng.choice(np.flatnonzero(better != truth), int(0.003 * big), replace=False)
    better[fix] = truth[fix]
    tiny = score_head("candle", truth, better, {"majority": base}, days_of(big, 1440))
    assert tiny.interval[0] > 0 and tiny.margin == pytest.approx(0.003)
    assert tiny.verdict == SMALL_EDGE and "too small to use" in describe("candle", tiny)
    empty = score_head("trend", np.full(10, MASKED), np.zeros(10, dtype=int), {},
                       days_of(10, 1))
    assert empty.accuracy is None and describe("trend", empty) == "trend —"


def test_transitions_count_true_changes_found_within_the_window():
    truth = np.array([0, 0, 1, 1, 1, 0, 0, 2, 2, 2, MASKED, 0, 0])
    predicted = np.array([0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0])
    found = transitions(truth, predicted, window=1)
    # changes at 2 (to long: predicted at 3), 5 (to flat: predicted at 6), 7 (to short: never)
    assert (found.true, found.hits, found.timing_error) == (3, 2, 1.0)
    assert found.hit_rate == pytest.approx(2 / 3)
    truth, predicted = np.tile(truth, 20), np.tile(predicted, 20)  # enough marks to score
    score = score_head("position", truth, predicted, {"majority": np.zeros_like(truth)},
                       days_of(len(truth), 13))
    assert (score.transitions.true, score.transitions.hits) == (60, 40)  # default window: 5
    assert "entries and exits found 40/60 within 5 candles, 1.0 candles off" in describe(
        "position", score)


def targets_of(candle: np.ndarray, volatility: np.ndarray) -> Targets:
    n = len(candle)
    masked = np.full(n, MASKED, dtype=np.int64)
    return Targets(candle.astype(np.int64), masked.copy(), masked.copy(), masked.copy(),
                   np.zeros(n, dtype=np.float32), volatility)


class _Data:
    """What ``fit_baselines`` reads: features, targets, open times and the target settings."""

    def __init__(self, features, targets):
        self.features, self.targets, self.target_spec = features, targets, TargetSpec()
        self.ts = M * np.arange(len(features), dtype=np.int64)


def test_baselines_are_fitted_on_the_training_span_only():
    rng = np.random.default_rng(1)
    n = 4000
    volatility = rng.uniform(1, 10, n)
    features = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    # flat (1) when calm, up (2) when wild: what the volatility rule is made to find
    candle = np.where(volatility < 4.0, 1, 2)
    fitted = fit_baselines(_Data(features, targets_of(candle, volatility)), (0, 3000))
    got = fitted.predict("candle", 3000, n)
    assert (got["volatility"] == candle[3000:]).mean() > 0.97
    assert set(got) == {"majority", "volatility", "logistic", "persistence"}
    assert (got["persistence"] == candle[2999:n - 1]).all()  # the move that just completed
    assert (got["majority"] == np.bincount(candle[:3000]).argmax()).all()
    # a class decided by the first feature: logistic regression on the features finds it
    candle = np.where(features[:, 0] > 0, 2, 0)
    got = fit_baselines(_Data(features, targets_of(candle, volatility)), (0, 3000)).predict(
        "candle", 3000, n)
    assert (got["logistic"] == candle[3000:]).mean() > 0.95
    # the future does not move the fit: changing the test span's targets changes nothing
    later = candle.copy()
    later[3000:] = 1
    refit = fit_baselines(_Data(features, targets_of(later, volatility)), (0, 3000))
    assert all((refit.predict("candle", 3000, n)[k] == got[k]).all()
               for k in ("majority", "volatility", "logistic"))


def test_walk_forward_folds_expand_and_keep_an_embargo_before_each_test_span():
    folds = walk_forward_folds(10_000, 4, seq_len=50, horizon=10)
    assert [f.index for f in folds] == [0, 1, 2, 3]
    assert folds[-1].test[1] == 10_000 and all(f.train[0] == 0 for f in folds)
    for a, b in itertools.pairwise(folds):
        assert a.test[1] == b.test[0] and a.train[1] < b.train[1]  # expanding, adjacent tests
    for f in folds:
        assert f.test[0] - f.train[1] == f.embargo == 60 and f.test[1] - f.test[0] == 2000
    with pytest.raises(WorkstationError, match="too few for 4 folds"):
        walk_forward_folds(600, 4, seq_len=50, horizon=10)
    with pytest.raises(WorkstationError, match="at least 2 folds"):
        walk_forward_folds(10_000, 1, seq_len=50, horizon=10)


def test_evaluate_prints_one_object_per_fold_and_head_then_a_summary(capsys):
    code = main(["evaluate", "--source", "demo", "--timeframe", "1h", "--max-candles", "3000",
                 "--seq-len", "16", "--batch-size", "32", "--folds", "2", "--epochs", "1",
                 "--stride", "16", "--threads", "1", "--seeds", "2", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    objects = [json.loads(line) for line in out.out.splitlines()]
    per_fold = [o for o in objects if "fold" in o]
    assert [(o["fold"], o["head"]) for o in per_fold] == [
        (k, h) for k in (0, 1) for h in ("candle", "trend", "position", "regime")]
    (summary,) = [o for o in objects if o.get("summary")]
    candle = summary["heads"]["candle"]
    assert set(candle["baselines"]) == {"majority", "volatility", "logistic", "persistence",
                                        "lagged_logistic", "boosted_trees"}
    assert candle["n"] == sum(o["n"] for o in per_fold if o["head"] == "candle")
    assert candle["verdict"] in VERDICTS and len(candle["interval"]) == 2
    assert summary["heads"]["position"]["accuracy"] is None  # no marks: nothing to score
    assert "2 walk-forward folds" in out.err and "all 2 test spans" in out.err
    # two seeds a fold, the block length beside every interval, one primary verdict
    assert "2 seeds a fold" in out.err and "(blocks of " in out.err
    assert summary["primary"] == "candle" and candle["multiplicity"] == "primary"
    assert len(candle["seed_margins"]) == 2 and candle["block_days"] >= 1
    assert candle["margin"] == pytest.approx(sum(candle["seed_margins"]) / 2)
    trend = summary["heads"]["trend"]
    adjusted = [h for heads in summary["folds_adjusted"] for h in heads.values()
                if h["p_value"] is not None] + [trend]
    assert {h["multiplicity"] for h in adjusted} == {f"adjusted (Holm, {len(adjusted)} verdicts)"}
    assert all(o["embargo"] == 16 + 10 and o["embargo_words"] == (
        "26 candles = 16-candle windows + the 10-candle horizon") and len(o["seed_epochs"]) == 2
        for o in per_fold)
    assert "embargo 26 candles = 16-candle windows + the 10-candle horizon" in out.err


def test_evaluate_widens_the_embargo_to_the_longest_mark_and_checks_the_labels(capsys):
    from workstation.market.sources import load_series

    candles, _ = load_series("demo", "ETH/USDT", parse_timeframe("1h"), max_candles=3000)
    ts, close = candles.ts, candles.close
    spans = [(100 + 200 * k, 100 + 200 * k + (150 if k == 3 else 60)) for k in range(14)]
    with AnnotationStore(app_paths().annotations_db) as store:
        for k, (entry, exit_) in enumerate(spans):
            store.add(Trade(market="demo", symbol="ETH/USDT", timeframe="1h",
                            direction="long" if k % 2 else "short", entry_ts=int(ts[entry]),
                            entry_price=float(close[entry]), exit_ts=int(ts[exit_]),
                            exit_price=float(close[exit_])))
    argv = ["evaluate", "--source", "demo", "--symbol", "ETH/USDT", "--timeframe", "1h",
            "--max-candles", "3000", "--seq-len", "16", "--batch-size", "32", "--folds", "2",
            "--stride", "16", "--epochs", "1", "--threads", "1", "--seeds", "2", "--max-embargo",
            "120",
            "--primary", "trend", "--json"]
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.err
    objects = [json.loads(line) for line in out.out.splitlines()]
    words = ("136 candles = 16-candle windows + the longest mark, 120 candles (capped at 120; "
             "1 mark is longer)")
    assert {o["embargo_words"] for o in objects if "fold" in o} == {words}
    assert f"embargo {words}" in out.err
    (summary,) = [o for o in objects if o.get("summary")]
    assert summary["primary"] == "trend" and summary["heads"]["trend"]["multiplicity"] == "primary"
    assert summary["heads"]["candle"]["multiplicity"].startswith("adjusted (Holm, ")
    (reach,) = summary["labels"]
    assert (reach["head"], reach["marks"], reach["longest"]) == ("position", 14, 150)
    # 13 trades of 60 candles read 60..1 ahead, one of 150 reads 150..1: median 34
    assert reach["median"] == 34 and reach["window"] == 60 and reach["entries"] == 14
    assert "labels: position labels read ahead a median 34 candles" in out.err
    # the position head's marks per test span (the folds cut the reviewed stretch): too few
    # (here the first fold's 4 trades) give no accuracy, and the JSON says how many there were
    position = [o for o in objects if o.get("head") == "position"] + [summary["heads"]["position"]]
    for o in position:
        marks = o["marks"]
        assert marks["kind"] == "trades" and marks["labelled"] == o["n"]
        assert (o["accuracy"] is None) == (marks["marks"] < 5 or marks["labelled"] < 200)
    assert [o["marks"]["marks"] for o in position] == [4, 5, 9]
    assert "position: too few marks (4 trades, " in out.err
    assert main([*argv[:-5], "--max-embargo=-1"]) == 1
    assert "--max-embargo must be at least 0" in capsys.readouterr().err


def test_evaluate_checks_its_arguments_first(capsys):
    assert main(["evaluate", "--folds", "1"]) == 1
    assert "--folds must be at least 2" in capsys.readouterr().err
    assert main(["evaluate", "--preset", "huge"]) == 1
    assert "unknown model preset 'huge'" in capsys.readouterr().err


def test_annotations_targets_writes_exactly_what_training_learns(tmp_path, capsys):
    from workstation.market.sources import load_series
    from workstation.ml.job import label_series

    candles, key = load_series("demo", "ETH/USDT", ONE_MINUTE, max_candles=400)
    with AnnotationStore(app_paths().annotations_db) as store:
        store.add(Trade(market="demo", symbol="ETH/USDT", timeframe="1m", direction="short",
                        entry_ts=int(candles.ts[100]), entry_price=float(candles.close[100]),
                        exit_ts=int(candles.ts[150]), exit_price=float(candles.close[150])))
    out = tmp_path / "targets.csv"
    assert main(["annotations", "targets", "--source", "demo", "--symbol", "ETH/USDT",
                 "--max-candles", "400", "--out", str(out)]) == 0
    assert "1 annotations of DEMO ETH/USDT" in capsys.readouterr().out
    header, *rows = out.read_text().splitlines()
    assert header == "ts,time_utc,position,regime,reviewed,candle,trend,origin"
    cells = [row.split(",") for row in rows]
    by_ts = {int(c[0]): c for c in cells}
    # ten candles (the default margin) before the entry are reviewed: "flat"; before, masked
    assert by_ts[int(candles.ts[89])][2:5] == ["", "", "0"]
    assert by_ts[int(candles.ts[90])][2:5] == ["flat", "", "1"]
    assert by_ts[int(candles.ts[100])][2] == "short" and by_ts[int(candles.ts[150])][2] == "flat"
    labelled = label_series(candles.slice(0, len(cells)), key, TargetSpec(),
                            annotations_db=app_paths().annotations_db)
    names = {"flat": 0, "long": 1, "short": 2, "": MASKED}
    assert [names[c[2]] for c in cells] == labelled.targets.position.tolist()
    assert [c[4] == "1" for c in cells] == labelled.reviewed.tolist()


@pytest.mark.parametrize("span, seq_len", [((300, 1000), 200), ((50, 260), 200), ((0, 37), 16),
                                           ((64, 65), 32)])
def test_every_scored_candle_has_half_a_window_of_history(span, seq_len):
    from workstation.ml.trainer import scoring_windows

    windows = scoring_windows(span, seq_len)
    scored = np.concatenate([np.arange(first, stop) for _, first, stop in windows])
    assert scored.tolist() == list(range(*span))  # each candle once, in order
    for begin, first, stop in windows:
        assert stop <= begin + seq_len and begin <= first
        assert first - begin >= seq_len // 2 or begin == 0  # shorter only at the series start


def test_predictions_are_causal():
    """A candle's prediction depends on no later candle, though windows reach past it."""
    import torch

    from workstation.market.demo import demo_candles
    from workstation.ml.config import TradingTransformerConfig
    from workstation.ml.dataset import DeviceSeries, TrainingData
    from workstation.ml.model import TradingTransformer
    from workstation.ml.trainer import predict_span

    torch.manual_seed(0)
    data = TrainingData.from_candles(demo_candles(700, parse_timeframe("1h"), seed=4,
                                                  end_ts=1_700_000_000_000))
    model = TradingTransformer(TradingTransformerConfig(seq_len=32, d_model=16, n_heads=2,
                                                        n_layers=1, d_ff=32)).eval()
    cpu = torch.device("cpu")
    before, after = ({"position": np.zeros((3, 400)), "regime": np.zeros((3, 400))}
                     for _ in range(2))
    with torch.no_grad():
        whole = predict_span(model, DeviceSeries(data, cpu), (200, 600), 32, 8, cpu,
                             probabilities=before)
        data.features[451:] = np.random.default_rng(1).normal(size=data.features[451:].shape)
        changed = predict_span(model, DeviceSeries(data, cpu), (200, 600), 32, 8, cpu,
                               probabilities=after)
    assert (whole >= 0).all()
    assert np.array_equal(whole[:, :251], changed[:, :251])  # candles 200..450
    assert not np.array_equal(whole[:, 251:], changed[:, 251:])  # the change did reach later
    for h, head in ((2, "position"), (3, "regime")):  # each class's probability, causal too
        assert np.allclose(before[head].sum(axis=0), 1.0)
        assert np.array_equal(before[head].argmax(axis=0), whole[h])
        assert np.array_equal(before[head][:, :251], after[head][:, :251])


def test_folds_trained_in_parallel_processes_score_exactly_as_in_sequence(capsys, tmp_path):
    from workstation.market.csv_io import write_candles_csv
    from workstation.market.demo import demo_candles

    end = 1_700_000_000_000 - 1_700_000_000_000 % 3_600_000
    path = write_candles_csv(demo_candles(2400, parse_timeframe("1h"), seed=4, end_ts=end),
                             tmp_path / "e.csv")
    argv = ["evaluate", "--source", f"csv:{path}", "--symbol", "ETH/USDT", "--timeframe", "1h",
            "--seq-len", "16", "--batch-size", "32", "--folds", "3", "--epochs", "1",
            "--stride", "16", "--threads", "1", "--seeds", "2", "--json"]
    results = {}
    for workers in ("1", "2"):
        code = main([*argv, "--workers", workers])
        out = capsys.readouterr()
        assert code == 0, out.err
        objects = [json.loads(line) for line in out.out.splitlines()]
        for o in objects:
            o.pop("elapsed_s", None)
        results[workers] = objects
        assert "all 3 test spans" in out.err
        assert "fold 3: epoch 1" in out.err  # the trainers' progress, from the workers too
    assert len(results["1"]) == 3 * 4 + 1
    assert results["2"] == results["1"]  # every fold's scores and the summary, exactly
    assert main([*argv, "--workers", "0"]) == 1
    assert "--workers must be at least 1" in capsys.readouterr().err
