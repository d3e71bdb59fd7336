"""Which series a set of candles is: source, symbol and timeframe, and how to say where it came from."""

from __future__ import annotations

from dataclasses import dataclass

from .timeframes import Timeframe, parse_timeframe

DEMO_SOURCE = "demo"


@dataclass(frozen=True)
class SeriesKey:
    """``source`` is an exchange id (``binance``), ``demo``, or an import name (``csv`` ...)."""

    source: str
    symbol: str
    timeframe: Timeframe

    def __init__(self, source: str, symbol: str, timeframe: "str | Timeframe"):
        object.__setattr__(self, "source", str(source).strip().lower())
        object.__setattr__(self, "symbol", str(symbol).strip().upper())
        object.__setattr__(self, "timeframe", parse_timeframe(timeframe))

    @property
    def is_demo(self) -> bool:
        return self.source == DEMO_SOURCE

    @property
    def provenance(self) -> str:
        """How every output labels this data; demo data always says DEMO."""
        if self.is_demo:
            return f"DEMO (simulated market) {self.symbol} {self.timeframe.name}"
        return f"{self.source} {self.symbol} {self.timeframe.name}"

    def __str__(self) -> str:
        return self.provenance
