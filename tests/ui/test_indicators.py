"""Indicators in the window, by keys: I opens the editor on the active chart, typing a spec
and Enter adds it, Up/Down choose one to change, Ctrl+Del removes it; the palette's "Add RSI…"
types its settings; each chart keeps its list across restarts; a live tick keeps every value
equal to the core's computation of the whole series and repaints only the last strip."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore
from PySide6.QtTest import QTest

from workstation.indicators import compute, parse_spec
from workstation.market.candles import CandleUpdate
from workstation.ui.help import palette_entries

from conftest import Key

CTRL = QtCore.Qt.KeyboardModifier.ControlModifier
ALT = QtCore.Qt.KeyboardModifier.AltModifier


def type_line(qtbot, widget, text: str) -> None:
    QTest.keyClicks(widget, text)
    QTest.keyClick(widget, Key.Key_Return)


def open_editor(win, qtbot, chart=None):
    chart = chart or win.chart
    chart.take_focus()
    qtbot.waitUntil(chart.view.hasFocus)
    QTest.keyClick(chart.view, Key.Key_I)
    editor = win.indicators.editor
    qtbot.waitUntil(editor.field.hasFocus)
    return editor


def texts(chart) -> list[str]:
    return [s.text for s in chart.indicators.specs]


def test_keys_add_change_and_remove_indicators(demo_window, qtbot):
    win = demo_window()
    editor = open_editor(win, qtbot)
    assert editor.isVisible() and editor.parentWidget() is win  # an overlay in the window
    assert editor.title.text() == "Indicators on chart 1 (1m)"
    type_line(qtbot, editor.field, "ema 50")
    type_line(qtbot, editor.field, "RSI")
    type_line(qtbot, editor.field, "bb 20 2.5")
    assert texts(win.chart) == ["ema 50", "rsi 14", "bb 20 2.5"]
    assert len(win.chart.indicators.panes) == 1  # RSI in a pane of its own, the rest over prices
    assert editor.rows()[-1] == "＋ add new" and editor.field.text() == ""

    QTest.keyClick(editor.field, Key.Key_Up)  # choose bb 20 2.5: its text to change
    QTest.keyClick(editor.field, Key.Key_Up)  # then rsi 14
    assert editor.field.text() == "rsi 14"
    type_line(qtbot, editor.field, "rsi 7")  # the field was selected: typing replaces it
    assert texts(win.chart) == ["ema 50", "rsi 7", "bb 20 2.5"]

    QTest.keyClick(editor.field, Key.Key_Up)
    QTest.keyClick(editor.field, Key.Key_Up)
    QTest.keyClick(editor.field, Key.Key_Up)  # ema 50 (the top stays the top)
    QTest.keyClick(editor.field, Key.Key_Up)
    assert editor.field.text() == "ema 50"
    QTest.keyClick(editor.field, Key.Key_Delete, CTRL)
    assert texts(win.chart) == ["rsi 7", "bb 20 2.5"]
    assert "removed EMA 50" in editor.hint.text()

    assert editor.field.text() == "rsi 7"  # the row that took its place is chosen
    QTest.keyClick(editor.field, Key.Key_Backspace)  # its text was selected: now empty
    type_line(qtbot, editor.field, "")  # an empty text changes nothing
    assert "no indicator given" in editor.hint.text()
    QTest.keyClick(editor.field, Key.Key_Escape)
    assert not editor.isVisible()
    qtbot.waitUntil(win.chart.view.hasFocus)  # the keys are the chart's again
    assert texts(win.chart) == ["rsi 7", "bb 20 2.5"]


def test_a_bad_text_says_why_and_changes_nothing(demo_window, qtbot):
    win = demo_window()
    editor = open_editor(win, qtbot)
    type_line(qtbot, editor.field, "macd 12 26")
    assert "no indicator called 'macd'" in editor.hint.text()
    QTest.keyClick(editor.field, Key.Key_A, CTRL)
    type_line(qtbot, editor.field, "ema 0")
    assert "from 1 to 10000" in editor.hint.text()
    assert texts(win.chart) == [] and editor.field.text() == "ema 0"  # kept, to put right
    QTest.keyClick(editor.field, Key.Key_A, CTRL)
    type_line(qtbot, editor.field, "ema 9")
    type_line(qtbot, editor.field, "ema 9")
    assert "already" in editor.hint.text() and texts(win.chart) == ["ema 9"]


def test_palette_add_rsi_types_its_settings(demo_window, qtbot):
    win = demo_window()
    labels = dict(palette_entries(win))
    assert {"Indicators: Indicators…", "Indicators: Add RSI…", "Indicators: Add EMA…",
            "Indicators: Add volume profile…", "Indicators: Remove all indicators"} <= set(labels)
    win.chart.take_focus()
    QTest.keyClick(win.chart.view, Key.Key_K, CTRL)
    palette = win.command_palette
    qtbot.waitUntil(palette.query.hasFocus)
    type_line(qtbot, palette.query, "add rsi")
    editor = win.indicators.editor
    qtbot.waitUntil(editor.field.hasFocus)
    assert editor.field.text() == "rsi 14" and editor.field.selectedText() == "14"
    type_line(qtbot, editor.field, "21")
    assert texts(win.chart) == ["rsi 21"]
    labels["Indicators: Remove all indicators"].trigger()
    assert texts(win.chart) == [] and not win.chart.indicators.panes


def test_each_chart_keeps_its_indicators_across_restarts(demo_window, qtbot):
    win = demo_window()
    editor = open_editor(win, qtbot)
    type_line(qtbot, editor.field, "vwap")
    type_line(qtbot, editor.field, "vp 30")
    QTest.keyClick(editor.field, Key.Key_Escape)
    QTest.keyClick(win.chart.view, Key.Key_4, ALT)  # four charts; chart 2 active by Ctrl+2
    QTest.keyClick(win.chart.view, Key.Key_2, CTRL)
    second = win.chart_area.charts[1]
    qtbot.waitUntil(lambda: win.chart_area.active == 1)
    editor = open_editor(win, qtbot, second)
    assert editor.title.text().startswith("Indicators on chart 2")
    type_line(qtbot, editor.field, "atr 10")
    assert texts(second) == ["atr 10"] and texts(win.chart) == ["vwap", "vp 30"]
    again = demo_window()
    assert texts(again.chart) == ["vwap", "vp 30"]
    assert texts(again.chart_area.charts[1]) == ["atr 10"]
    assert texts(again.chart_area.charts[2]) == []


def test_a_damaged_setting_is_left_out_with_a_log_line(demo_window, qtbot, caplog):
    win = demo_window()
    win.settings.setValue("charts/indicators_1", ["ema 20", "macd", "rsi 99999"])
    win.settings.sync()
    again = demo_window()
    assert texts(again.chart) == ["ema 20"]
    assert "indicator setting 'macd' left out" in caplog.text
    assert "indicator setting 'rsi 99999' left out" in caplog.text


def test_a_live_tick_keeps_values_exact_and_repaints_the_last_strip(demo_window, qtbot):
    win = demo_window()
    chart = win.chart
    for text in ("ema 20", "bb 20 2", "rsi 14", "vwap", "vp 24"):
        chart.indicators.add(parse_spec(text))
    chart.go_live()
    c = win.live.candles
    last = c.row(len(c) - 1)
    rects: list[QtCore.QRectF] = []
    lines = chart.indicators.price_lines
    original = lines.update

    def record(*args):
        rects.extend(a for a in args if isinstance(a, QtCore.QRectF))
        return original(*args)

    lines.update = record
    for k in range(1, 6):  # the forming candle moves, then the next one opens
        price = last.close * (1 + 0.002 * k)
        kind = c.apply(CandleUpdate(last.ts, last.open, max(last.high, price), last.low, price,
                                    last.volume + k, False))
        win.live.candles_changed.emit(kind)
    nxt = last.ts + c.timeframe.ms
    kind = c.apply(CandleUpdate(nxt, price, price, price, price, 1.0, False))
    win.live.candles_changed.emit(kind)
    qtbot.waitUntil(lambda: len(chart.indicators.values[0]) == len(c))
    for spec, values in zip(chart.indicators.specs, chart.indicators.values):
        if values is None:
            continue
        want = compute(spec, c)
        for name in spec.lines:
            np.testing.assert_allclose(values.line(name), want[name], rtol=1e-12,
                                       equal_nan=True)
    view = chart.price_view.viewRect()
    assert rects, "a tick repainted no line"
    unit = chart.frame().unit_width
    for rect in rects:  # the forming candle's strip and the one before, between the values
        assert rect.width() <= 4 * unit < view.width() and rect.height() < view.height()
    rects.clear()
    kind = c.apply(CandleUpdate(nxt, price, price, price, price, 1.0, False))  # no change
    win.live.candles_changed.emit(kind)
    qtbot.wait(10)
    assert rects == []  # nothing moved on screen: no line repaints
    shown = chart.indicators.legend.text()
    assert "EMA 20" in shown and "POC" in shown
