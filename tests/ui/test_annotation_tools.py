"""Annotating with the keyboard (and the mouse) on a real chart, store and window."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from workstation.annotations import store as store_module
from workstation.annotations.model import Direction, Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.market.csv_io import write_candles_csv
from workstation.market.series import MarketKey, SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ui import command_registry
from workstation.ui.annotations.drawing import PENDING_GROUP
from workstation.ui.annotations.list_model import OVERLAP_MARK, TYPE

from conftest import SHIFT, Host, Key, N, make_candles

CTRL = QtCore.Qt.KeyboardModifier.ControlModifier



def trade_fields(t: Trade):
    return (t.symbol, t.timeframe, t.direction, t.entry_ts, t.entry_price, t.exit_ts,
            t.exit_price)


def expected_trade(direction, i, j, candles=None):
    c = candles or make_candles()
    return ("ETH/USDT", "1m", Direction(direction), int(c.ts[i]), float(c.close[i]),
            int(c.ts[j]), float(c.close[j]))


def region_fields(r: Region):
    return (r.symbol, r.timeframe, r.label, r.start_ts, r.end_ts)


def test_keyboard_only_trades_regions_undo_redo_survive_a_restart(qtbot, tmp_path, candles_csv):
    host = Host(qtbot, tmp_path / "ws")
    host.open_csv(candles_csv)
    c = make_candles()
    # Three trades: L ... X, S ... Return, L ... keypad Enter.
    host.cursor_to(20)
    host.press(Key.Key_L)
    host.press(Key.Key_Right, SHIFT, times=3)
    host.press(Key.Key_X)
    host.press(Key.Key_Right, SHIFT)
    host.press(Key.Key_S)
    host.press(Key.Key_Right, SHIFT, times=2)
    host.press(Key.Key_Return)
    host.press(Key.Key_Right, SHIFT)
    host.press(Key.Key_L)
    host.press(Key.Key_Right, SHIFT, times=2)
    host.press(Key.Key_Enter)
    # An entry cancelled with Esc leaves nothing behind.
    host.press(Key.Key_Right, SHIFT)
    host.press(Key.Key_S)
    assert host.layer.tools.pending is not None
    host.press(Key.Key_Escape)
    assert host.layer.tools.pending is None
    # Two regions: M ... 1 forwards, M ... 2 backwards.
    host.press(Key.Key_Right, SHIFT)
    host.press(Key.Key_M)
    host.press(Key.Key_Right, SHIFT, times=4)
    host.press(Key.Key_1)
    host.press(Key.Key_Right, SHIFT, times=3)
    host.press(Key.Key_M)
    host.press(Key.Key_Left, SHIFT, times=2)
    host.press(Key.Key_2)
    assert host.chart.cursor_index == 180

    trades = [expected_trade("long", 20, 50), expected_trade("short", 60, 80),
              expected_trade("long", 90, 110)]
    up = ("ETH/USDT", "1m", "uptrend", int(c.ts[130]), int(c.ts[170]))
    down = ("ETH/USDT", "1m", "downtrend", int(c.ts[180]), int(c.ts[200]))
    with AnnotationStore(host.paths.annotations_db) as other:  # what another process sees
        found = other.list()
    assert sorted(trade_fields(a) for a in found if isinstance(a, Trade)) == sorted(trades)
    assert sorted(region_fields(a) for a in found if isinstance(a, Region)) == sorted([up, down])
    assert host.layer.model.rowCount() == 5

    host.press(Key.Key_Z, CTRL, times=2)
    assert host.layer.model.rowCount() == 3
    host.press(Key.Key_Z, CTRL | SHIFT)
    assert host.layer.model.rowCount() == 4
    assert host.layer.command_actions["annotate.undo"].text() == "Undo add uptrend region"
    host.close()

    again = Host(qtbot, tmp_path / "ws")
    again.open_csv(candles_csv)
    shown = again.layer.model.annotations()
    assert sorted(trade_fields(a) for a in shown if isinstance(a, Trade)) == sorted(trades)
    assert [region_fields(a) for a in shown if isinstance(a, Region)] == [up]
    assert len(again.layer.graphics.trades) == 3 and len(again.layer.graphics.regions) == 1
    assert not again.layer.undo_stack.canUndo()  # a new session starts a new history
    qtbot.waitUntil(lambda: again.layer.dock.totals.text().startswith("4 annotations · 3 trades"))
    again.close()


def test_closing_needs_an_entry_and_a_later_candle_and_no_overlap(host):
    store_rows = lambda: host.layer.model.rowCount()  # noqa: E731
    host.cursor_to(40)
    host.press(Key.Key_X)
    assert "press L" in host.layer.last_message and store_rows() == 0
    host.press(Key.Key_L)
    host.press(Key.Key_Left, times=3)
    host.press(Key.Key_X)
    assert "after the entry" in host.layer.last_message and store_rows() == 0
    assert host.layer.tools.pending is not None  # still open: a refused close keeps it
    host.press(Key.Key_Right, SHIFT, times=2)
    host.press(Key.Key_X)
    assert store_rows() == 1
    # A trade that would be open at the same time as another one is refused.
    host.cursor_to(30)
    host.press(Key.Key_S)
    host.press(Key.Key_Right, SHIFT, times=2)
    host.press(Key.Key_X)
    assert "overlap" in host.layer.last_message and store_rows() == 1
    host.press(Key.Key_Escape)
    host.cursor_to(45)
    host.press(Key.Key_S)
    assert "inside the 1m long entered on the" in host.layer.last_message
    assert host.layer.tools.pending is None
    # A reversal on the exit candle is fine.
    host.cursor_to(57)
    host.press(Key.Key_S)
    host.press(Key.Key_Right, times=5)
    host.press(Key.Key_X)
    assert store_rows() == 2
    host.press(Key.Key_1)
    assert "No mark" in host.layer.last_message and store_rows() == 2


def test_a_pending_entry_and_the_mark_are_drawn_until_closed_or_cancelled(host):
    overlays = host.chart.overlays
    host.cursor_to(100)
    host.press(Key.Key_S)
    assert overlays.count(PENDING_GROUP) == 1
    marker = next(iter(overlays.markers.records.values()))
    assert marker.text == "SHORT" and marker.price == float(make_candles().close[100])
    host.press(Key.Key_Right, times=4)
    assert overlays.count(PENDING_GROUP) == 3  # marker, dashed line to the cursor, P&L label
    label = next(iter(overlays.labels.records.values()))
    c = make_candles()
    pnl = (c.close[104] - c.close[100]) / c.close[100] * -100
    assert label.text == f"{pnl:+.2f}% if closed here"
    host.press(Key.Key_Escape)
    assert overlays.count(PENDING_GROUP) == 0
    host.press(Key.Key_M)
    host.press(Key.Key_Right, times=3)
    assert len(overlays.ranges) == 1
    host.press(Key.Key_3)
    assert overlays.count(PENDING_GROUP) == 0
    assert [a.label for a in host.layer.model.annotations()] == ["range"]


def test_delete_under_the_cursor_and_undo_bring_back_the_same_record(host):
    host.cursor_to(10)
    host.press(Key.Key_L)
    host.cursor_to(30)
    host.press(Key.Key_X)
    host.cursor_to(20)
    host.press(Key.Key_M)
    host.cursor_to(25)
    host.press(Key.Key_2)
    (trade,) = [a for a in host.layer.model.annotations() if isinstance(a, Trade)]
    host.cursor_to(22)  # inside both: the shorter one (the region) goes first
    host.press(Key.Key_Delete)
    assert [type(a) for a in host.layer.model.annotations()] == [Trade]
    host.press(Key.Key_Delete)
    assert host.layer.model.rowCount() == 0 and len(host.layer.graphics) == 0
    host.press(Key.Key_Delete)
    assert host.layer.last_message == "No 1m annotation on the cursor candle"
    host.press(Key.Key_Z, CTRL)
    assert host.layer.store.get(trade.id) == trade  # same id, times and values
    assert len(host.layer.graphics.trades) == 1


def test_next_and_previous_jump_between_annotations_and_select_them(host):
    for i, j in ((50, 60), (200, 210)):
        host.cursor_to(i)
        host.press(Key.Key_L)
        host.cursor_to(j)
        host.press(Key.Key_X)
    host.cursor_to(120)
    host.press(Key.Key_M)
    host.cursor_to(130)
    host.press(Key.Key_1)
    host.press(Key.Key_Home)
    stops = []
    for _ in range(4):
        host.press(Key.Key_N)
        stops.append(host.chart.cursor_index)
    assert stops == [50, 120, 200, 200]
    assert host.layer.last_message == "No annotation after the cursor"
    host.press(Key.Key_P)
    assert host.chart.cursor_index == 120
    assert host.layer.dock.current().label == "uptrend"
    assert host.layer.graphics.selected.label == "uptrend"


def test_e_edits_the_notes_in_an_overlay_and_undo_restores_them(host, qtbot):
    host.cursor_to(70)
    host.press(Key.Key_S)
    host.cursor_to(75)
    host.press(Key.Key_X)
    host.cursor_to(72)
    host.press(Key.Key_P)  # selects it in the list too
    assert host.chart.cursor_index == 70

    host.press(Key.Key_E)
    editor = host.layer.notes_editor
    assert editor.isVisible() and "short trade" in editor.title.text()
    qtbot.waitUntil(editor.text.hasFocus)
    QTest.keyClicks(editor.text, "faded the spike")
    QTest.keyClick(editor.text, Key.Key_Return)  # a new line, not "save"
    QTest.keyClicks(editor.text, "second line")
    QTest.keyClick(editor.text, Key.Key_Return, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert not editor.isVisible()
    qtbot.waitUntil(host.chart.view.hasFocus)  # the keyboard is back on the chart
    (trade,) = host.layer.model.annotations()
    assert trade.notes == "faded the spike\nsecond line"
    assert host.layer.store.get(trade.id).notes == trade.notes
    index = host.layer.model.index(0, 4)
    assert index.data() == "faded the spike second line"
    assert host.layer.dock.current().notes == trade.notes  # still the selected row
    host.focus_chart()
    host.press(Key.Key_Z, CTRL)
    assert host.layer.store.get(trade.id).notes == ""


def _click_candle(host, index: int) -> None:
    c = host.chart.candles
    scene = host.chart.price_view.mapViewToScene(QtCore.QPointF(index, float(c.close[index])))
    pos = host.chart.view.mapFromScene(scene)
    viewport = host.chart.view.viewport()
    QTest.mouseMove(viewport, pos)
    QTest.mouseClick(viewport, QtCore.Qt.MouseButton.LeftButton, pos=pos)


def test_clicks_annotate_only_when_click_mode_is_on_and_it_is_remembered(host, qtbot,
                                                                          tmp_path):
    click_mode = host.layer.command_actions["annotate.click_mode"]
    assert click_mode.isCheckable() and not click_mode.isChecked()
    host.chart.set_cursor(host.chart.visible_range()[0] + 5)
    i0 = host.chart.visible_range()[0]
    _click_candle(host, i0 + 10)
    assert host.chart.cursor_index == i0 + 10  # the click moved the cursor...
    _click_candle(host, i0 + 20)
    assert host.layer.model.rowCount() == 0  # ...and made nothing
    click_mode.trigger()
    host.press(Key.Key_S)  # S chooses the direction (and opens at the cursor)
    host.press(Key.Key_Escape)
    _click_candle(host, i0 + 10)
    assert host.layer.tools.pending is not None
    _click_candle(host, i0 + 30)
    (trade,) = host.layer.model.annotations()
    assert trade_fields(trade) == expected_trade("short", i0 + 10, i0 + 30)
    host.close()
    again = Host(qtbot, tmp_path / "ws")
    assert again.layer.command_actions["annotate.click_mode"].isChecked()
    again.close()


def test_every_annotation_key_is_in_the_registry_menus_tooltips_and_palette(host):
    from workstation.ui.help import CommandPalette

    sheet = dict(command_registry.cheat_sheet())
    annotate = {text: keys for keys, text in sheet["Annotate"]}
    assert annotate["Open long at cursor"] == "L"
    assert annotate["Close trade at cursor"].startswith("X / Return")
    assert annotate["Label mark…cursor as downtrend"] == "2"
    assert annotate["Delete annotation under cursor"].startswith("Del")
    assert annotate["Undo"] == QtGui.QKeySequence("Ctrl+Z").toString(
        QtGui.QKeySequence.SequenceFormat.NativeText)
    assert ("?", "Keyboard shortcuts") in sheet["Help"]
    assert command_registry.command("help.palette").keys == ("Ctrl+K",)
    actions = host.layer.command_actions
    for command_id in ("annotate.long", "annotate.short", "annotate.mark", "annotate.next"):
        key = command_registry.command(command_id).keys[0]
        assert actions[command_id].shortcut().toString() == key
        assert actions[command_id].toolTip().endswith(f"({key})")
    assert actions["annotate.redo"].shortcuts()[0].toString() == "Ctrl+Shift+Z"
    assert [a.text() for a in host.layer.file_actions()] == ["Export annotations…",
                                                            "Import annotations…"]
    palette = CommandPalette(host.window)
    listed = {a.text(): a.shortcut().toString() for a in palette.actions_listed()}
    assert listed["Open short at cursor"] == "S"
    assert listed["Cursor to previous candle"] == "Left"  # the chart's, in the same palette


def test_annotations_are_drawn_where_they_are_and_only_for_this_series(host, qtbot):
    chart = host.chart
    c = chart.candles

    def grab() -> QtGui.QImage:
        qtbot.wait(10)
        return chart.view.viewport().grab().toImage()

    def changed_near_entry(a: QtGui.QImage, b: QtGui.QImage) -> int:
        scene = chart.price_view.mapViewToScene(QtCore.QPointF(N - 40, float(c.close[N - 40])))
        at = chart.view.mapFromScene(scene)  # the entry ▲ sits just under the entry price
        return sum(a.pixel(at.x() + dx, at.y() + dy) != b.pixel(at.x() + dx, at.y() + dy)
                   for dx in range(-5, 6) for dy in range(1, 13))

    chart.set_cursor(N - 10)
    before = grab()
    chart.set_cursor(N - 40)
    host.press(Key.Key_L)
    chart.set_cursor(N - 10)
    host.press(Key.Key_X)
    assert changed_near_entry(before, grab()) > 20
    # Another symbol's trade at the same time is not drawn on this chart, nor listed.
    other = Trade(symbol="BTC/USDT", timeframe="1m", direction="long",
                  entry_ts=int(c.ts[N - 40]), entry_price=float(c.close[N - 40]),
                  exit_ts=int(c.ts[N - 10]), exit_price=float(c.close[N - 10]))
    host.layer.store.add(other)
    assert len(host.layer.graphics.trades) == 1 and host.layer.model.rowCount() == 1
    host.press(Key.Key_Z, CTRL)
    after_undo = grab()
    assert changed_near_entry(before, after_undo) == 0
    assert after_undo == before


def test_demo_marks_and_real_marks_are_two_markets(host):
    """The same symbol on the demo market is another market: a real mark is not shown (nor
    checked for overlaps) on demo candles, and the reverse; the store says which is which."""
    host.cursor_to(100)
    host.press(Key.Key_L)
    host.cursor_to(140)
    host.press(Key.Key_X)
    assert host.layer.model.rowCount() == 1
    host.live._reset(make_candles(), SeriesKey("demo", "ETH/USDT", ONE_MINUTE))  # as a demo opens
    host.qtbot.waitUntil(lambda: host.layer.series == (MarketKey("demo", "ETH/USDT"), "1m"))
    assert host.layer.model.rowCount() == 0 and len(host.layer.graphics) == 0
    host.cursor_to(120)  # inside the real trade's time: fine on the demo market
    host.press(Key.Key_S)
    host.cursor_to(130)
    host.press(Key.Key_X)
    assert host.layer.model.rowCount() == 1
    (real,) = host.layer.store.list(market="real")
    (demo,) = host.layer.store.list(market="demo")
    assert (real.symbol, real.direction, demo.symbol, demo.direction) == (
        "ETH/USDT", Direction.LONG, "ETH/USDT", Direction.SHORT)


def test_the_tool_refuses_a_trade_held_during_a_trade_on_another_timeframe(host):
    """A 1h trade of the market covers the 1m chart's candles: the 1m tool refuses to open
    or close across it, naming it; one 1m candle before the 1h entry closes is fine."""
    c = make_candles()
    hour = 3_600_000
    first_hour = int(c.ts[0]) - int(c.ts[0]) % hour + hour
    hourly = Trade(symbol="ETH/USDT", timeframe="1h", direction="long", entry_ts=first_hour,
                   entry_price=100.0, exit_ts=first_hour + 2 * hour, exit_price=101.0)
    host.layer.store.add(hourly)  # held from the close of its first hour to that of its third
    held_from = int(np.searchsorted(c.ts, hourly.held[0]))
    assert host.layer.model.rowCount() == 0  # another timeframe: not listed on this chart
    host.cursor_to(held_from + 5)
    host.press(Key.Key_S)
    assert host.layer.tools.pending is None
    assert "inside the 1h long entered on the" in host.layer.last_message
    host.cursor_to(held_from - 30)
    host.press(Key.Key_S)
    host.cursor_to(held_from + 10)
    host.press(Key.Key_X)
    assert "would overlap the 1h long entered on the" in host.layer.last_message
    assert host.layer.tools.pending is not None and len(host.layer.store) == 1
    host.cursor_to(held_from - 1)  # out on the close where the 1h long comes in
    host.press(Key.Key_X)
    assert len(host.layer.store) == 2 and host.layer.model.rowCount() == 1


def test_overlapping_trades_of_an_old_store_are_marked_in_the_list(host):
    c = make_candles()
    a = Trade(symbol="ETH/USDT", timeframe="1m", direction="long", entry_ts=int(c.ts[10]),
              entry_price=1.0, exit_ts=int(c.ts[50]), exit_price=2.0)
    b = Trade(symbol="ETH/USDT", timeframe="1m", direction="short", entry_ts=int(c.ts[30]),
              entry_price=1.0, exit_ts=int(c.ts[60]), exit_price=2.0)
    conn = host.layer.store._conn  # as an older release could leave them: straight in
    for t in (a, b):
        conn.execute(store_module._INSERT, store_module._row(t))
    host.layer.reload()
    texts = [host.layer.model.index(r, TYPE).data() for r in range(2)]
    assert texts == [f"long {OVERLAP_MARK}", f"short {OVERLAP_MARK}"]
    tip = host.layer.model.index(0, TYPE).data(QtCore.Qt.ItemDataRole.ToolTipRole)
    assert "1m short entered on the" in tip and "training refuses" in tip
    host.layer.store.delete(b.id)
    assert host.layer.model.index(0, TYPE).data() == "long"


def test_another_series_reloads_and_forgets_the_pending_entry_and_history(host, tmp_path):
    host.cursor_to(10)
    host.press(Key.Key_L)
    host.cursor_to(20)
    host.press(Key.Key_X)
    host.press(Key.Key_S)
    other_csv = write_candles_csv(make_candles(), tmp_path / "btc.csv")
    host.open_csv(other_csv, symbol="BTC/USDT")
    assert host.layer.model.rowCount() == 0 and len(host.layer.graphics) == 0
    assert host.layer.tools.pending is None and not host.layer.undo_stack.canUndo()
    assert host.chart.overlays.count(PENDING_GROUP) == 0
    host.press(Key.Key_L)
    host.press(Key.Key_Left, times=5)
    host.press(Key.Key_X)
    assert "after the entry" in host.layer.last_message


def test_packed_trades_become_ticks_in_a_lane_along_the_top(host, qtbot):
    from workstation.ui.annotations.drawing import STRIP_PX, TRADE_LANE

    c = host.chart.candles
    host.layer.store.merge([
        Trade(symbol="ETH/USDT", timeframe="1m", direction="long" if k % 2 else "short",
              entry_ts=int(c.ts[2 * k]), entry_price=float(c.close[2 * k]),
              exit_ts=int(c.ts[2 * k + 1]), exit_price=float(c.close[2 * k + 1]))
        for k in range(199)])
    assert len(host.layer.graphics.trades) == 199

    def lane_colors() -> tuple[int, int]:
        qtbot.wait(10)
        image = host.chart.view.viewport().grab().toImage()
        top = host.chart.view.mapFromScene(host.chart.price_view.sceneBoundingRect().topLeft())
        width = int(host.chart.price_view.sceneBoundingRect().width())
        up, down = (QtGui.QColor(x).rgb() for x in (host.chart.colors.up,
                                                     host.chart.colors.down))
        lane = top.y() + TRADE_LANE * (STRIP_PX + 1)
        longs = sum(image.pixel(top.x() + x, lane + 1) == up for x in range(width))
        shorts = sum(image.pixel(top.x() + x, lane + STRIP_PX - 2) == down for x in range(width))
        return longs, shorts

    host.chart.fit_all()  # 199 trades in about 1000 px: packed
    longs, shorts = lane_colors()
    assert longs > 50 and shorts > 50
    host.chart.set_cursor(30)
    host.chart.zoom(20)  # 20 candles on screen: markers, not ticks
    assert lane_colors() == (0, 0)


def test_regions_shade_their_candles_and_thin_regions_and_packed_notes_become_ticks(host,
                                                                                   qtbot):
    from workstation.annotations.model import Point
    from workstation.ui.annotations.drawing import (
        POINT_COLOR,
        POINT_LANE,
        REGION_LANE,
        SHADE_ALPHA,
        STRIP_PX,
        mixed,
    )
    from workstation.ui.theme import CHART_COLORS

    chart = host.chart
    c = chart.candles
    common = {"symbol": "ETH/USDT", "timeframe": "1m"}
    host.layer.store.merge(
        [Region(**common, start_ts=int(c.ts[100]), end_ts=int(c.ts[160]), label="uptrend"),
         Region(**common, start_ts=int(c.ts[300]), end_ts=int(c.ts[300]) + 1,
                label="downtrend")]
        + [Point(**common, ts=int(c.ts[2 * k + 1]), notes="n") for k in range(199)])
    chart.fit_all()  # 400 candles in about 1000 px: one candle is 2-3 px, notes packed
    pane = chart.price_view.sceneBoundingRect()

    def pixels(x_candle: float, row_from_top: int, band: int = 0) -> set[int]:
        """The colours at ``row_from_top`` of the pane over candle x (and ``band`` px
        either side)."""
        qtbot.wait(10)
        image = chart.view.viewport().grab().toImage()
        top = chart.view.mapFromScene(pane.topLeft()).y()
        x = chart.view.mapFromScene(chart.price_view.mapViewToScene(
            QtCore.QPointF(x_candle, 0.0))).x()
        return {image.pixel(x + dx, top + row_from_top) for dx in range(-band, band + 1)}

    def rgb(color) -> int:
        return QtGui.QColor(color).rgb()

    low = int(pane.height()) - 8  # under every candle (the autoscale leaves room)
    for colors in (chart.colors, CHART_COLORS["light"]):
        chart.set_colors(colors)
        shade = rgb(mixed(colors.up, colors.background, SHADE_ALPHA))
        assert shade in pixels(130, low, band=3)  # inside the uptrend region: shaded
        assert shade not in pixels(200, low, band=3)  # outside it: not
    # The one-candle downtrend region is a tick in the regions' lane, not a band.
    down = rgb(chart.colors.down)
    assert down in pixels(300, REGION_LANE * (STRIP_PX + 1) + 2, band=2)
    assert down not in pixels(300, low, band=1)
    # 199 notes in about 1000 px: a lane of ticks; zoomed in: squares at their candles.
    lane_row = POINT_LANE * (STRIP_PX + 1) + 2
    assert rgb(POINT_COLOR) in pixels(201, lane_row, band=2)
    chart.set_cursor(201)
    chart.zoom(20)
    assert rgb(POINT_COLOR) not in pixels(201, lane_row, band=40)
    y = chart.view.mapFromScene(chart.price_view.mapViewToScene(
        QtCore.QPointF(201, float(c.close[201])))).y()
    top = chart.view.mapFromScene(pane.topLeft()).y()
    assert rgb(POINT_COLOR) in pixels(201, y - top)


def test_an_undo_the_store_refuses_is_reported_and_dropped_from_the_history(host, qtbot):
    host.cursor_to(10)
    host.press(Key.Key_L)
    host.cursor_to(20)
    host.press(Key.Key_X)
    (trade,) = host.layer.model.annotations()
    with AnnotationStore(host.paths.annotations_db) as other:  # another process deletes it
        other.delete(trade.id)
    host.press(Key.Key_Z, CTRL)
    box = host.window.findChild(QtWidgets.QMessageBox)
    assert box is not None and box.isVisible()
    assert "Could not undo “add long trade”" in box.text() and trade.id in box.text()
    assert host.layer.undo_stack.count() == 0
    assert not host.layer.command_actions["annotate.undo"].isEnabled()
    assert host.layer.model.rowCount() == 0 and len(host.layer.graphics) == 0  # as stored
    box.accept()
