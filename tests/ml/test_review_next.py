"""What to review next (``ml.review_next``): blocks of unreviewed, predicted candles ranked by
the position head's entropy and the regime coverage gap, on hand-built probabilities; and
``workstation annotations review-next`` on a tiny run, every stretch unreviewed, with the
blind replay that opens it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workstation.annotations.model import Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.annotations.targets import trader_targets
from workstation.cli import main
from workstation.market.timeframes import parse_timeframe
from workstation.ml.review_next import review_queue
from workstation.ml.targets import MASKED
from workstation.paths import app_paths
from workstation.timeparse import parse_time_ms

H = 3_600_000
N = 100
TS = 1_700_002_800_000 + H * np.arange(N, dtype=np.int64)
SURE = (0.98, 0.01, 0.01)
UNSURE = (1 / 3, 1 / 3, 1 / 3)


def filled(classes_by_span: dict[tuple[int, int], tuple[float, ...]]) -> np.ndarray:
    out = np.tile(np.array(SURE)[:, None], (1, N))
    for (a, b), p in classes_by_span.items():
        out[:, a:b] = np.array(p)[:, None]
    return out


def test_uncertain_stretches_of_thin_regimes_come_first_and_reviewed_ones_never():
    position = filled({(10, 20): UNSURE, (40, 50): UNSURE, (70, 80): (0.6, 0.2, 0.2)})
    position[:, :10] = np.nan  # not predicted (no history yet)
    regime = filled({(40, 50): (0.1, 0.1, 0.8)})  # uptrend everywhere, range at 40..50
    reviewed = np.zeros(N, dtype=bool)
    reviewed[85:] = True
    labels = np.full(N, MASKED)
    labels[85:] = 0  # the trader labelled uptrend only
    queue = review_queue(position, regime, reviewed, labels, TS, length=10, top=3)
    # 40..50: no doubt more than 10..20, but its regime (range) has no label: gap 1 against 0
    assert [(s.start, s.stop) for s in queue] == [(40, 50), (10, 20), (70, 80)]
    first, second, third = queue
    assert first.uncertainty == pytest.approx(1.0) and first.regime == "range"
    assert (first.coverage_gap, second.coverage_gap) == (1.0, 0.0)
    assert first.score == pytest.approx(1.0) and second.score == pytest.approx(0.5)
    assert third.score == pytest.approx(third.uncertainty / 2)
    assert (first.start_ts, first.last_ts) == (int(TS[40]), int(TS[49]))
    every = review_queue(position, regime, reviewed, labels, TS, length=10, top=100)
    # blocks start where the predicted, unreviewed run does (10) and never reach a reviewed
    # candle (85 on); none is shorter than a stretch
    assert sorted(s.start for s in every) == [10, 20, 30, 40, 50, 60, 70]
    assert all(s.stop - s.start == 10 and not reviewed[s.start:s.stop].any() for s in every)
    with pytest.raises(ValueError, match="at least 1"):
        review_queue(position, regime, reviewed, labels, TS, length=0)


def test_review_next_ranks_a_runs_unreviewed_stretches_with_their_replays(capsys):
    from workstation.market.sources import load_series

    candles, _ = load_series("demo", "DEMO/USDT", parse_timeframe("1h"), max_candles=1500)
    ts, close = candles.ts, candles.close
    common = {"market": "demo", "symbol": "DEMO/USDT", "timeframe": "1h"}
    marks = [Trade(**common, direction="long" if k % 2 else "short", entry_ts=int(ts[i]),
                   entry_price=float(close[i]), exit_ts=int(ts[i + 10]),
                   exit_price=float(close[i + 10])) for k, i in enumerate(range(40, 700, 40))]
    marks.append(Region(**common, start_ts=int(ts[300]), end_ts=int(ts[400]), label="uptrend"))
    with AnnotationStore(app_paths().annotations_db) as store:
        store.merge(marks)
    assert main(["train", "--source", "demo", "--symbol", "DEMO/USDT", "--timeframe", "1h",
                 "--max-candles", "1500", "--seq-len", "16", "--batch-size", "32",
                 "--epochs", "1", "--stride", "16", "--threads", "1"]) == 0
    capsys.readouterr()
    assert main(["annotations", "review-next", "--length", "24", "--top", "4", "--json"]) == 0
    out = capsys.readouterr()
    found = json.loads(out.out.splitlines()[-1])
    queue = found["review_next"]
    assert len(queue) == 4 and found["rule"].startswith("uncertainty")
    assert [s["score"] for s in queue] == sorted((s["score"] for s in queue), reverse=True)
    full, _ = load_series("demo", "DEMO/USDT", parse_timeframe("1h"))  # every candle it ranks
    full = full.slice(0, full.n_closed)
    reviewed = trader_targets(marks, full.ts, full.timeframe).reviewed
    n = len(reviewed)
    for s, replay in zip(queue, found["replay"], strict=True):
        assert s["stop"] - s["start"] == 24 and s["stop"] <= n
        assert not reviewed[s["start"]:s["stop"]].any()  # never a stretch already reviewed
        assert s["score"] == pytest.approx(s["uncertainty"] * (1 + s["coverage_gap"]) / 2)
        assert s["coverage_gap"] == (0.0 if s["regime"] == "uptrend" else 1.0)
        argv = replay.split()
        assert argv[:7] == ["workstation", "--source", "demo", "--symbol", "DEMO/USDT",
                            "--timeframe", "1h"]
        assert parse_time_ms(argv[-1]) == s["start_ts"] == int(full.ts[s["start"]])
    assert f"reviewed; run {found['run']} ranks the unreviewed stretches of 24" in out.err
    assert main(["annotations", "review-next", "--top", "0"]) == 1
    assert "--top must be at least 1, got 0" in capsys.readouterr().err
