"""The live chart: what it draws is checked against the data, pixel by pixel where it matters.

Real widgets, offscreen: candles and readout, the forming candle, appends at and away from the
live edge, series switches, overlays, and a 1M-candle grab whose colours are predicted from the
candles themselves (per-pixel-column aggregates from the min/max pyramid).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtGui
from PySide6.QtTest import QTest

from workstation.market.candles import Candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.ui.chart import ChartColors, ChartWidget
from workstation.ui.chart.pyramid import CandlePyramid
from workstation.ui.chart.readout import price_decimals
from workstation.ui.chart.ticks import price_ticks, time_ticks
from workstation.ui.chart.visible import CANDLE_MIN_PX, visible_candles

T0 = 1_699_920_000_000  # 2023-11-14 00:00 UTC: on every timeframe's grid
COLORS = ChartColors()
UP = pg.mkColor(COLORS.up)
DOWN = pg.mkColor(COLORS.down)


def make_candles(n: int, timeframe_ms: int = 60_000, seed: int = 0, tf: str = "1m") -> Candles:
    """A random walk with two-decimal prices and every direction present."""
    rng = np.random.default_rng(seed)
    steps = np.round(rng.normal(0, 0.5, n), 2)
    close = np.round(100 + np.cumsum(steps), 2)
    close = np.maximum(close, 5.0)
    open_ = np.round(np.concatenate(([100.0], close[:-1])), 2)
    high = np.round(np.maximum(open_, close) + np.round(rng.uniform(0.01, 0.4, n), 2), 2)
    low = np.round(np.minimum(open_, close) - np.round(rng.uniform(0.01, 0.4, n), 2), 2)
    volume = np.round(rng.uniform(1, 100, n), 3)
    ts = T0 + np.arange(n, dtype=np.int64) * timeframe_ms
    return Candles.from_arrays(ts, open_, high, low, close, volume, timeframe=parse_timeframe(tf))


@pytest.fixture
def chart(qtbot):
    widget = ChartWidget()
    qtbot.addWidget(widget)
    widget.resize(1200, 700)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def settle(qtbot):
    qtbot.wait(1)
    QtCore.QCoreApplication.processEvents()


def to_widget(chart: ChartWidget, x: float, price: float, view=None) -> tuple[float, float]:
    """Widget pixel coordinates (float) of data point ``(x, price)``."""
    view = view or chart.price_view
    scene = view.mapViewToScene(QtCore.QPointF(x, price))
    origin = chart.view.viewport().mapTo(chart, QtCore.QPoint(0, 0))
    return scene.x() + origin.x(), scene.y() + origin.y()


def column_of(chart: ChartWidget, x: float) -> int:
    return math.floor(to_widget(chart, x, 0.0)[0])


def row_of(chart: ChartWidget, price: float) -> int:
    return round(to_widget(chart, 0.0, price)[1])


def expected_readout_values(c: Candles, i: int) -> list[str]:
    d = price_decimals(np.concatenate((c.open, c.high, c.low, c.close)))
    pct = (c.close[i] - (c.close[i - 1] if i else c.open[i])) / (c.close[i - 1] if i else c.open[i])
    sign = "+" if pct >= 0 else "−"
    return [f"O {c.open[i]:.{d}f}", f"H {c.high[i]:.{d}f}", f"L {c.low[i]:.{d}f}",
            f"C {c.close[i]:.{d}f}", f"{sign}{abs(pct) * 100:.2f}%"]


# -- pure parts ------------------------------------------------------------------------------
def test_pyramid_answers_match_a_scan_of_the_candles():
    c = make_candles(5_000, seed=3)
    pyr = CandlePyramid(c)
    rng = np.random.default_rng(1)
    for _ in range(300):
        a, b = sorted(rng.integers(0, len(c) + 1, 2))
        low, high, vol = pyr.range_stats(a, b)
        if a == b:
            assert (low, high, vol) == (math.inf, -math.inf, 0.0)
            continue
        assert low == c.low[a:b].min() and high == c.high[a:b].max()
        assert vol == pytest.approx(c.volume[a:b].sum())
    edges = np.unique(np.concatenate(([0], rng.integers(0, len(c), 200), [len(c)])))
    cols = pyr.columns(edges)
    for j in range(len(cols.column)):
        a, b = int(cols.start[j]), int(cols.stop[j])
        assert cols.open[j] == c.open[a] and cols.close[j] == c.close[b - 1]
        assert cols.high[j] == c.high[a:b].max() and cols.low[j] == c.low[a:b].min()
        assert cols.volume[j] == pytest.approx(c.volume[a:b].sum())
    assert cols.stop[-1] == len(c) and cols.start[0] == 0


def test_pyramid_follows_appends_and_forming_updates_like_a_rebuild():
    full = make_candles(3_000, seed=4)
    c = full.slice(0, 1)
    pyr = CandlePyramid(c)
    for i in range(1, 3_000):
        r = full.row(i)
        c.append(r.ts, r.open, r.open, r.open, r.open, 0.0, closed=False)
        pyr.sync()
        c.update_last(r.open, r.high, r.low, r.close, r.volume)
        if i % 3 == 0:
            pyr.sync()
    pyr.sync()
    fresh = CandlePyramid(c)
    assert pyr.levels == fresh.levels
    for a, b in [(0, 3_000), (17, 2_999), (1_024, 2_048), (2_990, 3_000)]:
        assert pyr.range_stats(a, b) == pytest.approx(fresh.range_stats(a, b))


def test_visible_units_switch_to_pixel_columns_below_three_pixels_per_candle():
    c = make_candles(10_000)
    pyr = CandlePyramid(c)
    wide = visible_candles(c, pyr, 9_000 - 0.5, 9_999.5, 1_000 * int(CANDLE_MIN_PX))
    assert not wide.columns and len(wide) == 1_000
    assert np.shares_memory(wide.close, c.close)  # candle units are views, not copies
    narrow = visible_candles(c, pyr, -0.5, 9_999.5, 1_000)
    assert narrow.columns and len(narrow) <= 1_000
    assert narrow.start[0] == 0 and narrow.stop[-1] == 10_000
    assert np.all(narrow.stop[:-1] == narrow.start[1:])  # every candle in exactly one column
    lo, hi = narrow.low_high()
    assert lo == c.low.min() and hi == c.high.max()


def test_ticks_are_round_and_inside_their_candles():
    values, decimals = price_ticks(101.3, 118.9, 500)
    assert decimals == 0 and list(values) == list(np.arange(102.0, 119.0, 2.0))
    c = make_candles(2_000)
    ticks = time_ticks(c.ts, 60_000, 0, 2_000, 1.0, utc=True)
    assert ticks and all(t.ts % (3_600_000) == 0 for t in ticks)  # hourly at 1 px per minute
    for t in ticks:
        i = int(t.x)
        assert c.ts[i] <= t.ts < c.ts[i] + 60_000
    gappy = np.concatenate((c.ts[:1_000], c.ts[1_000:] + 7 * 86_400_000))
    for t in time_ticks(gappy, 60_000, 0, 2_000, 1.0, utc=True):
        i = int(t.x)
        assert gappy[i] <= t.ts < gappy[i] + 60_000


def test_price_decimals_follow_the_data():
    assert price_decimals(np.array([101.25, 99.5, 100.0])) == 2
    assert price_decimals(np.array([2085.856466, 2081.1])) == 3  # 7 significant digits
    assert price_decimals(np.array([0.00012345, 0.0001236])) == 8


# -- the widget -------------------------------------------------------------------------------
def test_shows_the_candles_of_the_view_with_readout_of_the_cursor_candle(chart, qtbot):
    c = make_candles(300)
    chart.set_candles(c, SeriesKey("demo", "DEMO/USDT", ONE_MINUTE))
    chart.price_view.setXRange(199.5, 299.5, padding=0)
    settle(qtbot)
    assert chart.visible_range() == (200, 300)
    frame = chart.frame()
    assert not frame.columns and list(frame.x) == list(range(200, 300))
    assert "DEMO" in chart.title_label.text()
    for i in (299, 250, 200):
        chart.set_cursor(i)
        text = chart.readout_text()
        for part in expected_readout_values(c, i):
            assert part in text, (i, part, text)
    assert chart.cursor_index == 200
    # The prices fit the visible candles with a little padding.
    (_, _), (y0, y1) = chart.price_view.viewRange()
    lo, hi = c.low[200:300].min(), c.high[200:300].max()
    assert y0 < lo and y1 > hi and (y1 - y0) < 1.3 * (hi - lo)


def test_grab_paints_each_candle_in_its_direction_colour(chart, qtbot):
    c = make_candles(300, seed=2)
    chart.set_candles(c)
    chart.price_view.setXRange(239.5, 299.5, padding=0)  # 60 candles, about 18 px each
    settle(qtbot)
    img = chart.grab().toImage()
    checked = 0
    for i in range(240, 299):  # the cursor band is on candle 299
        o, cl = c.open[i], c.close[i]
        if abs(row_of(chart, o) - row_of(chart, cl)) < 4:
            continue  # too flat to sample a body pixel
        x = column_of(chart, i) - 3  # off the wick, inside the body
        y = (row_of(chart, o) + row_of(chart, cl)) // 2
        colour = img.pixelColor(x, y)
        assert colour == (UP if cl >= o else DOWN), (i, colour.name())
        checked += 1
    assert checked > 30
    # Above the highest high there is no candle colour.
    top = row_of(chart, c.high[240:300].max()) - 4
    for i in range(240, 299):
        assert img.pixelColor(column_of(chart, i), top) not in (UP, DOWN)


def test_crosshair_snaps_to_the_candle_under_the_mouse(chart, qtbot):
    c = make_candles(200)
    chart.set_candles(c)
    chart.price_view.setXRange(99.5, 199.5, padding=0)
    settle(qtbot)
    wx, wy = to_widget(chart, 150.3, float(c.close[150]))
    viewport = chart.view.viewport()
    pos = viewport.mapFrom(chart, QtCore.QPoint(round(wx), round(wy)))
    QTest.mouseMove(viewport, pos)
    settle(qtbot)
    assert chart.crosshair.data_x == 150.0
    for part in expected_readout_values(c, 150):
        assert part in chart.readout_text()
    assert chart.time_axis.tag("cross") is not None


def test_forming_update_repaints_only_the_last_candle(chart, qtbot):
    c = make_candles(120, seed=5)
    chart.set_candles(c)
    chart.price_view.setXRange(59.5, 125.5, padding=0)
    chart.set_autoscale(False)  # a pinned price axis: nothing may rescale
    chart.set_cursor(60)  # the readout shows another candle
    settle(qtbot)
    before = chart.grab().toImage()
    refreshes = []
    chart._refresh_frame = lambda: refreshes.append(1)  # the full-frame path must not run
    o, h, l, cl, v = (float(c.open[-1]), float(c.high[-1]), float(c.low[-1]),
                      float(c.close[-1]), float(c.volume[-1]))
    new_close = cl + 1.0 if cl < o else cl - 1.0  # flip the candle's direction
    c.update_last(o, max(h, new_close + 0.2), min(l, new_close - 0.2), new_close, v * 1.05)
    chart.candles_changed("update")
    settle(qtbot)
    after = chart.grab().toImage()
    assert not refreshes
    a = np.frombuffer(before.constBits(), np.uint32).reshape(before.height(), -1)
    b = np.frombuffer(after.constBits(), np.uint32).reshape(after.height(), -1)
    ys, xs = np.nonzero(a != b)
    assert len(xs), "the update changed nothing on screen"
    last_col = column_of(chart, 119)
    half = (column_of(chart, 120) - column_of(chart, 118)) / 2 + 2
    price_rows = {row_of(chart, cl) + d for d in (-1, 0, 1)} | {
        row_of(chart, new_close) + d for d in (-1, 0, 1)}
    axis_left = chart.price_axis.mapToScene(QtCore.QPointF(0, 0)).x()
    axis_left += chart.view.viewport().mapTo(chart, QtCore.QPoint(0, 0)).x()
    in_candle = np.abs(xs - last_col) <= half
    on_price_line = np.isin(ys, list(price_rows))
    in_price_tag = xs >= axis_left  # the last-price tag on the axis moved with the close
    stray = ~(in_candle | on_price_line | in_price_tag)
    assert not stray.any(), list(zip(xs[stray][:10], ys[stray][:10]))
    # The candle now shows its new direction.
    y = (row_of(chart, o) + row_of(chart, new_close)) // 2
    assert after.pixelColor(last_col - 2, y) == (UP if new_close >= o else DOWN)


def test_append_follows_at_the_live_edge_and_stays_elsewhere(chart, qtbot):
    c = make_candles(500)
    chart.set_candles(c)
    chart.go_live()
    settle(qtbot)
    (x0, x1), _ = chart.price_view.viewRange()
    assert x0 < 499 < x1 and chart.cursor_index == 499
    r = c.row(-1)
    c.append(r.ts + 60_000, r.close, r.close + 0.5, r.close - 0.5, r.close + 0.25, 3.0,
             closed=False)
    chart.candles_changed("append")
    (nx0, nx1), _ = chart.price_view.viewRange()
    assert (nx0, nx1) == pytest.approx((x0 + 1, x1 + 1))  # scrolled one candle
    assert chart.cursor_index == 500  # the cursor rode along on the newest candle
    assert chart.frame().ends_at(501)
    chart.price_view.setXRange(99.5, 199.5, padding=0)  # the user looks at history
    chart.set_cursor(150)
    c.append(c.ts[-1] + 60_000, 100, 101, 99, 100.5, 1.0)
    chart.candles_changed("append")
    assert chart.price_view.viewRange()[0] == pytest.approx([99.5, 199.5])
    assert chart.cursor_index == 150
    chart.go_live()
    assert chart.visible_range()[1] == 502


def test_view_changes_are_announced_once_in_timestamps(chart, qtbot):
    c = make_candles(400)
    chart.set_candles(c)
    ranges, cursors = [], []
    chart.time_range_changed.connect(lambda t0, t1: ranges.append((t0, t1)))
    chart.cursor_moved.connect(cursors.append)
    chart.price_view.setXRange(199.5, 299.5, padding=0)  # as a mouse gesture does
    assert ranges == [(int(c.ts[200]), int(c.ts[300]))]  # ms beyond 32 bits, intact
    chart.pan(10)
    assert ranges[1:] == [(int(c.ts[210]), int(c.ts[310]))]
    assert chart.price_view.viewRange()[0] == pytest.approx([209.5, 309.5])
    chart.set_cursor(250)
    chart.set_cursor(250)  # again: nothing new to say
    assert cursors == [int(c.ts[250])] and cursors[0] > 2**32
    assert len(ranges) == 2  # the cursor was on screen: the view stayed
    r = c.row(-1)
    c.append(r.ts + 60_000, r.close, r.close, r.close, r.close, 1.0)
    chart.candles_changed("append")  # the view is in history: it stays, and says nothing
    assert len(ranges) == 2 and cursors == [int(c.ts[250])]


def test_setting_times_shows_those_candles_and_puts_the_cursor_there(chart, qtbot):
    c = make_candles(500)
    chart.set_candles(c)
    chart.show_time_range(int(c.ts[100]), int(c.ts[160]))
    settle(qtbot)
    assert chart.visible_range() == (100, 160)
    assert chart.time_range() == (int(c.ts[100]), int(c.ts[160]))
    assert chart.price_view.viewRange()[0] == pytest.approx([99.5, 159.5])
    assert list(chart.frame().x) == list(range(100, 160))
    chart.set_cursor_time(int(c.ts[130]) + 45_000)  # inside candle 130
    assert chart.cursor_index == 130 and chart.cursor_time == int(c.ts[130])
    for part in expected_readout_values(c, 130):
        assert part in chart.readout_text()
    chart.set_cursor_time(int(c.ts[400]))  # off screen: scrolled into view
    i0, i1 = chart.visible_range()
    assert chart.cursor_index == 400 and i0 <= 400 < i1


def test_charts_linked_both_ways_settle_after_one_announcement_each(qtbot):
    c = make_candles(600)
    charts = []
    for _ in range(2):
        widget = ChartWidget()
        qtbot.addWidget(widget)
        widget.resize(800, 500)
        widget.show()
        qtbot.waitExposed(widget)
        widget.set_candles(c)
        charts.append(widget)
    a, b = charts
    heard = {a: [], b: []}
    for one, other in ((a, b), (b, a)):  # a naive two-way link: no guard against echoes
        one.time_range_changed.connect(other.show_time_range)
        one.cursor_moved.connect(other.set_cursor_time)
        one.time_range_changed.connect(lambda *t, one=one: heard[one].append(t))
        one.cursor_moved.connect(lambda ts, one=one: heard[one].append(ts))
    a.price_view.setXRange(99.5, 199.5, padding=0)
    assert b.visible_range() == (100, 200)
    b.pan(-20)
    assert a.visible_range() == (80, 180)
    a.set_cursor(150)
    assert b.cursor_index == 150
    for chart in (a, b):
        assert heard[chart] == [(int(c.ts[100]), int(c.ts[200])), (int(c.ts[80]), int(c.ts[180])),
                                int(c.ts[150])]


def test_series_switch_reloads_cleanly(chart, qtbot):
    minutes = make_candles(1_000)
    chart.set_candles(minutes, SeriesKey("demo", "DEMO/USDT", ONE_MINUTE))
    chart.overlays.add_marker(int(minutes.ts[900]), 100.0, "up", group="annotations")
    chart.set_autoscale(False)
    chart.set_cursor(10)
    hours = make_candles(50, timeframe_ms=3_600_000, seed=9, tf="1h")
    chart.set_candles(hours, SeriesKey("binance", "ETH/USDT", parse_timeframe("1h")))
    settle(qtbot)
    assert chart.candles is hours and chart.cursor_index == 49
    assert chart.autoscale and chart.overlays.count() == 0
    i0, i1 = chart.visible_range()
    assert i1 == 50 and 0 <= i0 < 50
    assert "ETH/USDT 1h" in chart.title_label.text()
    for part in expected_readout_values(hours, 49):
        assert part in chart.readout_text()
    assert chart.frame().stop.max() <= 50
    chart.set_candles(Candles(ONE_MINUTE))  # an empty series is shown as such, not an error
    settle(qtbot)
    assert chart.readout_text() == "—" and chart.visible_range() == (0, 0)


def test_utc_and_local_labels(chart, qtbot, monkeypatch):
    monkeypatch.setenv("TZ", "IST-5:30")  # POSIX rule for UTC+05:30: no tz database needed
    import time as _time
    _time.tzset()
    try:
        c = make_candles(600)
        chart.set_candles(c)
        chart.price_view.setXRange(-0.5, 599.5, padding=0)
        chart.set_utc(True)
        utc_ticks = chart.time_axis.ticks
        assert "UTC" in chart.readout_text()
        chart.set_utc(False)
        local_ticks = chart.time_axis.ticks
        assert "local" in chart.readout_text()
        assert utc_ticks and local_ticks
        # Round local times are half past the UTC hour in +05:30.
        assert {t.ts % 3_600_000 for t in local_ticks} == {1_800_000}
        assert {t.ts % 3_600_000 for t in utc_ticks} == {0}
    finally:
        monkeypatch.delenv("TZ")
        _time.tzset()


def test_overlays_draw_where_they_belong_and_clear_by_group(chart, qtbot):
    c = make_candles(400)
    chart.set_candles(c)
    chart.price_view.setXRange(299.5, 399.5, padding=0)
    settle(qtbot)
    ts = c.ts
    rng = np.random.default_rng(0)
    for i in rng.integers(0, 400, 10_000):  # 10k markers, most outside the view
        chart.overlays.add_marker(int(ts[i]), float(c.low[i]), "up", "#ffff00", group="bulk")
    marker = chart.overlays.add_marker(int(ts[350]), float(c.high[350]) + 2, "down", "#ff00ff",
                                       group="notes")
    chart.overlays.add_range(int(ts[310]), int(ts[320]), "#0000ff40", label="zone",
                             group="notes")
    chart.overlays.add_segment(int(ts[330]), float(c.low[330]), int(ts[340]),
                               float(c.high[340]), "#00ffff", dashed=False, group="notes")
    chart.overlays.add_label(int(ts[360]), float(c.high[360]), "hello", "#ffffff", group="notes")
    chart.overlays.set_ghost(int(ts[-1]) + 60_000, 100, 101, 99, 100.5, "#b388ff")
    assert chart.overlays.count("bulk") == 10_000 and chart.overlays.count("notes") == 4
    settle(qtbot)
    img = chart.grab().toImage()
    # The ▼ sits just above its price, centred on its candle.
    mx = column_of(chart, 350)
    my = row_of(chart, float(c.high[350]) + 2)
    assert img.pixelColor(mx, my - 4) == pg.mkColor("#ff00ff")
    # The range shades its candles, not the ones outside it.
    band_y = row_of(chart, float(c.high[300:400].max()))
    assert img.pixelColor(column_of(chart, 315), band_y).blue() > img.pixelColor(
        column_of(chart, 325), band_y).blue()
    assert chart.overlays.remove(marker) and not chart.overlays.remove(marker)
    assert chart.overlays.clear("bulk") == 10_000
    assert chart.overlays.count() == 3
    settle(qtbot)
    img = chart.grab().toImage()
    assert img.pixelColor(mx, my - 4) != pg.mkColor("#ff00ff")
    chart.overlays.clear()
    assert chart.overlays.count() == 0 and chart.overlays.ghost is None


def test_a_million_candles_paint_per_pixel_column_colours_from_the_data(chart, qtbot):
    n, block = 1_000_000, 50_000
    k = np.arange(n)
    up_block = (k // block) % 2 == 0
    step = np.where(up_block, 0.01, -0.01)
    close = 100 + np.cumsum(step)
    open_ = close - step
    high = np.maximum(open_, close) + 0.005
    low = np.minimum(open_, close) - 0.005
    ts = T0 + k.astype(np.int64) * 60_000
    c = Candles.from_arrays(ts, open_, high, low, close, np.ones(n), ONE_MINUTE, validate=False)
    chart.set_candles(c)
    chart.fit_all()
    chart.set_cursor(0)
    settle(qtbot)
    frame = chart.frame()
    assert frame.columns and len(frame) <= chart.price_view.width() + 1
    img = chart.grab().toImage()
    origin = chart.view.viewport().mapTo(chart, QtCore.QPoint(0, 0))
    for b in range(n // block):
        x = column_of(chart, b * block + block // 2)
        # The candle in the middle of pixel column x: the column's line must cover its close.
        mid = chart.price_view.mapSceneToView(QtCore.QPointF(x + 0.5 - origin.x(), 0)).x()
        centre = int(round(mid))
        y = row_of(chart, float(close[centre]))
        want = UP if up_block[centre] else DOWN
        assert img.pixelColor(x, y) == want, (b, img.pixelColor(x, y).name())
        # Above the block's highest high there is no candle colour in that column.
        above = row_of(chart, float(high[b * block:(b + 1) * block].max())) - 4
        assert img.pixelColor(x, above) not in (UP, DOWN)


def test_the_time_tag_hides_the_labels_it_would_touch_and_repaints_them_whole(chart, qtbot):
    from workstation.ui.chart.axis import Tag

    chart.set_candles(make_candles(300, seed=2))
    chart.resize(900, 400)
    settle(qtbot)
    axis = chart.time_axis
    labels = axis.shown_ticks()
    assert len(labels) >= 3
    x1, label1 = labels[2]
    to_x = axis._view_to_local()
    updated: list[QtCore.QRectF] = []
    original = axis.update
    axis.update = lambda *rect: (updated.append(QtCore.QRectF(*rect)), original(*rect))
    text = "2023-11-14 04:10"
    width = axis._metrics.horizontalAdvance(text) + 12
    # The tag's right edge ends 2 px into the label at x1: that label goes.
    right = x1 - axis._metrics.horizontalAdvance(label1) / 2 + 2
    value = (right - width / 2 - to_x.dx()) / to_x.m11()
    axis.set_tag("cross", Tag(value, text, pg.mkColor("w"), pg.mkColor("k")))
    shown = {label: x for x, label in axis.shown_ticks()}
    assert label1 not in shown
    tag = axis._tag_rect(axis.tag("cross"))
    for label, x in shown.items():  # every label left is clear of the tag
        half = axis._metrics.horizontalAdvance(label) / 2
        assert x + half < tag.left() or x - half > tag.right(), (label, x, tag)
    axis.set_tag("cross", None)  # gone: the label comes back, repainted whole
    assert (x1, label1) in axis.shown_ticks()
    half = axis._metrics.horizontalAdvance(label1) / 2
    whole = QtCore.QRectF(x1 - half, 0, 2 * half, axis.size().height()).toAlignedRect()
    assert updated[-1].toAlignedRect().contains(whole), (updated[-1], whole)


def test_a_pan_that_keeps_the_ticks_repaints_the_time_axis(chart, qtbot):
    chart.set_candles(make_candles(3000))
    chart.resize(1200, 500)
    settle(qtbot)
    axis = chart.time_axis
    chart.grab()  # painted: nothing is pending
    updated = []
    original = axis.update
    axis.update = lambda *rect: (updated.append(rect), original(*rect))
    ticks = list(axis.ticks)
    chart.view_model.pan(-1)  # one candle: the same ticks, every label one candle right
    assert axis.ticks == ticks
    assert () in updated  # the whole axis, not only what a tag touches


def test_a_moving_price_tag_repaints_whole_the_labels_it_hides_and_shows_again(chart, qtbot):
    from workstation.ui.chart.axis import Tag

    chart.set_candles(make_candles(120, seed=5))
    chart.set_autoscale(False)
    settle(qtbot)
    axis = chart.price_axis
    text_h = axis._metrics.height()
    to_y = axis._view_to_local()
    level = float(axis.values[len(axis.values) // 2])
    step = float(axis.values[1] - axis.values[0])
    updated: list[QtCore.QRectF] = []
    original = axis.update
    axis.update = lambda *rect: (updated.append(QtCore.QRectF(*rect)), original(*rect))
    # The tag sits just beside a label (hiding it), then moves two labels away (showing it).
    for value in (level + step * 0.35, level + step * 2.5):
        axis.set_tag("cross", Tag(value, f"{value:.2f}", pg.mkColor("w"), pg.mkColor("k")))
    y = to_y.m22() * level + to_y.dy()
    label = QtCore.QRectF(0, y - text_h / 2, axis.size().width(), text_h)
    region = QtGui.QRegion()
    for rect in updated:
        region = region.united(rect.toAlignedRect())
    assert region.contains(label.toAlignedRect()), (label, updated)


def test_a_narrow_chart_shows_the_compact_readout_and_the_full_one_as_its_tooltip(chart,
                                                                                  qtbot):
    from workstation.ui.chart.readout import format_readout

    c = make_candles(300)
    chart.set_candles(c, SeriesKey("demo", "DEMO/USDT", ONE_MINUTE))
    chart.set_cursor(250)
    full = chart.readout_text()
    assert "UTC" in full and " V " in full
    compact = format_readout(c, 250, chart._decimals, True, compact=True)
    box = chart.readout_label.parentWidget()
    metrics = chart.readout_label.fontMetrics()
    shown = []
    for width in (560, 480, 420):  # a chart of the 2x2 layout on a small screen, then narrower
        chart.resize(width, 400)
        settle(qtbot)
        text = chart.readout_text()
        assert metrics.horizontalAdvance(text) <= box.width(), (width, text)
        assert text != full and chart.readout_label.toolTip() == full
        assert compact.startswith(text.rstrip("…")) and len(text) > 10
        shown.append(text)
    assert shown[0] == compact and shown[-1].endswith("…")  # then even it is cut
    chart.resize(1600, 400)
    settle(qtbot)
    assert chart.readout_text() == full and chart.readout_label.toolTip() == ""


def test_a_narrow_chart_shortens_its_title_first_and_keeps_it_through_ticks(chart, qtbot):
    c = make_candles(300)
    key = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
    chart.set_candles(c, key)
    chart.set_title_note("kept")
    full, short = f"{key.provenance}  ·  kept", f"{key.short_provenance}  ·  kept"
    assert short == "DEMO/USDT 1m  ·  kept"
    chart.resize(700, 400)  # a chart of the 2x2 layout
    settle(qtbot)
    assert chart.title_label.text() == short and chart.title_label.toolTip() == full
    for i in range(250, 260):  # the readout changes length; the title stays
        chart.set_cursor(i)
        assert chart.title_label.text() == short
    chart.resize(1600, 400)
    settle(qtbot)
    assert chart.title_label.text() == full and chart.title_label.toolTip() == ""


def test_at_the_fit_boundary_the_title_shortens_before_the_readout(chart, qtbot):
    c = make_candles(300)
    key = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
    chart.set_candles(c, key)
    chart.set_cursor(250)
    header, full = chart.header, chart.readout_text()
    chart.resize(1600, 400)
    settle(qtbot)
    assert chart.title_label.text() == key.provenance  # the size hint it is measured by:
    assert header.title_width(key.provenance) == chart.title_label.sizeHint().width()
    needed = header.title_width(key.provenance) + header.readout.full_width + 8 + 8 + 16
    for width in range(needed - 3, needed + 4):
        chart.resize(width, 400)
        settle(qtbot)
        title_full = chart.title_label.text() == key.provenance
        assert title_full == (width >= needed), width
        if chart.readout_text() != full:  # the readout compacts only after the title
            assert not title_full, width
    # A resize or a new title decides afresh, without the slack a tick-made switch needs:
    chart.resize(40, 400)
    settle(qtbot)
    assert chart.title_label.text() == key.short_provenance
    chart.resize(needed + 2, 400)
    settle(qtbot)
    assert chart.title_label.text() == key.provenance
    chart.set_title_note("x")
    note = f"{key.provenance}  ·  x"
    chart.resize(needed + header.title_width(note) - header.title_width(key.provenance) + 1,
                 400)
    settle(qtbot)
    assert chart.title_label.text() == note
    chart.set_title_note("y")  # as wide: still fits
    assert chart.title_label.text() == f"{key.provenance}  ·  y"


def test_the_short_provenance_still_says_demo_and_names_a_file_without_its_folder():
    assert SeriesKey("demo", "BTC/USDT",
                     parse_timeframe("1h")).short_provenance == "DEMO BTC/USDT 1h"
    assert SeriesKey("demo", "DEMOCOIN/USDT", ONE_MINUTE).short_provenance == \
        "DEMO DEMOCOIN/USDT 1m"
    assert SeriesKey("csv:C:\\Data\\BTC.csv", "BTC/USDT", ONE_MINUTE).short_provenance == \
        "btc.csv BTC/USDT 1m"
    assert SeriesKey("csv:/data/", "ETH/USDT", ONE_MINUTE).short_provenance == \
        "csv:/data/ ETH/USDT 1m"  # no name to show: the whole source
    assert SeriesKey("csv:/home/t/data/eth.csv", "ETH/USDT", ONE_MINUTE).short_provenance == \
        "eth.csv ETH/USDT 1m"
    assert SeriesKey("binance", "ETH/USDT",
                     parse_timeframe("1d")).short_provenance == "binance ETH/USDT 1d"


def test_pyramid_keeps_no_fine_levels_and_still_answers_every_width():
    from workstation.ui.chart.pyramid import FIRST

    c = make_candles(50_000, seed=5)
    pyr = CandlePyramid(c)
    kept = sum(pyr._arrays(k)[3] for k in range(FIRST, pyr.top + 1))
    assert kept <= len(c) / 2 ** (FIRST - 1) + pyr.levels  # 3 bytes a candle, not 24
    rng = np.random.default_rng(2)
    for width in (1, 3, 7, 15, 16, 17, 31, 33, 100, 1_000):
        start = int(rng.integers(0, 40))
        edges = np.arange(start, len(c) + width, width)
        cols = pyr.columns(edges)
        for j in rng.integers(0, len(cols.column), 20):
            a, b = int(cols.start[j]), int(cols.stop[j])
            assert cols.high[j] == c.high[a:b].max() and cols.low[j] == c.low[a:b].min()
        for a in rng.integers(0, len(c) - width, 20):
            low, high, _ = pyr.range_stats(a, a + width)
            assert (low, high) == (c.low[a:a + width].min(), c.high[a:a + width].max())
