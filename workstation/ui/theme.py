"""Dark (default) and light themes: the style sheet for widgets, matching pyqtgraph colours."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

from .chart.colors import ChartColors
from .resources import THEMES, style_sheet

DEFAULT = "dark"
PLOT_COLORS = {"dark": ("#131722", "#b2b5be"), "light": ("#ffffff", "#434651")}
CHART_COLORS = {
    "dark": ChartColors(),
    "light": ChartColors(background="#ffffff", up="#089981", down="#f23645",
                         volume_up="#84ccc0", volume_down="#f99aa2",
                         grid="#eef0f4", axis_text="#434651", axis_line="#d1d4dc",
                         crosshair="#787b86", cursor="#e0a100", cursor_band="#e0a10026",
                         price_line_text="#ffffff", readout_text="#131722"),
}


def apply_theme(app: QApplication, name: str | None) -> str:
    """Apply theme ``name`` (default dark) to the whole app; returns the name applied. The
    theme already applied is not applied again (a style sheet set anew re-polishes every
    widget: a third of a second for the main window)."""
    name = name if name in THEMES else DEFAULT
    if app.property("workstation_theme") == name and app.styleSheet():
        return name
    app.setStyleSheet(style_sheet(name))
    background, foreground = PLOT_COLORS[name]
    pg.setConfigOptions(background=background, foreground=foreground, antialias=False)
    app.setProperty("workstation_theme", name)
    return name
