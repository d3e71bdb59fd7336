"""The walk-forward backtest: each fold's model trades its own test span.

``WalkForwardSignals`` takes each fold's predictions on its test span (``ml.evaluation``'s
``on_test_predictions``) and turns them into one signal per head and threshold; the test spans are
adjacent, so after the last fold the model has traded the whole walk-forward period out of
sample, each span with the model that never saw it. ``backtest`` then trades those signals
beside buy & hold and, where the trader marked the spans, beside the trader's blind and
hindsight marks on the same spans and costs, with the hindsight gap (hindsight minus blind)
per fold and over them all. The CLI (``evaluate --backtest``) and the Evaluation view show
the same ``WalkForwardBacktest``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..market.candles import Candles
from ..market.series import SeriesKey
from ..ml.targets import CLASS_HEADS
from .engine import Costs, Sizing
from .report import (
    OUT_OF_SAMPLE,
    BacktestResult,
    HindsightGap,
    backtest_signals,
    hindsight_gap,
    marks_columns,
    span_gaps,
)
from .request import signal_name
from .signals import SIGNAL_HEADS, market_marks_signals, model_signal
from .worth import Tick

ALL_SPANS = "all"  # the hindsight gap's label over every test span


def signal_heads(marked: bool) -> tuple[str, ...]:
    """Every head that can signal: the position head only where the trader marked trades
    (without marks it learned nothing), and the candle head."""
    return SIGNAL_HEADS if marked else ("candle",)


@dataclass(frozen=True)
class WalkForwardBacktest:
    """The test spans backtested: ``results`` (the model's signals, the trader's marks where
    the spans hold one, buy & hold last), ``span`` (first and end candle of the test spans),
    ``tests`` (each fold's test span) and ``gaps`` (the hindsight gap per fold, then
    ``ALL_SPANS``; empty without marks on the spans)."""

    heads: tuple[str, ...]
    span: tuple[int, int]
    tests: tuple[tuple[int, int], ...]
    results: list[BacktestResult]
    gaps: list[HindsightGap]


class WalkForwardSignals:
    """Each fold's model signals on its own test span, from each class head of ``heads`` at
    each confidence of ``levels``; call it as ``on_test_predictions``, then ``backtest``."""

    def __init__(self, n: int, heads: tuple[str, ...], levels: tuple[float, ...]):
        self.heads = heads
        several = len(levels) > 1
        self.signals = {(head, level): (signal_name(f"model {head}", level, several),
                                        np.zeros(n, dtype=np.int8))
                        for head in heads for level in levels}
        self.tests: list[tuple[int, int]] = []  # each fold's test span

    def __call__(self, fold, classes: np.ndarray, confidence: np.ndarray) -> None:
        start, stop = fold.test
        for (head, level), (_, signal) in self.signals.items():
            h = CLASS_HEADS.index(head)
            signal[start:stop] = model_signal(head, classes[h], confidence[h], level)
        self.tests.append((start, stop))

    def backtest(self, candles: Candles, key: SeriesKey, *, annotations_db: Path | None,
                 costs: Costs, sizing: Sizing = Sizing(), tick: Tick | None = None
                 ) -> WalkForwardBacktest:
        """The signals of every fold so far backtested together on their test spans."""
        if not self.tests:
            raise ValueError("no fold was tested")
        span = (self.tests[0][0], self.tests[-1][1])
        signals = {name: (signal, OUT_OF_SAMPLE) for name, signal in self.signals.values()}
        marks = market_marks_signals(candles, key, annotations_db)
        marked = any(m[span[0]:span[1]].any() for m in marks.values())
        if marked:  # the trader as a baseline, on the same spans and costs
            signals.update(marks_columns(marks))
        results = backtest_signals(candles, signals, series=key.provenance, span=span,
                                   sizing=sizing, costs=costs, tick=tick)
        gaps: list[HindsightGap] = []
        if marked:
            folds = len(self.tests)
            gaps = span_gaps(candles, marks, [(f"fold {k + 1}/{folds}", test)
                                              for k, test in enumerate(self.tests)],
                             costs=costs, sizing=sizing)
            overall = hindsight_gap(results, ALL_SPANS)
            assert overall is not None  # both marks samples are among the results
            gaps.append(overall)
        return WalkForwardBacktest(self.heads, span, tuple(self.tests), results, gaps)
