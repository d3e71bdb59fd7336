"""The OHLCV readout of one candle, as text: time, open, high, low, close, volume and the
change from the previous close (from the open for the first candle). Qt-free.

Which candle it reads out is ``viewmodel.chart.readout_candle``'s rule: the cursor's while the
cursor is over the chart, else the newest visible one, which the full text then names
(``OFF_CURSOR``).
"""

from __future__ import annotations

import math

import numpy as np

from ...display import NO_DATA, has_value, volume
from ...market.candles import Candles
from .ticks import format_time

MAX_DECIMALS = 8
OFF_CURSOR = "newest on screen"  # leads the full readout of a candle that is not the cursor's


def price_decimals(values: np.ndarray, significant: int = 7) -> int:
    """Decimals to show prices like ``values``: the fewest that write them exactly, but no
    more than ``significant`` digits in all (at least 2 decimals for such prices) and at
    most 8."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v) & (v != 0)]
    if not v.size:
        return 2
    int_digits = math.floor(math.log10(float(np.median(np.abs(v))))) + 1
    limit = min(MAX_DECIMALS, max(2, significant - int_digits))
    tol = 1e-9 * np.maximum(np.abs(v), 1.0)
    for d in range(limit):
        if np.all(np.abs(np.round(v, d) - v) <= tol):
            return d
    return limit


def change_pct(candles: Candles, i: int) -> float:
    """Percent change of candle ``i``'s close from the previous close (its own open if first)."""
    ref = candles.close[i - 1] if i > 0 else candles.open[i]
    return float((candles.close[i] - ref) / ref * 100.0)


def format_readout(candles: Candles, i: int, decimals: int, utc: bool,
                   compact: bool = False, at_cursor: bool = True) -> str:
    """One line: ``2025-01-04 14:46 UTC  O 1.00  H 1.20  L 0.90  C 1.10  V 3.20K  +0.52%``,
    led by ``OFF_CURSOR`` unless ``at_cursor``; ``compact`` (a narrow chart), without it:
    ``2025-01-04 14:46 O 1.00 H 1.20 L 0.90 C 1.10 +0.52%``."""
    o, h, l, c, v = (float(col[i]) for col in (candles.open, candles.high, candles.low,
                                               candles.close, candles.volume))
    when = format_time(int(candles.ts[i]), candles.timeframe.ms, utc)
    zone = "UTC" if utc else "local"
    pct = change_pct(candles, i)
    sign = "+" if pct >= 0 else "−"
    pct_text = f"{sign}{abs(pct):.2f}%" if has_value(pct) else NO_DATA
    forming = i >= candles.n_closed
    if compact:
        return (f"{when} O {o:.{decimals}f} H {h:.{decimals}f} L {l:.{decimals}f} "
                f"C {c:.{decimals}f} {pct_text}" + (" forming" if forming else ""))
    lead = "" if at_cursor else f"{OFF_CURSOR}  "
    return (f"{lead}{when} {zone}  O {o:.{decimals}f}  H {h:.{decimals}f}  L {l:.{decimals}f}  "
            f"C {c:.{decimals}f}  V {volume(v)}  {pct_text}"
            + ("  (forming)" if forming else ""))
