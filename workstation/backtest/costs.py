"""What a trade costs: the exchange's taker fee from ccxt where it is known, else a stated
default; the user's ``--fee-bps`` / ``--slippage-bps`` always win."""

from __future__ import annotations

from ..market.series import SeriesKey, SourceKind
from .engine import Costs

DEFAULT_FEE = 0.001  # 0.1 % per side: the common spot taker fee (Binance's without discounts)
DEFAULT_SLIPPAGE_BPS = 1.0


def exchange_fee(exchange_id: str, symbol: str | None = None) -> tuple[float, str] | None:
    """The taker fee per side ccxt describes for ``exchange_id`` (its market's, where ccxt
    knows it without a network call, else the exchange's), and where it came from; None when
    ccxt does not know the exchange or its fee."""
    import ccxt

    if exchange_id not in ccxt.exchanges:
        return None
    exchange = getattr(ccxt, exchange_id)()
    market = (exchange.markets or {}).get(symbol) if symbol else None
    if market and market.get("taker") is not None:
        return float(market["taker"]), f"{exchange_id} {symbol} taker fee (ccxt)"
    taker = (exchange.fees or {}).get("trading", {}).get("taker")
    if taker is None:
        return None
    return float(taker), f"{exchange_id} taker fee (ccxt)"


def costs_for(series: SeriesKey, *, fee_bps: float | None = None,
              slippage_bps: float | None = None) -> Costs:
    """The costs of trading ``series``: given, else its exchange's fee, else the default."""
    slippage = DEFAULT_SLIPPAGE_BPS if slippage_bps is None else float(slippage_bps)
    if fee_bps is not None:
        return Costs(float(fee_bps) / 10_000, slippage, "given (--fee-bps)")
    found = exchange_fee(series.source, series.symbol) \
        if series.kind is SourceKind.EXCHANGE else None
    if found is not None:
        return Costs(found[0], slippage, found[1])
    return Costs(DEFAULT_FEE, slippage,
                 f"default {DEFAULT_FEE * 100:g} % (no exchange fee known for {series.source})")
