"""A saved run's predictions over a span of candles, batched: what a backtest of its signals
needs (imports torch).

Each candle is predicted once, from a window in which it has at least half a window of
history (``trainer.predict_span``, the evaluation's rule; the live predictor reads the last
position of a full window). Features are made on all the candles given, causally, so a
prediction never depends on a later candle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ..market.candles import Candles
from .dataset import DeviceSeries, TrainingData
from .online import Predictor
from .targets import CLASS_HEADS
from .trainer import predict_span


@dataclass(frozen=True)
class SpanPredictions:
    """Per class head (``CLASS_HEADS``): the predicted class and its probability at every
    candle of ``span``."""

    span: tuple[int, int]
    classes: dict[str, np.ndarray]
    confidence: dict[str, np.ndarray]


def predict_span_probabilities(predictor: Predictor, candles: Candles, span: tuple[int, int],
                               batch_size: int = 256,
                               should_stop: Callable[[], bool] = bool,
                               reference: Candles | None = None,
                               levels=None) -> SpanPredictions:
    """``predictor``'s classes and confidences at every candle of ``span``; ``should_stop``
    (asked between batches) ends it early with ``trainer.Stopped``; ``reference``: the
    reference asset's candles, if its features read one; ``levels``: the market's drawn
    levels, if they read them."""
    data = TrainingData.from_candles(candles, feature_spec=predictor.feature_spec,
                                     target_spec=predictor.target_spec, reference=reference,
                                     levels=levels)
    confidence = np.zeros((len(CLASS_HEADS), span[1] - span[0]))
    with torch.no_grad():
        classes = predict_span(predictor.model, DeviceSeries(data, predictor.device), span,
                               predictor.config.seq_len, batch_size, predictor.device,
                               confidence=confidence, should_stop=should_stop)
    return SpanPredictions(span, dict(zip(CLASS_HEADS, classes)),
                           dict(zip(CLASS_HEADS, confidence)))
