"""Control marks (``ml.controls``): trades made by a moving-average cross rule, causal, end to
end and importable, and the negative control: the same trades shuffled in time show no edge in
a walk-forward evaluation at the defaults (20,000 seeded demo 1m candles, about 9 days of
pooled test spans, enough for a day-block interval; 64-candle windows and a 5/20 cross).

The positive side, that rule marks earn an edge, is tested where a trader sees it, in the
window (``tests/ui/test_teaching.py``: Teach a rule), and measured on real candles in
docs/evaluation.md ("What lets the position head learn rules at the defaults").
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from workstation.annotations.io import import_annotations, read_json, write_json
from workstation.annotations.model import Trade
from workstation.annotations.overlap import overlapping_pairs
from workstation.annotations.store import AnnotationStore
from workstation.annotations.targets import LONG, MASKED, SHORT, trader_targets
from workstation.cli import main
from workstation.errors import WorkstationError
from workstation.market.candles import Candles
from workstation.market.csv_io import write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.perturb import changed_after
from workstation.market.series import MarketKey, SeriesKey
from workstation.market.sources import load_series
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml import job
from workstation.ml.config import EvaluationConfig
from workstation.ml.controls import ma_cross_marks, ma_cross_positions, shuffled_marks
from workstation.ml.scoring import NO_EDGE
from workstation.paths import app_paths

END_TS = 1_700_000_000_000
DEMO = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
FAST, SLOW = 5, 20


def candles_of(n: int, seed: int = 7) -> Candles:
    return demo_candles(n, ONE_MINUTE, seed=seed, end_ts=END_TS)


def spans(trades: list[Trade]) -> list[tuple[int, int, str]]:
    return [(t.entry_ts, t.exit_ts, t.direction.value) for t in trades]


def records(trades: list[Trade]) -> list[tuple]:
    """What a mark says (all but when it was made)."""
    return [(t.id, t.entry_ts, t.entry_price, t.exit_ts, t.exit_price, t.direction, t.tags,
             t.notes) for t in trades]


def test_positions_are_the_moving_average_cross_of_the_closes():
    close = candles_of(500).close
    got = ma_cross_positions(close, FAST, SLOW)
    fast = np.convolve(close, np.ones(FAST) / FAST)[FAST - 1:len(close)]
    slow = np.convolve(close, np.ones(SLOW) / SLOW)[SLOW - 1:len(close)]
    above = fast[SLOW - FAST:] > slow
    assert (got[:SLOW - 1] == 0).all()  # no slow average yet: flat
    assert (got[SLOW - 1:] == np.where(above, 1, -1)).all()
    # a tie keeps the position: constant closes after a rise stay long
    flat_after_rise = np.concatenate((np.linspace(100, 110, 30), np.full(30, 110.0)))
    positions = ma_cross_positions(flat_after_rise, FAST, SLOW)
    assert (positions[SLOW - 1:] == 1).all()
    with pytest.raises(WorkstationError, match="1 <= fast < slow"):
        ma_cross_positions(close, 20, 20)


def test_marks_are_causal_later_candles_change_nothing_before_them():
    candles = candles_of(3000)
    t, ts = 2000, candles.ts
    changed = changed_after(candles, int(ts[t]), seed=0, drop=0.0)
    assert (ma_cross_positions(changed.close, FAST, SLOW)[:t + 1]
            == ma_cross_positions(candles.close, FAST, SLOW)[:t + 1]).all()
    before = [m for m in ma_cross_marks(candles, DEMO.market, fast=FAST, slow=SLOW)
              if m.exit_ts <= ts[t]]
    after = [m for m in ma_cross_marks(changed, DEMO.market, fast=FAST, slow=SLOW)
             if m.exit_ts <= ts[t]]
    assert len(before) > 50 and records(before) == records(after)
    # a series that starts later gives the same trades once its slow average exists
    later = ma_cross_marks(candles.slice(700, 3000), DEMO.market, fast=FAST, slow=SLOW)
    assert spans(later[1:]) == spans([m for m in ma_cross_marks(candles, DEMO.market,
                                                                fast=FAST, slow=SLOW)
                                      if m.entry_ts >= later[1].entry_ts])


def test_marks_touch_end_to_end_and_label_every_candle_with_the_rule():
    candles = candles_of(3000)
    marks = ma_cross_marks(candles, DEMO.market, fast=FAST, slow=SLOW)
    assert overlapping_pairs(marks) == []
    assert all(a.exit_ts == b.entry_ts and a.direction != b.direction
               for a, b in pairwise(marks))
    lengths = np.array([m.holding_ms for m in marks]) // 60_000
    assert np.median(lengths) >= 5  # regimes, not one-candle flips
    assert all(m.entry_price == candles.close[candles.index_of(m.entry_ts)] for m in marks)
    assert all(m.market_key == MarketKey("demo", "DEMO/USDT") and "control" in m.tags
               for m in marks)
    labels = trader_targets(marks, candles.ts, ONE_MINUTE).position
    rule = ma_cross_positions(candles.close, FAST, SLOW)
    first, last = candles.index_of(marks[0].entry_ts), candles.index_of(marks[-1].exit_ts)
    assert (labels[first:last] == np.where(rule[first:last] > 0, LONG, SHORT)).all()
    assert (labels[last + 11:] == MASKED).all()  # the regime still open is no trade yet
    assert ma_cross_marks(candles_of(SLOW + 5), DEMO.market, fast=FAST, slow=SLOW) == []


def test_shuffled_marks_keep_the_trades_and_break_the_rule():
    candles = candles_of(3000)
    marks = ma_cross_marks(candles, DEMO.market, fast=FAST, slow=SLOW)
    shuffled = shuffled_marks(marks, candles, seed=1)
    assert len(shuffled) == len(marks) and overlapping_pairs(shuffled) == []
    assert sorted((m.holding_ms, m.direction.value) for m in shuffled) == sorted(
        (m.holding_ms, m.direction.value) for m in marks)
    assert (shuffled[0].entry_ts, shuffled[-1].exit_ts) == (marks[0].entry_ts,
                                                            marks[-1].exit_ts)
    assert all(a.exit_ts == b.entry_ts for a, b in pairwise(shuffled))
    assert [m.direction for m in shuffled] == [m.direction for m in marks]  # still alternating
    assert all(m.exit_price == candles.close[candles.index_of(m.exit_ts)] for m in shuffled)
    assert all("shuffled seed 1" in m.tags for m in shuffled)
    assert spans(shuffled_marks(marks, candles, seed=1)) == spans(shuffled)
    assert spans(shuffled_marks(marks, candles, seed=2)) != spans(shuffled)
    first, last = candles.index_of(marks[0].entry_ts), candles.index_of(marks[-1].exit_ts)
    labels = trader_targets(shuffled, candles.ts, ONE_MINUTE).position[first:last]
    rule = np.where(ma_cross_positions(candles.close, FAST, SLOW) > 0, LONG, SHORT)
    assert 0.4 < np.mean(labels == rule[first:last]) < 0.6  # the rule no longer holds
    with pytest.raises(WorkstationError, match="marked on these 1m candles"):
        shuffled_marks(marks, candles.slice(100, 3000), seed=1)


def test_control_marks_command_writes_marks_that_import(tmp_path, capsys):
    csv = write_candles_csv(candles_of(2000), tmp_path / "eth.csv")
    marks_file, shuffled_file = tmp_path / "marks.json", tmp_path / "shuffled.json"
    base = ["control-marks", "--source", f"csv:{csv}", "--symbol", "ETH/USDT",
            "--fast", str(FAST), "--slow", str(SLOW)]
    assert main(base + ["--out", str(marks_file)]) == 0
    out = capsys.readouterr().out
    candles, key = load_series(f"csv:{csv}", "ETH/USDT", ONE_MINUTE)
    assert key.market == MarketKey("real", "ETH/USDT")
    expected = ma_cross_marks(candles, key.market, fast=FAST, slow=SLOW)
    assert f"wrote {len(expected):,} 5/20 cross trades of ETH/USDT 1m" in out
    assert spans(read_json(marks_file)) == spans(expected)
    assert main(base + ["--shuffle", "--seed", "3", "--out", str(shuffled_file)]) == 0
    assert spans(read_json(shuffled_file)) == spans(shuffled_marks(expected, candles, seed=3))
    with AnnotationStore() as store:
        assert import_annotations(store, marks_file).merge.added == len(expected)
        assert import_annotations(store, marks_file).merge.added == 0  # same ids again
    assert main(base[:-4] + ["--fast", "20", "--slow", "20", "--out", str(marks_file)]) == 1
    assert "1 <= fast < slow" in capsys.readouterr().err


def evaluate_marks(trades: list[Trade], candles: Candles, tmp_path):
    """Import ``trades`` through a JSON file into the test's store and evaluate walk-forward."""
    from workstation.ml.evaluation import evaluate

    path = tmp_path / "marks.json"
    write_json(trades, path)
    with AnnotationStore(app_paths().annotations_db) as store:
        assert import_annotations(store, path).merge.added == len(trades)
    request = job.TrainingRequest(  # the defaults, in a 64-candle window
        preset="tiny", model_overrides={"seq_len": 64}, device="cpu",
        train_overrides={"batch_size": 32, "cpu_threads": 1, "seed": 0})
    plan = job.plan(request, None)
    data, labelled = job.training_data(plan, candles, DEMO,
                                       annotations_db=app_paths().annotations_db)
    assert labelled.annotations == len(trades)
    finished = evaluate(data, plan.model_config, plan.train_config, folds=2, device="cpu",
                        provenance=DEMO.provenance, on_event=lambda event: None,
                        settings=EvaluationConfig(seeds=1))  # learnability, not seed noise
    return finished.summary["position"]


def test_negative_control_the_same_marks_shuffled_in_time_show_no_edge(tmp_path):
    candles = candles_of(20_000)
    marks = ma_cross_marks(candles, DEMO.market, fast=FAST, slow=SLOW)
    score = evaluate_marks(shuffled_marks(marks, candles, seed=1), candles, tmp_path)
    assert score.n > 12_000 and score.interval is not None
    assert score.verdict == NO_EDGE and score.interval[0] <= 0
