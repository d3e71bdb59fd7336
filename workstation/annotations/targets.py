"""Training targets from annotations: the trader's action and position on every candle.

``action_targets(annotations, candles_ts, timeframe)`` works on the candle grid of the series
being trained, which may be another timeframe than the one annotated. Each time snaps to the
series' candle containing it (or, inside a gap in the series, the first candle after it: the
first one on which the trader could act).

- The annotated span runs from the earliest start to the latest end of the given annotations
  (trades, regions and points alike). Candles outside it are masked: ``actions`` -1,
  ``mask`` False, ``position`` 0.
- Inside the span every candle is HOLD except a trade's entry candle (ENTER_LONG/ENTER_SHORT)
  and exit candle (EXIT_LONG/EXIT_SHORT). When one trade exits on the candle where the next
  enters (a reversal), the candle carries the entry.
- ``position`` is the position after the candle's action: the trade's direction (+1 / -1)
  from its entry candle up to the candle before its exit, 0 elsewhere.
- A trade whose entry and exit fall on the same candle says nothing the grid can hold: that
  candle is masked. Two trades open at the same time (one entering before the other exits)
  are an ``OverlappingTradesError``; trades outside the series are not checked.
- A trade that began before the first candle holds its position from candle 0 (no entry
  action); one that ends after the last candle holds it to the end (no exit action).

Pass the annotations of one symbol; the function does not filter them. All work is numpy
(searchsorted, cumulative sums), no per-candle Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..market.timeframes import Timeframe, parse_timeframe
from .model import Annotation, AnnotationError, Trade

ACTION_MASKED = -1
ACTION_HOLD = 0
ENTER_LONG = 1
EXIT_LONG = 2
ENTER_SHORT = 3
EXIT_SHORT = 4
ACTION_NAMES = ("hold", "enter long", "exit long", "enter short", "exit short")


class OverlappingTradesError(AnnotationError):
    """Two trades of the same symbol are open at the same time."""

    def __init__(self, first: Trade, second: Trade):
        self.first = first
        self.second = second
        super().__init__(
            f"trades {first.id} ({first.entry_ts}..{first.exit_ts}) and {second.id} "
            f"({second.entry_ts}..{second.exit_ts}) are open at the same time; edit one of them"
        )


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
                   timeframe: "str | Timeframe") -> ActionTargets:
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

    def snap(times: np.ndarray) -> np.ndarray:
        """Index of the candle containing each time, or the first candle after it."""
        return np.searchsorted(ts, times - tf.ms, side="right")

    spans = np.array([ann.span for ann in annotations], dtype=np.int64)
    span_start, span_end = int(spans[:, 0].min()), int(spans[:, 1].max())
    if span_end < first_open or span_start >= last_close:
        return ActionTargets(actions, position, actions >= 0)
    lo, hi = snap(np.array([span_start, span_end], dtype=np.int64))
    actions[lo:min(hi, n - 1) + 1] = ACTION_HOLD

    trades = sorted((a for a in annotations if isinstance(a, Trade)),
                    key=lambda t: (t.entry_ts, t.exit_ts, t.id))
    if trades:
        entry_ts = np.array([t.entry_ts for t in trades], dtype=np.int64)
        exit_ts = np.array([t.exit_ts for t in trades], dtype=np.int64)
        sign = np.array([t.direction.sign for t in trades], dtype=np.int8)
        entry, exit_ = snap(entry_ts), snap(exit_ts)
        touches = (exit_ts >= first_open) & (entry_ts < last_close)
        _check_no_overlap([t for t, hit in zip(trades, touches) if hit], entry_ts[touches],
                          exit_ts[touches])
        before = entry_ts < first_open
        held = touches & ((entry < exit_) | before)
        single = touches & (entry == exit_) & ~before

        # The position steps to the trade's sign on its entry candle and back on its exit.
        step = np.zeros(n + 1, dtype=np.int32)
        np.add.at(step, entry[held], sign[held])
        np.add.at(step, exit_[held], -sign[held])
        position[:] = np.cumsum(step[:n])

        exits = held & (exit_ts < last_close)
        actions[exit_[exits]] = np.where(sign[exits] > 0, EXIT_LONG, EXIT_SHORT)
        entries = held & ~before
        actions[entry[entries]] = np.where(sign[entries] > 0, ENTER_LONG, ENTER_SHORT)
        actions[entry[single]] = ACTION_MASKED
    mask = actions >= 0
    position[~mask] = 0
    return ActionTargets(actions, position, mask)


def _check_no_overlap(trades: list[Trade], entry_ts: np.ndarray, exit_ts: np.ndarray) -> None:
    """Raise for the first trade (by entry) that opens before an earlier one has closed;
    ``trades`` are sorted by entry. One may open at the very time another closes."""
    if len(trades) < 2:
        return
    latest_exit = np.maximum.accumulate(exit_ts)[:-1]
    clash = np.flatnonzero(entry_ts[1:] < latest_exit)
    if clash.size:
        i = int(clash[0]) + 1
        j = int(np.flatnonzero(exit_ts[:i] > entry_ts[i])[0])
        raise OverlappingTradesError(trades[j], trades[i])
