"""``IndicatorSpec``: which indicator, with which settings, written as a trader types it.

A spec is a kind and its numbers: ``"ema 50"``, ``"sma 200"``, ``"bb 20 2.5"`` (Bollinger
bands: period, width in standard deviations), ``"rsi 14"``, ``"atr 14"``, ``"vwap"`` (daily
session, UTC) and ``"vp 24"`` (the visible range's volume profile: price rows). ``parse_spec``
reads that text (also ``ema50``, ``EMA(50)``, ``bollinger 20 2``) and says in one line what is
wrong with a bad one; ``spec.text`` writes it back so that ``parse_spec(spec.text) == spec``.

Each kind says where it is drawn (``pane``: over the prices, or in a pane of its own under the
volume), which lines it has, and its warm-up: the leading candles whose value is not yet
defined (NaN), because the window they need does not exist yet.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass

from ..errors import WorkstationError

MAX_PERIOD = 10_000
MAX_WIDTH = 10.0


class IndicatorSpecError(WorkstationError, ValueError):
    """Text that names no indicator, or settings it cannot take."""


class IndicatorKind(str, enum.Enum):
    SMA = "sma"
    EMA = "ema"
    VWAP = "vwap"
    RSI = "rsi"
    ATR = "atr"
    BOLLINGER = "bb"
    VOLUME_PROFILE = "vp"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class _KindInfo:
    title: str  # what the palette and the legend call it
    default_period: int  # 0: the kind takes no period
    own_pane: bool  # drawn in a pane of its own, not over the prices
    lines: tuple[str, ...]  # the values drawn, one line each ("" for a profile)
    period_name: str = "period"


KINDS: dict[IndicatorKind, _KindInfo] = {
    IndicatorKind.SMA: _KindInfo("Simple moving average", 50, False, ("value",)),
    IndicatorKind.EMA: _KindInfo("Exponential moving average", 20, False, ("value",)),
    IndicatorKind.VWAP: _KindInfo("VWAP (daily session, UTC)", 0, False, ("value",)),
    IndicatorKind.RSI: _KindInfo("Relative strength index", 14, True, ("value",)),
    IndicatorKind.ATR: _KindInfo("Average true range", 14, True, ("value",)),
    IndicatorKind.BOLLINGER: _KindInfo("Bollinger bands", 20, False,
                                       ("middle", "upper", "lower")),
    IndicatorKind.VOLUME_PROFILE: _KindInfo("Volume profile (visible range)", 24, False, (),
                                            "rows"),
}
_ALIASES = {
    "ma": IndicatorKind.SMA, "bollinger": IndicatorKind.BOLLINGER, "boll": IndicatorKind.BOLLINGER,
    "bbands": IndicatorKind.BOLLINGER, "profile": IndicatorKind.VOLUME_PROFILE,
    "volumeprofile": IndicatorKind.VOLUME_PROFILE, "vprofile": IndicatorKind.VOLUME_PROFILE,
}
DEFAULT_WIDTH = 2.0  # Bollinger bands: standard deviations either side
_NUMBER = r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+"


def _kind(word: str) -> IndicatorKind:
    word = word.lower()
    if word in _ALIASES:
        return _ALIASES[word]
    try:
        return IndicatorKind(word)
    except ValueError:
        names = ", ".join(k.value for k in IndicatorKind)
        raise IndicatorSpecError(f"no indicator called {word!r}; use one of {names}") from None


@dataclass(frozen=True)
class IndicatorSpec:
    """``kind`` with its ``period`` (price rows for a volume profile; 0 for VWAP) and, for
    Bollinger bands, ``width`` in standard deviations. Constructing one checks it."""

    kind: IndicatorKind
    period: int = 0
    width: float = 0.0

    def __post_init__(self) -> None:
        info = KINDS[IndicatorKind(self.kind)]
        object.__setattr__(self, "kind", IndicatorKind(self.kind))
        if not info.default_period:
            if self.period:
                raise IndicatorSpecError(f"{self.kind} takes no period")
        elif not isinstance(self.period, int) or not 1 <= self.period <= MAX_PERIOD:
            raise IndicatorSpecError(
                f"{self.kind} {info.period_name} must be a whole number from 1 to "
                f"{MAX_PERIOD}, not {self.period!r}")
        if self.kind is IndicatorKind.VOLUME_PROFILE and self.period < 2:
            raise IndicatorSpecError("a volume profile needs at least 2 rows")
        if self.kind is IndicatorKind.BOLLINGER:
            if not (math.isfinite(self.width) and 0 < self.width <= MAX_WIDTH):
                raise IndicatorSpecError(
                    f"Bollinger width must be above 0 and at most {MAX_WIDTH:g} standard "
                    f"deviations, not {self.width!r}")
        elif self.width:
            raise IndicatorSpecError(f"{self.kind} takes no width")

    @classmethod
    def default(cls, kind: IndicatorKind) -> IndicatorSpec:
        """The kind with its usual settings (EMA 20, RSI 14, Bollinger 20 2, ...)."""
        kind = IndicatorKind(kind)
        width = DEFAULT_WIDTH if kind is IndicatorKind.BOLLINGER else 0.0
        return cls(kind, KINDS[kind].default_period, width)

    @property
    def info(self) -> _KindInfo:
        return KINDS[self.kind]

    @property
    def own_pane(self) -> bool:
        return self.info.own_pane

    @property
    def lines(self) -> tuple[str, ...]:
        return self.info.lines

    @property
    def warmup(self) -> int:
        """The leading candles without a value: the window is not there yet."""
        if self.kind is IndicatorKind.RSI:
            return self.period  # its first change is between candles 0 and 1
        if self.kind in (IndicatorKind.VWAP, IndicatorKind.VOLUME_PROFILE):
            return 0
        return self.period - 1

    @property
    def text(self) -> str:
        """The spec as typed: ``parse_spec(spec.text) == spec``."""
        parts = [self.kind.value]
        if self.period:
            parts.append(str(self.period))
        if self.kind is IndicatorKind.BOLLINGER:
            parts.append(f"{self.width:g}")
        return " ".join(parts)

    @property
    def label(self) -> str:
        """The legend's name: ``EMA 20``, ``BB 20 2``, ``VWAP``."""
        return self.text.upper()


def parse_spec(text: str) -> IndicatorSpec:
    """Read ``"ema 50"``, ``"EMA(50)"``, ``"ema50"``, ``"bb 20 2"``, ``"vwap"``; a kind alone
    takes its usual settings, a missing width its usual width."""
    words = str(text).strip()
    if not words:
        raise IndicatorSpecError("no indicator given; type for example ema 20, rsi 14, bb 20 2")
    m = re.fullmatch(rf"\s*([A-Za-z][A-Za-z ]*?)\s*[(:]?\s*((?:(?:{_NUMBER})[\s,]*)*)\)?\s*",
                     words)
    if m is None:
        raise IndicatorSpecError(f"cannot read {words!r} as an indicator; type for example "
                                 "ema 20, rsi 14, bb 20 2")
    kind = _kind(m.group(1).replace(" ", ""))
    numbers = re.findall(_NUMBER, m.group(2))
    default = IndicatorSpec.default(kind)
    takes = (1 if default.period else 0) + (1 if kind is IndicatorKind.BOLLINGER else 0)
    if len(numbers) > takes:
        raise IndicatorSpecError(f"{kind} takes {takes or 'no'} number{'s' * (takes != 1)}, "
                                 f"not {len(numbers)}: {words!r}")
    period = default.period
    if default.period and numbers:
        value = float(numbers[0])
        if not value.is_integer():
            raise IndicatorSpecError(f"{kind} {default.info.period_name} must be a whole "
                                     f"number, not {numbers[0]}")
        period = int(value)
    width = float(numbers[1]) if len(numbers) > 1 else default.width
    return IndicatorSpec(kind, period, width)
