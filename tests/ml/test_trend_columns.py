"""The multi-scale trend inputs (``FeatureSpec.trend_windows``): their values by hand, causal,
the same from a window that starts ``warmup`` candles back, scale-free, recorded with a run
and refused when malformed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workstation.cli import main
from workstation.errors import WorkstationError
from workstation.market.candles import Candles
from workstation.market.demo import demo_candles
from workstation.market.perturb import changed_after
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.candle_columns import FEATURE_NAMES, volatility
from workstation.ml.features import TREND_WINDOWS, FeatureSpec, make_features
from workstation.ml.trend_columns import CHANNEL_CLIP

END = 1_700_000_040_000 - 1_700_000_040_000 % 60_000
SPEC = FeatureSpec(trend_windows=(5, 20))


def candles_of(n: int, seed: int = 3) -> Candles:
    return demo_candles(n, ONE_MINUTE, seed=seed, end_ts=END)


def test_the_columns_are_the_close_against_its_average_and_the_channel_before_it():
    candles = candles_of(300)
    rows = make_features(candles, SPEC)
    names = SPEC.names
    assert names == FEATURE_NAMES + ("trend_5", "trend_20", "breakout_5", "breakout_20")
    assert rows.shape == (300, len(names)) and SPEC.n_features == len(names)
    c, h, low = candles.close, candles.high, candles.low
    vol = volatility(candles, SPEC)
    for t in (0, 3, 19, 150, 299):
        for k in (5, 20):
            first = max(0, t - k + 1)
            run = np.log(c[t] / c[first:t + 1].mean()) / vol[t]
            assert rows[t, names.index(f"trend_{k}")] == pytest.approx(
                np.clip(run, -10, 10), rel=1e-5, abs=1e-6)
            before = slice(max(0, t - k), t) if t else slice(0, 1)  # the first reads its own
            top, bottom = h[before].max(), low[before].min()
            place = 2 * (c[t] - bottom) / (top - bottom) - 1 if top > bottom else 0.0
            assert rows[t, names.index(f"breakout_{k}")] == pytest.approx(
                np.clip(place, -CHANNEL_CLIP, CHANNEL_CLIP), rel=1e-5, abs=1e-6)
    breakouts = rows[:, [names.index("breakout_5"), names.index("breakout_20")]]
    assert (np.abs(breakouts) <= CHANNEL_CLIP).all()
    # a close above every high of the k candles before it reads above 1: a breakout up
    broke = c[20:] > np.array([h[t - 20:t].max() for t in range(20, 300)])
    assert broke.any() and ((rows[20:, names.index("breakout_20")] > 1) == broke).all()


def test_they_are_causal_the_same_from_a_later_start_and_scale_free():
    candles = candles_of(1200)
    full = make_features(candles, SPEC)
    t = 900
    changed = make_features(changed_after(candles, int(candles.ts[t]), seed=1, drop=0.0), SPEC)
    assert np.array_equal(changed[:t + 1], full[:t + 1])
    assert SPEC.warmup == 60  # the volatility window is the longest here
    start = t - SPEC.warmup
    later = make_features(candles.slice(start, len(candles)), SPEC)
    assert np.array_equal(later[t - start], full[t])
    wide = FeatureSpec(trend_windows=(200,))
    assert wide.warmup == 200
    begun = make_features(candles.slice(t - 200, len(candles)), wide)
    assert np.array_equal(begun[200], make_features(candles, wide)[t])
    ts, o, h, low, c, v = candles.columns()
    tenfold = Candles.from_arrays(ts, o * 10, h * 10, low * 10, c * 10, v, ONE_MINUTE)
    assert np.allclose(make_features(tenfold, SPEC), full, atol=1e-5)


def test_they_are_fed_by_default_recorded_with_a_run_and_old_settings_read_as_none():
    data = SPEC.to_dict()
    assert data["trend_windows"] == [5, 20] and FeatureSpec.from_dict(data) == SPEC
    assert FeatureSpec().trend_windows == TREND_WINDOWS == (10, 20, 50, 100)  # fed by default
    old = FeatureSpec(trend_windows=()).to_dict()
    del old["trend_windows"]  # settings written before trend inputs existed
    assert FeatureSpec.from_dict(old).trend_windows == ()
    earlier = SPEC.to_dict()  # a run saved with the channel that held the candle itself
    earlier["names"] = [name.replace("breakout_", "channel_") for name in earlier["names"]]
    with pytest.raises(WorkstationError, match="differ from the ones this Workstation computes"):
        FeatureSpec.from_dict(earlier)
    for bad in ((1,), (5, 5)):
        with pytest.raises(WorkstationError, match="trend windows must be distinct"):
            FeatureSpec(trend_windows=bad)


def test_train_feeds_them_from_the_command_line(capsys):
    assert main(["train", "--max-candles", "1500", "--seq-len", "32", "--batch-size", "32",
                 "--stride", "32", "--epochs", "1", "--threads", "1", "--no-save",
                 "--trend-windows", "10,40",
                 "--json"]) == 0
    started = next(json.loads(line) for line in capsys.readouterr().out.splitlines()
                   if '"RunStarted"' in line)
    assert started["features"]["trend_windows"] == [10, 40]
    assert started["model_config"]["n_features"] == len(FEATURE_NAMES) + 4
    assert main(["train", "--trend-windows", "10,x"]) == 1
    assert "trend windows must be candle counts like 10,20,50, got '10,x'" in \
        capsys.readouterr().err
