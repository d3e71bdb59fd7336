"""One owner per model: batch training and the online learner cannot race on one model."""

import threading

import pytest

from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.config import TrainConfig, preset_config
from workstation.ml.dataset import TrainingData
from workstation.ml.events import BatchEnd
from workstation.ml.online import OnlineLearner
from workstation.ml.ownership import ModelOwnershipError, owner_of
from workstation.ml.trainer import Trainer


def test_the_online_learner_cannot_take_a_model_the_trainer_is_training():
    config = preset_config("tiny", seq_len=32)
    data = TrainingData.from_candles(demo_candles(3000, ONE_MINUTE, seed=3, end_ts=10**12))
    stop, training = threading.Event(), threading.Event()
    trainer = Trainer(config, TrainConfig(epochs=50, batch_size=8, log_every=1), data, "cpu",
                      on_event=lambda e: training.set() if isinstance(e, BatchEnd) else None,
                      stop=stop, provenance="DEMO test")
    thread = threading.Thread(target=trainer.run, name="trainer")
    thread.start()
    try:
        assert training.wait(60)
        assert owner_of(trainer.model) == "Trainer"
        with pytest.raises(ModelOwnershipError, match="Trainer is training it"):
            OnlineLearner(config, model=trainer.model)
        with pytest.raises(ModelOwnershipError, match="belongs to thread 'trainer'"):
            trainer._claim.check()  # any use from this (non-owner) thread is refused
    finally:
        stop.set()
        thread.join(60)
    assert not thread.is_alive()
    assert owner_of(trainer.model) is None  # released when the run ended
    learner = OnlineLearner(config, model=trainer.model)  # now it may adopt it
    learner.close()
