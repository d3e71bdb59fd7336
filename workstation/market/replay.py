"""How a stored candle looked while it formed: the ticks the demo market streams."""

from __future__ import annotations

from .candles import CandleUpdate


def forming_ticks(candle: CandleUpdate, ticks: int) -> list[CandleUpdate]:
    """How a finished candle looked while it formed: ``ticks - 1`` growing partial candles
    (open fixed, the range widening towards the final one), then the closed candle."""
    out = []
    for k in range(1, ticks):
        f = k / ticks
        close = candle.open + (candle.close - candle.open) * f
        high = max(candle.open, close, candle.open + (candle.high - candle.open) * f)
        low = min(candle.open, close, candle.open + (candle.low - candle.open) * f)
        out.append(CandleUpdate(candle.ts, candle.open, high, low, close, candle.volume * f, False))
    out.append(candle._replace(closed=True))
    return out
