"""Training targets from annotations: the trader's action and position on every candle.

``action_targets(annotations, candles_ts, timeframe)`` works on the candle grid of the series
being trained, which may be another timeframe than the ones annotated. A trader acts at the
close of the candle they marked, on the timeframe they marked it on: an action lands on the
first candle of the series that closes at or after that moment (the first close at which the
trader could have acted), never earlier. A 1h entry marked on the 10:00 candle is an action
at 11:00, so on a 1m series it sits on the 10:59 candle, not 59 candles before the decision.

- The annotated span runs from the earliest start to the latest end of the given annotations
  (trades, regions and points alike): from the candle containing the first start to the
  candle on which the last end closes. Candles outside it are masked: ``actions`` -1,
  ``mask`` False, ``position`` 0.
- Inside the span every candle is HOLD except a trade's entry candle (ENTER_LONG/ENTER_SHORT)
  and exit candle (EXIT_LONG/EXIT_SHORT). When one trade exits on the candle where the next
  enters (a reversal), the candle carries the entry.
- ``position`` is the position after the candle's action: the trade's direction (+1 / -1)
  from its entry candle up to the candle before its exit, 0 elsewhere.
- A trade whose entry and exit land on the same candle says nothing the grid can hold: that
  candle is masked. Trades held at the same time are an ``OverlappingTradesError`` naming
  every pair (the one rule of ``overlap``); trades outside the series are not checked.
- A trade entered before the first candle opened holds its position from candle 0 (no entry
  action); one that ends after the last candle's close holds it to the end (no exit action).

Pass the annotations of one market; the function does not filter them. All work is numpy
(searchsorted, cumulative sums), no per-candle Python.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..market.timeframes import Timeframe, parse_timeframe
from .model import Annotation, AnnotationError, Trade
from .overlap import OverlappingTradesError, check_no_overlaps

__all__ = ["ACTION_HOLD", "ACTION_MASKED", "ACTION_NAMES", "ENTER_LONG", "ENTER_SHORT",
           "EXIT_LONG", "EXIT_SHORT", "ActionTargets", "OverlappingTradesError",
           "action_targets"]

ACTION_MASKED = -1
ACTION_HOLD = 0
ENTER_LONG = 1
EXIT_LONG = 2
ENTER_SHORT = 3
EXIT_SHORT = 4
ACTION_NAMES = ("hold", "enter long", "exit long", "enter short", "exit short")


@dataclass(frozen=True)
class ActionTargets:
    """Per-candle targets, all of length N: ``actions`` int8 (ACTION_* or -1 = masked),
    ``position`` int8 (-1 / 0 / +1), ``mask`` bool (True where ``actions`` is a target)."""

    actions: np.ndarray
    position: np.ndarray
    mask: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)


def action_targets(annotations: Iterable[Annotation], candles_ts: np.ndarray,
                   timeframe: str | Timeframe) -> ActionTargets:
    """Action and position targets for candles opening at ``candles_ts`` (int64 epoch ms,
    strictly increasing) on ``timeframe``; see the module docstring for the rules."""
    tf = parse_timeframe(timeframe)
    ts = np.asarray(candles_ts, dtype=np.int64)
    if ts.ndim != 1:
        raise AnnotationError(f"candles_ts must be one-dimensional, got shape {ts.shape}")
    n = len(ts)
    if n > 1 and not bool(np.all(np.diff(ts) > 0)):
        raise AnnotationError("candles_ts must be strictly increasing")
    actions = np.full(n, ACTION_MASKED, dtype=np.int8)
    position = np.zeros(n, dtype=np.int8)
    annotations = list(annotations)
    if n == 0 or not annotations:
        return ActionTargets(actions, position, actions >= 0)

    first_open, last_close = int(ts[0]), int(ts[-1]) + tf.ms
    closes = ts + tf.ms

    def containing(times: np.ndarray) -> np.ndarray:
        """Index of the candle containing each time, or the first candle after it."""
        return np.searchsorted(closes, times, side="right")

    def acted(times: np.ndarray, marked_ms: np.ndarray) -> np.ndarray:
        """Index of the first candle closing at or after the close of the candle (of
        ``marked_ms`` length) opening at each time: where an action there lands."""
        return np.searchsorted(closes, times - times % marked_ms + marked_ms, side="left")

    spans = np.array([ann.span for ann in annotations], dtype=np.int64)
    marked = np.array([ann.timeframe_ms for ann in annotations], dtype=np.int64)
    if int(spans[:, 1].max()) < first_open or int(spans[:, 0].min()) >= last_close:
        return ActionTargets(actions, position, actions >= 0)
    lo = int(containing(spans[:, 0]).min())
    hi = int(acted(spans[:, 1], marked).max())
    actions[lo:min(hi, n - 1) + 1] = ACTION_HOLD

    trades = sorted((a for a in annotations if isinstance(a, Trade)),
                    key=lambda t: (t.entry_ts, t.exit_ts, t.id))
    if trades:
        held = np.array([t.held for t in trades], dtype=np.int64)
        trade_tf = np.array([t.timeframe_ms for t in trades], dtype=np.int64)
        sign = np.array([t.direction.sign for t in trades], dtype=np.int8)
        entry = acted(np.array([t.entry_ts for t in trades], dtype=np.int64), trade_tf)
        exit_ = acted(np.array([t.exit_ts for t in trades], dtype=np.int64), trade_tf)
        touches = (held[:, 1] > first_open) & (held[:, 0] <= last_close)
        check_no_overlaps([t for t, hit in zip(trades, touches) if hit])
        before = held[:, 0] <= first_open
        kept = touches & ((entry < exit_) | before)
        single = touches & (entry == exit_) & ~before

        # The position steps to the trade's sign on its entry candle and back on its exit.
        step = np.zeros(n + 1, dtype=np.int32)
        np.add.at(step, entry[kept], sign[kept])
        np.add.at(step, exit_[kept], -sign[kept])
        position[:] = np.cumsum(step[:n])

        exits = kept & (held[:, 1] <= last_close)
        actions[exit_[exits]] = np.where(sign[exits] > 0, EXIT_LONG, EXIT_SHORT)
        entries = kept & ~before
        actions[entry[entries]] = np.where(sign[entries] > 0, ENTER_LONG, ENTER_SHORT)
        actions[entry[single]] = ACTION_MASKED
    mask = actions >= 0
    position[~mask] = 0
    return ActionTargets(actions, position, mask)
