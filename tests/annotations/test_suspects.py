"""Likely label errors (``annotations.suspects``): the thresholds, the confident classes, the
marks flagged, ranked and left out, and the keep and fix actions, on hand-built held-out
probabilities whose answers are worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.annotations.model import Region, Trade
from workstation.annotations.suspects import (
    CHECKED,
    HeldOutProbabilities,
    class_thresholds,
    confident_classes,
    fixed,
    kept,
    likely_label_errors,
    review_state,
)
from workstation.annotations.targets import trader_targets
from workstation.errors import WorkstationError
from workstation.market.timeframes import parse_timeframe

H = 3_600_000
T0 = 1_700_000_400_000 - 1_700_000_400_000 % H
N = 120
TS = T0 + H * np.arange(N, dtype=np.int64)
CLOSES = TS + H


def trade(entry: int, exit_: int, direction: str, **kw) -> Trade:
    return Trade(symbol="ETH/USDT", timeframe="1h", direction=direction,
                 entry_ts=int(TS[entry]), entry_price=100.0, exit_ts=int(TS[exit_]),
                 exit_price=101.0, **kw)


def region(start: int, end: int, label: str) -> Region:
    return Region(symbol="ETH/USDT", timeframe="1h", start_ts=int(TS[start]),
                  end_ts=int(TS[end]), label=label)


def probabilities(classes: int, where: dict[tuple[int, int], tuple[float, ...]]) -> np.ndarray:
    """NaN everywhere (never tested) except the spans given, each with its probabilities."""
    out = np.full((classes, N), np.nan)
    for (start, stop), p in where.items():
        out[:, start:stop] = np.asarray(p)[:, None]
    return out


def test_thresholds_are_each_class_mean_where_it_is_the_label_and_rare_classes_count():
    labels = np.array([0, 0, 1, 1, 2, -1])
    p = np.array([[0.8, 0.6, 0.1, 0.3, 0.5, 0.2],
                  [0.1, 0.2, 0.7, 0.5, 0.2, 0.2],
                  [0.1, 0.2, 0.2, 0.2, 0.3, 0.6]])
    p[:, 1] = np.nan  # untested: not counted
    t = class_thresholds(labels, p)
    assert t == pytest.approx([0.8, 0.6, 0.3])
    # candle 4 is most probably class 0 (0.5 < 0.8: not reached), class 2 reaches 0.3
    assert confident_classes(p, t).tolist() == [0, -1, 1, -1, 2, 2]
    assert np.isnan(class_thresholds(np.array([0, 0]), np.full((2, 2), 0.5))[1])


def test_marks_read_otherwise_are_flagged_ranked_and_the_rest_counted():
    marks = [trade(10, 20, "long"),     # read long: fine
             trade(30, 40, "short"),    # read long on all its candles: the worst
             trade(50, 60, "long"),     # read flat on most
             trade(100, 110, "long"),   # never tested
             region(62, 80, "uptrend"),  # read range
             region(82, 90, "range")]   # read range: fine
    targets = trader_targets(marks, TS, parse_timeframe("1h"))
    position = probabilities(3, {(0, 100): (0.8, 0.1, 0.1), (10, 20): (0.1, 0.8, 0.1),
                                 (30, 40): (0.05, 0.9, 0.05), (50, 57): (0.85, 0.12, 0.03)})
    position[:, 57:60] = np.array([0.1, 0.85, 0.05])[:, None]  # its last 3 candles read long
    regime = probabilities(3, {(60, 95): (0.1, 0.1, 0.8), (62, 81): (0.06, 0.04, 0.9)})
    report = likely_label_errors(marks, CLOSES, {"position": (targets.position, position),
                                                 "regime": (targets.regime, regime)})
    # thresholds: flat 0.8, long 0.5695 (its 20 tested candles), short 0.05; uptrend 0.06
    worst, uptrend, flat = report.suspects  # self-confidence 0.05, 0.06, 0.339
    assert (report.scored, report.untested, report.checked) == (5, 1, 0)
    assert (worst.annotation_id, worst.label, worst.reading) == (marks[1].id, "short", "long")
    assert (worst.tested, worst.off, worst.self_confidence) == (10, 10, pytest.approx(0.05))
    assert (flat.annotation_id, flat.reading, flat.off, flat.tested) == (marks[2].id, "flat",
                                                                         7, 10)
    assert flat.share_off == 0.7 and flat.fix_words == "delete the trade"
    assert flat.reading_confidence == pytest.approx(0.85)
    assert report.thresholds["position"] == pytest.approx((0.8, 0.5695, 0.05))
    assert (uptrend.annotation_id, uptrend.reading, uptrend.tested) == (marks[4].id, "range",
                                                                        19)
    assert worst.fix_words == "make it long" and uptrend.fix_words == "relabel it range"
    assert "short trade" in worst.describe() and "reads long on 10 of 10 candles" in \
        worst.describe()
    assert report.describe().startswith("3 of 5 marks")
    assert report.to_dict()["suspects"][0]["share_off"] == 1.0
    # kept marks are not flagged again, and a higher bar flags fewer
    again = likely_label_errors([kept(m) for m in marks[:3]] + marks[3:], CLOSES,
                                {"position": (targets.position, position),
                                 "regime": (targets.regime, regime)}, min_share=0.8)
    assert (again.checked, again.scored, [s.label for s in again.suspects]) == (3, 2,
                                                                               ["uptrend"])


def test_fixes_turn_delete_and_relabel_and_a_fixed_blind_mark_is_hindsight():
    long_ = trade(10, 20, "long", stop=99.0, target=105.0)
    marks = [long_, region(30, 40, "downtrend"), region(50, 60, "uptrend"),
             trade(70, 80, "short")]  # a short read short: the short class's threshold
    targets = trader_targets(marks, TS, parse_timeframe("1h"))
    position = probabilities(3, {(0, N): (0.8, 0.1, 0.1), (10, 20): (0.1, 0.1, 0.8),
                                 (70, 80): (0.1, 0.1, 0.8)})
    regime = probabilities(3, {(0, N): (0.5, 0.2, 0.3)})
    report = likely_label_errors(marks, CLOSES, {"position": (targets.position, position),
                                                 "regime": (targets.regime, regime)})
    assert [s.annotation_id for s in report.suspects] == [long_.id, marks[1].id]
    turned = fixed(long_, report.suspects[0])
    assert turned is not None and str(turned.direction) == "short"
    assert (turned.stop, turned.target, turned.id) == (None, None, long_.id)
    relabelled = fixed(marks[1], report.suspects[1])
    assert relabelled is not None and relabelled.label == "uptrend"
    assert CHECKED in kept(long_).tags and kept(long_).id == long_.id
    with pytest.raises(WorkstationError, match="is not mark"):
        fixed(marks[1], report.suspects[0])
    blind = trade(10, 20, "long", blind=True,
                  decided_at=(int(CLOSES[10]), int(CLOSES[20])))
    read_flat = likely_label_errors([blind], CLOSES, {"position": (
        targets.position, probabilities(3, {(0, N): (0.9, 0.05, 0.05)}))}).suspects[0]
    assert fixed(blind, read_flat) is None  # a trade read flat is deleted
    read_short = report.suspects[0].__class__(**{**report.suspects[0].__dict__,
                                                "annotation_id": blind.id})
    assert str(fixed(blind, read_short).origin) == "unblinded"
    # what became of a suspect, from the store's version of its mark
    first, region_suspect = report.suspects
    assert [review_state(first, m) for m in (long_, turned, kept(long_), None)] == [
        "", "now short", "kept", "deleted"]
    assert review_state(region_suspect, relabelled) == "now uptrend"


def test_held_out_probabilities_fill_span_by_span_and_refuse_a_wrong_shape():
    held = HeldOutProbabilities(10)
    held.add((2, 5), {"position": np.full((3, 3), 1 / 3)})
    held.add((5, 8), {"position": np.full((3, 3), 0.5)})
    p = held.heads({"position": np.zeros(10)})["position"][1]
    assert np.isnan(p[:, :2]).all() and np.isnan(p[:, 8:]).all()
    assert (p[:, 2:5] == 1 / 3).all() and (p[:, 5:8] == 0.5).all()
    with pytest.raises(WorkstationError, match=r"for the 2 candles of span 0\.\.2"):
        held.add((0, 2), {"position": np.zeros((3, 3))})
    with pytest.raises(WorkstationError, match=r"must be \[classes, candles\]"):
        likely_label_errors([], CLOSES, {"position": (np.zeros(N), np.zeros((3, 5)))})
