"""Training targets from annotations: what the trader held, and the regime, at every candle
the trader reviewed.

``trader_targets(annotations, candles_ts, timeframe)`` works on the candle grid of the series
being trained, which may be another timeframe than the ones annotated. A trader acts at the
close of the candle they marked, on the timeframe they marked it on: a trade is held from its
entry candle's close to its exit candle's close (``Trade.held``), and a candle of the series is
labelled by the moment it closes. A 1h long marked on the 10:00 candle is held from 11:00: on
a 1m series the first long candle is the 10:59 one (it closes at 11:00), never earlier.

- ``reviewed``: candles whose close falls inside a stretch the trader looked at: a
  ``reviewed`` region (from its first candle's open to its last candle's close), or a trade's
  span widened by ``review_margin`` candles of the trade's timeframe on each side, and always
  the candles from the one its entry lands on to the one its exit lands on (on a coarser grid
  those close after the marked candles: the trader was flat again at that close). Every other
  candle carries no position label (masked), so stretches the trader never looked at are not
  read as "no trade".
- ``position`` (on reviewed candles, else ``MASKED``): ``FLAT``, ``LONG`` or ``SHORT``, the
  position held once the candle has closed. Entries and exits are its transitions.
- ``regime`` (``UPTREND``, ``DOWNTREND``, ``RANGE``; else ``MASKED``): the label of the regime
  region whose span holds the candle's close; where regions of different labels overlap, the
  candle is masked. Custom labels and reviewed regions are not regimes.

Trades held at the same time are an ``OverlappingTradesError`` naming every pair (the one rule
of ``overlap``); trades outside the series are not checked. Pass the annotations of one
market; the function does not filter them. All work is numpy (searchsorted, cumulative sums),
no per-candle Python.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..market.timeframes import Timeframe
from .model import Annotation, AnnotationError, Region, RegionLabel, Trade
from .overlap import OverlappingTradesError, check_no_overlaps

MASKED = -1
FLAT, LONG, SHORT = 0, 1, 2
POSITION_NAMES = ("flat", "long", "short")
UPTREND, DOWNTREND, RANGE = 0, 1, 2
REGIME_NAMES = ("uptrend", "downtrend", "range")
REGIME_CODES = {RegionLabel.UPTREND.value: UPTREND, RegionLabel.DOWNTREND.value: DOWNTREND,
                RegionLabel.RANGE.value: RANGE}
DEFAULT_REVIEW_MARGIN = 10  # candles of a trade's timeframe before its entry and after its exit

__all__ = ["DEFAULT_REVIEW_MARGIN", "DOWNTREND", "FLAT", "LONG", "MASKED", "POSITION_NAMES",
           "RANGE", "REGIME_NAMES", "SHORT", "UPTREND", "OverlappingTradesError",
           "TraderTargets", "trader_targets"]


@dataclass(frozen=True)
class TraderTargets:
    """Per-candle targets, all of length N: ``position`` and ``regime`` int8 (``MASKED``
    where there is no label), ``reviewed`` bool."""

    position: np.ndarray
    regime: np.ndarray
    reviewed: np.ndarray

    def __len__(self) -> int:
        return len(self.position)


def _spans(annotations: list, start_of, end_of) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([start_of(a) for a in annotations], dtype=np.int64),
            np.array([end_of(a) for a in annotations], dtype=np.int64))


def candle_span(ann: Annotation) -> tuple[int, int]:
    """From the open of an annotation's first candle to the close of its last (epoch ms)."""
    tf = ann.timeframe_ms
    first, last = ann.span
    return first - first % tf, last - last % tf + tf


def _covered(closes: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """How many of the stretches ``(start, end]`` hold each close (a sweep, no loop)."""
    step = np.zeros(len(closes) + 1, dtype=np.int32)
    np.add.at(step, np.searchsorted(closes, starts, side="right"), 1)
    np.add.at(step, np.searchsorted(closes, ends, side="right"), -1)
    return np.cumsum(step[:-1])


def trader_targets(annotations: Iterable[Annotation], candles_ts: np.ndarray,
                   tf: Timeframe, *, review_margin: int = DEFAULT_REVIEW_MARGIN
                   ) -> TraderTargets:
    """Position, regime and reviewed targets for candles opening at ``candles_ts`` (int64
    epoch ms, strictly increasing) on ``tf``; see the module docstring."""
    ts = np.asarray(candles_ts, dtype=np.int64)
    if ts.ndim != 1:
        raise AnnotationError(f"candles_ts must be one-dimensional, got shape {ts.shape}")
    n = len(ts)
    if n > 1 and not bool(np.all(np.diff(ts) > 0)):
        raise AnnotationError("candles_ts must be strictly increasing")
    if review_margin < 0:
        raise AnnotationError(f"review_margin must be >= 0 candles, got {review_margin}")
    position = np.full(n, MASKED, dtype=np.int8)
    regime = np.full(n, MASKED, dtype=np.int8)
    reviewed = np.zeros(n, dtype=bool)
    annotations = list(annotations)
    if n == 0 or not annotations:
        return TraderTargets(position, regime, reviewed)
    closes = ts + tf.ms
    first_open, last_close = int(ts[0]), int(closes[-1])

    trades = [a for a in annotations if isinstance(a, Trade)]
    regions = [a for a in annotations if isinstance(a, Region)]
    looked = [r for r in regions if r.label == RegionLabel.REVIEWED.value]
    starts, ends = _spans(looked, lambda r: candle_span(r)[0], lambda r: candle_span(r)[1])
    if trades:
        margin = np.array([review_margin * t.timeframe_ms for t in trades], dtype=np.int64)
        t_start, t_end = _spans(trades, lambda t: candle_span(t)[0],
                                lambda t: candle_span(t)[1])
        starts, ends = np.concatenate((starts, t_start - margin)), np.concatenate((ends,
                                                                                  t_end + margin))
    reviewed[:] = _covered(closes, starts, ends) > 0

    if trades:
        held_start, held_end = _spans(trades, lambda t: t.held[0], lambda t: t.held[1])
        touches = (held_end > first_open) & (held_start <= last_close)
        check_no_overlaps([t for t, hit in zip(trades, touches) if hit])
        sign = np.array([t.direction.sign for t in trades], dtype=np.int32)
        # The position is the trade's sign at every close in [held start, held end): from the
        # candle the entry lands on up to the one before where the exit lands.
        entry = np.searchsorted(closes, held_start, side="left")
        exit_ = np.searchsorted(closes, held_end, side="left")
        step = np.zeros(n + 1, dtype=np.int32)
        np.add.at(step, entry, sign)
        np.add.at(step, exit_, -sign)
        held = np.cumsum(step[:-1])
        landed = np.zeros(n + 1, dtype=np.int32)
        np.add.at(landed, entry[touches], 1)
        np.add.at(landed, np.minimum(exit_[touches] + 1, n), -1)
        reviewed |= np.cumsum(landed[:-1]) > 0
        position[reviewed] = np.select([held > 0, held < 0], [LONG, SHORT], FLAT)[reviewed]
    else:
        position[reviewed] = FLAT

    conflict = np.zeros(n, dtype=bool)
    for code in (UPTREND, DOWNTREND, RANGE):
        mine = [r for r in regions if REGIME_CODES.get(r.label) == code]
        if mine:
            inside = _covered(closes, *_spans(mine, lambda r: candle_span(r)[0],
                                              lambda r: candle_span(r)[1])) > 0
            conflict |= inside & (regime != MASKED) & (regime != code)
            regime[inside] = code
    regime[conflict] = MASKED
    return TraderTargets(position, regime, reviewed)
