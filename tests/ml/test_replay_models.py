"""Which saved models may predict during blind replay (issue 27): only a run whose manifest
shows it learned nothing after the replay clock (its candles, its reference asset's, and no
hindsight marks); a run without a manifest may not."""

from __future__ import annotations

import json

from workstation.market.series import SeriesKey
from workstation.market.timeframes import parse_timeframe
from workstation.ml.manifest import MANIFEST_NAME, MANIFEST_VERSION
from workstation.ml.replay_models import blind_run, why_not_blind

HOUR = 3_600_000
ETH = SeriesKey("binance", "ETH/USDT", parse_timeframe("1h"))
BTC = SeriesKey("binance", "BTC/USDT", parse_timeframe("1h"))


def manifest(run_id: str = "r1", last_ts: int = 10 * HOUR, reference_last: int | None = None,
             marks: str = "all", annotations: int = 0, use_annotations: bool = True) -> dict:
    def data(key: SeriesKey, last: int) -> dict:
        return {"series": key.to_dict(), "provenance": key.provenance, "candles": 10,
                "first_ts": 0, "last_ts": last, "sha256": "x"}

    return {"manifest_version": MANIFEST_VERSION, "run_id": run_id, "model": {},
            "training": {}, "features": {}, "targets": {}, "seed": 1, "code": {},
            "world_size": 1, "device": "cpu", "use_annotations": use_annotations,
            "data": data(ETH, last_ts),
            "reference": None if reference_last is None else data(BTC, reference_last),
            "labels": {"market": "real", "annotations": annotations, "sha256": None,
                       "marks": marks}}


def test_a_run_that_learned_candles_up_to_the_clock_may_and_one_after_it_may_not():
    # its last candle opens at 10 h and closes at 11 h
    assert why_not_blind(manifest(), 11 * HOUR) is None
    assert why_not_blind(manifest(), 12 * HOUR) is None
    why = why_not_blind(manifest(), 11 * HOUR - 1)
    assert why is not None and "binance ETH/USDT 1h" in why
    assert "up to 1970-01-01 11:00 UTC" in why and "after the replay clock" in why


def test_the_reference_assets_candles_count_too():
    assert why_not_blind(manifest(reference_last=9 * HOUR), 11 * HOUR) is None
    why = why_not_blind(manifest(reference_last=20 * HOUR), 11 * HOUR)
    assert why is not None and "BTC/USDT" in why


def test_hindsight_marks_are_learning_from_the_future_blind_marks_are_not():
    why = why_not_blind(manifest(annotations=4, marks="all"), 12 * HOUR)
    assert why is not None and "hindsight marks" in why and "--marks blind" in why
    assert why_not_blind(manifest(annotations=4, marks="blind"), 12 * HOUR) is None
    assert why_not_blind(manifest(annotations=0, marks="all"), 12 * HOUR) is None
    assert why_not_blind(manifest(annotations=4, use_annotations=False), 12 * HOUR) is None


def test_the_first_run_that_may_is_chosen_else_why_the_first_may_not(tmp_path):
    for run_id, last in (("late", 50 * HOUR), ("early", 5 * HOUR)):
        (tmp_path / run_id).mkdir()
        (tmp_path / run_id / MANIFEST_NAME).write_text(json.dumps(manifest(run_id, last)))
    (tmp_path / "online").mkdir()  # saved by per-candle training: no manifest
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / MANIFEST_NAME).write_text("{not json")
    assert blind_run(tmp_path, ["online", "broken", "late", "early"], 11 * HOUR) == \
        ("early", None)
    run, why = blind_run(tmp_path, ["online", "late"], 11 * HOUR)
    assert run is None and why is not None and "has no manifest" in why
    run, why = blind_run(tmp_path, ["broken", "late"], 11 * HOUR)
    assert run is None and "not valid JSON" in why
    assert blind_run(tmp_path, [], 11 * HOUR) == (None, None)


def test_candles_a_run_held_out_after_its_train_until_do_not_count():
    held_out = manifest(last_ts=50 * HOUR)
    held_out["training"] = {"train_until": 10 * HOUR}
    assert why_not_blind(held_out, 11 * HOUR) is None
    why = why_not_blind(held_out, 10 * HOUR)
    assert why is not None and "up to 1970-01-01 11:00 UTC" in why
