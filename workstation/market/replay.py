"""Replay of a stored series as a live feed: each candle forms in a few ticks, then closes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from .candles import Candles, CandleUpdate


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


async def replay(candles: Candles, *, speed: float = 60.0, ticks_per_candle: int = 4,
                 start: int = 0, stop: asyncio.Event | None = None) -> AsyncIterator[CandleUpdate]:
    """Yield the candles from index ``start`` as a live feed would. ``speed`` is market time per
    real time (60: a 1m candle a second); 0 replays as fast as the consumer takes them."""
    pause = candles.timeframe.seconds / speed / ticks_per_candle if speed > 0 else 0.0
    for i in range(start, len(candles)):
        for update in forming_ticks(candles.row(i)._replace(closed=True), ticks_per_candle):
            await asyncio.sleep(pause)
            if stop is not None and stop.is_set():
                return
            yield update
