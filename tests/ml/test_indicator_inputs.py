"""The chart's indicators as model inputs (opt-in): the chart's values to float32 precision,
causal (perturb the future), and a live window's rows equal the full history's bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from indicators.test_formulas import random_candles

from workstation.errors import WorkstationError
from workstation.indicators import compute, parse_spec
from workstation.indicators.anchored import anchored, warmup
from workstation.market.perturb import changed_after
from workstation.ml.features import FeatureSpec, make_features
from workstation.ml.indicator_columns import parse_indicators

INPUTS = ("ema 20", "rsi 14", "bb 20 2", "atr 14", "sma 50")


def test_the_inputs_are_named_and_recorded():
    spec = FeatureSpec(indicators=("EMA(20)", "rsi", "bb 20", "ema 20"))
    assert spec.indicators == ("ema 20", "rsi 14", "bb 20 2")  # as typed, once each
    assert spec.names[-4:] == ("ema_20", "rsi_14", "bb_20_2_pos", "bb_20_2_width")
    assert FeatureSpec.from_dict(spec.to_dict()) == spec
    old = FeatureSpec().to_dict()
    del old["indicators"]  # recorded before indicators were inputs: none fed
    assert FeatureSpec.from_dict(old).indicators == ()
    assert FeatureSpec(indicators=("rsi 14",)).warmup == 2 * 20 * 14  # anchored twenty periods


@pytest.mark.parametrize("text, says", [
    ("vwap", "vwap is not offered as a model input"), ("vp 24", "volume profile"),
    ("macd", "no indicator called 'macd'")])
def test_what_cannot_be_an_input_says_so(text, says):
    with pytest.raises(WorkstationError, match=f"indicator input '{text}'.*{says}"):
        parse_indicators(f"ema 20, {text}")
    assert parse_indicators(" ") == () and parse_indicators(None) is None


@pytest.mark.parametrize("text", ["ema 20", "rsi 14", "atr 14", "bb 20 2", "sma 50"])
def test_anchored_values_are_the_charts_to_float32_precision(text):
    spec = parse_spec(text)
    c = random_candles(12_000, seed=11, timeframe="1m")
    got, want = anchored(spec, c), compute(spec, c)
    w = warmup(spec)
    for name in spec.lines:
        assert not np.isnan(got[name][w:]).any()
        np.testing.assert_allclose(got[name][w:], want[name][w:], rtol=1e-8)


def test_a_tail_with_warmup_gives_the_same_rows_bit_for_bit():
    spec = FeatureSpec(indicators=INPUTS)
    c = random_candles(9_000, seed=12, timeframe="5m")
    full = make_features(c, spec)
    for start in (spec.warmup + 3, 4_321, 8_000):
        tail = make_features(c.slice(start - spec.warmup, len(c)), spec)
        np.testing.assert_array_equal(tail[spec.warmup:], full[start:])


def test_causal_perturbing_the_future_changes_no_earlier_row():
    spec = FeatureSpec(indicators=INPUTS)
    c = random_candles(4_000, seed=13, timeframe="1h")
    base = make_features(c, spec)
    for t in (500, 2_222, 3_998):
        moved = changed_after(c, int(c.ts[t]), seed=t, drop=0.0)
        after = make_features(moved, spec)
        np.testing.assert_array_equal(after[:t + 1], base[:t + 1])
        n = len(FeatureSpec(indicators=()).names)
        assert not np.array_equal(after[t + 1:, n:], base[t + 1:, n:])


def test_the_columns_read_as_documented():
    c = random_candles(3_000, seed=14, timeframe="1h")
    spec = FeatureSpec(indicators=("rsi 14", "bb 20 2"))
    f = make_features(c, spec)
    names = spec.names
    rsi = f[:, names.index("rsi_14")]
    want = (compute(parse_spec("rsi 14"), c)["value"] - 50) / 50
    w = spec.warmup
    np.testing.assert_allclose(rsi[w:], want[w:], atol=1e-6)
    assert (rsi[:14] == 0).all()  # the warm-up reads 0
    bands = compute(parse_spec("bb 20 2"), c)
    pos = f[:, names.index("bb_20_2_pos")]
    half = bands["upper"] - bands["middle"]
    np.testing.assert_allclose(pos[w:], np.clip((c.close - bands["middle"]) / half, -3, 3)[w:],
                               atol=1e-5)
