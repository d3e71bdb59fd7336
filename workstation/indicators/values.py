"""``IndicatorValues``: one indicator's columns for a live candle series, kept up to date.

``sync(candles, changed_from)`` recomputes only the candles from ``changed_from`` on (the
forming candle on a tick, the last closed one and the new ones on an append), reading the
recursive state of the candle before; ``sync(candles)`` with nothing changed but new candles
computes just those. A tick therefore costs O(period) at most (the windows of SMA and
Bollinger bands), O(1) for the recursive ones, whatever the series' length; the values equal
a computation of the whole series from scratch (tests/indicators check it tick by tick).
"""

from __future__ import annotations

import numpy as np

from ..market.candles import Candles
from . import formulas
from .spec import IndicatorSpec

_MIN_CAPACITY = 256


class IndicatorValues:
    """See the module docstring. ``line(name)`` is a view of a drawn line (``spec.lines``)
    over the candles synced so far; ``len()`` is their count."""

    def __init__(self, spec: IndicatorSpec):
        self.spec = spec
        self.names = formulas.columns_of(spec)
        self._buffers = {name: np.empty(_MIN_CAPACITY) for name in self.names}
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def line(self, name: str = "value") -> np.ndarray:
        return self._buffers[name][:self._n]

    def columns(self) -> dict[str, np.ndarray]:
        return {name: buf[:self._n] for name, buf in self._buffers.items()}

    def sync(self, candles: Candles, changed_from: int | None = None) -> int:
        """Bring the columns to ``candles``: recompute from ``changed_from`` (default: the
        first candle not computed yet) on; returns where it started."""
        total = len(candles)
        start = self._n if changed_from is None else min(int(changed_from), self._n)
        start = max(0, min(start, total))
        values = formulas.tail(self.spec, candles, start, self.columns())
        if total > len(next(iter(self._buffers.values()))):
            capacity = max(total + total // 4, _MIN_CAPACITY)
            for name, old in self._buffers.items():
                new = np.empty(capacity)
                new[:start] = old[:start]
                self._buffers[name] = new
        for name in self.names:
            self._buffers[name][start:total] = values[name]
        self._n = total
        return start

    def reset(self, candles: Candles) -> None:
        """Recompute every candle (the series was replaced)."""
        self._n = 0
        self.sync(candles)
