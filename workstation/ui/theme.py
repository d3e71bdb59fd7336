"""Dark (default) and light themes: the style sheet for widgets, matching pyqtgraph colours."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

from .resources import THEMES, style_sheet

DEFAULT = "dark"
PLOT_COLORS = {"dark": ("#131722", "#b2b5be"), "light": ("#ffffff", "#434651")}


def apply_theme(app: QApplication, name: str | None) -> str:
    """Apply theme ``name`` (default dark) to the whole app; returns the name applied."""
    name = name if name in THEMES else DEFAULT
    app.setStyleSheet(style_sheet(name))
    background, foreground = PLOT_COLORS[name]
    pg.setConfigOptions(background=background, foreground=foreground, antialias=False)
    app.setProperty("workstation_theme", name)
    return name
