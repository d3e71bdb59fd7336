"""A saved run's predictions over a span of candles, batched: what a backtest of its signals
needs (imports torch).

Each candle is predicted once, from a window in which it has at least half a window of
history (``trainer.scoring_windows``, the evaluation's rule; the live predictor reads the last
position of a full window). Features are made on all the candles given, causally, so a
prediction never depends on a later candle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..market.candles import Candles
from .features import make_features
from .model import TradingTransformer
from .online import Predictor
from .targets import CLASSES
from .trainer import scoring_windows


@dataclass(frozen=True)
class SpanPredictions:
    """Per head (``candle``, ``trend``, ``position``, ``regime``): the predicted class and its
    probability at every candle of ``span``."""

    span: tuple[int, int]
    classes: dict[str, np.ndarray]
    confidence: dict[str, np.ndarray]


def predict_span_probabilities(predictor: Predictor, candles: Candles, span: tuple[int, int],
                               batch_size: int = 256) -> SpanPredictions:
    """``predictor``'s classes and confidences at every candle of ``span``."""
    start, stop = span
    seq_len = predictor.config.seq_len
    features = torch.from_numpy(np.ascontiguousarray(
        make_features(candles, predictor.feature_spec))).to(predictor.device)
    windows = scoring_windows(span, seq_len)
    classes = {head: np.full(stop - start, -1, dtype=np.int64) for head in CLASSES}
    confidence = {head: np.zeros(stop - start, dtype=np.float64) for head in CLASSES}
    offsets = np.arange(seq_len)
    model: TradingTransformer = predictor.model
    with torch.no_grad():
        for i in range(0, len(windows), batch_size):
            chunk = windows[i:i + batch_size]
            index = torch.from_numpy(chunk[:, :1] + offsets).to(predictor.device)
            out = model(features[index])
            candle = chunk[:, :1] + offsets
            scored = (candle >= chunk[:, 1:2]) & (candle < chunk[:, 2:3])
            where = candle[scored] - start
            for head in CLASSES:
                logits = getattr(out, f"{head}_logits")
                probs = torch.softmax(logits.float(), -1).cpu().numpy()[scored]
                classes[head][where] = probs.argmax(-1)
                confidence[head][where] = probs.max(-1)
    return SpanPredictions(span, classes, confidence)

