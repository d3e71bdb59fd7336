"""Control marks: trades made by a simple causal rule, to prove the trader's heads learn marks.

A positive control imports trades that follow a rule the model can compute from its input
window and expects the position head to beat its baselines; the negative control imports the
same trades shuffled in time, which no rule on the candles explains, and expects no edge.

- ``ma_cross_positions``: +1 (long) while the ``fast``-candle simple moving average of closes
  is above the ``slow``-candle one, -1 (short) while below; a tie keeps the position, and
  before the slow average exists it is 0 (flat). Value ``t`` depends on closes ``<= t``
  only, each average on its own window only (``candle_columns.trailing_mean``). The model can
  compute it from a window that holds the slow average: keep ``slow`` well inside
  ``seq_len`` (10/40 with 200-candle windows, 5/20 with 64).
- ``ma_cross_marks``: those positions as trades, one per regime, each entered at the close of
  the candle at which its cross is seen and exited at the close of the candle of the next
  cross, where the next trade is entered: trades touch end to end, so every candle from the
  first entry to the last exit is reviewed and labelled with the rule's position. The regime
  still open at the last closed candle is not a trade yet and is left out.
- ``shuffled_marks``: the same trades in a random order that keeps the order of directions
  (each long trade takes the place of a long one, each short of a short), laid end to end
  from the first entry: the same count, durations (in candles) and directions, span, class
  balance and alternation of positions, never overlapping, at times the rule does not explain.

Entry and exit prices are the closes of the candles marked. Marks are tagged ``control`` and
with their rule, so they are never mistaken for a trader's.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from ..annotations.model import Direction, Trade
from ..errors import WorkstationError
from ..market.candles import Candles
from ..market.series import MarketKey
from .candle_columns import trailing_mean

CONTROL_TAG = "control"
# Ids are uuid5 of a mark's content in this namespace: the same marks get the same ids.
_ID_NAMESPACE = uuid.UUID("0b9e3a4c-54a1-4f6e-9a8e-2f1c7d6b5e40")


def check_windows(fast: int, slow: int) -> None:
    """Refuse averages that make no crossover rule (``1 <= fast < slow``)."""
    if not 1 <= fast < slow:
        raise WorkstationError(f"a moving-average cross needs 1 <= fast < slow candles, got "
                               f"fast {fast} and slow {slow}")


def ma_cross_positions(close: np.ndarray, fast: int, slow: int) -> np.ndarray:
    """+1/-1/0 (int8) per candle once it has closed; see the module docstring."""
    check_windows(fast, slow)
    close = np.asarray(close, dtype=np.float64)
    n = len(close)
    sign = np.sign(trailing_mean(close, fast) - trailing_mean(close, slow)).astype(np.int8)
    sign[:slow - 1] = 0
    last = np.maximum.accumulate(np.where(sign != 0, np.arange(n), -1))  # last unequal pair
    return np.where(last >= 0, sign[np.maximum(last, 0)], 0).astype(np.int8)


def _closed(candles: Candles) -> Candles:
    return candles if candles.last_closed else candles.slice(0, candles.n_closed)


def _trade(candles: Candles, market: MarketKey, entry: int, exit_: int, sign: int,
           tags: tuple[str, ...], notes: str) -> Trade:
    """The trade entered at the close of candle ``entry`` and exited at that of ``exit_``."""
    ts, close = candles.ts, candles.close
    direction = Direction.LONG if sign > 0 else Direction.SHORT
    content = (f"{market.kind.value} {market.symbol} {candles.timeframe.name} {ts[entry]} "
               f"{ts[exit_]} {direction.value} {';'.join(tags)}")
    return Trade(id=str(uuid.uuid5(_ID_NAMESPACE, content)), market=market.kind,
                 symbol=market.symbol, timeframe=candles.timeframe.name, direction=direction,
                 entry_ts=int(ts[entry]), entry_price=float(close[entry]),
                 exit_ts=int(ts[exit_]), exit_price=float(close[exit_]), tags=tags, notes=notes)


def _rule_tag(fast: int, slow: int) -> str:
    return f"ma-cross {fast}/{slow}"


def ma_cross_marks(candles: Candles, market: MarketKey, *, fast: int = 10, slow: int = 40
                   ) -> list[Trade]:
    """The rule's trades on the closed candles of ``candles`` (of ``market``), in time order;
    see the module docstring."""
    candles = _closed(candles)
    position = ma_cross_positions(candles.close, fast, slow)
    # a cross is seen at each of these closes; the position is flat only before the first
    change = np.flatnonzero(np.diff(position)) + 1
    tags = (CONTROL_TAG, _rule_tag(fast, slow))
    notes = (f"control mark: long while the {fast}-candle average of closes is above the "
             f"{slow}-candle one, short while below")
    return [_trade(candles, market, i, j, int(position[i]), tags, notes)
            for i, j in pairwise(change.tolist())]


def _indices(candles: Candles, times: list[int]) -> np.ndarray:
    """Indices of the candles opening at ``times``; a time that opens none is an error."""
    at = np.searchsorted(candles.ts, times)
    if len(candles) == 0 or not np.array_equal(candles.ts[np.minimum(at, len(candles) - 1)],
                                               times):
        raise WorkstationError(f"shuffling needs trades marked on these "
                               f"{candles.timeframe.name} candles")
    return at


def shuffled_marks(trades: Sequence[Trade], candles: Candles, *, seed: int = 0
                   ) -> list[Trade]:
    """``trades`` (marked on ``candles``) in a random order from ``seed`` that keeps the
    order of directions, laid end to end from the first one's entry, each tagged with the
    seed; see the module docstring."""
    if not trades:
        return []
    candles = _closed(candles)
    if any(t.timeframe != candles.timeframe.name for t in trades):
        raise WorkstationError(f"shuffling needs trades marked on these "
                               f"{candles.timeframe.name} candles")
    ordered = sorted(trades, key=lambda t: t.entry_ts)
    entry = _indices(candles, [t.entry_ts for t in ordered])
    exit_ = _indices(candles, [t.exit_ts for t in ordered])
    rng = np.random.default_rng(seed)
    sign = np.array([t.direction.sign for t in ordered])
    order = np.arange(len(ordered))
    for side in (1, -1):
        slots = np.flatnonzero(sign == side)
        order[slots] = rng.permutation(slots)
    ends = int(entry[0]) + np.cumsum((exit_ - entry)[order])
    starts = np.concatenate(([int(entry[0])], ends[:-1]))
    moved = [ordered[k] for k in order]
    return [_trade(candles, t.market_key, int(i), int(j), t.direction.sign,
                   t.tags + (f"shuffled seed {seed}",),
                   f"shuffled in time (seed {seed}): {t.notes}")
            for i, j, t in zip(starts, ends, moved)]
