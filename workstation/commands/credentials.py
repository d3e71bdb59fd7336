"""``workstation credentials``: exchange API keys remembered in the OS keyring, never in a file.

``remember EXCHANGE`` takes them from the environment (``WORKSTATION_<EXCHANGE>_API_KEY``,
``..._SECRET`` ...) or asks for them in the terminal, without echo; ``list`` shows which
exchanges and fields are remembered (never a value); ``forget EXCHANGE`` removes them.
"""

from __future__ import annotations

import getpass
import sys

from ..errors import WorkstationError


def register(sub) -> None:
    p = sub.add_parser("credentials", help="exchange API keys kept in the OS keyring")
    actions = p.add_subparsers(dest="action", required=True)
    remember = actions.add_parser("remember", help="keep an exchange's API key and secret "
                                                   "(from the environment, else asked for)")
    remember.add_argument("exchange")
    remember.set_defaults(func=run_remember)
    listing = actions.add_parser("list", help="which exchanges have credentials remembered")
    listing.set_defaults(func=run_list)
    forget = actions.add_parser("forget", help="remove an exchange's credentials")
    forget.add_argument("exchange")
    forget.set_defaults(func=run_forget)


def run_remember(args) -> int:
    from ..market.credentials import RememberedCredentials, env_name, from_environment
    from ..redact import register as mask

    exchange = args.exchange.strip().lower()
    found = from_environment(exchange)
    if not found:
        if not sys.stdin.isatty():
            raise WorkstationError(
                f"no {exchange} credentials in the environment ({env_name(exchange, 'apiKey')}, "
                f"{env_name(exchange, 'secret')} ...) and no terminal to ask in")
        found = {name: getpass.getpass(f"{exchange} {name}: ") for name in ("apiKey", "secret")}
        found = {name: value for name, value in found.items() if value}
    mask(*found.values())
    RememberedCredentials().remember(exchange, found)
    print(f"{exchange}: {', '.join(sorted(found))} kept in the OS keyring")
    return 0


def run_list(args) -> int:
    from ..market.credentials import RememberedCredentials

    listing = RememberedCredentials().listing()
    if not listing:
        print("no credentials remembered")
    for exchange, fields in sorted(listing.items()):
        print(f"{exchange}: {', '.join(fields)}")
    return 0


def run_forget(args) -> int:
    from ..market.credentials import RememberedCredentials

    exchange = args.exchange.strip().lower()
    fields = RememberedCredentials().forget(exchange)
    print(f"{exchange}: forgot {', '.join(fields)}" if fields
          else f"{exchange}: no credentials were remembered")
    return 0
