"""Features, targets and the time split: causal, scale-free, masked, gapped."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workstation.annotations.targets import TraderTargets
from workstation.errors import WorkstationError
from workstation.market.candles import Candles
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.candle_columns import FEATURE_NAMES, N_FEATURES
from workstation.ml.dataset import DeviceSeries, TrainingData, WindowSampler
from workstation.ml.features import FeatureSpec, make_features
from workstation.ml.split import plan_split
from workstation.ml.targets import (
    MASKED,
    POSITION_CLASSES,
    REGIME_CLASSES,
    TargetSpec,
    make_targets,
    trailing_volatility_bps,
)
from workstation.ml.trend_columns import TREND_WINDOWS, trend_names

T0 = 1_700_000_000_000 - 1_700_000_000_000 % 86_400_000  # a UTC midnight


def random_candles(n: int, seed: int = 0, price: float = 2000.0, volume_scale: float = 1.0,
                   start: int = T0) -> Candles:
    rng = np.random.default_rng(seed)
    close = price * np.exp(np.cumsum(rng.normal(0, 1e-3, n)))
    open_ = np.concatenate(([price], close[:-1])) * np.exp(rng.normal(0, 2e-4, n))
    high = np.maximum(open_, close) * np.exp(np.abs(rng.normal(0, 5e-4, n)))
    low = np.minimum(open_, close) * np.exp(-np.abs(rng.normal(0, 5e-4, n)))
    volume = rng.gamma(2.0, 50.0, n) * volume_scale
    volume[rng.random(n) < 0.02] = 0.0
    ts = start + 60_000 * np.arange(n, dtype=np.int64)
    return Candles.from_arrays(ts, open_, high, low, close, volume, ONE_MINUTE)


def with_columns(candles: Candles, **cols) -> Candles:
    ts, o, h, l, c, v = (x.copy() for x in candles.columns())
    parts = dict(ts=ts, open=o, high=h, low=l, close=c, volume=v)
    parts.update(cols)
    return Candles.from_arrays(parts["ts"], parts["open"], parts["high"], parts["low"],
                               parts["close"], parts["volume"], ONE_MINUTE)


# -- features ---------------------------------------------------------------------------------
def test_features_shape_dtype_and_finite():
    feats = make_features(random_candles(1000))
    width = FeatureSpec().n_features  # the candle columns, then the trend columns
    assert feats.shape == (1000, width) and width == N_FEATURES + 2 * len(TREND_WINDOWS)
    assert FeatureSpec().names[:N_FEATURES] == FEATURE_NAMES
    assert feats.dtype == np.float32
    assert np.isfinite(feats).all()
    assert make_features(random_candles(1)).shape == (1, width)
    assert make_features(random_candles(9), FeatureSpec(trend_windows=())).shape == (
        9, N_FEATURES)


@pytest.mark.parametrize("t", [0, 1, 5, 59, 60, 61, 300, 998])
def test_features_are_causal_perturbing_the_future(t):
    base = random_candles(1000, seed=1)
    rng = np.random.default_rng(t)
    scale = np.ones(1000)
    scale[t + 1:] = np.exp(rng.normal(0, 0.05, 1000 - t - 1))  # every later candle changes
    vol = base.volume.copy()
    vol[t + 1:] = rng.gamma(2.0, 500.0, 1000 - t - 1)
    ts = base.ts.copy()
    ts[t + 1:] += 7 * 60_000  # and later timestamps shift
    future = with_columns(base, ts=ts, open=base.open * scale, high=base.high * scale,
                          low=base.low * scale, close=base.close * scale, volume=vol)
    a, b = make_features(base), make_features(future)
    np.testing.assert_array_equal(a[: t + 1], b[: t + 1])
    if t < 998:
        assert not np.array_equal(a[t + 1:], b[t + 1:])  # the perturbation did reach the model


def test_features_are_scale_free():
    base = random_candles(2000, seed=2)
    k = 37.5
    scaled = with_columns(base, open=base.open * k, high=base.high * k, low=base.low * k,
                          close=base.close * k, volume=base.volume * 1000.0)
    np.testing.assert_allclose(make_features(base), make_features(scaled), atol=2e-5)


def test_a_tail_with_warmup_gives_the_same_rows_as_the_full_history():
    spec = FeatureSpec()
    full = random_candles(3000, seed=3)
    start = 2500
    tail = full.slice(start, len(full))
    a = make_features(full, spec)[start + spec.warmup:]
    b = make_features(tail, spec)[spec.warmup:]
    np.testing.assert_array_equal(a, b)


def test_time_of_day_features():
    candles = random_candles(24 * 60, seed=4)  # one day from midnight UTC
    feats = make_features(candles)
    sin, cos = FEATURE_NAMES.index("tod_sin"), FEATURE_NAMES.index("tod_cos")
    assert feats[0, sin] == pytest.approx(0.0, abs=1e-6) and feats[0, cos] == pytest.approx(1.0)
    assert feats[360, sin] == pytest.approx(1.0) and feats[360, cos] == pytest.approx(0, abs=1e-6)


def test_returns_are_log_ratios_against_the_previous_close_in_volatility_units():
    candles = random_candles(500, seed=5)
    feats = make_features(candles)
    c = candles.close
    r = np.diff(np.log(c))
    spec = FeatureSpec()
    t = 400
    returns = np.concatenate(([np.log(c[0] / candles.open[0])], r))
    window = returns[t - spec.volatility_window + 1:t + 1]
    vol = np.sqrt(np.mean(window ** 2) + (spec.min_volatility_bps * 1e-4) ** 2)
    assert feats[t, FEATURE_NAMES.index("close_ret")] == pytest.approx(r[t - 1] / vol, rel=1e-5)
    high = np.log(candles.high[t] / c[t - 1]) / vol
    assert feats[t, FEATURE_NAMES.index("high_ret")] == pytest.approx(high, rel=1e-5)


def test_features_of_a_long_series_are_finite():
    """Speed on 1M candles is ``workstation bench features``' job; this checks the result."""
    n = 100_000
    ts = T0 + 60_000 * np.arange(n, dtype=np.int64)
    close = 2000 * np.exp(np.cumsum(np.random.default_rng(0).normal(0, 1e-3, n)))
    candles = Candles.from_arrays(ts, close, close * 1.001, close * 0.999, close,
                                  np.full(n, 10.0), ONE_MINUTE, validate=False)
    feats = make_features(candles)
    assert feats.shape == (n, FeatureSpec().n_features) and np.isfinite(feats).all()


def test_feature_spec_round_trip_and_errors():
    spec = FeatureSpec(volatility_window=30)
    assert FeatureSpec.from_dict(spec.to_dict()) == spec
    assert spec.to_dict()["names"] == list(FEATURE_NAMES + trend_names(TREND_WINDOWS))
    with pytest.raises(WorkstationError, match="unknown feature settings: colour"):
        FeatureSpec.from_dict({"colour": 1})
    with pytest.raises(WorkstationError, match="differ"):
        FeatureSpec.from_dict(dict(spec.to_dict(), names=["a", "b"]))
    with pytest.raises(WorkstationError, match="volume_window"):
        FeatureSpec(volume_window=0)


# -- targets ----------------------------------------------------------------------------------
def closes_to_candles(close: np.ndarray) -> Candles:
    n = len(close)
    ts = T0 + 60_000 * np.arange(n, dtype=np.int64)
    return Candles.from_arrays(ts, close, close, close, close, np.ones(n), ONE_MINUTE)


def test_targets_look_forward_and_mask_the_tail():
    close = 100 * np.exp(np.array([0, 5, 5.5, 2, 2, 10, 10.5, 11, 0, 0]) * 1e-4)
    spec = TargetSpec(flat_band="bps", candle_flat_bps=1.0, trend_horizon=3,
                      trend_flat_bps=4.0)
    t = make_targets(closes_to_candles(close), spec)
    # next-candle moves in bps: +5 +0.5 -3.5 0 +8 +0.5 +0.5 -11 0
    assert t.candle.tolist() == [2, 1, 0, 1, 2, 1, 1, 0, 1, MASKED]
    # 3-candle moves: 2, -3, 4.5, 8.5, 9, -10, -10.5
    assert t.trend.tolist() == [1, 1, 2, 2, 2, 0, 0, MASKED, MASKED, MASKED]
    np.testing.assert_allclose(t.next_return_bps[:-1], np.diff(np.log(close)) * 1e4, rtol=1e-5)
    assert np.isnan(t.next_return_bps[-1])
    assert t.mask("candle").tolist() == [True] * 9 + [False]
    assert t.mask("return").tolist() == [True] * 9 + [False]
    assert t.mask("trend").sum() == 7
    for head in ("position", "regime"):  # no annotations: fully masked
        assert not t.mask(head).any()


def test_volatility_bands_measure_direction_in_calm_and_wild_markets():
    """A move is flat within k trailing volatilities known at t: the share of flat candles is
    the same in a calm and in a wild stretch (a fixed bps band calls the calm one all flat)."""
    rng = np.random.default_rng(4)
    sigma = np.concatenate((np.full(3000, 1.0), np.full(3000, 20.0)))  # bps per candle
    close = 100 * np.exp(np.cumsum(rng.normal(0, sigma)) * 1e-4)
    candles = closes_to_candles(close)
    by_vol = make_targets(candles, TargetSpec(candle_flat_k=0.4))
    by_bps = make_targets(candles, TargetSpec(flat_band="bps", candle_flat_bps=2.0))

    def flat_share(t, part):
        c = t.candle[part][t.candle[part] != MASKED]
        return float(np.mean(c == 1))

    calm, wild = slice(100, 2900), slice(3100, 5900)
    assert abs(flat_share(by_vol, calm) - flat_share(by_vol, wild)) < 0.05
    assert 0.25 < flat_share(by_vol, calm) < 0.40  # about P(|z| < 0.4) = 0.31
    assert flat_share(by_bps, calm) > 0.6 and flat_share(by_bps, wild) < 0.1
    vol = trailing_volatility_bps(np.log(close), 60)
    assert np.isnan(vol[0]) and by_vol.candle[0] == MASKED  # nothing known yet: no band
    np.testing.assert_allclose(by_vol.volatility_bps[1:], vol[1:])
    i = 4000
    r = np.diff(np.log(close[i - 60:i + 1])) * 1e4
    assert vol[i] == pytest.approx(np.sqrt(np.mean(r ** 2)))  # candles <= i only


def test_targets_depend_on_the_past_only_through_the_trailing_volatility():
    base = random_candles(400, seed=6)
    scale = np.ones(400)
    scale[:150] = 1.3  # change every candle before 150 (a level shift: returns keep)
    past = with_columns(base, open=base.open * scale, high=base.high * scale,
                        low=base.low * scale, close=base.close * scale)
    window = TargetSpec().volatility_window
    for spec, first in ((TargetSpec(flat_band="bps"), 150), (TargetSpec(), 150 + window)):
        a, b = make_targets(base, spec), make_targets(past, spec)
        for name in ("candle", "trend"):
            np.testing.assert_array_equal(getattr(a, name)[first:], getattr(b, name)[first:])
        np.testing.assert_array_equal(a.next_return_bps[150:], b.next_return_bps[150:])


def test_the_flat_band_does_not_look_ahead():
    """A target at t looks at candles t+1 .. t+H and nothing later; its band only back."""
    base = random_candles(400, seed=8)
    spec = TargetSpec()
    t, horizon = 200, spec.horizon
    scale = np.ones(400)
    scale[t + horizon + 1:] = np.exp(np.linspace(0.01, 0.5, 400 - t - horizon - 1))
    future = with_columns(base, open=base.open * scale, high=base.high * scale,
                          low=base.low * scale, close=base.close * scale)
    a, b = make_targets(base, spec), make_targets(future, spec)
    for name in ("candle", "trend"):
        np.testing.assert_array_equal(getattr(a, name)[:t + 1], getattr(b, name)[:t + 1])
    np.testing.assert_array_equal(a.volatility_bps[:t + horizon + 1],
                                  b.volatility_bps[:t + horizon + 1])


def test_short_series_is_all_masked_for_trend():
    t = make_targets(random_candles(5), TargetSpec(trend_horizon=10))
    assert (t.trend == MASKED).all()
    assert t.majority_baseline("trend") is None


def test_trader_labels_from_annotations():
    candles = random_candles(8)
    position = np.array([-1, 0, 1, 1, 0, -1, 2, 2], dtype=np.int8)
    regime = np.array([0, 0, -1, -1, 2, 2, 1, -1], dtype=np.int8)
    t = make_targets(candles, trader=TraderTargets(position, regime, position >= 0))
    assert t.position.tolist() == position.tolist() and t.regime.tolist() == regime.tolist()
    assert t.class_counts("position").tolist() == [2, 2, 2]
    assert t.majority_baseline("regime") == pytest.approx(2 / 5)
    np.testing.assert_allclose(t.class_weights("regime"), [5 / 6, 5 / 3, 5 / 6])
    assert POSITION_CLASSES == ("flat", "long", "short")
    assert REGIME_CLASSES == ("uptrend", "downtrend", "range")
    bad = position.copy()
    bad[2] = 7
    with pytest.raises(WorkstationError, match="position label at candle 2 is 7"):
        make_targets(candles, trader=TraderTargets(bad, regime, bad >= 0))
    with pytest.raises(WorkstationError, match="one per candle"):
        make_targets(candles, trader=TraderTargets(position[:3], regime[:3], position[:3]))


def test_majority_baseline_is_the_share_of_the_most_common_class():
    close = 100 * np.exp(np.cumsum([0, 5, 5, 5, -5, 0, 5]) * 1e-4)
    t = make_targets(closes_to_candles(close), TargetSpec(flat_band="bps", candle_flat_bps=1.0))
    # moves: +5 +5 +5 -5 0 +5 -> up 4, down 1, flat 1
    assert t.majority_baseline("candle") == pytest.approx(4 / 6)
    assert t.majority_baseline("candle", 3, 6) == pytest.approx(1 / 3)


def test_target_spec_round_trip_and_errors():
    spec = TargetSpec(trend_horizon=20, position_weight=0.0, flat_band="bps")
    assert TargetSpec.from_dict(spec.to_dict()) == spec
    with pytest.raises(WorkstationError, match="trend_horizon"):
        TargetSpec(trend_horizon=0)
    with pytest.raises(WorkstationError, match="return_weight"):
        TargetSpec(return_weight=float("nan"))
    with pytest.raises(WorkstationError, match="flat_band must be one of volatility, bps"):
        TargetSpec(flat_band="percent")
    with pytest.raises(WorkstationError, match="targets version 1 is not supported"):
        TargetSpec.from_dict(dict(spec.to_dict(), version=1))


# -- split and windows --------------------------------------------------------------------------
@pytest.mark.parametrize("n,seq_len,frac", [(10_000, 200, 0.1), (1000, 50, 0.2), (700, 100, 0.01)])
def test_split_by_time_leaves_a_gap_of_at_least_one_window(n, seq_len, frac):
    gap = seq_len + 10
    split = plan_split(n, seq_len, frac, gap)
    assert split.train[0] == 0 and split.val[1] == n
    assert split.val[0] - split.train[1] == gap >= seq_len
    assert split.val[1] - split.val[0] >= seq_len
    train = WindowSampler(*split.train, seq_len)
    val = WindowSampler(*split.val, seq_len)
    last_train_end = max(int(train.starts(e, seed=3).max()) for e in range(20)) + seq_len
    first_val = int(val.starts(shuffle=False).min())
    assert last_train_end <= split.train[1]
    assert first_val - last_train_end >= seq_len  # no window straddles, a window apart


def test_split_refuses_too_few_candles_and_a_small_gap():
    with pytest.raises(WorkstationError, match="too few to train"):
        plan_split(500, 200, 0.1, 210)
    with pytest.raises(WorkstationError, match="at least one window"):
        plan_split(10_000, 200, 0.1, 199)


def test_window_sampler_epochs_are_deterministic_and_the_same_size():
    sampler = WindowSampler(100, 5100, 64)
    sizes = {len(sampler.starts(e, seed=1)) for e in range(30)}
    assert sizes == {sampler.n_windows}
    assert torch.equal(sampler.starts(3, seed=1), sampler.starts(3, seed=1))
    assert not torch.equal(sampler.starts(3, seed=1), sampler.starts(4, seed=1))
    for e in range(30):
        s = sampler.starts(e, seed=1)
        assert int(s.min()) >= 100 and int(s.max()) + 64 <= 5100
        assert torch.unique(torch.diff(torch.sort(s).values)).tolist() == [64]
    dense = WindowSampler(0, 1000, 100, stride=1)
    assert dense.n_windows == 901


def test_device_series_gathers_windows_by_index():
    candles = random_candles(600, seed=7)
    labels = np.random.default_rng(0).integers(-1, 3, 600).astype(np.int8)
    data = TrainingData.from_candles(candles, trader=TraderTargets(labels, labels[::-1],
                                                                   labels >= 0))
    series = DeviceSeries(data, torch.device("cpu"))
    starts = torch.tensor([0, 17, 400])
    batch = series.gather(starts, 32)
    assert batch.x.shape == (3, 32, data.features.shape[1])
    for i, s in enumerate(starts.tolist()):
        np.testing.assert_array_equal(batch.x[i].numpy(), data.features[s:s + 32])
        np.testing.assert_array_equal(batch.candle[i].numpy(), data.targets.candle[s:s + 32])
        np.testing.assert_array_equal(batch.position[i].numpy(), labels[s:s + 32])
        np.testing.assert_array_equal(batch.regime[i].numpy(), labels[::-1][s:s + 32])
    tail = series.gather(torch.tensor([600 - 32]), 32)
    assert not tail.ret_mask[0, -1] and tail.ret[0, -1] == 0.0  # masked, not NaN
    assert tail.candle[0, -1] == MASKED
