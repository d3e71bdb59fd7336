"""Intervals that cover dependence and training noise (a stationary bootstrap whose block
length comes from the data, seeds drawn per resample), Holm's adjustment of every verdict but
the primary one, an embargo as long as the longest mark, and the hindsight check of the
trader's labels."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from workstation.errors import WorkstationError
from workstation.ml.config import EvaluationConfig
from workstation.ml.controls import ma_cross_positions
from workstation.ml.events import HeadScore
from workstation.ml.folds import walk_forward_folds
from workstation.ml.hindsight import binomial_tail, describe_reach, label_reach, marks_longer
from workstation.ml.scoring import (
    EDGE,
    NO_EDGE,
    SMALL_EDGE,
    MarginBootstrap,
    block_length,
    bootstrap_margin,
    describe,
    holm,
    holm_adjusted,
    scored_head,
)
from workstation.ml.targets import MASKED, Targets

FLAT, LONG, SHORT = 0, 1, 2


def ar1(series: int, n: int, phi: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    noise = rng.normal(size=(series, n))
    x = np.empty((series, n))
    x[:, 0] = noise[:, 0] / np.sqrt(1 - phi * phi)
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x


def test_the_block_length_comes_from_the_daily_margins_autocorrelation():
    dependent = [block_length(x) for x in ar1(20, 400, 0.6, seed=1)]
    independent = [block_length(x) for x in ar1(20, 400, 0.0, seed=2)]
    # Politis & White on AR(1) 0.6: about 1.5 n^(1/3) = 11 days; on i.i.d. days 1
    assert min(dependent) > 3 and 6 < np.median(dependent) < 16
    assert np.median(independent) == 1.0 and max(independent) < 3
    x = ar1(1, 400, 0.6, seed=3)[0]
    first = bootstrap_margin(x, np.zeros(400), np.arange(400), seed=5)
    again = bootstrap_margin(x, np.zeros(400), np.arange(400), seed=5)
    assert first.block_days == again.block_days == block_length(x) > 3
    assert np.array_equal(first.resampled, again.resampled)  # deterministic with a seed


def test_the_interval_covers_the_mean_of_autocorrelated_days():
    """200 AR(1) series (phi 0.6) of 400 days, mean 0: the 95 % interval holds 0 in 88-99 %
    of them (whole days drawn one by one, as before, hold it in 62 %)."""
    series = ar1(200, 400, 0.6, seed=0)
    days = np.arange(400)
    covered = 0
    for k, x in enumerate(series):
        low, high = bootstrap_margin(x, np.zeros(400), days, seed=k).interval()
        covered += low <= 0 <= high
    assert 0.88 <= covered / 200 <= 0.99


def test_seeds_count_in_the_margin_and_widen_the_interval():
    rng = np.random.default_rng(4)
    n, per_day = 6000, 100
    truth = rng.integers(0, 3, n)
    base = np.where(rng.random(n) < 0.40, truth, (truth + 1) % 3)
    days = np.arange(n) // per_day
    # two seeds: one 4 pp better than the baseline, one 1 pp worse
    seeds = np.stack([np.where(rng.random(n) < p, truth, (truth + 1) % 3) for p in (0.44, 0.39)])
    score, boot = scored_head("candle", truth, seeds, {"majority": base}, days)
    margins = [float((s == truth).mean() - (base == truth).mean()) for s in seeds]
    assert score.seed_margins == pytest.approx(margins)
    assert score.margin == pytest.approx(np.mean(margins))
    assert score.accuracy == pytest.approx((seeds == truth).mean())
    assert score.block_days == boot.block_days and score.p_value == boot.p_value
    one = bootstrap_margin((seeds == truth).mean(axis=0), base == truth, days)
    low, high = score.interval
    assert high - low > 1.5 * np.subtract(*one.interval()[::-1])  # the seed spread counts
    assert "margin per seed" in describe("candle", score) and "blocks of" in describe(
        "candle", score)


def test_holm_adjusts_step_down():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.02, 0.5]) == pytest.approx([0.04, 0.5])
    assert holm([]) == []
    resampled = np.linspace(-0.01, 0.05, 1001)  # percentiles are easy to read off

    def scored(p_value: float, margin: float = 0.02):
        boot = MarginBootstrap(resampled, 2.0, p_value)
        return HeadScore(0.5 + margin, 1000, {"majority": 0.5}, "majority", margin,
                         boot.interval(), EDGE, p_value=p_value), boot

    # each an edge alone (p < 0.025); Holm: 3 x 0.001, 2 x 0.015, then at least that
    adjusted = holm_adjusted([scored(0.015), scored(0.001), scored(0.02)])
    assert [a.adjusted_p for a in adjusted] == pytest.approx([0.03, 0.003, 0.03])
    assert [a.verdict for a in adjusted] == [NO_EDGE, EDGE, NO_EDGE]
    assert all(a.multiplicity == "adjusted (Holm, 3 verdicts)" for a in adjusted)
    # intervals at the level Holm tests each at: 0.025 / 3 for the smallest p, / 2, / 1
    assert adjusted[1].interval == MarginBootstrap(resampled, 2.0, 0).interval(0.025 / 3)
    assert adjusted[0].interval == MarginBootstrap(resampled, 2.0, 0).interval(0.025 / 2)
    assert adjusted[2].interval == scored(0.02)[0].interval
    assert "adjusted (Holm, 3 verdicts)" in describe("candle", adjusted[0])
    small = holm_adjusted([scored(0.012), scored(0.001, margin=0.001)])
    assert [a.verdict for a in small] == [EDGE, SMALL_EDGE]


def test_the_embargo_is_as_long_as_the_longest_mark_and_capped():
    folds = walk_forward_folds(20_000, 2, seq_len=50, horizon=10, longest_mark=984)
    assert {f.embargo for f in folds} == {50 + 984}
    assert all(f.test[0] - f.train[1] == 1034 for f in folds)
    assert folds[0].words == ("1,034 candles = 50-candle windows + the longest mark, 984 "
                              "candles (capped at 2,000)")
    capped = walk_forward_folds(20_000, 2, seq_len=50, horizon=10, longest_mark=3000,
                                over_cap=2, max_embargo=500)
    assert capped[0].embargo == 550 and "(capped at 500; 2 marks are longer)" in capped[0].words
    short = walk_forward_folds(20_000, 2, seq_len=50, horizon=10, longest_mark=4)
    assert short[0].embargo == 60 and "the 10-candle horizon" in short[0].words
    with pytest.raises(WorkstationError, match="--seeds must be at least 1"):
        EvaluationConfig(seeds=0)
    with pytest.raises(WorkstationError, match="--primary must be one of"):
        EvaluationConfig(primary="price")


def targets_of(position: np.ndarray, regime: np.ndarray, close: np.ndarray) -> Targets:
    n = len(position)
    returns = np.append(np.diff(np.log(close)) * 1e4, np.nan).astype(np.float32)
    masked = np.full(n, MASKED, dtype=np.int64)
    return Targets(masked.copy(), masked.copy(), position.astype(np.int64),
                   regime.astype(np.int64), returns, np.ones(n))


def test_label_reach_measures_how_far_each_label_reads_ahead():
    position = np.array([FLAT, LONG, LONG, LONG, FLAT, SHORT, SHORT, FLAT, MASKED])
    regime = np.array([MASKED, 0, 0, 0, 1, 1, MASKED, MASKED, MASKED])
    trades, regions = label_reach(targets_of(position, regime, np.linspace(100, 101, 9)))
    # trade 1..3 exits at 4: 3, 2, 1 candles ahead; trade 5..6 exits at 7: 2, 1
    assert (trades.head, trades.marks, trades.candles, trades.median, trades.longest) == (
        "position", 2, 5, 2.0, 3)
    assert trades.p95 == pytest.approx(np.percentile([3, 2, 1, 2, 1], 95))
    # regions end at their last candle: 2, 1, 0 and 1, 0
    assert (regions.head, regions.marks, regions.median, regions.longest) == ("regime", 2, 1, 2)
    assert marks_longer(targets_of(position, regime, np.linspace(100, 101, 9)), 2) == 1
    assert label_reach(targets_of(np.full(9, MASKED), np.full(9, MASKED),
                                  np.linspace(100, 101, 9))) == ()


def random_walk(n: int, seed: int) -> np.ndarray:
    return 100 * np.exp(np.cumsum(np.random.default_rng(seed).normal(0, 1e-3, n)))


def zigzag_positions(close: np.ndarray, threshold: float) -> np.ndarray:
    """Long from each swing low to the next swing high, short back down: swings that only
    hindsight knows (a reversal of ``threshold`` confirms the extreme before it)."""
    pivots, up, extreme = [0], True, 0
    for t in range(1, len(close)):
        if (close[t] > close[extreme]) == up and close[t] != close[extreme]:
            extreme = t
        elif abs(close[t] / close[extreme] - 1) > threshold:
            pivots.append(extreme)
            up, extreme = not up, t
    position = np.full(len(close), FLAT)
    for k, (a, b) in enumerate(itertools.pairwise(pivots)):
        position[a:b] = LONG if k % 2 == 0 else SHORT
    return position


def test_marks_drawn_with_hindsight_are_flagged_and_a_causal_rule_is_not():
    close = random_walk(6000, seed=8)
    none = np.full(len(close), MASKED)
    (zigzag,) = label_reach(targets_of(zigzag_positions(close, 0.004), none, close))
    assert zigzag.hindsight and zigzag.window >= 5 and zigzag.entries > 50
    assert zigzag.extreme_rate > 0.5 > 3 * zigzag.chance and zigzag.p_value < 1e-10
    assert describe_reach(zigzag).count("labels look like hindsight: ") == 1
    rule = ma_cross_positions(close, 10, 40)
    rule_position = np.select([rule > 0, rule < 0], [LONG, SHORT], FLAT)
    (causal,) = label_reach(targets_of(rule_position, none, close))
    assert not causal.hindsight and causal.entries > 50
    assert causal.extreme_rate < 2 * causal.chance
    assert "no sign of hindsight" in describe_reach(causal)


def test_the_binomial_tail():
    assert binomial_tail(0, 10, 0.3) == 1.0
    assert binomial_tail(10, 10, 0.5) == pytest.approx(0.5 ** 10)
    assert binomial_tail(2, 3, 0.5) == pytest.approx(0.5)
    assert binomial_tail(60, 100, 0.5) == pytest.approx(0.028443966820490392)
