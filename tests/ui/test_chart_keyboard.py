"""Driving the chart with keys (through the shortcut registry's actions) and the mouse."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtGui
from PySide6.QtTest import QTest

from workstation.market.candles import Candles
from workstation.market.timeframes import ONE_MINUTE
from workstation.ui.chart import ChartWidget
from workstation.ui.chart.chart_widget import ZOOM_STEP

Key = QtCore.Qt.Key
SHIFT = QtCore.Qt.KeyboardModifier.ShiftModifier
N = 2_000


def make_candles(n: int) -> Candles:
    rng = np.random.default_rng(11)
    close = np.round(50 + np.cumsum(rng.normal(0, 0.2, n)), 2)
    open_ = np.concatenate(([50.0], close[:-1]))
    high = np.maximum(open_, close) + 0.1
    low = np.minimum(open_, close) - 0.1
    ts = 1_699_920_000_000 + np.arange(n, dtype=np.int64) * 60_000
    return Candles.from_arrays(ts, open_, high, low, close, rng.uniform(1, 9, n), ONE_MINUTE)


@pytest.fixture
def chart(qtbot):
    widget = ChartWidget()
    qtbot.addWidget(widget)
    widget.resize(1000, 600)
    widget.show()
    qtbot.waitExposed(widget)
    widget.set_candles(make_candles(N))
    widget.view.setFocus()
    widget.activateWindow()
    qtbot.waitUntil(lambda: widget.view.hasFocus())
    return widget


def press(chart, key, modifier=QtCore.Qt.KeyboardModifier.NoModifier):
    QTest.keyClick(chart.view, key, modifier)


def x_range(chart):
    return tuple(chart.price_view.viewRange()[0])


def test_arrows_move_the_cursor_by_one_or_ten(chart, qtbot):
    moved = []
    chart.cursor_moved.connect(moved.append)
    assert chart.cursor_index == N - 1
    press(chart, Key.Key_Left)
    assert chart.cursor_index == N - 2
    press(chart, Key.Key_Left, SHIFT)
    assert chart.cursor_index == N - 12
    press(chart, Key.Key_Right)
    press(chart, Key.Key_Right, SHIFT)
    assert chart.cursor_index == N - 1
    press(chart, Key.Key_Right)  # already on the last candle
    assert chart.cursor_index == N - 1
    # Announced as the cursor candles' open times (ms), one per move.
    assert moved == [int(chart.candles.ts[i]) for i in (N - 2, N - 12, N - 11, N - 1)]


def test_home_and_end_go_to_the_first_and_last_candle_and_keep_them_in_view(chart):
    press(chart, Key.Key_Home)
    assert chart.cursor_index == 0
    i0, i1 = chart.visible_range()
    assert i0 == 0 < i1
    press(chart, Key.Key_End)
    assert chart.cursor_index == N - 1
    assert chart.visible_range()[1] == N


def test_cursor_scrolls_the_view_when_it_leaves_the_screen(chart):
    i0, _ = chart.visible_range()
    chart.set_cursor(i0)
    press(chart, Key.Key_Left, SHIFT)
    assert chart.cursor_index == i0 - 10
    assert chart.visible_range()[0] <= i0 - 10


def test_plus_and_minus_zoom_about_the_cursor(chart):
    chart.set_cursor(N - 100)
    x0, x1 = x_range(chart)
    frac = (N - 100 - x0) / (x1 - x0)
    press(chart, Key.Key_Plus)
    y0, y1 = x_range(chart)
    assert (y1 - y0) == pytest.approx((x1 - x0) / ZOOM_STEP)
    assert (N - 100 - y0) / (y1 - y0) == pytest.approx(frac)  # the cursor stayed put
    press(chart, Key.Key_Minus)
    press(chart, Key.Key_Minus)
    z0, z1 = x_range(chart)
    assert (z1 - z0) == pytest.approx((x1 - x0) * ZOOM_STEP)
    assert (N - 100 - z0) / (z1 - z0) == pytest.approx(frac)
    press(chart, Key.Key_Equal)  # "=" is "+" without Shift
    w0, w1 = x_range(chart)
    assert (w1 - w0) == pytest.approx(x1 - x0)


def test_page_keys_pan_a_screen_and_take_the_cursor_along(chart):
    x0, x1 = x_range(chart)
    width = x1 - x0
    cursor = chart.cursor_index
    press(chart, Key.Key_PageUp)
    assert x_range(chart) == pytest.approx((x0 - width, x1 - width))
    assert chart.cursor_index == cursor - round(width)
    press(chart, Key.Key_PageDown)
    assert x_range(chart) == pytest.approx((x0, x1))
    assert chart.cursor_index == cursor


def test_f_fits_all_a_pins_prices_and_zero_returns_to_the_live_edge(chart):
    press(chart, Key.Key_F)
    assert chart.visible_range() == (0, N)
    assert len(chart.frame()) <= chart.price_view.width() + 1
    press(chart, Key.Key_A)
    assert not chart.autoscale and "pinned" in chart.title_label.text()
    y_before = tuple(chart.price_view.viewRange()[1])
    chart.price_view.setXRange(99.5, 299.5, padding=0)
    assert tuple(chart.price_view.viewRange()[1]) == pytest.approx(y_before)  # pinned
    press(chart, Key.Key_A)
    assert chart.autoscale
    assert tuple(chart.price_view.viewRange()[1]) != pytest.approx(y_before)  # refitted
    chart.set_cursor(10)
    press(chart, Key.Key_0)
    assert chart.visible_range()[1] == N
    assert chart.cursor_index == N - 1


def test_every_chart_key_has_an_action_with_its_keys_in_the_tooltip(chart):
    actions = chart.command_actions
    assert "Shift+Left" in actions["chart.cursor_left_10"].toolTip()
    assert [s.toString() for s in actions["chart.zoom_in"].shortcuts()] == ["+", "="]
    assert all(a in chart.actions() for a in actions.values())


def wheel(chart, pos: QtCore.QPoint, delta: int):
    viewport = chart.view.viewport()
    global_pos = viewport.mapToGlobal(pos)
    event = QtGui.QWheelEvent(QtCore.QPointF(pos), QtCore.QPointF(global_pos), QtCore.QPoint(),
                              QtCore.QPoint(0, delta), QtCore.Qt.MouseButton.NoButton,
                              QtCore.Qt.KeyboardModifier.NoModifier,
                              QtCore.Qt.ScrollPhase.NoScrollPhase, False)
    QtCore.QCoreApplication.sendEvent(viewport, event)


def viewport_pos(chart, x: float, price: float) -> QtCore.QPoint:
    scene = chart.price_view.mapViewToScene(QtCore.QPointF(x, price))
    return chart.view.mapFromScene(scene)


def test_wheel_zooms_time_only_and_drag_pans(chart, qtbot):
    x0, x1 = x_range(chart)
    mid_price = float(np.mean(chart.price_view.viewRange()[1]))
    wheel(chart, viewport_pos(chart, (x0 + x1) / 2, mid_price), 120)
    y0, y1 = x_range(chart)
    assert (y1 - y0) < (x1 - x0)  # zoomed in
    start = viewport_pos(chart, (y0 + y1) / 2, mid_price)
    viewport = chart.view.viewport()
    left, no_modifier = QtCore.Qt.MouseButton.LeftButton, QtCore.Qt.KeyboardModifier.NoModifier
    QTest.mousePress(viewport, left, no_modifier, start)
    for dx in (10, 40, 80, 120):
        QTest.mouseMove(viewport, start + QtCore.QPoint(dx, 0))
    QTest.mouseRelease(viewport, left, no_modifier,
                       start + QtCore.QPoint(120, 0))
    z0, z1 = x_range(chart)
    assert z0 < y0 and (z1 - z0) == pytest.approx(y1 - y0)  # dragged right = back in time


def test_click_on_a_candle_moves_the_cursor_and_reports_it(chart, qtbot):
    x0, x1 = x_range(chart)
    target = int(x0 + (x1 - x0) / 3)
    price = float(chart.candles.close[target])
    pos = viewport_pos(chart, target, price)
    with qtbot.waitSignal(chart.candle_clicked) as blocker:
        QTest.mouseClick(chart.view.viewport(), QtCore.Qt.MouseButton.LeftButton,
                         QtCore.Qt.KeyboardModifier.NoModifier, pos)
    index, clicked_price = blocker.args
    assert index == target and chart.cursor_index == target
    (_, _), (p0, p1) = chart.price_view.viewRange()
    assert clicked_price == pytest.approx(price, abs=(p1 - p0) / 100)


def test_wheel_in_the_volume_pane_zooms_both_panes(chart):
    x0, x1 = x_range(chart)
    top = chart.volume_view.viewRange()[1][1]
    scene = chart.volume_view.mapViewToScene(QtCore.QPointF((x0 + x1) / 2, top / 2))
    wheel(chart, chart.view.mapFromScene(scene), 120)
    y0, y1 = x_range(chart)
    assert (y1 - y0) < (x1 - x0)
    assert tuple(chart.volume_view.viewRange()[0]) == pytest.approx((y0, y1))
