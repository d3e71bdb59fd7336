"""Logging to a rotating file in the log dir (and warnings to stderr), readable by the user only
(0600) and with every secret masked (``redact.RedactingFilter``)."""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import sys

from .paths import AppPaths, private
from .redact import RedactingFilter
from .storage import is_disk_full

FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def setup_logging(paths: AppPaths, *, debug: bool = False) -> logging.Handler:
    """Attach a rotating file handler (5 x 2 MB) to the root logger; returns it."""
    paths.ensure()
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_workstation", False):
            root.removeHandler(handler)
            with contextlib.suppress(OSError):  # a full disk: its unwritten last lines are lost
                handler.close()
    handler = _PrivateRotatingFileHandler(
        paths.log_file, maxBytes=2_000_000, backupCount=5, encoding="utf-8"
    )
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.addFilter(RedactingFilter())
    handler._workstation = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    return handler


class _PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """Every log file it opens (the first and each one after a rollover) is 0600. A log that
    cannot be written (a full disk) is said once, in one line, not as a traceback per
    message; the command goes on."""

    _failed = False

    def handleError(self, record: logging.LogRecord) -> None:
        if not self._failed:
            self._failed = True
            exc = sys.exc_info()[1]
            reason = "disk full" if exc is not None and is_disk_full(exc) else str(exc)
            print(f"workstation: cannot write the log {self.baseFilename} ({reason}); "
                  "going on without it", file=sys.stderr)

    def _open(self):
        if os.name != "nt":
            os.close(os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        private(self.baseFilename)
        return super()._open()
