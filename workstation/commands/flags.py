"""Flags several commands share: the series to read, and how to reach an exchange."""

from __future__ import annotations

from ..errors import WorkstationError
from ..market.timeframes import SUPPORTED, parse_timeframe
from ..ml.config import LINEAR_LAGS, PRESET_LR, TrainConfig


def add_series_flags(parser, *, max_candles: bool = True) -> None:
    """``--source``, ``--symbol``, ``--timeframe`` (and ``--max-candles``) of a series."""
    parser.add_argument("--source", default="demo",
                        help="demo | cache | cache:NAME | csv:FILE | an exchange id (its cached "
                             "candles); default demo (simulated, labelled DEMO)")
    parser.add_argument("--symbol", help="e.g. ETH/USDT (default for demo: DEMO/USDT)")
    parser.add_argument("--timeframe", default="1m", choices=SUPPORTED)
    if max_candles:
        parser.add_argument("--max-candles", type=int, metavar="N",
                            help="use only the last N candles")


def flagged_series(args):
    """The candles and key of the series that the ``add_series_flags`` flags name (the
    timeframe is read here, where the command line comes in)."""
    from ..market.sources import load_series

    return load_series(args.source, args.symbol, parse_timeframe(args.timeframe),
                       max_candles=args.max_candles)


def add_context_flags(parser) -> None:
    """``--higher-timeframes``, ``--reference`` and ``--reference-source``: what the model sees
    besides the series' own candles (``ml.context``)."""
    parser.add_argument("--higher-timeframes", metavar="TF[,TF...]",
                        help="also feed the last closed and the forming candle of these "
                             "higher timeframes, resampled from the series (e.g. 15m,1h)")
    parser.add_argument("--reference", metavar="SYMBOL",
                        help="also feed a reference asset's candles at the same times (e.g. "
                             "BTC/USDT); a missing one is masked, never filled in")
    add_reference_source_flag(parser)
    parser.add_argument("--trend-windows", metavar="K[,K...]",
                        help="also feed where the close stands against the last K candles' "
                             "average and channel, for each K (e.g. 10,20,50,100)")
    parser.add_argument("--indicators", metavar="SPEC[,SPEC...]",
                        help="also feed these indicators, as the chart draws them (e.g. "
                             "'ema 20, rsi 14, bb 20 2, atr 14, sma 50'); off by default")
    parser.add_argument("--levels", action="store_true",
                        help="also feed the distance to the nearest drawn levels above and "
                             "below the close (the market's levels in the annotations file, "
                             "each from the close of its candle); off by default")


def add_training_flags(parser, *, epochs: str) -> None:
    """How long and on what windows a model trains: ``--epochs`` (its help: ``epochs``),
    ``--batch-size``, ``--seq-len``, ``--linear-lags``, ``--stride`` and ``--lr``."""
    parser.add_argument("--epochs", type=int, default=None, help=epochs)
    parser.add_argument("--batch-size", type=int, default=None, help="default 64")
    parser.add_argument("--seq-len", type=int, default=None,
                        help="candles per window (default 200)")
    parser.add_argument("--linear-lags", type=int, default=None, metavar="N",
                        help="candles the model's linear readout of its inputs sees, beside "
                             f"the transformer (default: the preset's, {LINEAR_LAGS}; 0: none)")
    parser.add_argument("--stride", type=int, default=None,
                        help=f"candles between training windows (default: the most, up to "
                             f"seq-len, that gives an epoch {TrainConfig.batches_per_epoch} "
                             f"batches)")
    parser.add_argument("--lr", type=float, default=None,
                        help="peak learning rate (default: the preset's; " + ", ".join(
                            f"{name} {lr:g}" for name, lr in PRESET_LR.items()) + ")")


def add_reference_source_flag(parser) -> None:
    """``--reference-source``: where a reference asset's candles are read from."""
    parser.add_argument("--reference-source", metavar="SOURCE",
                        help="where the reference asset's candles are, if the model reads one "
                             "(default: the series' own source, else the candle cache)")


def context_overrides(args) -> dict:
    """The ``FeatureSpec`` fields the context flags set (None: not given)."""
    from ..ml.context import parse_higher_timeframes
    from ..ml.indicator_columns import parse_indicators
    from ..ml.trend_columns import parse_trend_windows

    if args.reference_source and not args.reference:
        raise WorkstationError("--reference-source needs --reference SYMBOL")
    return {"higher_timeframes": parse_higher_timeframes(args.higher_timeframes),
            "reference": args.reference,
            "trend_windows": parse_trend_windows(args.trend_windows),
            "indicators": parse_indicators(args.indicators),
            "levels": True if args.levels else None}


def add_exchange_flags(parser) -> None:
    """``--ccxt-urls``, ``--ccxt-options`` and ``--remember-credentials``."""
    parser.add_argument("--ccxt-urls", metavar="JSON",
                        help="merged into the exchange's urls['api'] (testnets, proxies)")
    parser.add_argument("--ccxt-options", metavar="JSON",
                        help="merged into the exchange's options; credentials in it (apiKey, "
                             "secret, password ...) go to the exchange and are masked in logs")
    parser.add_argument("--remember-credentials", action="store_true",
                        help="keep the exchange's credentials in the OS keyring for next time")


def add_cost_flags(parser) -> None:
    """What a backtest of signals assumes: the confidence a model's signal needs, fees,
    slippage and sizing."""
    parser.add_argument("--threshold", default="0.5", metavar="P[,P...]",
                        help="a model's signal needs this confidence, else flat (default 0.5; "
                             "several, comma-separated, give one column each)")
    parser.add_argument("--fee-bps", type=float, default=None,
                        help="fee per side in bps (default: the exchange's from ccxt, else 10)")
    parser.add_argument("--slippage-bps", type=float, default=None,
                        help="slippage per side in bps (default 1)")
    parser.add_argument("--size", type=float, default=1.0,
                        help="fraction of equity per trade (default 1: all, fees included)")


def thresholds(text: str) -> tuple[float, ...]:
    """``--threshold 0,0.4,0.5`` as numbers, each checked to be a probability."""
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise WorkstationError(f"--threshold must be numbers between 0 and 1 separated by "
                               f"commas, got {text!r}") from None
    for value in values:
        if not 0 <= value <= 1:
            raise WorkstationError(f"--threshold must be between 0 and 1, got {value:g}")
    return values
