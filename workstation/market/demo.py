"""The demo market: a seeded simulator for offline use and tests, always labelled DEMO.

Returns follow a regime-switching drift (trends that persist for hours, then turn) with
GARCH(1,1) volatility clustering; volume has an intraday seasonality and rises with the size
of the move. Each candle's high and low come from a simulated intra-candle path, so candles
look and validate like real ones.

A market is a pure function of its seed, timeframe and anchor: it begins ``history`` candles
before the anchor (the data dir keeps one, see ``demo_anchor``) and runs on forever, so the
candle that opens at time T is the same candle whenever it is generated, and a live stream
shows exactly the candles a later launch loads. Random numbers come in chunks of ``_CHUNK``
candles, each from its own seed, so producing recent candles costs one vectorised pass over
the returns since the market began.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..atomic import atomic_write_bytes
from ..errors import WorkstationError
from .candles import Candles, CandleUpdate
from .replay import forming_ticks
from .series import DEMO_SOURCE, SeriesKey
from .timeframes import ONE_MINUTE, Timeframe

DEMO_SYMBOL = "DEMO/USDT"
DEMO_HISTORY = 20_000  # candles a market has before its anchor
_START_PRICE = 2000.0
# Candles per random-number chunk. GARCH growth factors are >= _B, so a chunk's cumulative
# product stays above 0.9 ** 4096 ~ 1e-188 and its inverse finite (see _chunk_returns).
_CHUNK = 4096
_SUBSTEPS = 8  # points of the intra-candle path that make high and low
_DAY_MS = 86_400_000
# GARCH(1,1): var_t = w + a * shock_{t-1}^2 + b * var_{t-1}; long-run variance = base variance
_A, _B = 0.08, 0.90
_STAY = 1.0 - 1.0 / 240.0  # regimes last about 240 candles


@dataclass(frozen=True)
class _State:
    """The simulator at the open of a chunk's first candle."""

    log_open: float  # log of that candle's open
    variance: float  # that candle's return variance
    regime: int  # 0 down-trend, 1 range, 2 up-trend


@dataclass(frozen=True)
class _Returns:
    """One chunk's log returns, their variances and the log closes they lead to."""

    returns: np.ndarray
    variances: np.ndarray
    log_close: np.ndarray


class DemoMarket:
    """A deterministic simulated market on one timeframe; see the module docstring."""

    def __init__(self, timeframe: Timeframe = ONE_MINUTE, *, anchor_ms: int, seed: int = 0,
                 symbol: str = DEMO_SYMBOL, history: int = DEMO_HISTORY):
        self.timeframe = timeframe
        self.key = SeriesKey(DEMO_SOURCE, symbol, self.timeframe)
        self.seed = int(seed)
        self.origin_ms = self.timeframe.floor(int(anchor_ms)) - int(history) * self.timeframe.ms
        # Long-run volatility 0.09 % per minute (about 3.4 % a day), scaled to the timeframe.
        self._base_var = (0.0009 ** 2) * self.timeframe.ms / 60_000.0
        self._drift = self._base_var ** 0.5 * 0.08  # trend drift per candle, in sigmas
        self._states = [_State(math.log(_START_PRICE), self._base_var, 1)]  # at each chunk start

    def candles(self, start_ts: int, end_ts: int) -> Candles:
        """The candles opening in ``[start_ts, end_ts)``; the market has none before
        ``origin_ms``."""
        first, stop = self._index(start_ts), self._index(end_ts)
        parts = []
        if stop > first:
            for c, chunk in self._chunks(first // _CHUNK, (stop - 1) // _CHUNK):
                lo, hi = max(first - c * _CHUNK, 0), min(stop - c * _CHUNK, _CHUNK)
                parts.append([column[lo:hi] for column in self._candles(c, chunk)])
        columns = ([np.concatenate(column) for column in zip(*parts)] if parts
                   else [np.empty(0)] * 6)
        return Candles.from_columns(columns, self.timeframe)

    def history(self, now_ms: int, limit: int | None = None) -> Candles:
        """The candles closed at ``now_ms``: all since ``origin_ms``, or the newest ``limit``."""
        end = self.timeframe.floor(int(now_ms))
        start = self.origin_ms if limit is None else end - int(limit) * self.timeframe.ms
        return self.candles(start, end)

    async def stream(self, start_ts: int, *, speed: float = 60.0, ticks_per_candle: int = 4,
                     stop: asyncio.Event | None = None) -> AsyncIterator[CandleUpdate]:
        """Live candles from ``start_ts`` on: ``ticks_per_candle`` forming updates, then the
        closed candle. ``speed`` is simulated time per real time (0: as fast as possible)."""
        ts = max(self.timeframe.floor(int(start_ts)), self.origin_ms)
        pause = self.timeframe.seconds / speed / ticks_per_candle if speed > 0 else 0.0
        while True:
            batch = self.candles(ts, ts + _CHUNK * self.timeframe.ms)
            for i in range(len(batch)):
                for update in forming_ticks(batch.row(i), ticks_per_candle):
                    await asyncio.sleep(pause)
                    if stop is not None and stop.is_set():
                        return
                    yield update
            ts = int(batch.ts[-1]) + self.timeframe.ms

    # -- simulation ------------------------------------------------------------------------
    def _index(self, ts: int) -> int:
        """Index of the first candle opening at or after ``ts``."""
        return max(0, -(-(int(ts) - self.origin_ms) // self.timeframe.ms))

    def _chunks(self, first: int, last: int) -> Iterator[tuple[int, _Returns]]:
        """Chunks ``first..last`` with their returns, simulating (once per market) the chunks
        before them to learn their starting state."""
        c = min(first, len(self._states) - 1)
        while c <= last:
            chunk = self._chunk_returns(c)
            if c >= first:
                yield c, chunk
            c += 1

    def _chunk_returns(self, c: int) -> _Returns:
        """Chunk ``c``'s returns from its starting state, vectorised: the GARCH recursion
        ``var_i = w + var_{i-1} * m_{i-1}`` with ``m = a z^2 + b`` is linear, so with
        ``P_i = m_0 ... m_{i-1}`` it is ``var_i = P_i * (var_0 + w * sum_{k=1..i} 1 / P_k)``;
        the regime moves +1 or +2 (mod 3) at each switch, a cumulative sum."""
        state = self._states[c]
        rng = np.random.default_rng([self.seed, c, 0])
        z = rng.standard_normal(_CHUNK)
        switch = rng.random(_CHUNK)
        w = self._base_var * (1 - _A - _B)
        growth = _A * z * z + _B
        products = np.concatenate(([1.0], np.cumprod(growth[:-1])))
        inverse = 1.0 / products
        inverse[0] = 0.0
        variances = products * (state.variance + w * np.cumsum(inverse))
        shift = np.where(switch > _STAY, np.where(switch > (1 + _STAY) / 2, 2, 1), 0)
        regime = (state.regime + np.cumsum(shift)) % 3
        returns = (regime - 1) * self._drift + np.sqrt(variances) * z
        log_close = state.log_open + np.cumsum(returns)
        if c + 1 == len(self._states):
            next_variance = float(w + variances[-1] * growth[-1])
            self._states.append(_State(float(log_close[-1]), next_variance, int(regime[-1])))
        return _Returns(returns, variances, log_close)

    def _candles(self, c: int, chunk: _Returns) -> tuple[np.ndarray, ...]:
        """Chunk ``c``'s candle columns. High and low come from a Brownian bridge from open to
        close, volume from the hour of day and the size of the move. Always the whole chunk,
        so every number is computed the same way whichever candles are asked for."""
        rng = np.random.default_rng([self.seed, c, 1])
        steps = rng.standard_normal((_CHUNK, _SUBSTEPS))
        noise = rng.lognormal(0.0, 0.35, _CHUNK)
        returns, variances = chunk.returns, chunk.variances
        log_open = np.concatenate(([self._states[c].log_open], chunk.log_close[:-1]))
        opens, closes = np.exp(log_open), np.exp(chunk.log_close)  # each open: the last close
        walk = np.cumsum(steps * np.sqrt(variances / _SUBSTEPS)[:, None], axis=1)
        frac = np.arange(1, _SUBSTEPS + 1) / _SUBSTEPS
        path = opens[:, None] * np.exp(walk - frac * walk[:, -1:] + frac * returns[:, None])
        highs = np.maximum(np.maximum(opens, closes), path.max(axis=1))
        lows = np.minimum(np.minimum(opens, closes), path.min(axis=1))
        ts = self.origin_ms + (c * _CHUNK + np.arange(_CHUNK, dtype=np.int64)) * self.timeframe.ms
        hour = (ts % _DAY_MS) / 3_600_000.0
        seasonal = 1.0 + 0.6 * np.cos((hour - 15.0) / 24.0 * 2 * np.pi)  # busiest ~15:00 UTC
        surprise = np.abs(returns) / np.sqrt(variances)
        per_candle = 40.0 * self.timeframe.ms / 60_000.0
        volume = per_candle * seasonal * (0.6 + 0.4 * surprise) * noise
        return ts, opens, highs, lows, closes, volume


def demo_candles(n: int, timeframe: Timeframe = ONE_MINUTE, seed: int = 0,
                 end_ts: int | None = None) -> Candles:
    """``n`` closed demo candles ending just before ``end_ts`` (default: now), from a market
    anchored at ``end_ts`` that begins ``n`` candles before it."""
    end = int(time.time() * 1000) if end_ts is None else int(end_ts)
    return DemoMarket(timeframe, anchor_ms=end, seed=seed, history=n).history(end)


def demo_anchor(path: Path, now_ms: int | None = None) -> int:
    """The demo anchor (epoch ms) kept in ``path``, written there (``now_ms``, default now) at
    first use. A file that cannot be read is an error and is left as it is: a new anchor
    would move every demo candle from under the annotations saved on it."""
    path = Path(path)
    if not path.exists():
        anchor = int(time.time() * 1000) if now_ms is None else int(now_ms)
        atomic_write_bytes(path, json.dumps({"anchor_ms": anchor}).encode() + b"\n")
        return anchor
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8, not JSON
        problem = f"cannot be read as JSON ({exc})"
    else:
        saved = data.get("anchor_ms") if isinstance(data, dict) else None
        if type(saved) is int:
            return saved
        problem = f'holds no integer "anchor_ms" (it holds {json.dumps(data)[:60]})'
    raise WorkstationError(f"the demo market anchor {path} {problem}; fix or restore it "
                           f"(deleting it starts a new demo history, and the demo annotations "
                           f"saved so far would no longer sit on their candles)")
