"""The default command: open the window on a data source (or run the self-test)."""

from __future__ import annotations

import argparse

from ..errors import WorkstationError
from ..market.replay_clock import Speed, parse_span
from ..market.timeframes import SUPPORTED
from ..timeparse import parse_time_ms
from .flags import add_exchange_flags


def _checked(parse):
    """An argparse type that turns a ``WorkstationError`` into argparse's one-line error."""
    def check(text: str):
        try:
            parse(text)
        except WorkstationError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text
    return check


def _replay_start(text: str) -> None:
    if text.strip().lower() not in ("random", "resume"):
        parse_time_ms(text)


def add_arguments(parser) -> None:
    parser.add_argument("--source", help="demo | an exchange id (binance, ...) | cache | "
                                         "cache:NAME | csv:FILE (default: the last used; "
                                         "first time binance)")
    parser.add_argument("--symbol", help="market symbol, e.g. ETH/USDT")
    parser.add_argument("--timeframe", choices=SUPPORTED, help="candle timeframe (default 1m)")
    parser.add_argument("--speed", type=float, default=1.0,
                        help="demo market speed: market time per real time (default 1)")
    parser.add_argument("--replay-from", type=_checked(_replay_start), metavar="TS|random|resume",
                        help="start a blind replay: the candles closed by TS on screen, a random "
                             "start inside --replay-span, or the last unfinished replay")
    parser.add_argument("--replay-span", type=_checked(parse_span), metavar="FROM..TO",
                        help="where random replay starts are drawn from (dates or epoch ms)")
    parser.add_argument("--replay-speed", type=_checked(Speed.parse), metavar="SPEED",
                        help="replay speed: 1x to 1000x real time, or candles a second (5/s)")
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
