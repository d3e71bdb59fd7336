"""The ``workstation`` command: the GUI by default, subcommands for headless work.

Each area registers its subcommands from its own module in ``workstation.commands``; a
subcommand's handler takes the parsed arguments and returns an exit status.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import sys
import tempfile
from pathlib import Path

from . import __version__
from .errors import WorkstationError
from .interrupt import SignalExit, signals_unwind
from .logs import setup_logging
from .paths import HOME_ENV, AppPaths, app_paths, private, private_files, use_home
from .progress import end_open_line
from .redact import redact
from .storage import DiskFullError, is_disk_full

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
    """Run the command; Ctrl-C exits 130 and SIGTERM 143 with one line, at any moment."""
    try:
        with signals_unwind():
            return _run(argv)
    except SignalExit as stopped:
        end_open_line()
        print(stopped, file=sys.stderr)
        return stopped.exit_status


def _run(argv: list[str] | None) -> int:
    private_files()  # trade notes, logs and caches are the user's only
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.data_dir:
        use_home(args.data_dir)
    if not getattr(args, "self_test", False):  # the self-test works in a temporary home only
        try:
            setup_logging(usable_paths(), debug=args.debug)
        except WorkstationError as exc:
            print(f"workstation: error: {exc}", file=sys.stderr)
            return 2
    log.info("workstation %s: %s", __version__, " ".join(sys.argv[1:] if argv is None else argv))
    try:
        return int(args.func(args) or 0)
    except Exception as exc:
        log.exception("command failed")
        if args.debug:
            raise
        end_open_line()  # a progress bar stopped mid-way: the error on a line of its own
        print(f"workstation: error: {describe_error(exc)}", file=sys.stderr)
        return 1


def usable_paths() -> AppPaths:
    """This process's folders, created if need be and checked to take files; a folder that
    cannot be used is a ``WorkstationError`` naming it and saying why."""
    home = os.environ.get(HOME_ENV)
    if home and Path(home).exists() and not Path(home).is_dir():
        raise WorkstationError(f"--data-dir / ${HOME_ENV} {home} is a file, not a folder")
    paths = app_paths()
    for folder in (paths.config_dir, paths.data_dir, paths.log_dir):
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            private(folder)
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            if isinstance(exc, (FileExistsError, NotADirectoryError)):
                reason = "a file is in the way"
            raise WorkstationError(f"cannot create or write to folder {folder}: {reason}"
                                   ) from None
    return paths


def describe_error(exc: BaseException) -> str:
    """One line for the user: our own errors as written, others with their type."""
    if isinstance(exc, WorkstationError):
        return redact(str(exc))
    if is_disk_full(exc):
        return str(DiskFullError(getattr(exc, "filename", None) or "the data folder"))
    text = redact(" ".join(str(exc).split()))
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
