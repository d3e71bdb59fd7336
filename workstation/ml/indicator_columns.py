"""The chart's indicators as model inputs (``FeatureSpec.indicators``, opt-in): the same
formulas the chart draws (``workstation.indicators``), anchored so that each row reads a
bounded stretch of candles (``indicators.anchored``), made scale-free like every other input.

- ``sma_n`` / ``ema_n``: log(close / average) in units of the trailing volatility
  (``candle_columns.volatility``), clipped at ``spec.clip``;
- ``rsi_n``: (RSI - 50) / 50, so -1 .. +1;
- ``atr_n``: log(ATR / (close x volatility)): the range against the close-to-close moves;
- ``bb_n_k_pos``: (close - middle) / (k standard deviations): -1 and +1 at the bands, clipped
  at ``CHANNEL_CLIP``; ``bb_n_k_width``: log(band width / middle / volatility).

Rows in an indicator's warm-up read 0. Row ``t`` reads candles ``t - warmup .. t`` only
(``FeatureSpec.warmup`` covers it), so a live window computes the rows of the full history.
"""

from __future__ import annotations

import numpy as np

from ..errors import WorkstationError
from ..indicators import IndicatorKind, IndicatorSpec, IndicatorSpecError, parse_spec
from ..indicators.anchored import anchored, check_anchorable
from ..indicators.anchored import warmup as indicator_warmup
from .candle_columns import volatility
from .trend_columns import CHANNEL_CLIP


def parse_indicators(text: str | None) -> tuple[str, ...] | None:
    """``"ema 20, rsi 14"`` -> ``("ema 20", "rsi 14")`` (as ``parse_spec`` writes them); None
    for None (not given), ``()`` for a blank; a spec that cannot be an input is an error."""
    if text is None:
        return None
    return normalized(part for part in text.split(",") if part.strip())


def normalized(texts) -> tuple[str, ...]:
    """The specs as typed, checked and written back the one way (duplicates dropped)."""
    out: list[str] = []
    for text in texts:
        try:
            spec = parse_spec(str(text))
            check_anchorable(spec)
        except IndicatorSpecError as exc:
            raise WorkstationError(f"indicator input {str(text).strip()!r}: {exc}") from None
        if spec.text not in out:
            out.append(spec.text)
    return tuple(out)


def _columns(spec: IndicatorSpec) -> tuple[str, ...]:
    name = spec.text.replace(" ", "_").replace(".", "p")
    if spec.kind is IndicatorKind.BOLLINGER:
        return (f"{name}_pos", f"{name}_width")
    return (name,)


def indicator_names(texts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(col for text in texts for col in _columns(parse_spec(text)))


def indicators_warmup(texts: tuple[str, ...]) -> int:
    return max((indicator_warmup(parse_spec(t)) for t in texts), default=0)


def indicator_features(candles, spec) -> np.ndarray:
    """``float32 [len(candles), len(indicator_names(spec.indicators))]``."""
    texts = spec.indicators
    out = np.zeros((len(candles), len(indicator_names(texts))), dtype=np.float32)
    if not len(candles):
        return out
    close = np.asarray(candles.close, dtype=np.float64)
    vol = volatility(candles, spec)
    col = 0
    for text in texts:
        ind = parse_spec(text)
        lines = anchored(ind, candles)
        with np.errstate(divide="ignore", invalid="ignore"):
            if ind.kind is IndicatorKind.BOLLINGER:
                middle, upper = lines["middle"], lines["upper"]
                half = upper - middle
                pos = np.where(half > 0, (close - middle) / half, 0.0)
                width = np.log(2 * half / middle / vol)
                values = [np.clip(pos, -CHANNEL_CLIP, CHANNEL_CLIP),
                          np.clip(width, -spec.clip, spec.clip)]
            elif ind.kind is IndicatorKind.RSI:
                values = [(lines["value"] - 50.0) / 50.0]
            elif ind.kind is IndicatorKind.ATR:
                values = [np.clip(np.log(lines["value"] / (close * vol)), -spec.clip,
                                  spec.clip)]
            else:  # a moving average
                values = [np.clip(np.log(close / lines["value"]) / vol, -spec.clip,
                                  spec.clip)]
        for v in values:
            out[:, col] = np.where(np.isfinite(v), v, 0.0)
            col += 1
    return out
