"""The walk-forward backtest (``backtest.walk_forward``): each fold's predictions become the
signal on its own test span only, a column per head and threshold, backtested together on
the test spans beside buy & hold (and the trader's marks, where the spans hold one)."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.backtest.costs import costs_for
from workstation.backtest.report import BUY_AND_HOLD, backtest_signals
from workstation.backtest.signals import SIGNAL_HEADS, model_signal
from workstation.backtest.walk_forward import (
    WalkForwardSignals,
    signal_heads,
)
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import parse_timeframe
from workstation.ml.folds import Fold
from workstation.ml.targets import CLASS_HEADS

KEY = SeriesKey("demo", "DEMO/USDT", parse_timeframe("1h"))


def predictions(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 3, size=(len(CLASS_HEADS), n)),
            rng.uniform(0.3, 1.0, size=(len(CLASS_HEADS), n)))


def test_each_fold_signals_on_its_own_test_span_only(paths):
    candles = demo_candles(600, KEY.timeframe, seed=5)
    signals = WalkForwardSignals(600, SIGNAL_HEADS, (0.0, 0.6))
    tests = [(200, 400), (400, 600)]
    made = []
    for k, test in enumerate(tests):
        classes, confidence = predictions(test[1] - test[0], seed=k)
        signals(Fold(k, (0, test[0] - 20), test, 20), classes, confidence)
        made.append((classes, confidence))
    names = dict(signals.signals.values())
    assert list(names) == ["model position >= 0", "model position >= 0.6",
                           "model candle >= 0", "model candle >= 0.6"]
    for (head, level), (_, signal) in signals.signals.items():
        assert not signal[:200].any()  # nothing before the first test span
        h = CLASS_HEADS.index(head)
        for (start, stop), (classes, confidence) in zip(tests, made, strict=True):
            assert np.array_equal(signal[start:stop],
                                  model_signal(head, classes[h], confidence[h], level))
    costs = costs_for(KEY)
    done = signals.backtest(candles, KEY, annotations_db=paths.annotations_db, costs=costs)
    assert done.span == (200, 600) and done.tests == tuple(tests)
    assert done.gaps == []  # no mark: no hindsight gap, no marks columns
    assert [r.name for r in done.results] == [*names, BUY_AND_HOLD]
    again = backtest_signals(candles, {n: (s, "out of sample") for n, s in names.items()},
                             series=KEY.provenance, span=(200, 600), costs=costs)
    for shown, expected in zip(done.results, again, strict=True):
        assert np.array_equal(shown.run.equity, expected.run.equity)
        assert shown.metrics["# Trades"] == expected.metrics["# Trades"]


def test_one_head_keeps_its_plain_name_and_no_fold_is_no_backtest(paths):
    signals = WalkForwardSignals(100, signal_heads(False), (0.5,))
    assert [name for name, _ in signals.signals.values()] == ["model candle"]
    with pytest.raises(ValueError, match="no fold was tested"):
        signals.backtest(demo_candles(100, KEY.timeframe, seed=1), KEY,
                         annotations_db=paths.annotations_db, costs=costs_for(KEY))
    assert signal_heads(True) == ("position", "candle") and signal_heads(False) == ("candle",)
