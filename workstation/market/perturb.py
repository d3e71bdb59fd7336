"""A series' future changed, to show that what is computed as of a time does not depend on
what came after it (the causality checks of features and predictions)."""

from __future__ import annotations

import numpy as np

from .candles import Candles


def changed_after(candles: Candles, ts: int, seed: int, drop: float = 0.2) -> Candles:
    """``candles`` with every candle after ``ts`` changed: prices scaled (by about 5 %),
    volumes redrawn, and a fraction ``drop`` of them gone."""
    rng = np.random.default_rng(seed)
    cols = [c.copy() for c in candles.columns()]
    after = cols[0] > ts
    scale = np.exp(rng.normal(0, 0.05, after.sum()))
    for col in cols[1:5]:
        col[after] *= scale
    cols[5][after] = rng.uniform(0, 1e4, after.sum())
    keep = ~after | (rng.random(len(after)) >= drop)
    return Candles.from_columns([c[keep] for c in cols], candles.timeframe)
