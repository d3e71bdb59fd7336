"""The training data of a long series in bounded memory. Features memory-mapped from a
scratch file (``ml.feature_store``): the same rows bit for bit as one ``make_features`` call,
with every kind of column and gaps in the series; the scratch file never outlives the
mapping; a folder that cannot hold the file is a one-line error; training and its baselines
read the mapped rows as they read an array. Targets made in chunks equal those made at once."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from workstation.annotations.drawings import Drawing
from workstation.errors import WorkstationError
from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml import targets as target_module
from workstation.ml.baselines import fit_baselines
from workstation.ml.config import TrainConfig, preset_config
from workstation.ml.dataset import TrainingData
from workstation.ml.feature_store import series_features
from workstation.ml.features import FeatureSpec, make_features
from workstation.ml.level_columns import Levels
from workstation.ml.targets import CLASS_HEADS, TargetSpec, make_targets
from workstation.ml.trainer import Trainer

END = 1_767_225_600_000
FULL = FeatureSpec(higher_timeframes=("5m",), reference="BTC/USDT",
                   indicators=("sma 50", "bb 20 2"), levels=True)  # chunks of 515 rows
SLOW = FeatureSpec(higher_timeframes=("15m",), reference="BTC/USDT",
                   indicators=("ema 20", "rsi 14"), levels=True)  # of 6,045 rows


@pytest.fixture(scope="module")
def market():
    eth = demo_candles(9_000, ONE_MINUTE, seed=5, end_ts=END).without(np.r_[5000:5003])
    btc = demo_candles(9_000, ONE_MINUTE, seed=6, end_ts=END).without(np.r_[4000:4030])
    drawn = [Drawing(shape="level", symbol="ETH/USDT", timeframe="1m", ts1=int(eth.ts[i]),
                     price1=float(eth.close[i]) * k)
             for i, k in ((300, 1.01), (2500, 0.98), (7000, 1.02))]
    return eth, btc, Levels.of(drawn)


@pytest.mark.parametrize(("spec", "chunk_rows"), [
    (FULL, 100), (SLOW, 100), (FeatureSpec(levels=True), 700),
    (FeatureSpec(indicators=("atr 14", "sma 50")), 2048)])
def test_mapped_chunks_equal_one_call_bit_for_bit(market, tmp_path, spec, chunk_rows):
    eth, btc, levels = market
    whole = make_features(eth, spec, btc, levels)
    mapped = series_features(eth, spec, btc, levels, folder=tmp_path, in_memory_bytes=0,
                             chunk_rows=chunk_rows)
    assert isinstance(mapped, np.memmap) and mapped.dtype == np.float32
    assert mapped.shape == whole.shape
    np.testing.assert_array_equal(mapped, whole)
    assert list(tmp_path.iterdir()) == []  # unlinked once mapped: nothing left behind


def test_a_short_series_stays_in_memory(market, tmp_path):
    eth, _, _ = market
    features = series_features(eth, FeatureSpec(), folder=tmp_path)
    assert not isinstance(features, np.memmap)
    np.testing.assert_array_equal(features, make_features(eth, FeatureSpec()))


def test_a_folder_that_cannot_hold_the_file_is_one_line(market, tmp_path):
    eth, _, _ = market
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    with pytest.raises(WorkstationError, match="no scratch file for the features of 8,997 "
                                               "candles") as err:
        series_features(eth, FeatureSpec(), folder=blocked, in_memory_bytes=0)
    assert "\n" not in str(err.value)


def test_training_and_baselines_read_mapped_features_as_an_array(market, tmp_path):
    eth, _, _ = market
    spec = FeatureSpec()
    targets = make_targets(eth)
    ts = np.asarray(eth.ts, dtype=np.int64)
    mapped = TrainingData(series_features(eth, spec, folder=tmp_path, in_memory_bytes=0,
                                          chunk_rows=1000), targets, spec, _target_spec(), ts)
    held = TrainingData(make_features(eth, spec), targets, spec, _target_spec(), ts)
    mapped.features[77, 3] = np.nan  # copy-on-write: the mapping's pages are private
    assert mapped.first_nonfinite_row() == 77 and held.first_nonfinite_row() is None
    mapped.features[77, 3] = held.features[77, 3]
    train, test = (0, 6000), (6200, len(eth))
    for head in CLASS_HEADS:
        a = fit_baselines(mapped, train).predict(head, *test)
        b = fit_baselines(held, train).predict(head, *test)
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    losses = [_val_loss(data) for data in (mapped, held)]
    assert losses[0] == losses[1] and np.isfinite(losses[0])


def _target_spec():
    return TargetSpec()


@pytest.mark.parametrize("spec", [TargetSpec(), TargetSpec(flat_band="bps", trend_horizon=30),
                                  TargetSpec(volatility_window=200, trend_horizon=3)])
def test_targets_made_in_chunks_equal_those_made_at_once(market, monkeypatch, spec):
    eth, _, _ = market
    whole = make_targets(eth, spec)
    monkeypatch.setattr(target_module, "CHUNK_ROWS", 97)
    chunked = make_targets(eth, spec)
    for name in ("candle", "trend", "position", "regime", "next_return_bps", "volatility_bps"):
        a, b = getattr(chunked, name), getattr(whole, name)
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b, err_msg=name)


def _val_loss(data: TrainingData) -> float:
    config = preset_config("tiny", n_features=data.feature_spec.n_features)
    events: list = []
    trainer = Trainer(config, TrainConfig(epochs=1, batches_per_epoch=3, batch_size=8,
                                          seed=3), data, "cpu", on_event=events.append,
                      stop=threading.Event(), provenance="test: memory-mapped features",
                      val_baselines=False)
    final = trainer.run()
    assert final.status == "completed", final
    return float(final.best_val_loss)
