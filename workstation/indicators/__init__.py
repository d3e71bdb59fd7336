"""Indicators computed once, in the core, for the chart and the model alike: moving averages,
VWAP, RSI, ATR, Bollinger bands (``formulas``, kept live by ``IndicatorValues``) and the
volume profile of a candle range (``profile``). Causal: a value reads no candle after its own.
No Qt here."""

from .formulas import compute
from .profile import VolumeProfile, volume_profile
from .spec import IndicatorKind, IndicatorSpec, IndicatorSpecError, parse_spec
from .values import IndicatorValues

__all__ = ["IndicatorKind", "IndicatorSpec", "IndicatorSpecError", "IndicatorValues",
           "VolumeProfile", "compute", "parse_spec", "volume_profile"]
