"""Ctrl-C and SIGTERM for the command line: stop at a safe point, never abort.

While a command runs (``signals_unwind``, around ``cli.main``) SIGINT raises ``Interrupted``
and SIGTERM ``Terminated``: the command unwinds (a transaction rolls back, a file being
written is left as it was, an exchange connection closes) and exits 130 or 143 with one line.
They are not ``KeyboardInterrupt``: an uncaught-looking ``KeyboardInterrupt`` makes CPython
end the process with SIGINT after the command has already handled it. A command whose work
runs on another thread (training, evaluation) uses ``signals_stop`` instead: a signal only sets
its stop event, so the worker stops at its next safe point and saves what a stop saves, and
the command exits with ``exit_status`` once it has. No exception is ever raised into torch's
threads or into the interpreter's shutdown.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}


class SignalExit(BaseException):
    """A signal asked the command to stop; ``exit_status`` is what it exits with."""

    exit_status = 1
    words = "stopped"

    def __str__(self) -> str:
        return f"workstation: {self.words}"


class Interrupted(SignalExit):
    exit_status = 130
    words = "interrupted (Ctrl-C)"


class Terminated(SignalExit):
    exit_status = 143
    words = "terminated (SIGTERM)"


def _raise(signum, frame) -> None:
    raise Interrupted if signum == signal.SIGINT else Terminated


def ignore_signals() -> None:
    """From now on SIGINT and SIGTERM are ignored (on the main thread): for the moments
    after a command has finished, so that a late signal cannot turn its result into an
    interruption."""
    if threading.current_thread() is threading.main_thread():
        for s in EXIT_STATUS:
            signal.signal(s, signal.SIG_IGN)


@contextlib.contextmanager
def _handling(handler, after=None) -> Iterator[None]:
    """SIGINT and SIGTERM go to ``handler`` while inside (on the main thread only: signals
    reach no other); on leaving, the previous handlers come back (or ``after``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in EXIT_STATUS}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old if after is None else after)


@contextlib.contextmanager
def signals_unwind() -> Iterator[None]:
    """While inside (on the main thread), SIGINT raises ``Interrupted`` and SIGTERM
    ``Terminated``; the previous handlers come back on leaving."""
    with _handling(_raise):
        yield


@dataclass
class StopRequest:
    """Which signal asked a worker to stop (None: none did)."""

    event: threading.Event
    signum: int | None = None

    @property
    def exit_status(self) -> int | None:
        return EXIT_STATUS.get(signal.Signals(self.signum)) if self.signum else None


@contextlib.contextmanager
def signals_deferred(then_ignore: bool = False) -> Iterator[StopRequest]:
    """While inside, SIGINT and SIGTERM are only noted (``signum``): for one short step that
    must finish once begun (an import's single transaction), so that a signal never leaves
    "interrupted" said of work that was in fact done. The caller says what happened. With
    ``then_ignore`` they stay ignored after it (the command's work is done)."""
    request = StopRequest(threading.Event())

    def note(signum, frame) -> None:
        request.signum = request.signum or signum
        request.event.set()

    with _handling(note, signal.SIG_IGN if then_ignore else None):
        yield request


@contextlib.contextmanager
def signals_stop(event: threading.Event,
                 message: str = "stopping after the current batch and saving..."
                 ) -> Iterator[StopRequest]:
    """While inside, SIGINT and SIGTERM set ``event`` (once, with one line on stderr) instead
    of raising; the previous handlers come back on leaving."""
    request = StopRequest(event)

    def stop(signum, frame) -> None:
        if request.signum is None:
            request.signum = signum
            print(f"\n{message}", file=sys.stderr, flush=True)
        event.set()

    with _handling(stop):
        yield request
