"""The demo market: a seeded simulator for offline use and tests, always labelled DEMO.

Returns follow a regime-switching drift (trends that persist for hours, then turn) with
GARCH(1,1) volatility clustering; volume has an intraday seasonality and rises with the size
of the move. Each candle's high and low come from a simulated intra-candle path, so candles
look and validate like real ones. The same seed always gives the same market.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from typing import AsyncIterator

import numpy as np

from .candles import CandleUpdate, Candles
from .replay import forming_ticks
from .series import DEMO_SOURCE, SeriesKey
from .timeframes import Timeframe, parse_timeframe

DEMO_SYMBOL = "DEMO/USDT"
_SUBSTEPS = 8  # points of the intra-candle path that make high and low
_DAY_MS = 86_400_000


@dataclass
class _State:
    """Everything the simulator carries from one candle to the next."""

    close: float
    variance: float
    last_shock: float
    regime: int  # -1 down-trend, 0 range, +1 up-trend


class DemoMarket:
    """A deterministic simulated market on one timeframe; see the module docstring."""

    def __init__(self, timeframe: "str | Timeframe" = "1m", seed: int = 0,
                 start_price: float = 2000.0, symbol: str = DEMO_SYMBOL):
        self.timeframe = parse_timeframe(timeframe)
        self.key = SeriesKey(DEMO_SOURCE, symbol, self.timeframe)
        self._rng = np.random.default_rng(seed)
        # Long-run volatility 0.09 % per minute (about 3.4 % a day), scaled to the timeframe.
        self._base_var = (0.0009 ** 2) * self.timeframe.ms / 60_000.0
        self._state = _State(close=start_price, variance=self._base_var, last_shock=0.0, regime=0)
        self._drift = self._base_var ** 0.5 * 0.08  # trend drift per candle, in sigmas

    # GARCH(1,1): var_t = w + a * shock_{t-1}^2 + b * var_{t-1}, long-run var = base var
    _A, _B = 0.08, 0.90

    def _returns(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Log returns and variances of ``n`` candles (a Python loop over the GARCH recursion,
        with all random numbers drawn at once)."""
        rng, st = self._rng, self._state
        z = rng.standard_normal(n)
        switch = rng.random(n)
        w = self._base_var * (1 - self._A - self._B)
        a, b, drift = self._A, self._B, self._drift
        returns = np.empty(n)
        variances = np.empty(n)
        var, shock, regime = st.variance, st.last_shock, st.regime
        stay = 1.0 - 1.0 / 240.0  # regimes last about 240 candles
        for i in range(n):
            var = w + a * shock * shock + b * var
            if switch[i] > stay:
                regime = (regime + 2 + (1 if switch[i] > (1 + stay) / 2 else 0)) % 3 - 1
            shock = math.sqrt(var) * z[i]
            returns[i] = regime * drift + shock
            variances[i] = var
        st.variance, st.last_shock, st.regime = var, shock, regime
        return returns, variances

    def _volume(self, ts: np.ndarray, returns: np.ndarray, variances: np.ndarray) -> np.ndarray:
        hour = (ts % _DAY_MS) / 3_600_000.0
        seasonal = 1.0 + 0.6 * np.cos((hour - 15.0) / 24.0 * 2 * np.pi)  # busiest ~15:00 UTC
        surprise = np.abs(returns) / np.sqrt(variances)
        noise = self._rng.lognormal(0.0, 0.35, len(ts))
        per_minute = 40.0 * self.timeframe.ms / 60_000.0
        return per_minute * seasonal * (0.6 + 0.4 * surprise) * noise

    def generate(self, start_ts: int, n: int) -> Candles:
        """The next ``n`` candles, the first opening at ``start_ts`` (floored to the grid)."""
        start_ts = self.timeframe.floor(int(start_ts))
        returns, variances = self._returns(n)
        opens = self._state.close * np.exp(np.concatenate(([0.0], np.cumsum(returns)[:-1])))
        closes = opens * np.exp(returns)
        # Intra-candle path: a Brownian bridge from open to close gives the high and low.
        steps = self._rng.standard_normal((n, _SUBSTEPS)) * np.sqrt(variances / _SUBSTEPS)[:, None]
        walk = np.cumsum(steps, axis=1)
        frac = np.arange(1, _SUBSTEPS + 1) / _SUBSTEPS
        bridge = walk - frac * walk[:, -1:] + frac * returns[:, None]
        path = opens[:, None] * np.exp(bridge)
        highs = np.maximum(np.maximum(opens, closes), path.max(axis=1))
        lows = np.minimum(np.minimum(opens, closes), path.min(axis=1))
        ts = start_ts + np.arange(n, dtype=np.int64) * self.timeframe.ms
        volume = self._volume(ts, returns, variances)
        self._state.close = float(closes[-1]) if n else self._state.close
        return Candles.from_arrays(ts, opens, highs, lows, closes, volume, self.timeframe)

    async def stream(self, start_ts: int, *, speed: float = 60.0, ticks_per_candle: int = 4,
                     stop: asyncio.Event | None = None) -> AsyncIterator[CandleUpdate]:
        """Live candles from ``start_ts`` on: ``ticks_per_candle`` forming updates, then the
        closed candle. ``speed`` is simulated time per real time (0: as fast as possible)."""
        ts = self.timeframe.floor(int(start_ts))
        pause = self.timeframe.seconds / speed / ticks_per_candle if speed > 0 else 0.0
        while stop is None or not stop.is_set():
            candle = self.generate(ts, 1).row(0)
            for update in forming_ticks(candle, ticks_per_candle):
                await asyncio.sleep(pause)
                if stop is not None and stop.is_set():
                    return
                yield update
            ts += self.timeframe.ms


def demo_candles(n: int, timeframe: "str | Timeframe" = "1m", seed: int = 0,
                 end_ts: int | None = None) -> Candles:
    """``n`` closed demo candles ending just before ``end_ts`` (default: now)."""
    market = DemoMarket(timeframe, seed=seed)
    tf = market.timeframe
    end = tf.floor(int(time.time() * 1000) if end_ts is None else int(end_ts))
    return market.generate(end - n * tf.ms, n)
