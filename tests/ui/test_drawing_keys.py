"""Drawings in the window, by keys: H / / / V / B / R start a shape at the cursor candle, the
cursor keys and Up / Down move its point (snapped to the candle's values with the magnet),
Enter places it, clicks too; D selects, Alt+arrows move, Shift+L locks, Del deletes, Ctrl+Z
undoes; Shift+H hides them all (remembered); every chart of the symbol shows them at their
times; a replay clock hides those not known yet."""

from __future__ import annotations

import asyncio

import pytest
from PySide6 import QtCore
from PySide6.QtTest import QTest

from workstation.annotations.drawings import Shape
from workstation.market.series import MarketKey
from workstation.ui.drawings.layer import price_step

from conftest import Key

ALT = QtCore.Qt.KeyboardModifier.AltModifier
CTRL = QtCore.Qt.KeyboardModifier.ControlModifier
SHIFT = QtCore.Qt.KeyboardModifier.ShiftModifier
DEMO = MarketKey("demo", "DEMO/USDT")


def focused(win, qtbot, chart=None):
    chart = chart or win.chart
    chart.take_focus()
    qtbot.waitUntil(chart.view.hasFocus)
    return chart


def press(chart, key, modifier=QtCore.Qt.KeyboardModifier.NoModifier, times: int = 1):
    for _ in range(times):
        QTest.keyClick(chart.view, key, modifier)


def stored(win):
    return win.annotations.own_store.drawings.list(DEMO)


def ohlc(candles, i):
    return sorted({float(candles.open[i]), float(candles.high[i]), float(candles.low[i]),
                   float(candles.close[i])})


def test_keys_draw_a_level_snapped_to_the_candle_and_undo_it(demo_window, qtbot):
    win = demo_window()
    chart = focused(win, qtbot)
    press(chart, Key.Key_End)
    press(chart, Key.Key_Left, times=5)
    i, c = chart.cursor_index, chart.candles
    press(chart, Key.Key_H)
    assert win.drawings.active and "Enter places it" in win.annotations.last_message
    values = ohlc(c, i)
    press(chart, Key.Key_Up, times=9)  # the magnet: up through the candle's values, to its high
    assert win.drawings.tool.point.price == values[-1] == float(c.high[i])
    assert win.drawings.tool.point.field == "high"
    press(chart, Key.Key_Down)
    below = values[-2]
    press(chart, Key.Key_Return)  # placed: a level, not a trade
    assert not win.drawings.active
    (level,) = stored(win)
    assert (level.shape, level.price1, level.ts1) == (Shape.LEVEL, below, int(c.ts[i]))
    assert level.timeframe == "1m" and level.market_key == DEMO
    assert not win.annotations.store.list()  # Enter made no trade
    assert [d.id for d in win.drawings.shown[id(chart)].drawings] == [level.id]
    assert win.drawings.selected.id == level.id

    QTest.keyClick(chart.view, Key.Key_Z, CTRL)
    assert stored(win) == [] and win.drawings.shown[id(chart)].drawings == []
    QTest.keyClick(chart.view, Key.Key_Z, CTRL | SHIFT)
    assert [d.id for d in stored(win)] == [level.id]


def test_two_point_shapes_by_keys_either_way_in_time(demo_window, qtbot):
    win = demo_window()
    chart = focused(win, qtbot)
    press(chart, Key.Key_End)
    press(chart, Key.Key_Left, times=2)
    c, j = chart.candles, chart.cursor_index
    QTest.keyClick(chart.view, Key.Key_Slash)
    press(chart, Key.Key_Return)  # the first point: this candle's close
    assert "First point placed" in win.annotations.last_message
    press(chart, Key.Key_Left, times=10)  # the second lies before it: the earlier comes first
    i = chart.cursor_index
    press(chart, Key.Key_Return)
    (trend,) = stored(win)
    assert trend.shape is Shape.TREND
    assert (trend.ts1, trend.price1) == (int(c.ts[i]), float(c.close[i]))
    assert (trend.ts2, trend.price2) == (int(c.ts[j]), float(c.close[j]))

    press(chart, Key.Key_R)  # a measure from candle i's close to candle j's high
    press(chart, Key.Key_Return)
    press(chart, Key.Key_Right, times=10)
    press(chart, Key.Key_Up, times=4)
    press(chart, Key.Key_Return)
    measure = next(d for d in stored(win) if d.shape is Shape.MEASURE)
    assert (measure.price1, measure.price2) == (float(c.close[i]), float(c.high[j]))
    change = float(c.high[j]) - float(c.close[i])
    assert f"({change / float(c.close[i]) * 100:+.2f} %)" in win.annotations.last_message
    assert "10 candles · 10m" in win.annotations.last_message

    press(chart, Key.Key_B)
    press(chart, Key.Key_Return)
    press(chart, Key.Key_Return)  # the same point twice: refused, the tool stays
    assert "second point is its first" in win.annotations.last_message
    assert win.drawings.active
    press(chart, Key.Key_Escape)
    assert not win.drawings.active and "Box cancelled" in win.annotations.last_message
    press(chart, Key.Key_V)
    press(chart, Key.Key_Return)
    vertical = next(d for d in stored(win) if d.shape is Shape.VERTICAL)
    assert vertical.ts1 == int(c.ts[chart.cursor_index]) and vertical.price1 is None
    assert len(stored(win)) == 3


def test_the_magnet_off_moves_a_point_by_a_round_step(demo_window, qtbot, paths):
    win = demo_window()
    chart = focused(win, qtbot)
    press(chart, Key.Key_M, SHIFT)
    assert not win.drawings.magnet and "Magnet off" in win.annotations.last_message
    press(chart, Key.Key_H)
    start = win.drawings.tool.point.price
    lo, hi = chart.price_view.viewRange()[1]
    step = price_step(hi - lo)
    press(chart, Key.Key_Up, times=3)
    assert win.drawings.tool.point.price == pytest.approx(start + 3 * step)
    assert win.drawings.tool.point.field is None
    press(chart, Key.Key_M, SHIFT)  # on again: the point snaps to the candle's nearest value
    i = chart.cursor_index
    assert win.drawings.tool.point.price in ohlc(chart.candles, i)
    press(chart, Key.Key_M, SHIFT)
    asyncio.run(win.shutdown())
    again = demo_window()
    assert not again.drawings.magnet  # remembered


def test_price_step_is_round():
    assert price_step(1234.0) == 20.0
    assert price_step(100.0) == 1.0
    assert price_step(0.0031) == pytest.approx(0.00005)


def test_select_move_lock_and_delete_by_keys(demo_window, qtbot):
    win = demo_window()
    chart = focused(win, qtbot)
    press(chart, Key.Key_End)
    press(chart, Key.Key_Left, times=20)
    press(chart, Key.Key_H)
    press(chart, Key.Key_Return)
    press(chart, Key.Key_Escape)  # let it go
    assert win.drawings.selected is None
    press(chart, Key.Key_End)
    press(chart, Key.Key_D)  # from nothing selected: the first drawing, the cursor on it
    (level,) = stored(win)
    assert win.drawings.selected.id == level.id
    assert chart.cursor_time == level.ts1
    press(chart, Key.Key_Right, ALT)
    press(chart, Key.Key_Up, ALT, times=2)
    (moved,) = stored(win)
    lo, hi = chart.price_view.viewRange()[1]
    assert moved.ts1 == level.ts1 + 60_000
    assert moved.price1 == pytest.approx(level.price1 + 2 * price_step(hi - lo))

    press(chart, Key.Key_L, SHIFT)
    assert stored(win)[0].locked and "locked" in win.annotations.last_message
    press(chart, Key.Key_Right, ALT)
    assert "locked" in win.annotations.last_message and stored(win)[0].ts1 == moved.ts1
    press(chart, Key.Key_Delete)
    assert len(stored(win)) == 1 and "Shift+L unlocks" in win.annotations.last_message
    press(chart, Key.Key_L, SHIFT)
    press(chart, Key.Key_Delete)
    assert stored(win) == [] and win.drawings.selected is None
    QTest.keyClick(chart.view, Key.Key_Z, CTRL)  # the delete undone, then the unlock
    assert stored(win)[0].id == level.id and not stored(win)[0].locked
    QTest.keyClick(chart.view, Key.Key_Z, CTRL)
    assert stored(win)[0].locked


def test_clicks_place_points_and_select(demo_window, qtbot):
    win = demo_window()
    chart = focused(win, qtbot)
    c = chart.candles
    i0, i1 = len(c) - 40, len(c) - 10
    press(chart, Key.Key_Slash)
    chart.candle_clicked.emit(i0, float(c.high[i0]) + 1e-6)  # snapped to the high
    chart.candle_clicked.emit(i1, float(c.low[i1]) - 1e-6)
    (trend,) = stored(win)
    assert (trend.price1, trend.price2) == (float(c.high[i0]), float(c.low[i1]))
    press(chart, Key.Key_Escape)
    assert win.drawings.selected is None
    mid = (i0 + i1) // 2
    price = trend.price1 + (trend.price2 - trend.price1) * (mid - i0) / (i1 - i0)
    chart.candle_clicked.emit(mid, price)  # on the line: selects it, opens no trade
    assert win.drawings.selected.id == trend.id
    assert not win.annotations.store.list()


def test_every_chart_of_the_symbol_shows_the_drawings_and_hide_all(demo_window, qtbot):
    win = demo_window()
    chart = focused(win, qtbot)
    press(chart, Key.Key_End)
    press(chart, Key.Key_Left, times=30)
    press(chart, Key.Key_V)
    press(chart, Key.Key_Return)
    (vertical,) = stored(win)
    win.chart_area.set_layout("four")
    qtbot.waitUntil(lambda: len(win.chart_area.shown()) == 4)
    timeframes = set()
    for index, other in enumerate(win.chart_area.charts):
        view = win.drawings.shown[id(other)]
        assert [d.id for d in view.drawings] == [vertical.id], index
        i = other.view_model.time_map.index_at(vertical.ts1)  # its candle on this timeframe
        assert i <= view._x(vertical.ts1) < i + 1
        timeframes.add(other.candles.timeframe.name)
    assert len(timeframes) > 1
    chart = focused(win, qtbot, win.chart_area.charts[2])  # the keys act on any chart
    press(chart, Key.Key_H, SHIFT)
    assert all(not v.item.isVisible() for v in win.drawings.shown.values())
    press(chart, Key.Key_H)  # drawing again shows them
    assert all(v.item.isVisible() for v in win.drawings.shown.values())
    press(chart, Key.Key_Escape)
    press(chart, Key.Key_H, SHIFT)
    asyncio.run(win.shutdown())
    again = demo_window()
    assert again.drawings.hidden and not again.drawings.shown[id(again.chart)].item.isVisible()


def test_a_replay_clock_shows_only_drawings_known_by_then(demo_window, qtbot):
    win = demo_window()
    chart = focused(win, qtbot)
    c = chart.candles
    press(chart, Key.Key_End)
    press(chart, Key.Key_Left, times=100)
    press(chart, Key.Key_H)
    press(chart, Key.Key_Return)
    (level,) = stored(win)
    win.drawings.set_clock(level.ts1 + 59_999)  # its candle has not closed yet
    assert win.drawings.shown[id(chart)].drawings == []
    win.drawings.set_clock(level.ts1 + 60_000)
    assert [d.id for d in win.drawings.shown[id(chart)].drawings] == [level.id]
    win.drawings.set_clock(int(c.ts[len(c) - 200]))
    press(chart, Key.Key_End)
    press(chart, Key.Key_H)  # the last candle closes after the clock: refused
    assert "after the replay clock" in win.annotations.last_message
    assert not win.drawings.active
    win.drawings.set_clock(None)
    assert len(win.drawings.shown[id(chart)].drawings) == 1



@pytest.mark.parametrize("name, format", [("d.csv", "drawings-csv"), ("all.json", None)])
def test_drawings_leave_and_come_back_through_the_files(demo_window, qtbot, tmp_path, name,
                                                         format):
    win = demo_window()
    chart = focused(win, qtbot)
    press(chart, Key.Key_Slash)
    press(chart, Key.Key_Return)
    press(chart, Key.Key_Left, times=7)
    press(chart, Key.Key_Return)
    (trend,) = stored(win)
    win.annotations.export_file(tmp_path / name, format)
    assert "Exported" in win.annotations.last_message
    press(chart, Key.Key_Delete)
    assert stored(win) == []
    win.annotations.import_file(tmp_path / name)
    assert "drawings: 1 read, 1 added" in win.annotations.last_message
    assert stored(win) == [trend]
    assert [d.id for d in win.drawings.shown[id(chart)].drawings] == [trend.id]
