"""The ``workstation`` command: the GUI by default, subcommands for headless work.

Each area registers its subcommands from its own module in ``workstation.commands``; a
subcommand's handler takes the parsed arguments and returns an exit status.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys

from . import __version__
from .errors import WorkstationError
from .logs import setup_logging
from .paths import app_paths, use_home

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workstation",
        description="Live candlestick chart, trade annotation and a transformer that learns "
        "from them. With no subcommand, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"workstation {__version__}")
    parser.add_argument("--data-dir", metavar="DIR",
                        help="keep config, data and logs under DIR (same as $WORKSTATION_HOME)")
    parser.add_argument("--debug", action="store_true", help="verbose log; tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from . import commands
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(sub)
    from .commands import gui
    gui.add_arguments(parser)
    parser.set_defaults(func=gui.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.data_dir:
        use_home(args.data_dir)
    if not getattr(args, "self_test", False):  # the self-test works in a temporary home only
        setup_logging(app_paths().ensure(), debug=args.debug)
    log.info("workstation %s: %s", __version__, " ".join(sys.argv[1:] if argv is None else argv))
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("workstation: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place errors become exit codes
        log.exception("command failed")
        if args.debug:
            raise
        print(f"workstation: error: {describe_error(exc)}", file=sys.stderr)
        return 1


def describe_error(exc: BaseException) -> str:
    """One line for the user: our own errors as written, others with their type."""
    if isinstance(exc, WorkstationError):
        return str(exc)
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
