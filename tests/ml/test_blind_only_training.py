"""Training can learn the trader's blind marks only (issue 27, item 4): ``--marks blind`` (and
the window's Marks setting) keep exactly the blind marks, refuse in one line when there are
none, are recorded with the run, and the targets CSV says where each label came from."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workstation.annotations.model import Origin, Region, Trade
from workstation.annotations.origin_filter import label_origins, marks_used
from workstation.annotations.store import AnnotationStore
from workstation.cli import main
from workstation.errors import WorkstationError
from workstation.market.sources import load_series
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.job import TrainingRequest, label_series, plan, plan_of
from workstation.ml.targets import MASKED, TargetSpec
from workstation.paths import app_paths

M = 60_000


@pytest.fixture
def demo():
    return load_series("demo", "ETH/USDT", ONE_MINUTE, max_candles=400)


def trade(candles, a, b, direction="long", **blind):
    return Trade(market="demo", symbol="ETH/USDT", timeframe="1m", direction=direction,
                 entry_ts=int(candles.ts[a]), entry_price=float(candles.close[a]),
                 exit_ts=int(candles.ts[b]), exit_price=float(candles.close[b]), **blind)


def blind_trade(candles, a, b, direction="long"):
    return trade(candles, a, b, direction, blind=True,
                 decided_at=(int(candles.ts[a]) + M, int(candles.ts[b]) + M))


def marks(candles) -> list:
    blind = blind_trade(candles, 100, 130)
    hindsight = trade(candles, 200, 230, "short")
    was = blind_trade(candles, 300, 320).edited(exit_price=float(candles.close[321]))
    return [blind, hindsight, was]


def stored(candles) -> list:
    found = marks(candles)
    with AnnotationStore(app_paths().annotations_db) as store:
        for ann in found:
            store.add(ann)
    return found


def test_blind_keeps_exactly_the_blind_marks_and_all_keeps_all(demo):
    candles, _ = demo
    found = marks(candles)
    assert marks_used(found, "all") == found
    assert marks_used(found, "blind") == [found[0]]  # an unblinded mark is hindsight now
    assert marks_used([], "blind") == []
    with pytest.raises(WorkstationError, match="none of the 2 marks of DEMO ETH/USDT are blind"):
        marks_used(found[1:], "blind")
    with pytest.raises(WorkstationError, match="use all or blind"):
        marks_used(found, "some")


def test_training_on_blind_marks_labels_only_their_candles(demo):
    candles, key = demo
    stored(candles)
    db = app_paths().annotations_db
    every = label_series(candles, key, TargetSpec(), annotations_db=db)
    blind = label_series(candles, key, TargetSpec(), annotations_db=db, marks="blind")
    assert (every.annotations, blind.annotations) == (3, 1)
    assert every.targets.position[215] != MASKED and blind.targets.position[215] == MASKED
    assert blind.targets.position[115] == every.targets.position[115] == 1  # long
    assert every.labels_sha256 != blind.labels_sha256


def test_the_run_records_which_marks_it_learned(demo):
    training = plan(TrainingRequest(marks="blind"), None)
    assert training.request.marks == "blind"
    again = plan_of({"model": training.model_config.to_dict(),
                     "training": training.train_config.to_dict(),
                     "features": training.feature_spec.to_dict(),
                     "targets": training.target_spec.to_dict(), "device": "cpu",
                     "labels": {"marks": "blind"}})
    assert again.request.marks == "blind"
    with pytest.raises(WorkstationError, match="use all or blind"):
        plan(TrainingRequest(marks="mine"), None)


def test_train_marks_blind_without_blind_marks_is_refused_in_one_line(demo, capsys):
    candles, _ = demo
    with AnnotationStore(app_paths().annotations_db) as store:
        store.add(trade(candles, 200, 230))
    assert main(["train", "--source", "demo", "--symbol", "ETH/USDT", "--max-candles", "400",
                 "--marks", "blind", "--show-spans"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "none of the 1 marks of DEMO ETH/USDT are blind" in err[0]
    main(["train", "--source", "demo", "--symbol", "ETH/USDT", "--max-candles", "400",
          "--show-spans"])  # all marks: whatever the spans say, nothing about blind marks
    assert "blind" not in capsys.readouterr().err


def test_the_targets_csv_says_where_each_label_came_from(demo, tmp_path, capsys):
    candles, _ = demo
    stored(candles)
    out = tmp_path / "targets.csv"
    assert main(["annotations", "targets", "--source", "demo", "--symbol", "ETH/USDT",
                 "--max-candles", "400", "--out", str(out)]) == 0
    header, *rows = out.read_text().splitlines()
    assert header.split(",")[-1] == "origin"
    origin = {int(r.split(",")[0]): r.split(",")[-1] for r in rows}
    assert origin[int(candles.ts[115])] == "blind"
    assert origin[int(candles.ts[215])] == "hindsight"
    assert origin[int(candles.ts[310])] == "unblinded"
    assert origin[int(candles.ts[20])] == ""  # no mark labels it
    assert main(["annotations", "targets", "--source", "demo", "--symbol", "ETH/USDT",
                 "--max-candles", "400", "--marks", "blind", "--out", str(out)]) == 0
    blind_rows = out.read_text().splitlines()[1:]
    assert {r.split(",")[-1] for r in blind_rows} == {"", "blind"}


def test_a_blind_flat_span_under_a_hindsight_trade_is_the_trade_s(demo):
    candles, _ = demo
    reviewed = Region(market="demo", symbol="ETH/USDT", timeframe="1m",
                      start_ts=int(candles.ts[50]), end_ts=int(candles.ts[150]),
                      label="reviewed", blind=True,
                      decided_at=(int(candles.ts[50]) + M, int(candles.ts[150]) + M))
    inside = trade(candles, 80, 90)
    origins = label_origins([reviewed, inside], candles.ts, candles.timeframe)
    assert origins[60] == "blind" and origins[85] == "hindsight"
    assert Origin(origins[60]) is Origin.BLIND
    assert np.count_nonzero([o == "" for o in origins[:40]]) == 40
    assert json.dumps(origins[:1]) == '[""]'
