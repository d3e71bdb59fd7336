"""``ChartColors``: every colour the chart paints; the default is the dark theme.

Candles and volume are painted fastest in opaque colours (a translucent fill costs Qt two to
three times as much per pixel), so the volume colours are the candle colours already blended
half-way into the background rather than translucent ones."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChartColors:
    """Colours as ``#rrggbb`` or ``#rrggbbaa`` strings (as ``pyqtgraph.mkColor`` reads them)."""

    background: str = "#131722"
    up: str = "#26a69a"
    down: str = "#ef5350"
    volume_up: str = "#1c5e5e"
    volume_down: str = "#813539"
    grid: str = "#2a2e39"
    axis_text: str = "#b2b5be"
    axis_line: str = "#363a45"
    crosshair: str = "#9598a1"
    cursor: str = "#f0b90b"
    cursor_band: str = "#f0b90b26"
    price_line_text: str = "#ffffff"
    readout_text: str = "#d1d4dc"
