"""``ChartColors``: every colour the chart paints; the default is the dark theme."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChartColors:
    """Colours as ``#rrggbb`` or ``#rrggbbaa`` strings (anything ``QColor`` accepts)."""

    background: str = "#131722"
    up: str = "#26a69a"
    down: str = "#ef5350"
    volume_up: str = "#26a69a80"
    volume_down: str = "#ef535080"
    grid: str = "#2a2e39"
    axis_text: str = "#b2b5be"
    axis_line: str = "#363a45"
    crosshair: str = "#9598a1"
    cursor: str = "#f0b90b"
    cursor_band: str = "#f0b90b26"
    price_line_text: str = "#ffffff"
    readout_text: str = "#d1d4dc"
