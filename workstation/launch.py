"""The ``workstation`` entry point, light enough that a signal can never catch it half-loaded:
it takes over Ctrl-C and SIGTERM first (``interrupt``), then imports the command line. Once
the command has ended they are ignored: a signal while Python shuts down changes nothing."""

from __future__ import annotations

import sys


def main() -> int:
    from .interrupt import SignalExit, ignore_signals, signals_unwind

    try:
        with signals_unwind():
            from .cli import main as run

            code = run()
    except SignalExit as stopped:  # while the command line was still loading
        print(stopped, file=sys.stderr)
        code = stopped.exit_status
    ignore_signals()
    return code
