"""Signals to backtest: the position wanted after each candle's close (+1 / 0 / -1).

The trader's marks are two signals (``marks_signals``): the **blind** marks (``Origin.BLIND``:
made in a replay with the future hidden) and the **hindsight** marks (``HINDSIGHT``, and
``UNBLINDED``: blind once, their decision changed since). The engine fills a signal decided at a
candle's close at the next candle's open (``engine.NEXT_OPEN``), so a hindsight mark, acted on
at the close of the candle it marks, fills at the open after that candle. A blind mark's
decisions were made at ``decided_at``, never before that close but possibly after it (the
trader put the cursor on an earlier candle than the replay clock's), so it is held from the
first close of the series at or after its entry decision to the first at or after its exit
decision: filled at the first open at or after each decision, never at a price from before
the trader decided. Decided at the marked candle's close (the usual case), both rules give
the same fill.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..annotations.model import Annotation, Origin, Trade
from ..annotations.targets import LONG, SHORT, trader_targets
from ..market.series import SeriesKey
from ..market.timeframes import Timeframe

BLIND_MARKS_SIGNAL = "trader's blind marks"
HINDSIGHT_MARKS_SIGNAL = "trader's hindsight marks"


def annotation_signal(annotations: Iterable[Annotation], ts: np.ndarray,
                      timeframe: Timeframe) -> np.ndarray:
    """The trader's marked trades as a signal on this series: long or short from the close of
    the candle they acted on (on any timeframe, the training targets' rule,
    ``annotations.targets``) to the close of their exit candle; flat elsewhere."""
    position = trader_targets(annotations, ts, timeframe, review_margin=0).position
    return np.select([position == LONG, position == SHORT], [1, -1], 0).astype(np.int8)


def decided_signal(annotations: Iterable[Annotation], ts: np.ndarray,
                   timeframe: Timeframe) -> np.ndarray:
    """The blind trades of ``annotations`` as a signal on this series, each long or short from
    the first close at or after its entry decision (``decided_at[0]``) to the first close at
    or after its exit decision (see the module docstring); flat elsewhere. Blind trades whose
    decisions overlap (replays of one stretch) add up: the same side holds, opposite sides
    cancel to flat."""
    ts = np.asarray(ts, dtype=np.int64)
    signal = np.zeros(len(ts), dtype=np.int8)
    trades = [a for a in annotations if isinstance(a, Trade) and a.origin is Origin.BLIND]
    if not len(ts) or not trades:
        return signal
    closes = ts + timeframe.ms
    start = np.array([t.decided_at[0] for t in trades], dtype=np.int64)
    end = np.array([t.decided_at[1] for t in trades], dtype=np.int64)
    sign = np.array([t.direction.sign for t in trades], dtype=np.int32)
    step = np.zeros(len(ts) + 1, dtype=np.int32)
    np.add.at(step, np.searchsorted(closes, start, side="left"), sign)
    np.add.at(step, np.searchsorted(closes, end, side="left"), -sign)
    return np.sign(np.cumsum(step[:-1])).astype(np.int8)


def marks_signals(annotations: Iterable[Annotation], ts: np.ndarray, timeframe: Timeframe
                  ) -> dict[str, np.ndarray]:
    """The trader's blind marks (``decided_signal``) and hindsight marks (hindsight and
    unblinded trades, ``annotation_signal``) as two signals, by their names."""
    trades = [a for a in annotations if isinstance(a, Trade)]
    return {BLIND_MARKS_SIGNAL: decided_signal(trades, ts, timeframe),
            HINDSIGHT_MARKS_SIGNAL: annotation_signal(
                [t for t in trades if t.origin is not Origin.BLIND], ts, timeframe)}


def market_marks_signals(candles, series: SeriesKey, annotations_db: Path | None
                         ) -> dict[str, np.ndarray]:
    """``marks_signals`` of every mark of the series' market in the store file."""
    from ..ml.job import market_annotations

    annotations = market_annotations(annotations_db, series.market)
    return marks_signals(annotations, candles.ts, candles.timeframe)


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
