"""The chart area: layouts by key (remembered), a timeframe per chart resampled from chart 1's
live candles, Ctrl+N makes chart N active, sync by time with one driver per gesture, the
crosshair's span and lower timeframes' windows marked, annotations on every timeframe."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from workstation.annotations.model import Direction, Trade
from workstation.market.candles import CandleUpdate
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframe_stack import first_complete_bucket
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.ui.chart import ChartWidget
from workstation.ui.chart_area import OUTLINE, ChartArea
from workstation.ui.help import palette_entries
from workstation.viewmodel.chart import view_limits

from conftest import Key

END = 1_767_225_600_000
HOUR = 3_600_000
CTRL = QtCore.Qt.KeyboardModifier.ControlModifier
ALT = QtCore.Qt.KeyboardModifier.AltModifier
KEY = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)


@pytest.fixture
def settings(tmp_path):
    return QtCore.QSettings(str(tmp_path / "charts.ini"), QtCore.QSettings.Format.IniFormat)


@pytest.fixture
def make_area(qtbot, settings):
    """``make_area(n=6000)``: a chart area in a window of its own showing ``n`` demo 1m
    candles, its active chart focused (the windows are kept until the test ends)."""
    windows = []

    def make(n: int = 6000) -> ChartArea:
        window = QtWidgets.QMainWindow()
        qtbot.addWidget(window)
        windows.append(window)
        chart = ChartWidget(window)
        area = ChartArea(chart, settings, None, window)
        window.setCentralWidget(area)
        window.resize(1600, 900)
        window.show()
        qtbot.waitExposed(window)
        area.set_base(demo_candles(n, ONE_MINUTE, seed=5, end_ts=END + 17 * 60_000), KEY)
        window.activateWindow()
        area.active_chart.view.setFocus()
        qtbot.waitUntil(area.active_chart.view.hasFocus)
        return area

    return make


def settle(qtbot) -> None:
    """Let the area flush its links (once per event loop turn)."""
    QtWidgets.QApplication.processEvents()
    qtbot.wait(1)


def from_base(area, tf: str):
    """What the chart of ``tf`` should hold: chart 1's candles resampled from their first
    complete bucket."""
    return from_base_of(area.stack.base, tf)


def from_base_of(base, tf: str):
    start = first_complete_bucket(int(base.ts[0]), parse_timeframe(tf))
    return base.slice(int(np.searchsorted(base.ts, start)), len(base)).resample(
        parse_timeframe(tf))


def test_layouts_switch_by_key_and_are_remembered(qtbot, make_area):
    area = make_area()
    assert area.layout_name == "one" and len(area.shown()) == 1
    for key, name, cells in ((Key.Key_2, "side_by_side", 2), (Key.Key_3, "stacked", 2),
                             (Key.Key_4, "four", 4)):
        QTest.keyClick(area.primary.view, key, ALT)
        assert area.layout_name == name and len(area.shown()) == cells
        assert all(frame.isVisible() for frame in area.frames[:cells])
    side = area.frames[1].geometry()
    assert side.left() > area.frames[0].geometry().left()  # chart 2 right of chart 1
    assert area.frames[2].geometry().top() > area.frames[0].geometry().top()  # 3 below 1
    assert [area.timeframe_of(i).name for i in range(4)] == ["1m", "15m", "1h", "1d"]
    area.focus_chart(2)
    qtbot.waitUntil(area.charts[2].view.hasFocus)
    QTest.keyClick(area.charts[2].view, Key.Key_BracketRight)  # 1h -> 4h
    assert area.timeframe_of(2).name == "4h"
    assert area.charts[2].candles.timeframe.name == "4h"
    area.toggle_link("crosshair")
    area.window().close()
    again = make_area()  # a new window with the same settings
    assert again.layout_name == "four"
    assert [again.timeframe_of(i).name for i in range(4)] == ["1m", "15m", "4h", "1d"]
    assert again.active == 2
    assert again.group.time and again.group.symbol and not again.group.crosshair
    assert not again.command_actions["chart.link_crosshair"].isChecked()


def test_timeframe_keys_step_the_active_chart(qtbot, make_area):
    area = make_area()
    area.set_layout("side_by_side")
    with qtbot.waitSignal(area.base_timeframe_requested) as shorter:
        QTest.keyClick(area.primary.view, Key.Key_BracketLeft)
    assert shorter.args == ["1s"]
    area.focus_chart(1)
    qtbot.waitUntil(area.charts[1].view.hasFocus)
    assert area.active == 1
    QTest.keyClick(area.charts[1].view, Key.Key_BracketLeft)  # 15m -> 5m, over 1m candles
    assert area.timeframe_of(1).name == "5m"
    for _ in range(3):
        QTest.keyClick(area.charts[1].view, Key.Key_BracketLeft)
    assert area.timeframe_of(1).name == "1m"  # no shorter timeframe than chart 1's


def test_every_tick_the_higher_charts_equal_the_aggregate_of_chart_1(qtbot, make_area):
    area = make_area()
    area.set_layout("four")
    base = area.stack.base
    rng = np.random.default_rng(2)
    price = float(base.close[-1])
    ts = int(base.ts[-1])
    start = [len(chart.candles) for chart in area.shown()]
    for _ in range(130):  # across 15m and 1h boundaries
        ts += 60_000
        o = h = l = c = price
        v = 0.0
        for j in range(3):
            c *= 1 + rng.normal(0, 1e-3)
            h, l, v = max(h, c), min(l, c), v + float(rng.uniform(0, 2))
            kind = base.apply(CandleUpdate(ts, o, h, l, c, v, j == 2))
            area.base_changed(kind)
            for i, tf in ((1, "15m"), (2, "1h"), (3, "1d")):
                chart = area.charts[i]
                want = from_base(area, tf)
                assert chart.candles is area.stack.candles(parse_timeframe(tf))
                for got, exp in zip(chart.candles.columns(), want.columns()):
                    assert np.array_equal(got, exp)
                assert chart.candles.last_closed == want.last_closed
        price = c
    assert len(area.charts[1].candles) == start[1] + 8  # 00:17 .. 02:26: 00:30 .. 02:15
    assert len(area.charts[2].candles) == start[2] + 2
    # the 1h chart's forming candle is on screen with its latest close
    hourly = area.charts[2]
    assert hourly.frame().ends_at(len(hourly.candles))
    assert hourly.price_line.price == pytest.approx(float(base.close[-1]))


def test_ctrl_n_makes_chart_n_active_outlined_and_its_keys_act(qtbot, make_area):
    area = make_area()
    assert area.layout_name == "one" and not area.frames[0].active
    area.set_layout("four")
    settle(qtbot)
    assert area.active == 0 and area.frames[0].active  # outlined as soon as there are four
    assert not any(f.active for f in area.frames[1:])
    QTest.keyClick(area.primary.view, Key.Key_3, CTRL)
    qtbot.waitUntil(area.charts[2].view.hasFocus)
    assert area.active == 2 and area.frames[2].active
    assert not any(f.active for i, f in enumerate(area.frames) if i != 2)
    image = area.frames[2].grab().toImage()
    assert QtGui.QColor(image.pixel(0, image.height() // 2)) == QtGui.QColor(OUTLINE)
    other = area.frames[1].grab().toImage()
    assert QtGui.QColor(other.pixel(0, other.height() // 2)) != QtGui.QColor(OUTLINE)
    cursors = [c.cursor_index for c in area.shown()]
    QTest.keyClick(area.charts[2].view, Key.Key_Left)
    assert area.charts[2].cursor_index == cursors[2] - 1
    assert [c.cursor_index for c in area.shown()][:2] == cursors[:2]  # the others kept theirs
    QTest.keyClick(area.charts[2].view, Key.Key_1, CTRL)
    qtbot.waitUntil(area.primary.view.hasFocus)
    assert area.active == 0
    area.set_layout("one")
    assert not area.frames[0].active  # a single chart needs no outline
    QTest.keyClick(area.primary.view, Key.Key_2, CTRL)  # chart 2 is not shown: it comes
    assert area.layout_name == "side_by_side" and area.active == 1


def test_a_pan_of_one_chart_moves_the_others_once_by_time(qtbot, make_area):
    area = make_area(n=30_000)
    area.set_layout("four")
    settle(qtbot)
    moves = [0, 0, 0, 0]
    for i, chart in enumerate(area.shown()):
        chart.time_range_changed.connect(lambda *_a, i=i: moves.__setitem__(i, moves[i] + 1))
    for _ in range(4):  # four pans within one frame, 166 hours back in all
        area.primary.pan(-2500)
    assert moves == [4, 0, 0, 0]
    settle(qtbot)
    assert moves[1] == moves[2] == 1  # followed once; the 1d chart may sit at its limit
    centre = sum(area.primary.time_range()) / 2
    for chart in area.shown()[1:3]:
        assert abs(sum(chart.time_range()) / 2 - centre) <= chart.candles.timeframe.ms / 500
    settle(qtbot)
    assert moves[:3] == [4, 1, 1]  # nothing looped back
    # the lower timeframes' windows are shaded on the higher charts
    assert area.charts[2].link_marks.windows == [area.primary.time_range(),
                                                 area.charts[1].time_range()]
    assert area.primary.link_marks.windows == []
    QTest.keyClick(area.primary.view, Key.Key_T, CTRL | QtCore.Qt.KeyboardModifier.ShiftModifier)
    assert not area.group.time
    area.primary.pan(-100)
    settle(qtbot)
    assert moves[1] == 1 and area.charts[2].link_marks.windows == []


def test_new_candles_scroll_the_live_charts_and_never_move_the_one_the_trader_placed(
        qtbot, make_area):
    area = make_area()
    area.set_layout("four")
    settle(qtbot)
    area.primary.pan(-60)  # an hour back: chart 1 stops following live, the others follow it
    settle(qtbot)
    quarter = area.charts[1]
    assert quarter.view_model.follow_live and not area.primary.view_model.follow_live
    held = area.primary.time_range()
    base = area.stack.base
    ts, price = int(base.ts[-1]), float(base.close[-1])
    for _ in range(20):  # closes a 15m candle: the 15m chart scrolls by one
        ts += 60_000
        area.base_changed(base.apply(CandleUpdate(ts, price, price, price, price, 1.0, True)))
        settle(qtbot)
    assert area.primary.time_range() == held
    view = quarter.view_model  # it rejoined chart 1's time, as near as its limit lets it
    at_limit = view.x_range()[1] == view_limits(len(view.time_map)).x_max
    gap = sum(quarter.time_range()) / 2 - sum(held) / 2
    assert at_limit or abs(gap) <= 900
    assert area.charts[2].link_marks.windows[1] == quarter.time_range()  # its shade with it


def test_the_crosshair_marks_its_candles_span_on_the_other_charts(qtbot, make_area):
    area = make_area()
    area.set_layout("four")
    settle(qtbot)
    chart = area.primary
    x0, x1 = chart.view_model.x_range()
    pos = chart.price_view.mapViewToScene(QtCore.QPointF((x0 + x1) / 2,
                                                         float(chart.candles.close[-1])))
    chart._on_mouse_moved(pos)  # the scene's mouse-move signal, as Qt sends it
    ts = chart.view_model.time_map.ts_of((x0 + x1) / 2)
    settle(qtbot)
    hour = ts - ts % HOUR
    assert area.charts[2].link_marks.span == (hour, hour + HOUR)
    assert area.charts[1].link_marks.span == (ts - ts % 900_000, ts - ts % 900_000 + 900_000)
    assert chart.link_marks.span is None
    QTest.keyClick(chart.view, Key.Key_X, CTRL | QtCore.Qt.KeyboardModifier.ShiftModifier)
    assert area.charts[2].link_marks.span is None


def test_the_daily_chart_follows_minute_pans_within_half_a_pixel_and_repaints_less(qtbot,
                                                                                   make_area):
    from workstation.bench.chart import count_paints

    area = make_area(n=400_000)  # 278 days: the daily chart can follow
    area.set_layout("four")
    settle(qtbot)
    daily, quarter = area.charts[3], area.charts[1]
    area.primary.pan(-200_000)  # into the history, where every chart can follow
    settle(qtbot)
    paints = [count_paints(chart.view.viewport()) for chart in (quarter, daily)]
    for _ in range(20):  # 20 minutes each: a fraction of a pixel on the daily chart
        area.primary.pan(-20)
        settle(qtbot)
        centre = sum(area.primary.time_range()) / 2
        half_pixel = daily.view_model.min_follow_x * daily.candles.timeframe.ms
        assert abs(sum(daily.time_range()) / 2 - centre) <= half_pixel + 1
    assert paints[0].count >= 20  # the 15m chart moves every time
    assert paints[1].count < 20  # the daily one only when a pixel changes


def test_an_unlinked_chart_keeps_its_view_and_its_symbol(qtbot, make_area):
    area = make_area()
    area.set_layout("side_by_side")
    settle(qtbot)
    area.activate(1)
    QTest.keyClick(area.charts[1].view, Key.Key_L, CTRL | QtCore.Qt.KeyboardModifier.ShiftModifier)
    assert 1 in area.unlinked
    before = area.charts[1].time_range()
    area.primary.pan(-300)
    settle(qtbot)
    assert area.charts[1].time_range() == before
    shown = area.charts[1].candles
    other = demo_candles(3000, ONE_MINUTE, seed=9, end_ts=END)
    area.set_base(other, SeriesKey("demo", "BTC/USDT", ONE_MINUTE))
    assert area.charts[1].candles is shown  # not linked by symbol: it kept ETH's candles
    assert "not live" in area.charts[1].title_label.text()
    area.activate(1)
    area.toggle_active_link()  # linked again: it shows chart 1's symbol
    assert area.charts[1].candles is area.stack.candles(parse_timeframe("15m"))
    assert len(area.charts[1].candles) == len(from_base(area, "15m"))


def test_a_1s_base_feeds_minute_and_hour_charts(qtbot, make_area):
    area = make_area()
    area.set_layout("four")
    seconds = demo_candles(7200, parse_timeframe("1s"), seed=4, end_ts=END)
    area.set_base(seconds, SeriesKey("demo", "DEMO/USDT", parse_timeframe("1s")))
    assert [area.timeframe_of(i).name for i in range(4)] == ["1s", "15m", "1h", "1d"]
    assert len(area.charts[2].candles) == len(from_base(area, "1h"))


@pytest.fixture
def window(qtbot, paths):
    from workstation.ui.main_window import MainWindow

    win = MainWindow(paths)
    qtbot.addWidget(win)
    win.resize(1500, 900)
    win.show()
    qtbot.waitExposed(win)
    win.live.candles = demo_candles(3000, ONE_MINUTE, seed=3, end_ts=END)
    win.live.key = KEY
    win.live.candles_changed.emit("reset")
    yield win
    asyncio.run(win.shutdown())


def test_main_window_ctrl_n_brings_the_charts_forward_from_the_training_tab(window, qtbot):
    one = [label for label, _action in palette_entries(window)]
    assert "Chart: Zoom in" in one  # one chart: the hidden ones offer nothing
    assert not any("(chart" in label for label in one)
    QTest.keyClick(window.chart.view, Key.Key_4, ALT)
    assert window.chart_area.layout_name == "four"
    tabs = window.centre_tabs
    tabs.setCurrentIndex(1)  # the training workspace in front
    qtbot.waitUntil(lambda: not window.chart.view.isVisible())
    window.data_bar.symbol.setFocus()
    QTest.keyClick(window.data_bar.symbol, Key.Key_3, CTRL)
    qtbot.waitUntil(window.chart_area.charts[2].view.hasFocus)
    assert tabs.currentIndex() == 0 and window.chart_area.active == 2
    window.cheat_sheet.open()
    rows = window.cheat_sheet.rows()
    assert ("Ctrl+4", "Focus chart 4") in rows and ("Alt+4", "Four charts (2x2)") in rows
    charts = window.chart_area.charts
    window.chart_area.focus_chart(0)
    qtbot.waitUntil(charts[0].view.hasFocus)
    for i in (1, 2, 3):  # Tab walks the charts in reading order
        QTest.keyClick(QtWidgets.QApplication.focusWidget(), Key.Key_Tab)
        qtbot.waitUntil(charts[i].view.hasFocus)
        assert window.chart_area.active == i
    labels = [label for label, _action in palette_entries(window)]
    assert len(labels) == len(set(labels))  # four charts' commands, each saying whose
    assert "Chart: Zoom in (chart3)" in labels and "Charts: Focus chart 3" in labels


def test_annotations_of_any_timeframe_show_on_every_chart(window, qtbot):
    area = window.chart_area
    area.set_layout("four")
    c = window.live.candles
    hourly = Trade(symbol=KEY.symbol, market=KEY.market.kind, timeframe="1h",
                   direction=Direction.LONG, entry_ts=int(c.ts[-600]) - int(c.ts[-600]) % HOUR,
                   entry_price=100.0, exit_ts=int(c.ts[-200]) - int(c.ts[-200]) % HOUR,
                   exit_price=101.0)
    window.annotations.store.add(hourly)
    linked = window.linked_annotations
    for i in (1, 2, 3):
        assert hourly.id in linked.on(area.charts[i]).trades
    assert hourly.id in linked.on(area.primary).trades  # another timeframe's, on chart 1
    minute = Trade(symbol=KEY.symbol, market=KEY.market.kind, timeframe="1m",
                   direction=Direction.SHORT, entry_ts=int(c.ts[-100]), entry_price=100.0,
                   exit_ts=int(c.ts[-50]), exit_price=99.0)
    window.annotations.store.add(minute)
    assert minute.id not in linked.on(area.primary).trades  # its own layer draws it
    assert minute.id in window.annotations.graphics.trades
    assert minute.id in linked.on(area.charts[3]).trades
    window.annotations.store.delete(hourly.id)
    assert all(hourly.id not in linked.on(chart).trades for chart in area.shown())


def test_the_annotation_keys_act_on_the_active_chart_in_its_timeframe(window, qtbot):
    area, layer = window.chart_area, window.annotations
    area.set_layout("four")
    hourly = area.charts[2]
    area.focus_chart(2)
    qtbot.waitUntil(hourly.view.hasFocus)
    assert layer.target is hourly and layer.series == (KEY.market, "1h")
    assert "1h · chart 3 (1h)" in layer.dock.series_label.text()
    hourly.set_cursor(len(hourly.candles) - 40)
    QTest.keyClick(hourly.view, Key.Key_L)  # a long entry on the hourly chart ...
    assert layer.tools.pending is not None
    area.focus_chart(0)
    qtbot.waitUntil(window.chart.view.hasFocus)
    assert layer.target is window.chart and layer.tools.pending is None  # ... not chart 1's
    area.focus_chart(2)
    qtbot.waitUntil(hourly.view.hasFocus)
    assert layer.tools.pending is not None  # it waited on its own chart
    for _ in range(5):
        QTest.keyClick(hourly.view, Key.Key_Right)
    QTest.keyClick(hourly.view, Key.Key_X)
    [trade] = window.annotations.store.list()
    c = hourly.candles
    assert trade.timeframe == "1h" and trade.symbol == KEY.symbol
    assert (trade.entry_ts, trade.exit_ts) == (int(c.ts[-40]), int(c.ts[-35]))
    assert trade.exit_price == float(c.close[-35])
    assert layer.model.rowCount() == 1  # the list holds the active chart's series
    for chart in area.shown():  # and every chart of the market shows it
        assert trade.id in window.linked_annotations.on(chart).trades
    assert trade.id not in layer.graphics.trades  # chart 1's own layer: its 1m marks only

    quarter = area.charts[1]  # 15m: a region from a mark
    area.focus_chart(1)
    qtbot.waitUntil(quarter.view.hasFocus)
    quarter.set_cursor(quarter.candles.index_of(trade.entry_ts + 15 * 60_000))
    QTest.keyClick(quarter.view, Key.Key_Delete)  # the hourly trade is not this chart's
    assert window.annotations.store.list() == [trade]
    assert layer.last_message == ("No 15m annotation on the cursor candle; the 1h ones drawn "
                                  "there are edited on a chart of their timeframe")
    quarter.set_cursor(len(quarter.candles) - 30)
    QTest.keyClick(quarter.view, Key.Key_M)
    for _ in range(8):
        QTest.keyClick(quarter.view, Key.Key_Right)
    QTest.keyClick(quarter.view, Key.Key_1)
    [region] = [a for a in window.annotations.store.list() if a.id != trade.id]
    q = quarter.candles
    assert (region.timeframe, region.label) == ("15m", "uptrend")
    assert (region.start_ts, region.end_ts) == (int(q.ts[-30]), int(q.ts[-22]))

    area.focus_chart(2)  # Del on the hourly chart deletes the hourly trade; Ctrl+Z undoes it
    qtbot.waitUntil(hourly.view.hasFocus)
    hourly.set_cursor(len(hourly.candles) - 38)
    QTest.keyClick(hourly.view, Key.Key_Delete)
    assert [a.id for a in window.annotations.store.list()] == [region.id]
    assert all(trade.id not in window.linked_annotations.on(chart).trades
               for chart in area.shown())
    QTest.keyClick(hourly.view, Key.Key_Z, CTRL)
    assert len(window.annotations.store.list()) == 2
    QTest.keyClick(hourly.view, Key.Key_Home)
    QTest.keyClick(hourly.view, Key.Key_N)  # the next annotation of this chart's series
    assert hourly.cursor_index == len(hourly.candles) - 40
    assert layer.selected is not None and layer.selected.id == trade.id
    assert window.linked_annotations.on(hourly).selected.id == trade.id
    assert window.linked_annotations.on(area.charts[1]).selected is None


def test_marks_on_a_chart_that_kept_another_symbol_are_refused(window, qtbot):
    area = window.chart_area
    area.set_layout("side_by_side")
    area.toggle_link("symbol")  # unlinked: chart 2 keeps DEMO/USDT when chart 1 switches
    window.live.key = SeriesKey("demo", "OTHER/USDT", ONE_MINUTE)
    window.live.candles_changed.emit("reset")
    assert 1 in area.frozen
    area.focus_chart(1)
    qtbot.waitUntil(area.charts[1].view.hasFocus)
    QTest.keyClick(area.charts[1].view, Key.Key_L)
    assert "another symbol's candles, not live" in window.statusBar().currentMessage()
    assert window.annotations.tools.pending is None


def test_damaged_layout_settings_fall_back_to_the_defaults(qtbot, make_area, settings):
    settings.setValue("charts/timeframes", ["1m", "7m", "1h", "1d"])
    settings.setValue("charts/layout", "nine")
    settings.setValue("charts/active", "x")
    area = make_area()
    assert area.layout_name == "one" and area.active == 0
    area.set_layout("four")
    assert [area.timeframe_of(i).name for i in range(4)] == ["1m", "15m", "1h", "1d"]


def test_older_candles_of_a_higher_timeframe_come_from_the_cache(qtbot, tmp_path, settings):
    from workstation.market.cache import CandleCache

    key = SeriesKey("binance", "ETH/USDT", ONE_MINUTE)
    base = demo_candles(3000, ONE_MINUTE, seed=6, end_ts=END + 20 * 60_000)  # from hh:21
    first_hour = int(base.ts[0]) - int(base.ts[0]) % HOUR
    # to the partial hour
    hourly = demo_candles(200, parse_timeframe("1h"), seed=8, end_ts=first_hour + HOUR)
    with CandleCache(tmp_path / "cache.sqlite") as cache:
        cache.put(SeriesKey("binance", "ETH/USDT", parse_timeframe("1h")), hourly)
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    area = ChartArea(ChartWidget(window), settings, tmp_path / "cache.sqlite", window)
    window.setCentralWidget(area)
    area.set_layout("four")
    area.set_base(base, key)
    shown = area.charts[2].candles
    assert shown.timeframe.name == "1h"
    assert np.array_equal(shown.ts[:200], hourly.ts)  # the cache's, the partial hour included
    assert np.array_equal(shown.close[:200], hourly.close)
    from_base = shown.slice(200, len(shown))
    want = from_base_of(base, "1h")
    assert np.array_equal(from_base.ts, want.ts) and np.array_equal(from_base.high, want.high)
    assert len(area.charts[3].candles) == len(from_base_of(base, "1d"))  # no 1d in the cache


@pytest.mark.parametrize("spec, fed", [("binance", True), ("cache:binance", False)])
def test_a_kept_chart_gets_a_feed_only_where_chart_1_streamed(qtbot, settings, tmp_path, spec,
                                                               fed):
    from workstation.ui.live_data import LiveData

    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    feed = LiveData(tmp_path / "cache.sqlite")
    feed.spec = spec  # what chart 1 was opened from: the exchange, or the cache
    area = ChartArea(ChartWidget(window), settings, None, window, feed=feed)
    window.setCentralWidget(area)
    area.set_layout("side_by_side")
    eth = SeriesKey("binance", "ETH/USDT", ONE_MINUTE)
    area.set_base(demo_candles(3000, ONE_MINUTE, seed=5, end_ts=END), eth)
    area.toggle_link("symbol")
    area.set_base(demo_candles(3000, ONE_MINUTE, seed=9, end_ts=END),
                  SeriesKey("binance", "BTC/USDT", ONE_MINUTE))
    assert area.kept == {1: eth} and (eth in area.feeds) == fed
    note = area.charts[1].title_label.text()
    assert ("ETH/USDT: connecting" in note) == fed  # no event loop here: it never connects
    assert ("another symbol: not live" in note) == (not fed)
    area.toggle_link("symbol")  # linked again: it follows chart 1, its feed is closed
    assert area.kept == {} and area.feeds == {}
