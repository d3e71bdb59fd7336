"""Starting the Qt application and its main window."""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger(__name__)


def run_app(args) -> int:
    os.environ.setdefault("QT_API", "pyside6")
    from PySide6.QtWidgets import QApplication

    from .data_window import DataWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Workstation")
    window = DataWindow(args.source, args.symbol, args.timeframe)
    window.show()
    return app.exec()
