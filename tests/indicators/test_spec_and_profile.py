"""Indicator specs as a trader types them, and the volume profile against a direct count."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.indicators import (
    IndicatorKind,
    IndicatorSpec,
    IndicatorSpecError,
    parse_spec,
    volume_profile,
)


@pytest.mark.parametrize("text, kind, period, width", [
    ("ema 50", "ema", 50, 0.0), ("EMA(50)", "ema", 50, 0.0), ("ema50", "ema", 50, 0.0),
    ("ema", "ema", 20, 0.0), ("sma 200", "sma", 200, 0.0), ("ma 9", "sma", 9, 0.0),
    ("bb 20 2.5", "bb", 20, 2.5), ("bollinger 10", "bb", 10, 2.0), ("BB(20, 3)", "bb", 20, 3.0),
    ("vwap", "vwap", 0, 0.0), ("rsi", "rsi", 14, 0.0), ("atr 7", "atr", 7, 0.0),
    ("volume profile 30", "vp", 30, 0.0), ("vp", "vp", 24, 0.0),
])
def test_parse(text, kind, period, width):
    spec = parse_spec(text)
    assert (spec.kind.value, spec.period, spec.width) == (kind, period, width)
    assert parse_spec(spec.text) == spec


@pytest.mark.parametrize("text, says", [
    ("", "no indicator given"), ("macd 12", "no indicator called 'macd'"),
    ("ema 0", "from 1 to 10000"), ("ema 2.5", "whole number"), ("vwap 20", "takes no"),
    ("bb 20 0", "Bollinger width"), ("ema 20 30", "takes 1 number"), ("vp 1", "at least 2"),
    ("ema -5", "cannot read"),
])
def test_bad_specs_say_what_is_wrong(text, says):
    with pytest.raises(IndicatorSpecError, match=says):
        parse_spec(text)


def test_where_each_kind_is_drawn_and_its_warm_up():
    assert IndicatorSpec.default(IndicatorKind.RSI).own_pane
    assert IndicatorSpec.default(IndicatorKind.ATR).own_pane
    assert not IndicatorSpec.default(IndicatorKind.EMA).own_pane
    assert parse_spec("bb 20").lines == ("middle", "upper", "lower")
    assert (parse_spec("sma 20").warmup, parse_spec("rsi 14").warmup,
            parse_spec("vwap").warmup) == (19, 14, 0)
    assert parse_spec("bb 20 2").label == "BB 20 2"


def test_profile_against_a_fine_count():
    """Each candle spreads its volume evenly over its range: a count over 20000 sub-prices
    per candle gives the same rows."""
    rng = np.random.default_rng(0)
    low = rng.uniform(100, 110, 40)
    high = low + rng.uniform(0, 5, 40)
    high[::7] = low[::7]  # candles without a range
    volume = rng.gamma(2, 10, 40)
    p = volume_profile(low, high, volume, 12)
    assert p is not None and p.rows == 12
    want = np.zeros(12)
    for lo, hi, v in zip(low, high, volume):
        if hi == lo:
            row = min(np.searchsorted(p.edges, lo, side="right") - 1, 11)
            want[row] += v
            continue
        prices = np.linspace(lo, hi, 20001)[:-1] + (hi - lo) / 40000
        rows = np.clip(np.searchsorted(p.edges, prices, side="right") - 1, 0, 11)
        want += np.bincount(rows, minlength=12) * v / 20000
    np.testing.assert_allclose(p.volume, want, rtol=1e-3)
    assert p.volume.sum() == pytest.approx(volume.sum(), rel=1e-12)
    assert p.poc == int(np.argmax(p.volume))
    held = p.volume[p.value_low:p.value_high + 1].sum()
    assert held >= 0.7 * volume.sum()
    # one row fewer on either side would not hold 70 %
    assert min(p.volume[p.value_low + 1:p.value_high + 1].sum(),
               p.volume[p.value_low:p.value_high].sum()) < 0.7 * volume.sum()


def test_profile_without_volume_is_none():
    assert volume_profile(np.array([1.0]), np.array([2.0]), np.array([0.0]), 4) is None
    assert volume_profile(np.empty(0), np.empty(0), np.empty(0), 4) is None
