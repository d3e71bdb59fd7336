"""Logging to a rotating file in the log dir (and warnings to stderr)."""

from __future__ import annotations

import logging
import logging.handlers

from .paths import AppPaths

FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def setup_logging(paths: AppPaths, *, debug: bool = False) -> logging.Handler:
    """Attach a rotating file handler (5 x 2 MB) to the root logger; returns it."""
    paths.ensure()
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_workstation", False):
            root.removeHandler(handler)
            handler.close()
    handler = logging.handlers.RotatingFileHandler(
        paths.log_file, maxBytes=2_000_000, backupCount=5, encoding="utf-8"
    )
    handler.setFormatter(logging.Formatter(FORMAT))
    handler._workstation = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    return handler
