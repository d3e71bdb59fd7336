"""The default command: open the window on a data source."""

from __future__ import annotations

from ..market.timeframes import SUPPORTED


def add_arguments(parser) -> None:
    parser.add_argument("--source", default="demo",
                        help="demo | cache | cache:NAME | csv:FILE | an exchange id (default demo)")
    parser.add_argument("--symbol", help="market symbol, e.g. ETH/USDT")
    parser.add_argument("--timeframe", default="1m", choices=SUPPORTED)


def run(args) -> int:
    from ..ui.app import run_app

    return run_app(args)
