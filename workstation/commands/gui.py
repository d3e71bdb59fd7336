"""The default command: open the window on a data source (or run the self-test)."""

from __future__ import annotations

from ..market.timeframes import SUPPORTED
from .flags import add_exchange_flags


def add_arguments(parser) -> None:
    parser.add_argument("--source", help="demo | an exchange id (binance, ...) | cache | "
                                         "cache:NAME | csv:FILE (default: the last used; "
                                         "first time binance)")
    parser.add_argument("--symbol", help="market symbol, e.g. ETH/USDT")
    parser.add_argument("--timeframe", choices=SUPPORTED, help="candle timeframe (default 1m)")
    parser.add_argument("--speed", type=float, default=1.0,
                        help="demo market speed: market time per real time (default 1)")
    add_exchange_flags(parser)
    parser.add_argument("--self-test", action="store_true",
                        help="offscreen check of the whole app in a temporary data dir; exit 0 "
                             "when it works")


def run(args) -> int:
    if args.self_test:
        from ..ui.self_test import run_self_test

        return run_self_test(args)
    from ..ui.app import run_app

    return run_app(args)
