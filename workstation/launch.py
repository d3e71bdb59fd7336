"""The ``workstation`` entry point, light enough that a signal can never catch it half-loaded:
it takes over Ctrl-C and SIGTERM first (``interrupt``), then imports the command line."""

from __future__ import annotations

import sys


def main() -> int:
    from .interrupt import SignalExit, signals_unwind

    try:
        with signals_unwind():
            from .cli import main as run

            return run()
    except SignalExit as stopped:  # while the command line was still loading
        print(stopped, file=sys.stderr)
        return stopped.exit_status
