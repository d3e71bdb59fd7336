"""The trader heads beside their own baselines (persistence of the last reviewed label, the
position by hour of the day) and the "too few marks" rule of ``ml.scoring``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workstation.ml.baselines import fit_baselines, last_label_before
from workstation.ml.candle_columns import N_FEATURES
from workstation.ml.evaluation import _adjusted
from workstation.ml.events import EpochEnd, MemoryStats, SplitMetrics
from workstation.ml.history.format import record_of
from workstation.ml.scoring import (
    MIN_LABELLED,
    MIN_MARKS,
    describe,
    describe_baselines,
    mark_count,
    score_head,
    scored_head,
)
from workstation.ml.targets import MASKED, Targets, TargetSpec

HOUR = 3_600_000
M = 60_000
L, S, F = 1, 2, 0  # long, short, flat
X = MASKED


class _Data:
    """What ``fit_baselines`` reads: features, targets, open times and the target settings."""

    def __init__(self, ts, position, regime=None, seed: int = 0):
        n = len(ts)
        rng = np.random.default_rng(seed)
        masked = np.full(n, MASKED, dtype=np.int64)
        self.ts = np.asarray(ts, dtype=np.int64)
        self.features = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
        self.targets = Targets(masked.copy(), masked.copy(), np.asarray(position, np.int64),
                               masked.copy() if regime is None else np.asarray(regime, np.int64),
                               np.zeros(n, dtype=np.float32), rng.uniform(1, 10, n))
        self.target_spec = TargetSpec()


def test_trader_persistence_repeats_the_last_reviewed_label_across_gaps_in_review():
    position = np.array([X, X, L, L, X, X, F, S, X, S])
    data = _Data(M * np.arange(10), position)
    got = fit_baselines(data, (0, 10)).predict("position", 0, 10)["persistence"]
    # the first reviewed candle has nothing before it; a gap repeats the label before it
    assert got.tolist() == [X, X, X, L, L, L, L, F, S, S]
    later = fit_baselines(data, (0, 10)).predict("position", 5, 10)["persistence"]
    assert later.tolist() == [L, L, F, S, S]  # labels before the span count too
    assert last_label_before(position, 0, 0).size == 0
    # not fitted: it stands even when the training span holds no target
    untrained = fit_baselines(data, (0, 2)).predict("position", 5, 10)
    assert set(untrained) == {"persistence"} and untrained["persistence"].tolist() == [
        L, L, F, S, S]
    regime = fit_baselines(_Data(M * np.arange(10), np.full(10, X), position), (0, 10))
    assert regime.predict("regime", 0, 10)["persistence"].tolist() == got.tolist()
    assert "hour_of_day" not in regime.predict("regime", 0, 10)  # position only


def test_the_hour_of_day_baseline_finds_a_trader_who_is_long_every_morning():
    ts = np.arange(5 * 24 * 6, dtype=np.int64) * 10 * M  # five days of 10-minute candles
    hour = ts // HOUR % 24
    position = np.where((hour >= 10) & (hour < 12), L, F)
    position[(hour >= 20) & (hour < 22)] = S
    train = (0, 4 * 24 * 6)
    position[:train[1]][hour[:train[1]] >= 20] = X  # no training targets after 20:00
    fitted = fit_baselines(_Data(ts, position), train)
    got = fitted.predict("position", train[1], len(ts))
    day = position[train[1]:]
    late = hour[train[1]:] >= 20
    # long at 10:00-12:00 as the trader is; no target at 20:00-24:00: the majority, flat
    assert (got["hour_of_day"][~late] == day[~late]).all()
    assert (got["hour_of_day"][late] == F).all() and (got["majority"] == F).all()
    assert got["hour_of_day"][hour[train[1]:] == 10].tolist() == [L] * 6


def position_marks(trades: int, labelled: int) -> np.ndarray:
    """``labelled`` reviewed candles, flat but for ``trades`` five-candle longs."""
    truth = np.full(labelled, F)
    for k in range(trades):
        truth[10 + 20 * k:15 + 20 * k] = L
    return truth


def test_entries_and_regions_are_counted_as_the_rule_says():
    # entries: from unlabelled (1, 8), long to short (3), flat to long (6), flat to short (10)
    position = np.array([X, L, L, S, S, F, L, X, L, F, S])
    marks = mark_count("position", position)
    assert (marks.kind, marks.marks, marks.labelled) == ("trades", 5, 9)
    regime = np.array([X, 0, 0, 1, X, 1, 1, 2, 2, 2, 0])  # runs start at 1, 3, 5, 7, 10
    assert (mark_count("regime", regime).kind, mark_count("regime", regime).marks) == (
        "regions", 5)
    assert mark_count("candle", regime) is None  # a market head has no marks


@pytest.mark.parametrize(("trades", "labelled", "too_few"), [
    (MIN_MARKS - 1, MIN_LABELLED, True), (MIN_MARKS, MIN_LABELLED, False),
    (MIN_MARKS, MIN_LABELLED - 1, True)])
def test_a_position_head_needs_five_trades_on_two_hundred_reviewed_candles(trades, labelled,
                                                                          too_few):
    truth = position_marks(trades, labelled)
    model = truth.copy()
    days = np.arange(labelled) * MIN_MARKS // labelled  # five days
    score, boot = scored_head("position", truth, model, {"majority": np.full(labelled, F)},
                              days)
    assert (score.marks.marks, score.marks.labelled, score.too_few) == (trades, labelled,
                                                                        too_few)
    assert score.n == labelled and sum(map(sum, score.confusion)) == labelled
    if too_few:  # no percentage, no margin, no verdict, no bootstrap for Holm
        assert boot is None and score.accuracy is None and score.margin is None
        assert score.verdict is None and score.baselines == {"majority": None}
        assert describe("position", score) == (
            f"position: too few marks ({trades} trades, {labelled} reviewed candles; need 5 "
            f"and 200)")
        assert describe_baselines(score) == "baselines —"
    else:
        assert boot is not None and score.accuracy == 1.0 and score.verdict is not None
        assert describe("position", score).startswith("position 100.0% (majority")


def test_a_regime_head_needs_five_regions_and_the_words_say_one_in_the_singular():
    regime = np.repeat([0, 1, 0, 1, 2], 60)
    for regions, too_few in ((4, True), (5, False)):
        truth = regime.copy()
        truth[truth == 2] = 1 if regions == 4 else 2  # the last run joins the one before
        score = score_head("regime", truth, truth, {"majority": np.zeros(300, int)},
                           np.arange(300) // 60)
        assert (score.marks.marks, score.too_few) == (regions, too_few)
    assert describe("regime", score_head("regime", truth[:60], truth[:60], {},
                                         np.zeros(60, int))) == (
        "regime: too few marks (1 region, 60 labelled candles; need 5 and 200)")
    unmarked = np.full(60, -1)
    assert describe("position", score_head("position", unmarked, unmarked, {},
                                           np.zeros(60, int))) == "position: no marks"


def test_a_head_with_too_few_marks_is_no_verdict_in_holm_family_and_its_counts_are_recorded():
    n = 600
    days = np.arange(n) // 100
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, n)
    candle = scored_head("candle", truth, truth, {"majority": np.zeros(n, int)}, days)
    few = scored_head("position", position_marks(2, n), position_marks(2, n),
                      {"majority": np.zeros(n, int)}, days)
    summary, folds = _adjusted({"candle": candle, "position": few}, [
        {"candle": candle, "position": few}], "position")
    assert summary["position"].too_few and summary["position"].multiplicity is None
    # two verdicts in the family (the pooled and the per-fold candle), none of position
    assert summary["candle"].multiplicity == "adjusted (Holm, 2 verdicts)"
    assert folds[0]["position"].verdict is None
    heads = {"candle": candle[0], "position": few[0]}
    metrics = SplitMetrics(1.0, {}, heads, n, 1)
    record = record_of(EpochEnd("run", 0, 1, 1, metrics, metrics, 1e-3, 1.0,
                                MemoryStats("cpu", 1, None, None, 2), True))
    position = json.loads(json.dumps(record))["val"]["heads"]["position"]
    assert position["too_few"] is True and position["accuracy"] is None
    assert position["marks"] == {"kind": "trades", "marks": 2, "labelled": n,
                                 "min_marks": MIN_MARKS, "min_labelled": MIN_LABELLED}
    assert record["val"]["heads"]["candle"]["too_few"] is False

