"""The curves' points of a recorded run history (``ml.history.reader.history_points``), without
Qt or torch: a value without data is None, never 0, and the wall time goes on from the last
record."""

from pathlib import Path

from workstation.ml.curve_points import BatchPoint, EpochPoint
from workstation.ml.history.reader import History, history_points
from workstation.ml.targets import CLASS_HEADS


def test_history_points_keep_no_data_as_none():
    batch = {"type": "batch", "step": 10, "wall_s": 1.5, "loss": 2.25,
             "accuracy": {"candle": 0.5, "trend": None}, "lr": 1e-4, "grad_norm": True,
             "samples_per_s": 300, "memory": {"allocated_mb": 100.0, "peak_mb": 120.0}}
    epoch = {"type": "epoch", "step": 20, "wall_s": 3.0,
             "val": {"loss": 1.75, "heads": {
                 "candle": {"accuracy": 0.55, "best_baseline": "logistic",
                            "best_baseline_accuracy": 0.52, "baselines": {"majority": 0.5}},
                 "trend": "damaged"}}}
    marker = {"type": "end", "step": 20, "wall_s": 4.25, "state": "completed"}
    history = History(path=Path("history.jsonl"), batches=[batch], epochs=[epoch],
                      markers=[marker])
    batches, epochs, wall = history_points(history)
    assert batches == [BatchPoint(
        10, 1.5, 2.25, {h: 0.5 if h == "candle" else None for h in CLASS_HEADS}, 1e-4,
        None, 300.0, 100.0, None, 120.0)]  # a bool is no number
    assert epochs == [EpochPoint(
        20, 3.0, 1.75, {h: 0.55 if h == "candle" else None for h in CLASS_HEADS},
        {"candle": ("logistic", 0.52)}, {"candle": 0.5})]
    assert wall == 4.25  # where a resumed run's curves continue
    assert history_points(History(path=Path("history.jsonl"))) == ([], [], 0.0)
