"""Stretches of candles the trader is asked to look at: whole blocks of a fixed length."""

from __future__ import annotations

import numpy as np

DEFAULT_LENGTH = 48  # candles a stretch (two days of 1h candles)


def whole_blocks(eligible: np.ndarray, length: int) -> list[tuple[int, int]]:
    """Whole blocks of ``length`` candles (start, stop) inside each run of eligible candles,
    from the run's first candle on."""
    edges = np.diff(np.concatenate(([0], np.asarray(eligible).astype(np.int8), [0])))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(int(a) + k * length, int(a) + (k + 1) * length)
            for a, b in zip(starts, stops, strict=True) for k in range(int(b - a) // length)]
