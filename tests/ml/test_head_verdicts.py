"""``ml.head_verdicts``: the trader heads' verdicts a checkpoint's validation recorded, as
``Trainer`` saves them (``asdict`` of ``SplitMetrics``), and never a crash on other meta."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from workstation.ml.events import HeadScore, SplitMetrics
from workstation.ml.head_verdicts import (
    NOT_EVALUATED,
    standing,
    trader_verdicts,
    verdict_source,
)
from workstation.ml.scoring import EDGE, NO_EDGE, SMALL_EDGE


def meta_of(position: str | None, regime: str | None, **heads: HeadScore) -> dict:
    """An epoch checkpoint's meta, its validation metrics as ``Trainer._save`` writes them."""
    scores = {"position": HeadScore(0.6, 400, {"majority": 0.5}, "majority", 0.1,
                                    (0.05, 0.15), position),
              "regime": HeadScore(0.4, 400, {"majority": 0.45}, "majority", -0.05,
                                  (-0.1, 0.0), regime),
              "candle": HeadScore(0.5, 400, verdict=EDGE), **heads}
    val = SplitMetrics(0.9, {"position": 0.5}, scores, 400, 3)
    return {"run_id": "20240101-120000-abc", "epoch": 3, "reason": "epoch",
            "metrics": {"train": asdict(val), "val": asdict(val), "best_val_loss": 0.9}}


@pytest.mark.parametrize("position, regime", [(EDGE, NO_EDGE), (SMALL_EDGE, EDGE),
                                              (NO_EDGE, SMALL_EDGE)])
def test_each_trader_heads_verdict_from_the_validation(position, regime):
    meta = meta_of(position, regime)
    assert trader_verdicts(meta) == {"position": position, "regime": regime}
    assert verdict_source(meta) == "validation of run 20240101-120000-abc, epoch 3"


def test_a_head_without_a_verdict_was_not_evaluated():
    meta = meta_of(None, EDGE)  # too few days or marks for an interval
    assert trader_verdicts(meta) == {"position": None, "regime": EDGE}
    assert verdict_source(meta) is not None
    meta["metrics"]["val"]["heads"]["position"]["verdict"] = "too few marks (3)"
    assert trader_verdicts(meta)["position"] is None  # not a verdict: whatever the reason


@pytest.mark.parametrize("meta", [
    {},  # a fresh model
    {"run_id": "r", "epoch": None, "reason": "online", "metrics": {"online": {"loss": 1.0}}},
    {"run_id": "r", "epoch": 2, "reason": "stopped", "metrics": {"best_val_loss": 0.8}},
    {"metrics": None}, {"metrics": []}, {"metrics": {"val": None}},
    {"metrics": {"val": "loss 0.9"}}, {"metrics": {"val": {"heads": None}}},
    {"metrics": {"val": {"heads": ["position", "edge"]}}},
    {"metrics": {"val": {"heads": {"position": "edge", "regime": None}}}},
    {"metrics": {"val": {"heads": {"position": {"verdict": 1}, "regime": {"verdict": ["edge"]}}}}},
    None, "not meta", 7,
], ids=["fresh", "online", "stopped", "metrics null", "metrics list", "val null", "val text",
        "heads null", "heads list", "scores not objects", "verdicts not text", "meta null",
        "meta text", "meta number"])
def test_old_or_malformed_meta_means_not_evaluated(meta):
    assert trader_verdicts(meta) == {"position": None, "regime": None}
    if not (isinstance(meta, dict) and isinstance(meta.get("metrics"), dict)
            and isinstance(meta["metrics"].get("val"), dict)):
        assert verdict_source(meta) is None


def test_the_source_says_what_it_knows():
    meta = meta_of(EDGE, EDGE)
    assert verdict_source({"metrics": meta["metrics"]}) == "validation"
    assert verdict_source(dict(meta, epoch="3")) == "validation of run 20240101-120000-abc"


def test_the_standing_live_mode_shows():
    assert standing(EDGE) == "edge"
    assert standing(NO_EDGE) == standing(SMALL_EDGE) == "no edge shown"
    assert standing(None) == NOT_EVALUATED == "not evaluated"
