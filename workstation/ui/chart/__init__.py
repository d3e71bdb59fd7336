"""The live candlestick chart: candles and volume on a shared time axis, crosshair readout,
keyboard cursor, last-price line and overlays, painting only what is on screen.

Public API (``from workstation.ui.chart import ChartWidget``)::

    chart = ChartWidget(parent=None, colors=ChartColors())
    chart.set_candles(candles, key)      # a new series (symbol / timeframe switch)
    chart.candles_changed(kind)          # after candles.apply(...): "update" | "append" | "reset"
    chart.cursor_index                   # the keyboard's cursor candle (-1 without candles)
    chart.cursor_time                    # its open time, UTC epoch ms (None without candles)
    chart.cursor_moved(object)           # signal: the new cursor time (ms), after any move
    chart.set_cursor(index); chart.set_cursor_time(ts)   # scroll it into view
    chart.visible_range() -> (i0, i1)    # candle indices on screen, i1 exclusive
    chart.time_range() -> (t0, t1)       # times (ms) at the left and right edges
    chart.time_range_changed(object, object)  # signal: the new (t0, t1), after any view change
    chart.show_time_range(t0, t1)
    chart.go_live(); chart.fit_all(); chart.zoom(factor, about=None); chart.pan(candles)
    chart.view_model                     # the ChartViewModel behind all of the above
    chart.set_autoscale(bool); chart.set_utc(bool); chart.set_colors(ChartColors(...))
    chart.candle_clicked(int, float)     # signal: left click on the price pane (index, price)
    chart.hovered(object)                # signal: the time (ms) under the mouse, None on leaving
    chart.set_link_marks(span, windows)  # linked charts' crosshair span and visible windows
    chart.readout_text()                 # the OHLCV + change % line under the title
    chart.overlays.add_marker(ts, price, kind="up"|"down", color=None, text=None, group=...)
    chart.overlays.add_segment(ts0, p0, ts1, p1, color, dashed=True, group=...)
    chart.overlays.add_label(ts, price, text, color, group=...)
    chart.overlays.add_range(ts0, ts1, color, label=None, group=...)
    chart.overlays.set_ghost(ts, o, h, l, c, color); chart.overlays.clear_ghost()
    chart.overlays.remove(handle); chart.overlays.clear(group)

Keys come from ``workstation.ui.keymap`` (group "Chart"). The view is held in time by a
``workstation.viewmodel.ChartViewModel`` (visible times, cursor time, follow-live): keys,
mouse gestures and the calls above all change it, and the panes show what it holds. x is the
candle index, so gaps in the data take no space; its ``TimeMap`` is the one mapping between
times and x (overlays and time ticks included).

How painting stays O(pixels): ``visible.visible_candles`` picks per-candle units while candles
are at least 3 px wide and per-pixel-column aggregates from ``pyramid.CandlePyramid`` below;
items paint numpy arrays as rectangle batches in device pixels; a forming-candle update
repaints only its own unit (``update(rect)``).
"""

from .chart_widget import ChartWidget
from .colors import ChartColors

__all__ = ["ChartColors", "ChartWidget"]
