"""What the chart draws for a view: one unit per candle, or one per pixel column.

``visible_candles`` turns a view (x range in candle-index units and its width in pixels) into
``VisibleCandles``: while candles are at least ``CANDLE_MIN_PX`` wide each visible candle is a
unit (column views of the ``Candles``, no copies); narrower, each pixel column is a unit that
aggregates its candles (first open, max high, min low, last close, summed volume) from the
``CandlePyramid``. Either way the work is O(pixels), whatever the length of the series.

Pure numpy: no Qt here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...market.candles import Candles
from .pyramid import CandlePyramid

CANDLE_MIN_PX = 3.0
"""Below this width per candle the chart draws per-pixel-column aggregates."""


@dataclass
class VisibleCandles:
    """Drawable units: centre ``x`` (candle-index units), OHLCV, and the candle range
    ``[start, stop)`` each unit covers. ``columns`` says whether units are pixel columns."""

    columns: bool
    x: np.ndarray
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    volume: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    unit_width: float  # in candle-index units: 1 for candles, candles per pixel for columns

    def __len__(self) -> int:
        return len(self.x)

    def low_high(self) -> tuple[float, float]:
        """Lowest low and highest high over the units; ``(nan, nan)`` if there are none."""
        if not len(self.x):
            return math.nan, math.nan
        return float(self.low.min()), float(self.high.max())

    def max_volume(self) -> float:
        return float(self.volume.max()) if len(self.x) else 0.0

    def refresh_last(self, candles: Candles, pyramid: CandlePyramid) -> None:
        """Re-read the last unit after the forming candle changed (O(log n)); the unit must
        end at the last candle."""
        j = len(self.x) - 1
        start = int(self.start[j])
        n = len(candles)
        if self.columns:
            low, high, volume = pyramid.range_stats(start, n)
            self.high[j] = high
            self.low[j] = low
            self.volume[j] = volume
            self.close[j] = candles.close[n - 1]
            self.open[j] = candles.open[start]
        # Candle units are views of the columns, so they already show the new values.

    def ends_at(self, n: int) -> bool:
        """Whether the last unit holds candle ``n - 1``."""
        return bool(len(self.x)) and int(self.stop[-1]) == n


def empty_visible() -> VisibleCandles:
    e = np.empty(0)
    i = np.empty(0, dtype=np.int64)
    return VisibleCandles(False, e, e, e, e, e, e, i, i, 1.0)


def visible_candles(candles: Candles, pyramid: CandlePyramid, x0: float, x1: float,
                    width_px: int) -> VisibleCandles:
    """The units to draw for the view ``[x0, x1]`` (candle ``i`` is centred at ``x = i``)
    spread over ``width_px`` pixel columns."""
    n = len(candles)
    if n == 0 or width_px <= 0 or x1 <= x0:
        return empty_visible()
    per_px = (x1 - x0) / width_px
    if 1.0 / per_px >= CANDLE_MIN_PX:
        i0 = max(0, math.floor(x0 - 0.5) + 1)
        i1 = min(n, math.ceil(x1 + 0.5))
        if i1 <= i0:
            return empty_visible()
        idx = np.arange(i0, i1, dtype=np.int64)
        return VisibleCandles(False, idx.astype(np.float64), candles.open[i0:i1],
                              candles.high[i0:i1], candles.low[i0:i1], candles.close[i0:i1],
                              candles.volume[i0:i1], idx, idx + 1, 1.0)
    # Pixel column j covers x in [x0 + j*per_px, x0 + (j+1)*per_px): the candles whose centres
    # lie there start at ceil(x0 + j*per_px).
    j_first = max(0, math.floor((-0.5 - x0) / per_px))
    j_last = min(width_px, math.ceil((n - 0.5 - x0) / per_px) + 1)
    if j_last <= j_first:
        return empty_visible()
    j = np.arange(j_first, j_last + 1)
    edges = np.ceil(x0 + j * per_px).astype(np.int64)
    stats = pyramid.columns(edges, pyramid.level_for(math.floor(per_px)))
    cols = j[stats.column]
    x = x0 + (cols + 0.5) * per_px
    return VisibleCandles(True, x, stats.open, stats.high, stats.low, stats.close,
                          stats.volume, stats.start, stats.stop, per_px)
