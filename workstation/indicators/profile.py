"""``volume_profile``: how much volume traded at each price over a range of candles.

The range's prices (lowest low to highest high) are cut into ``rows`` equal rows; each candle
spreads its volume evenly over its own low-to-high range, so a row gets the share of the
candle's range it covers (a candle with no range puts all of it in its row). The point of
control is the row with the most volume; the value area is the rows around it, taken by
larger neighbour first, that hold ``value_share`` (70 %) of the volume, as market-profile
traders define it.

The candles may be aggregates (a chart zoomed out draws one unit per pixel column, with the
column's low, high and summed volume): each then spreads its volume over the column's range.
Pure numpy, O(candles x rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

VALUE_SHARE = 0.70


@dataclass(frozen=True)
class VolumeProfile:
    """``edges`` (rows + 1 prices, rising), ``volume`` per row, the point of control's row
    ``poc`` and the value area's rows ``value_low .. value_high`` (inclusive)."""

    edges: np.ndarray
    volume: np.ndarray
    poc: int
    value_low: int
    value_high: int

    @property
    def rows(self) -> int:
        return len(self.volume)


def _value_area(volume: np.ndarray, poc: int, share: float) -> tuple[int, int]:
    lo = hi = poc
    total, held = float(volume.sum()), float(volume[poc])
    while held < share * total and (lo > 0 or hi < len(volume) - 1):
        below = volume[lo - 1] if lo > 0 else -1.0
        above = volume[hi + 1] if hi < len(volume) - 1 else -1.0
        if above >= below:
            hi += 1
            held += float(above)
        else:
            lo -= 1
            held += float(below)
    return lo, hi


def volume_profile(low: np.ndarray, high: np.ndarray, volume: np.ndarray, rows: int,
                   value_share: float = VALUE_SHARE) -> VolumeProfile | None:
    """The profile of the candles ``low, high, volume`` (None without candles or volume)."""
    low, high, volume = (np.asarray(a, dtype=np.float64) for a in (low, high, volume))
    if rows < 2:
        raise ValueError(f"a volume profile needs at least 2 rows, not {rows}")
    if not len(low) or not float(volume.sum()) > 0:
        return None
    bottom, top = float(low.min()), float(high.max())
    if top <= bottom:
        top = bottom + max(abs(bottom) * 1e-6, 1e-12)
    edges = np.linspace(bottom, top, rows + 1)
    span = high - low
    flat = span <= 0
    # The share of each candle's range below each edge: its volume between two edges.
    with np.errstate(divide="ignore", invalid="ignore"):
        below = np.clip((edges[None, :] - low[:, None]) / span[:, None], 0.0, 1.0)
    if flat.any():
        row = np.clip(np.searchsorted(edges, low[flat], side="right") - 1, 0, rows - 1)
        below[flat] = (np.arange(rows + 1)[None, :] > row[:, None]).astype(np.float64)
    per_row = (np.diff(below, axis=1) * volume[:, None]).sum(axis=0)
    poc = int(np.argmax(per_row))
    value_low, value_high = _value_area(per_row, poc, value_share)
    return VolumeProfile(edges, per_row, poc, value_low, value_high)
