"""Candle timeframes as ccxt names them (1s .. 1d), with their length in milliseconds."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import WorkstationError

_UNIT_MS = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
SUPPORTED = ("1s", "1m", "3m", "5m", "15m", "30m", "1h", "4h", "1d")


@dataclass(frozen=True, order=True)
class Timeframe:
    ms: int
    name: str

    @property
    def seconds(self) -> float:
        return self.ms / 1000.0

    def floor(self, ts_ms: int) -> int:
        """Open time of the candle that contains ``ts_ms``."""
        return ts_ms - ts_ms % self.ms

    def __str__(self) -> str:
        return self.name


def parse_timeframe(value: str) -> Timeframe:
    """``"15m"`` -> ``Timeframe(900000, "15m")``; anything unsupported is a clear error. The
    boundaries (command line, settings, files, stored rows) parse; inside, a ``Timeframe``
    is passed on as it is."""
    name = str(value).strip()
    if name not in SUPPORTED:
        raise WorkstationError(
            f"unsupported timeframe {value!r}; use one of {', '.join(SUPPORTED)}"
        )
    return Timeframe(int(name[:-1]) * _UNIT_MS[name[-1]], name)


ALL = tuple(parse_timeframe(name) for name in SUPPORTED)
ONE_MINUTE = parse_timeframe("1m")  # the default of whatever takes a timeframe
