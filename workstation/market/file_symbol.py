"""Whether a candle file contradicts the symbol it is opened as: its name says another symbol
(``btcusdt_1m.csv.gz`` opened as ETH/USDT), or its prices are far from those the candle cache
holds for that symbol around the same time. Opening such a file asks first; the rule is here,
the asking is the window's and the CLI's."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..display import significant
from ..errors import WorkstationError
from .cache import CandleCache
from .candles import Candles
from .series import SeriesKey

PRICE_RATIO = 3.0  # median prices this many times apart belong to different markets
NEAR_MS = 30 * 86_400_000  # cached candles this close to the file's span are compared
_QUOTES = ("USDT", "USDC", "FDUSD", "BUSD", "TUSD", "USD", "EUR", "BTC", "ETH", "BNB")
_FILE_SYMBOL = re.compile(r"^([A-Z0-9]{2,10}?)[-_/]?(" + "|".join(_QUOTES) + r")(?=$|[^A-Z])")


class SymbolMismatch(WorkstationError):
    """A file that contradicts ``symbol``, opened as it without leave; ``reason`` says why."""

    def __init__(self, reason: str, symbol: str):
        self.reason, self.symbol = reason, symbol
        super().__init__(reason)


def symbol_from_file_name(name: str) -> str | None:
    """``ETH/USDT`` for ``ethusdt_1m.csv.gz`` or ``ETH-USDT-1h.csv``; None when the name
    does not start with a base and a known quote currency."""
    found = _FILE_SYMBOL.match(Path(name).name.upper())
    return f"{found.group(1)}/{found.group(2)}" if found else None


def _span(close: np.ndarray) -> str:
    return f"{significant(float(np.min(close)))}–{significant(float(np.max(close)))}"


def symbol_contradiction(name: str, symbol: str, candles: Candles,
                         cached: Candles | None = None) -> str | None:
    """Why the file ``name`` holding ``candles`` is not ``symbol`` (None: nothing says so):
    its name names another symbol, or its median close within ``NEAR_MS`` of ``cached``'s
    span (the symbol's cached candles around the same time) is ``PRICE_RATIO`` or more times
    theirs."""
    symbol = symbol.strip().upper()
    reasons = []
    named = symbol_from_file_name(name)
    if named is not None and named != symbol:
        reasons.append(f"{Path(name).name} is named for {named}, not {symbol}")
    if cached is not None and len(cached) and len(candles):
        # the file's prices around the cached span only: a market moves over years
        near = ((candles.ts >= int(cached.ts[0]) - NEAR_MS)
                & (candles.ts <= int(cached.ts[-1]) + NEAR_MS))
        close = candles.close[near]
        ratio = float(np.median(close)) / float(np.median(cached.close)) if len(close) else 1.0
        if max(ratio, 1 / ratio) >= PRICE_RATIO:
            times = f"{ratio:.0f}x" if ratio > 1 else f"1/{1 / ratio:.0f} of"
            reasons.append(f"its prices {_span(close)} are {times} the cached "
                           f"{symbol} {_span(cached.close)} over the same time")
    return "; ".join(reasons) or None


def cached_near(cache: CandleCache, key: SeriesKey, candles: Candles, *,
                replaced: bool = False) -> Candles | None:
    """The cache's candles of ``key``'s symbol (not the demo market's, nor ``key``'s own
    source's when the file ``replaced`` what it holds; ``key``'s timeframe first) within
    ``NEAR_MS`` of ``candles``' span; None when it holds none."""
    if not len(candles):
        return None
    held = cache.keys()  # a list of keys, not a mapping
    others = [k for k in held if k.symbol == key.symbol and not k.is_demo
              and not (replaced and k.source == key.source)]
    others.sort(key=lambda k: (k.timeframe != key.timeframe, k.timeframe, k.source))
    for other in others:
        near = cache.load(other, int(candles.ts[0]) - NEAR_MS, int(candles.ts[-1]) + NEAR_MS)
        if len(near):
            return near
    return None


def check_file_symbol(cache: CandleCache, name: str, key: SeriesKey, candles: Candles, *,
                      replaced: bool = False) -> None:
    """``SymbolMismatch`` when the file ``name`` (``candles``, to be stored as ``key``,
    replacing what that source holds when ``replaced``) contradicts ``key.symbol``
    (``symbol_contradiction``)."""
    reason = symbol_contradiction(name, key.symbol, candles,
                                  cached_near(cache, key, candles, replaced=replaced))
    if reason is not None:
        raise SymbolMismatch(reason, key.symbol)
