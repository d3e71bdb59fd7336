"""Which series a set of candles is, and which market it shows.

``SeriesKey`` is the one identity of a series: the candle cache stores under it, training
reads its candles and its market's annotations through it, and checkpoints record it as their
data provenance. ``MarketKey`` is what annotations belong to: one symbol on the real venues
(an exchange, or a file of exchange data), or the same symbol on the demo simulator, which is
another market. A mark made on demo candles is never a label on real ones, nor the reverse.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..errors import WorkstationError
from .timeframes import Timeframe, parse_timeframe

DEMO_SOURCE = "demo"
FILE_PREFIX = "csv"  # "csv" (import-candles' default name) and "csv:FILE" are files


class SourceKind(str, enum.Enum):
    """Where a series' candles come from."""

    EXCHANGE = "exchange"  # a ccxt exchange id (also a name a file of its candles was filed under)
    FILE = "file"          # a candle file read directly (csv:FILE) or imported as "csv"
    DEMO = "demo"          # the simulator

    def __str__(self) -> str:
        return self.value


class MarketKind(str, enum.Enum):
    """Whether prices are real (from a venue) or simulated (the demo market)."""

    REAL = "real"
    DEMO = "demo"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class MarketKey:
    """A symbol on real venues or on the demo simulator: the scope of annotations and of the
    overlap rule for trades."""

    kind: MarketKind
    symbol: str

    def __init__(self, kind: MarketKind | str, symbol: str):
        try:
            object.__setattr__(self, "kind", MarketKind(kind))
        except ValueError:
            raise WorkstationError(f"unknown market {kind!r}; use real or demo") from None
        object.__setattr__(self, "symbol", str(symbol).strip().upper())

    @property
    def is_demo(self) -> bool:
        return self.kind is MarketKind.DEMO

    def __str__(self) -> str:
        return f"DEMO {self.symbol}" if self.is_demo else self.symbol


@dataclass(frozen=True)
class SeriesKey:
    """``source`` is an exchange id (``binance``), ``demo``, or a file name (``csv:FILE``, or
    the name a file was imported under)."""

    source: str
    symbol: str
    timeframe: Timeframe

    def __init__(self, source: str, symbol: str, timeframe: Timeframe):
        source = str(source).strip().lower()
        symbol = str(symbol).strip().upper()
        if not source or not symbol:
            raise WorkstationError(f"a series needs a source and a symbol, got "
                                   f"{source!r} and {symbol!r}")
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "symbol", symbol)
        object.__setattr__(self, "timeframe", timeframe)

    @property
    def kind(self) -> SourceKind:
        if self.source == DEMO_SOURCE:
            return SourceKind.DEMO
        if self.source == FILE_PREFIX or self.source.startswith(FILE_PREFIX + ":"):
            return SourceKind.FILE
        return SourceKind.EXCHANGE

    @property
    def is_demo(self) -> bool:
        return self.kind is SourceKind.DEMO

    @property
    def market(self) -> MarketKey:
        """The market whose annotations label this series."""
        return MarketKey(MarketKind.DEMO if self.is_demo else MarketKind.REAL, self.symbol)

    @property
    def provenance(self) -> str:
        """How every output labels this data; demo data always says DEMO."""
        if self.is_demo:
            return f"DEMO (simulated market) {self.symbol} {self.timeframe.name}"
        return f"{self.source} {self.symbol} {self.timeframe.name}"

    @property
    def short_provenance(self) -> str:
        """``provenance`` for a narrow chart: demo data still says DEMO, a file shows its
        name without its folder."""
        if self.is_demo:
            demo = self.symbol.split("/")[0] == "DEMO"
            shown = self.symbol if demo else f"DEMO {self.symbol}"
        else:
            source = self.source
            if self.kind is SourceKind.FILE and ":" in source:
                name = source.split(":", 1)[1].replace("\\", "/").rsplit("/", 1)[-1]
                source = name or source
            shown = f"{source} {self.symbol}"
        return f"{shown} {self.timeframe.name}"

    def to_dict(self) -> dict:
        """Plain JSON (what a checkpoint records as its data)."""
        return {"kind": self.kind.value, "source": self.source, "symbol": self.symbol,
                "timeframe": self.timeframe.name}

    @classmethod
    def from_dict(cls, data) -> SeriesKey:
        if not isinstance(data, dict) or not {"source", "symbol", "timeframe"} <= set(data):
            raise WorkstationError(f"not a series (source, symbol, timeframe): {data!r}")
        return cls(data["source"], data["symbol"], parse_timeframe(data["timeframe"]))

    def __str__(self) -> str:
        return self.provenance
