"""The trader's drawn levels as model inputs (``FeatureSpec.levels``, opt-in): how far the
close is from the nearest level above it and the nearest below, in units of the trailing
volatility (``candle_columns.volatility``).

- ``level_above``: log(level / close) / volatility of the lowest level at or above the close,
  ``+clip`` when there is none (or it is farther);
- ``level_below``: log(level / close) / volatility of the highest level at or below it,
  ``-clip`` when there is none.

Row ``t`` reads the levels known when candle ``t`` closes: a level drawn at a candle is known
once that candle has closed (``Drawing.known_at``), as the chart's replay clock shows it. Which
levels the trader chose to draw is theirs, as the marks are: a level placed with hindsight
(where the price later turned) carries that hindsight in, while one drawn in blind replay
cannot (no point can be placed after the replay clock). Levels are the market's
``Shape.LEVEL`` drawings of every timeframe (``Levels.of``), read from the annotations file
when a job starts and at every live candle (``levels_for``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..annotations.drawings import Drawing, Shape
from ..errors import WorkstationError
from ..market.series import MarketKey
from .candle_columns import volatility

LEVEL_NAMES = ("level_above", "level_below")
_CHUNK = 64  # levels compared with every row at once


@dataclass(frozen=True)
class Levels:
    """Drawn levels: ``price`` and ``known_at`` (epoch ms) arrays of one market."""

    price: np.ndarray
    known_at: np.ndarray

    @classmethod
    def of(cls, drawings) -> Levels:
        levels = [d for d in drawings if isinstance(d, Drawing) and d.shape is Shape.LEVEL
                  and d.price1 is not None]
        return cls(np.array([d.price1 for d in levels], dtype=np.float64),
                   np.array([d.known_at for d in levels], dtype=np.int64))

    def __len__(self) -> int:
        return len(self.price)


def levels_for(spec, annotations_db: str | Path | None, market: MarketKey) -> Levels | None:
    """``load_levels`` when ``spec`` reads levels, else None."""
    return load_levels(annotations_db, market) if spec.levels else None


def load_levels(annotations_db: str | Path | None, market: MarketKey) -> Levels:
    """The drawn levels of ``market`` in the annotations file ``annotations_db`` (none while
    there is no such file)."""
    if annotations_db is None or not Path(annotations_db).is_file():
        return Levels.of([])
    from ..annotations.store import AnnotationStore

    with AnnotationStore(annotations_db) as store:
        return Levels.of(store.drawings.list(market))


def level_features(candles, spec, levels: Levels | None) -> np.ndarray:
    """``float32 [len(candles), 2]``: see the module docstring (``spec``: a ``FeatureSpec``,
    its volatility settings and ``clip``)."""
    if levels is None:
        raise WorkstationError("these features read the drawn levels, but none were loaded "
                               "(the annotations file of the market)")
    vol = volatility(candles, spec) if len(candles) else np.zeros(0)
    return level_distances(candles, levels, vol, float(spec.clip)).astype(np.float32)


def level_distances(candles, levels: Levels, vol: np.ndarray, clip: float) -> np.ndarray:
    """``float64 [len(candles), 2]``: log(level / close) / ``vol`` of the nearest level known
    at each close above it and below it (``+clip`` / ``-clip`` for none, or farther)."""
    n = len(candles)
    above = np.full(n, clip)
    below = np.full(n, -clip)
    if not n or not len(levels):
        return np.column_stack((above, below))
    close = np.asarray(candles.close, dtype=np.float64)
    closes_at = np.asarray(candles.ts, dtype=np.int64) + candles.timeframe.ms
    for start in range(0, len(levels), _CHUNK):
        price = levels.price[None, start:start + _CHUNK]
        known = levels.known_at[None, start:start + _CHUNK] <= closes_at[:, None]
        distance = np.log(price / close[:, None]) / vol[:, None]
        above = np.minimum(above, np.where(known & (distance >= 0), distance, clip).min(1))
        below = np.maximum(below, np.where(known & (distance <= 0), distance, -clip).max(1))
    return np.column_stack((above, below))
