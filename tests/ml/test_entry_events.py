"""The position head's entries and exits as events on held-out candles: the trader's and the
model's entries and exits, recall, precision and timing within a window, a random baseline at
the model's rate, and a day-bootstrap interval of the margin over it."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from workstation.annotations.model import Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.cli import main
from workstation.market.sources import load_series
from workstation.market.timeframes import parse_timeframe
from workstation.ml.entry_events import (
    ENTRIES,
    EVENT_WINDOW,
    EXITS,
    LONG,
    MIN_EVENTS,
    SHORT,
    describe_match,
    events,
    offsets,
    span_tallies,
    trade_events,
)
from workstation.ml.events import EvaluationFinished
from workstation.ml.history.format import record_of
from workstation.ml.scoring import TRANSITION_WINDOW
from workstation.ml.targets import MASKED
from workstation.paths import app_paths

FLAT, M = 0, MASKED
HOUR = 3_600_000


def hourly(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.int64) * HOUR  # 24 candles a UTC day


def trades(n: int, starts, length: int, sides) -> np.ndarray:
    """Flat everywhere but ``length``-candle trades from each start, of the given sides."""
    x = np.zeros(n, dtype=np.int64)
    for start, side in zip(starts, sides, strict=True):
        x[start:start + length] = side
    return x


def test_entries_and_exits_of_a_position_series():
    x = np.array([LONG, LONG, FLAT, LONG, SHORT, SHORT, M, SHORT, FLAT, M, FLAT, LONG, M])
    at, side = events(x, ENTRIES)
    # not the first candle (what came before is unseen); from flat, from the other side and
    # from an unreviewed candle
    assert at.tolist() == [3, 4, 7, 11] and side.tolist() == [LONG, SHORT, SHORT, LONG]
    at, side = events(x, EXITS)
    # long to flat, long to short, short to flat; a trade followed by an unreviewed candle
    # has no exit seen
    assert at.tolist() == [2, 4, 8] and side.tolist() == [LONG, LONG, SHORT]


def test_offsets_take_the_nearest_event_of_the_same_side_within_the_window():
    at, side = np.array([10, 50, 90, 130]), np.array([LONG, LONG, SHORT, LONG])
    other_at = np.array([7, 13, 48, 52, 91, 140])
    other_side = np.array([LONG, LONG, LONG, SHORT, LONG, LONG])
    found = offsets(at, side, other_at, other_side, 5)
    # 10: 7 and 13 equally near, the earlier; 50: 48 (52 is short); 90: 91 is long, no short
    # near; 130: 140 too far
    assert found[:2].tolist() == [-3, -2] and np.isnan(found[2:]).all()


def test_recall_precision_and_timing_are_exact_on_crafted_spans():
    n = 24 * 10
    starts = list(range(10, 230, 20))  # 11 trades of 8 candles, alternating sides
    sides = [LONG if k % 2 else SHORT for k in range(len(starts))]
    truth = trades(n, starts, 8, sides)
    # the model enters 2 candles late on the first 6, on the wrong side on the 7th, misses the
    # rest, and opens a 1-candle trade of its own far from any of the trader's
    model = np.zeros(n, dtype=np.int64)
    for k, (start, side) in enumerate(zip(starts[:7], sides[:7], strict=True)):
        model[start + 2:start + 8] = side if k < 6 else LONG + SHORT - side
    model[237] = LONG
    spans = span_tallies(truth, model, hourly(n), seed=1)
    scored = trade_events([spans], seed=1)
    e = scored.entries
    assert (e.true, e.predicted, e.found, e.made) == (11, 8, 6, 6)
    assert e.recall == pytest.approx(6 / 11) and e.precision == pytest.approx(6 / 8)
    assert (e.timing, e.abs_timing) == (2.0, 2.0) and e.window == EVENT_WINDOW == 5
    x = scored.exits  # the model's first six exit with the trader's, on the same candle
    assert (x.true, x.found, x.timing, x.abs_timing) == (11, 6, 0.0, 0.0)
    assert x.predicted == 8 and x.made == 6  # the 7th (wrong side) and the 1-candle trade
    assert e.recall_margin == pytest.approx(e.recall - e.random_recall)
    assert e.precision_margin == pytest.approx(e.precision - e.random_precision)
    assert TRANSITION_WINDOW == EVENT_WINDOW


def test_unreviewed_candles_are_judged_on_neither_side():
    n = 24 * 6
    truth = trades(n, range(10, 130, 20), 6, [LONG] * 6)
    model = truth.copy()
    truth[70:90] = MASKED  # the trader reviewed nothing there: the model's trade is not judged
    model[100:140] = MASKED  # no prediction there: the trader's trades are not judged either
    e = trade_events([span_tallies(truth, model, hourly(n))]).entries
    # 10, 30, 50 and 90 (entered from an unreviewed candle); 70 and 110 are not judged
    assert (e.true, e.predicted, e.found, e.made) == (4, 4, None, None)
    assert e.recall is None and describe_match(e) == (
        f"entries within {EVENT_WINDOW} candles: too few entries (4)")
    assert MIN_EVENTS == 5


def _expected_random_recall(n_candidates: int, window: int, count: int, long_share: float
                            ) -> float:
    """The chance that ``count`` distinct random candles among ``n_candidates``, each long
    with ``long_share``, put a long one within ``window`` candles of a given long entry."""
    w = 2 * window + 1
    none = sum(math.comb(w, j) * math.comb(n_candidates - w, count - j)
               / math.comb(n_candidates, count) * (1 - long_share) ** j
               for j in range(min(w, count) + 1))
    return 1 - none


def test_the_random_baseline_is_close_to_its_analytic_expectation():
    n = 24 * 40
    starts = list(range(40, n - 40, 80))  # 11 long trades, far apart and from the edges
    truth = trades(n, starts, 10, [LONG] * len(starts))
    model = np.zeros(n, dtype=np.int64)
    rng = np.random.default_rng(7)
    own = np.sort(rng.choice(np.arange(1, n - 2, 3), 60, replace=False))
    model[own] = np.where(np.arange(60) % 4 == 0, SHORT, LONG)  # 60 one-candle entries, 3/4 long
    e = trade_events([span_tallies(truth, model, hourly(n), seed=3)]).entries
    assert e.predicted == 60
    expected = _expected_random_recall(n - 1, EVENT_WINDOW, 60, 0.75)
    assert e.random_recall == pytest.approx(expected, abs=0.03)
    # a random long entry meets one of the 11 entries if it lies within 5 candles of it
    assert e.random_precision == pytest.approx(0.75 * 11 * 11 / (n - 1), abs=0.01)


def test_the_interval_excludes_0_for_a_perfect_model_and_not_for_a_random_one():
    n = 24 * 30
    rng = np.random.default_rng(0)
    starts = np.sort(rng.choice(np.arange(2, n - 12, 12), 45, replace=False))
    truth = trades(n, starts, 6, rng.choice([LONG, SHORT], starts.size))
    perfect = trade_events([span_tallies(truth, truth.copy(), hourly(n))])
    for m in (perfect.entries, perfect.exits):
        assert (m.recall, m.precision, m.timing) == (1.0, 1.0, 0.0)
        assert m.recall_interval[0] > 0 and m.precision_interval[0] > 0
        assert m.block_days >= 1
    # a model that trades as often, at random times and sides
    guess = trades(n, np.sort(rng.choice(np.arange(2, n - 12, 12), 45, replace=False)), 6,
                   rng.choice([LONG, SHORT], 45))
    chance = trade_events([span_tallies(truth, guess, hourly(n))])
    for m in (chance.entries, chance.exits):
        assert m.recall_interval[0] < 0 < m.recall_interval[1]
        assert m.precision_interval[0] < 0 < m.precision_interval[1]
    assert "recall 100.0% (random " in describe_match(perfect.entries)


def test_spans_pool_their_days_and_their_timing_errors():
    n = 24 * 4
    truth = trades(n, range(6, 90, 12), 6, [LONG, SHORT, LONG, SHORT, LONG, SHORT, LONG])
    early = np.roll(truth, -1)  # one candle early everywhere
    late = np.roll(truth, 2)
    spans = [span_tallies(truth, early, hourly(n)),
             span_tallies(truth, late, hourly(n) + n * HOUR)]
    one, two = (trade_events([s]).entries for s in spans)
    both = trade_events(spans).entries
    assert (one.timing, two.timing) == (-1.0, 2.0)
    assert both.true == one.true + two.true and both.found == one.found + two.found
    assert both.timing == 0.5 and both.abs_timing == 1.5  # medians of the pooled errors
    assert both.random_recall == pytest.approx(
        (one.random_recall * one.true + two.random_recall * two.true) / both.true)
    # too few days for an interval in each span alone (4); eight together
    assert one.recall_interval is None and both.recall_interval is not None
    assert "recall 100.0% (random " in describe_match(one)
    assert "too few days for an interval" in describe_match(one)
    assert "too few" not in describe_match(both) and "blocks of " in describe_match(both)


def test_the_run_history_records_them_per_fold_and_pooled():
    n = 24 * 8
    truth = trades(n, range(6, 180, 12), 6, [LONG, SHORT] * 7 + [LONG])
    scored = trade_events([span_tallies(truth, np.roll(truth, 1), hourly(n))])
    record = record_of(EvaluationFinished(1, {}, 1.0, trade_events=scored,
                                          fold_trade_events=(scored,)))
    json.dumps(record, allow_nan=False)
    assert record["trade_events"]["entries"]["recall"] == scored.entries.recall == 1.0
    assert record["trade_events"]["exits"]["timing"] == 1.0
    assert record["fold_trade_events"] == [record["trade_events"]]
    assert record_of(EvaluationFinished(1, {}, 1.0))["trade_events"] is None


def test_a_tiny_evaluation_reports_entries_and_exits_per_fold_and_pooled(capsys):
    candles, _ = load_series("demo", "ETH/USDT", parse_timeframe("1h"), max_candles=900)
    ts, close = candles.ts, candles.close
    common = {"market": "demo", "symbol": "ETH/USDT", "timeframe": "1h"}
    with AnnotationStore(app_paths().annotations_db) as store:
        store.merge([Region(**common, start_ts=int(ts[0]), end_ts=int(ts[-1]), label="reviewed"),
                     *(Trade(**common, direction="long" if k % 2 else "short",
                             entry_ts=int(ts[i]), entry_price=float(close[i]),
                             exit_ts=int(ts[i + 12]), exit_price=float(close[i + 12]),
                             **({"blind": True, "decided_at": (int(ts[i + 1]), int(ts[i + 13]))}
                                if k % 3 == 0 else {}))  # a third made in blind replay
                       for k, i in enumerate(range(20, 880, 30)))])
    code = main(["evaluate", "--source", "demo", "--symbol", "ETH/USDT", "--timeframe", "1h",
                 "--max-candles", "900", "--seq-len", "16", "--batch-size", "32", "--folds",
                 "2", "--stride", "16", "--epochs", "1", "--threads", "1", "--seeds", "1",
                 "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    objects = [json.loads(line) for line in out.out.splitlines()]
    folds = [o["trade_events"] for o in objects if o.get("head") == "position"]
    assert len(folds) == 2 and all("trade_events" not in o for o in objects
                                   if o.get("head") not in (None, "position"))
    (summary,) = [o for o in objects if o.get("summary")]
    assert summary["folds_trade_events"] == folds
    pooled = summary["trade_events"]
    for kind in ("entries", "exits"):
        per_fold = [f[kind] for f in folds]
        assert all(f["true"] >= MIN_EVENTS and f["window"] == EVENT_WINDOW for f in per_fold)
        assert pooled[kind]["true"] == sum(f["true"] for f in per_fold)
        assert pooled[kind]["found"] == sum(f["found"] for f in per_fold)
        assert 0 <= pooled[kind]["recall"] <= 1 and pooled[kind]["random_recall"] is not None
        assert pooled[kind]["recall_margin"] == pytest.approx(
            pooled[kind]["recall"] - pooled[kind]["random_recall"])
        assert len(pooled[kind]["recall_interval"]) == 2
    assert out.err.count(f"\n    entries within {EVENT_WINDOW} candles: trader ") == 3
    assert out.err.count(f"\n    exits within {EVENT_WINDOW} candles: trader ") == 3
    # and against the blind marks only, per fold and pooled
    for kind in ("entries", "exits"):
        per_fold = [f["blind"][kind] for f in folds]
        assert all(0 < f["true"] < t[kind]["true"] for f, t in zip(per_fold, folds))
        assert pooled["blind"][kind]["true"] == sum(f["true"] for f in per_fold)
        assert pooled["blind"][kind]["predicted"] <= pooled[kind]["predicted"]
    assert out.err.count(f"vs blind marks: entries within {EVENT_WINDOW} candles: ") == 3
