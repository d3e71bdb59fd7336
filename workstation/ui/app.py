"""Starting the Qt application: asyncio on the Qt loop (qasync), the main window, clean exit.

Closing the window does not quit at once: the window's close request becomes a task that
stops the feed (awaiting the exchange's ``close()``) and the training run (saved at a safe
point); the main coroutine awaits it, and only then does the process exit.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import cast

log = logging.getLogger(__name__)


def qt_app():
    """The QApplication (made once), named, with the app icon, quitting only when told."""
    os.environ.setdefault("QT_API", "pyside6")
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    from PySide6.QtWidgets import QApplication

    from .. import __version__
    from .resources import app_icon
    from .theme import apply_theme

    # the instance there is the app's (or a test's) QApplication
    app = cast(QApplication, QApplication.instance() or QApplication(sys.argv[:1]))
    app.setApplicationName("Workstation")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("Workstation")
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)
    apply_theme(app, None)  # before any widget exists; the window then applies the saved one
    return app


async def run_window(args, *, on_shown=None) -> int:
    """Open the main window on ``args``' source and return once it has closed cleanly.
    ``on_shown(window)``, a coroutine function, runs once the source is open (the self-test);
    its result is the exit status and the window closes after it."""
    from ..paths import app_paths
    from .main_window import MainWindow

    window = MainWindow(app_paths().ensure())
    window.live.feed_settings.update(feed_overrides(args))
    close_requested = asyncio.Event()
    window.close_requested.connect(close_requested.set)
    window.show()
    replay_from = getattr(args, "replay_from", None)
    source = window.initial_source(args)
    if replay_from and replay_from.strip().lower() == "resume":
        source = window.replay.resumed_source() or source
    await window.open_source(*source, speed=args.speed)
    if replay_from:
        await window.replay.from_command_line(replay_from, args.replay_span, args.replay_speed)
    status = 0
    if on_shown is not None:
        status = await on_shown(window)
    else:
        await close_requested.wait()
    await window.shutdown()
    window.deleteLater()  # its actions' slots hold it in a cycle Python's gc cannot see
    return status


def feed_overrides(args) -> dict:
    """``--ccxt-urls`` / ``--ccxt-options`` / ``--remember-credentials`` as CcxtFeed arguments
    (ccxt loads only if given)."""
    urls, options = getattr(args, "ccxt_urls", None), getattr(args, "ccxt_options", None)
    remember = {"remember_credentials": True} if getattr(args, "remember_credentials",
                                                         False) else {}
    if not (urls or options):
        return remember
    from ..market.ccxt_feed import parse_json_overrides

    pairs = (("urls", parse_json_overrides(urls, "--ccxt-urls")),
             ("options", parse_json_overrides(options, "--ccxt-options")))
    return {**remember, **{name: value for name, value in pairs if value}}


def run_app(args) -> int:
    qt_app()
    import qasync

    status = qasync.run(run_window(args))
    log.info("workstation window closed")
    return int(status or 0)
