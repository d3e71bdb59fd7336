"""The defaults that let the position head learn a rule from marks (issue 34, item 7): windows
that overlap on short series (``auto_stride``), the preset's learning rate, the epoch kept by
the trader's heads' validation loss (``epoch_choice``), and folds trained on every core."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from workstation.annotations.targets import TraderTargets
from workstation.errors import WorkstationError
from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.config import PRESET_LR, TrainConfig, preset_config
from workstation.ml.dataset import TrainingData, auto_stride
from workstation.ml.epoch_choice import choice_loss, describe_choice
from workstation.ml.events import EpochEnd, Finished, HeadScore, RunStarted, SplitMetrics
from workstation.ml.job import TrainingRequest, plan
from workstation.ml.parallel_folds import default_workers
from workstation.ml.targets import MASKED

END = 1_700_000_040_000 - 1_700_000_040_000 % 60_000


def test_the_stride_gives_an_epoch_its_batches_and_never_overlaps_more_than_it_must():
    assert auto_stride(((0, 100_000),), 200, 6400) == 15  # 99,801 starts / 6,400
    assert auto_stride(((0, 5_000_000),), 200, 6400) == 200  # long series: no overlap
    assert auto_stride(((0, 3000),), 200, 6400) == 1  # short: every start
    assert auto_stride(((0, 150),), 200, 6400) == 1  # no window at all: the sampler says so
    # two spans count together
    assert auto_stride(((0, 50_000), (60_000, 110_000)), 200, 6400) == 15


def marked_data(n: int = 4000) -> TrainingData:
    """Demo candles with long trades of 20 candles every 60, reviewed throughout."""
    position = np.zeros(n, dtype=np.int64)
    for a in range(100, n - 40, 60):
        position[a:a + 20] = 1
    regime = np.full(n, MASKED, dtype=np.int64)
    candles = demo_candles(n, ONE_MINUTE, seed=5, end_ts=END)
    return TrainingData.from_candles(candles, trader=TraderTargets(
        position, regime, np.ones(n, dtype=bool)))


def test_a_run_with_the_default_stride_trains_its_batches_an_epoch_and_records_them():
    from workstation.ml.trainer import Trainer

    data = marked_data(6000)
    config = preset_config("tiny", seq_len=32, n_features=data.features.shape[1])
    events: list = []
    trainer = Trainer(config, TrainConfig(epochs=1, batch_size=8, batches_per_epoch=30), data,
                      "cpu", on_event=events.append, stop=threading.Event(),
                      provenance="test")
    assert trainer.stride == auto_stride(trainer.split.train_spans, 32, 30 * 8) < 32
    assert trainer.steps_per_epoch >= 30
    fixed = Trainer(config, TrainConfig(epochs=1, batch_size=8, window_stride=32), data, "cpu",
                    on_event=events.append, stop=threading.Event(), provenance="test")
    assert fixed.stride == 32 and fixed.steps_per_epoch < 30  # a stride given is kept
    with pytest.raises(WorkstationError, match="batches_per_epoch must be >= 1"):
        TrainConfig(batches_per_epoch=0)


def test_each_preset_takes_its_own_learning_rate_unless_told():
    assert plan(TrainingRequest(preset="tiny"), None).train_config.lr == PRESET_LR["tiny"] \
        == 3e-3
    assert plan(TrainingRequest(preset="small"), None).train_config.lr == 1e-3
    told = TrainingRequest(preset="tiny", train_overrides={"lr": 1e-4})
    assert plan(told, None).train_config.lr == 1e-4


def split_of(total: float, **heads: float | None) -> SplitMetrics:
    losses = {"candle": 1.1, "trend": 1.0, "position": None, "regime": None, "return": 2.0}
    losses.update(heads)
    return SplitMetrics(total, losses, {"candle": HeadScore(None, 0)}, 10)


def test_the_epoch_is_chosen_by_the_trader_heads_that_have_marks_else_the_total():
    assert choice_loss(split_of(4.0, position=0.3), "auto") == (0.3, "position loss")
    assert choice_loss(split_of(4.0, position=0.3, regime=0.2), "auto") == (
        pytest.approx(0.5), "position + regime loss")
    assert choice_loss(split_of(4.0), "auto") == (4.0, "total loss")
    assert choice_loss(split_of(4.0, position=0.3), "total") == (4.0, "total loss")
    assert choice_loss(split_of(4.0, position=0.3), "candle") == (1.1, "candle loss")
    assert describe_choice(0.31204, "position loss") == " · position loss 0.3120"
    assert describe_choice(4.0, "total loss") == ""
    with pytest.raises(WorkstationError, match="the epoch is chosen by one of auto, total, "
                                               "candle, trend, position, regime, got 'best'"):
        TrainConfig(choose_epoch_by="best")


def test_a_run_on_marks_keeps_the_epoch_best_at_the_marks(tmp_path):
    from workstation.ml.checkpoints import CheckpointStore
    from workstation.ml.trainer import Trainer

    data = marked_data()
    config = preset_config("tiny", seq_len=32, n_features=data.features.shape[1])
    events: list = []
    store = CheckpointStore(tmp_path)
    trainer = Trainer(config, TrainConfig(epochs=4, batch_size=16, window_stride=16,
                                          cpu_threads=1), data, "cpu",
                      on_event=events.append, stop=threading.Event(), provenance="test",
                      checkpoints=store)
    final = trainer.run()
    assert isinstance(final, Finished) and final.chosen_by == "position loss"
    epochs = [e for e in events if isinstance(e, EpochEnd)]
    best = None
    for e in epochs:  # best = lowest position loss so far, whatever the total did
        assert e.chosen_by == "position loss"
        assert e.chosen_loss == e.val.head_losses["position"]
        assert e.is_best == (best is None or e.chosen_loss < best)
        best = e.chosen_loss if e.is_best else best
    assert final.best_val_loss == best
    meta = store.load(trainer.run_id, "best").meta
    assert meta["metrics"]["chosen_by"] == "position loss"
    assert meta["metrics"]["best_val_loss"] == best
    assert next(e for e in events if isinstance(e, RunStarted)).stride == 16


def test_folds_train_on_every_core_on_the_cpu_and_one_at_a_time_on_a_gpu(monkeypatch):
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert default_workers("cpu", 1) == 2
    assert default_workers("cpu", 2) == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert default_workers("cpu", 2) == 8 and default_workers("cuda", 2) == 1
