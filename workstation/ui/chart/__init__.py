"""The live candlestick chart: candles and volume on a shared time axis, crosshair readout,
keyboard cursor, last-price line and overlays, painting only what is on screen.

Public API (``from workstation.ui.chart import ChartWidget``)::

    chart = ChartWidget(parent=None, colors=ChartColors())
    chart.set_candles(candles, key)      # a new series (symbol / timeframe switch)
    chart.candles_changed(kind)          # after candles.apply(...): "update" | "append" | "reset"
    chart.cursor_index                   # the keyboard's cursor candle; signal cursor_moved(int)
    chart.set_cursor(index)
    chart.visible_range() -> (i0, i1)    # candle indices on screen, i1 exclusive
    chart.go_live(); chart.fit_all(); chart.zoom(factor); chart.pan(candles)
    chart.set_autoscale(bool); chart.set_utc(bool); chart.set_colors(ChartColors(...))
    chart.candle_clicked(int, float)     # signal: left click on the price pane (index, price)
    chart.readout_text()                 # the OHLCV + change % line under the title
    chart.overlays.add_marker(ts, price, kind="up"|"down", color=None, text=None, group=...)
    chart.overlays.add_segment(ts0, p0, ts1, p1, color, dashed=True, group=...)
    chart.overlays.add_label(ts, price, text, color, group=...)
    chart.overlays.add_range(ts0, ts1, color, label=None, group=...)
    chart.overlays.set_ghost(ts, o, h, l, c, color); chart.overlays.clear_ghost()
    chart.overlays.remove(handle); chart.overlays.clear(group)

Keys come from ``workstation.ui.shortcuts`` (group "Chart"). x is the candle index, so gaps
in the data take no space; times are mapped to labels through the candles' open times.

How painting stays O(pixels): ``visible.visible_candles`` picks per-candle units while candles
are at least 3 px wide and per-pixel-column aggregates from ``pyramid.CandlePyramid`` below;
items paint numpy arrays as rectangle batches in device pixels; a forming-candle update
repaints only its own unit (``update(rect)``).
"""

from .chart_widget import ChartWidget
from .colors import ChartColors

__all__ = ["ChartWidget", "ChartColors"]
