"""Signals to backtest: the position wanted after each candle's close (+1 / 0 / -1)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..annotations.model import Annotation
from ..annotations.targets import LONG, SHORT, trader_targets
from ..market.series import SeriesKey
from ..market.timeframes import Timeframe


def annotation_signal(annotations: Iterable[Annotation], ts: np.ndarray,
                      timeframe: Timeframe) -> np.ndarray:
    """The trader's marked trades as a signal on this series: long or short from the close of
    the candle they acted on (on any timeframe, the training targets' rule,
    ``annotations.targets``) to the close of their exit candle; flat elsewhere."""
    position = trader_targets(annotations, ts, timeframe, review_margin=0).position
    return np.select([position == LONG, position == SHORT], [1, -1], 0).astype(np.int8)


def market_marks_signal(candles, series: SeriesKey, annotations_db: Path | None) -> np.ndarray:
    """``annotation_signal`` of every mark of the series' market in the store file."""
    from ..ml.job import market_annotations

    annotations = market_annotations(annotations_db, series.market)
    return annotation_signal(annotations, candles.ts, candles.timeframe)


def buy_and_hold_signal(n: int, span: tuple[int, int]) -> np.ndarray:
    """Long from the close of the span's first candle to its end."""
    signal = np.zeros(n, dtype=np.int8)
    signal[span[0]:span[1]] = 1
    return signal


SIGNAL_HEADS = ("position", "candle")
DEFAULT_THRESHOLD = 0.5  # the confidence a model's signal needs, as the backtest's default
_LONG_SHORT = {"position": (LONG, SHORT), "candle": (2, 0)}  # candle: up, down


def model_signal(head: str, classes: np.ndarray, confidence: np.ndarray,
                 threshold: float) -> np.ndarray:
    """A model head as a signal: the ``position`` head's long / short, or the ``candle``
    head's up / down (held one candle), where predicted with at least ``threshold``
    confidence; flat elsewhere (``classes``: the head's codes, ``-1`` without a prediction)."""
    long_code, short_code = _LONG_SHORT[head]
    sure = confidence >= threshold
    return np.select([sure & (classes == long_code), sure & (classes == short_code)],
                     [1, -1], 0).astype(np.int8)


def position_signal(position_probs, threshold: float) -> int:
    """One live prediction of the ``position`` head (its flat / long / short probabilities)
    as a signal, by ``model_signal``'s rule: its most likely class, where that class has at
    least ``threshold`` probability; flat elsewhere."""
    probs = np.asarray(position_probs, dtype=np.float64)
    best = int(np.argmax(probs))
    return int(model_signal("position", np.array([best]), np.array([probs[best]]),
                            threshold)[0])
