"""Logging to a rotating file in the log dir (and warnings to stderr), readable by the user only
(0600) and with every secret masked (``redact``)."""

from __future__ import annotations

import logging
import logging.handlers
import os

from .paths import AppPaths, private
from .redact import RedactingFormatter

FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def setup_logging(paths: AppPaths, *, debug: bool = False) -> logging.Handler:
    """Attach a rotating file handler (5 x 2 MB) to the root logger; returns it."""
    paths.ensure()
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_workstation", False):
            root.removeHandler(handler)
            handler.close()
    handler = _PrivateRotatingFileHandler(
        paths.log_file, maxBytes=2_000_000, backupCount=5, encoding="utf-8"
    )
    handler.setFormatter(RedactingFormatter(FORMAT))
    handler._workstation = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    return handler


class _PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """Every log file it opens (the first and each one after a rollover) is 0600."""

    def _open(self):
        if os.name != "nt":
            os.close(os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        private(self.baseFilename)
        return super()._open()
