"""Keyboard everywhere, in the real main window on the offscreen platform (no window manager):
the command palette and the cheat sheet are overlays that take the keyboard, the palette's
entries are unique and name what they act on, the cheat sheet fits and scrolls, the notes
editor keeps Enter and Tab and saves with Ctrl+Enter, Ctrl+1 brings the keyboard back to the
chart, Tab walks the areas in screen order, and the widget with the focus looks different
in both themes."""

from __future__ import annotations

import asyncio

import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from workstation.market.timeframes import ONE_MINUTE
from workstation.ui.focus import window_areas
from workstation.ui.help import palette_entries

from conftest import SERIES, Key

CTRL = QtCore.Qt.KeyboardModifier.ControlModifier
ACCENT = QtGui.QColor("#2962ff").rgb()


@pytest.fixture
def window(qtbot, paths, candles_csv):
    """The main window showing ``make_candles()`` from a CSV file, the chart focused."""
    from workstation.ui.main_window import MainWindow

    win = MainWindow(paths)
    qtbot.addWidget(win)
    win.resize(1500, 900)
    win.show()
    qtbot.waitExposed(win)
    asyncio.run(win.open_source(f"csv:{candles_csv}", SERIES[0], SERIES[1]))
    qtbot.waitUntil(lambda: win.chart.candles is win.live.candles and len(win.live.candles) > 0)
    focus_chart(qtbot, win)
    yield win
    asyncio.run(win.shutdown())


def focus_chart(qtbot, win) -> None:
    win.activateWindow()
    win.chart.view.setFocus()
    qtbot.waitUntil(win.chart.view.hasFocus)


def focused() -> QtWidgets.QWidget | None:
    return QtWidgets.QApplication.focusWidget()


def test_ctrl_k_opens_the_palette_with_the_focus_in_its_field_and_typing_filters(window,
                                                                                   qtbot):
    palette = window.command_palette
    QTest.keyClick(window.chart.view, Key.Key_K, CTRL)
    assert palette.isVisible() and palette.parentWidget() is window  # inside the window
    qtbot.waitUntil(palette.query.hasFocus)
    everything = palette.labels()
    QTest.keyClicks(focused(), "zoom in")
    assert palette.query.text() == "zoom in"
    shown = palette.labels()
    assert "Chart: Zoom in" in shown and len(shown) < len(everything)
    assert all("zoom" in label.lower() for label in shown)

    QTest.keyClick(palette.query, Key.Key_Escape)  # Esc closes, the chart has the keys again
    assert not palette.isVisible()
    qtbot.waitUntil(window.chart.view.hasFocus)

    QTest.keyClick(window.chart.view, Key.Key_K, CTRL)
    qtbot.waitUntil(palette.query.hasFocus)
    QTest.keyClicks(palette.query, "cursor first")
    assert palette.labels() == ["Chart: Cursor to first candle"]
    QTest.keyClick(palette.query, Key.Key_Return)  # runs it
    assert not palette.isVisible() and window.chart.cursor_index == 0
    qtbot.waitUntil(window.chart.view.hasFocus)


def test_palette_entries_are_unique_and_say_what_they_act_on(window):
    labels = [label for label, _action in palette_entries(window)]
    assert len(labels) == len(set(labels)), sorted(label for label in labels
                                                   if labels.count(label) > 1)
    assert all(": " in label and label.split(": ", 1)[1] for label in labels)
    assert "File: Open a candle file (CSV)…" in labels
    assert "Annotate: Export annotations…" in labels and "File: Export candles…" in labels
    assert "Chart: Focus chart 1" in labels and "Charts: Focus chart 4" in labels
    assert "View: Show / hide the Log panel" in labels
    assert not any(label.endswith("Export...") for label in labels)  # plots' right-click menu
    window.command_palette.open_palette()
    assert len(window.command_palette.labels()) == len(labels)  # the list shows them all


def test_export_candles_writes_the_closed_candles_on_screen(window, tmp_path):
    from workstation.market.csv_io import read_candles_csv

    labels = [label for label, _action in palette_entries(window)]
    assert "File: Export candles…" in labels
    written = window.export_candles(str(tmp_path / "out.csv"))
    candles = window.live.candles
    back = read_candles_csv(written, ONE_MINUTE)
    assert len(back) == len(candles) and (back.close == candles.close).all()
    assert (back.ts == candles.ts).all()
    (tmp_path / "taken.csv").mkdir()  # a folder where the file would go: said, not written
    assert window.export_candles(str(tmp_path / "taken.csv")) is None
    assert "not exported" in window.statusBar().currentMessage()


@pytest.mark.parametrize("size", ["1500x900", "smallest"])
def test_the_cheat_sheet_fits_the_window_and_scrolls(window, qtbot, size):
    wanted = (QtCore.QSize(1500, 900) if size == "1500x900"
              else window.minimumSizeHint().expandedTo(window.minimumSize()))
    window.resize(wanted)
    qtbot.waitUntil(lambda: window.size() == wanted)
    sheet = window.cheat_sheet
    QTest.keyClick(window.chart.view, Key.Key_Question)
    assert sheet.isVisible() and sheet.parentWidget() is window
    qtbot.waitUntil(sheet.tree.hasFocus)
    assert window.rect().contains(sheet.geometry())
    tree, bar = sheet.tree, sheet.tree.verticalScrollBar()
    if size == "smallest":
        assert bar.maximum() > 0  # shorter than the list: it scrolls
    QTest.keyClick(tree, Key.Key_End)  # the keys scroll it to the last row
    last = tree.topLevelItem(tree.topLevelItemCount() - 1)
    rect = tree.visualItemRect(last)
    assert rect.top() >= 0 and rect.bottom() <= tree.viewport().height()  # wholly in view
    assert (bar.value() > 0) == (bar.maximum() > 0)
    QTest.keyClick(tree, Key.Key_Home)
    assert bar.value() == 0
    window.resize(wanted.width() + 200, wanted.height() + 100)  # it follows the window
    qtbot.waitUntil(lambda: sheet.geometry().height() > tree.height() > 0
                    and window.rect().contains(sheet.geometry()))
    QTest.keyClick(tree, Key.Key_Question)  # ? again closes it
    assert not sheet.isVisible()
    qtbot.waitUntil(window.chart.view.hasFocus)
    QTest.keyClick(window.chart.view, Key.Key_Question)
    QTest.keyClick(tree, Key.Key_Escape)  # so does Esc
    assert not sheet.isVisible()


def _trade_on_the_chart(window) -> None:
    view = window.chart.view
    window.chart.set_cursor(100)
    QTest.keyClick(view, Key.Key_L)
    window.chart.set_cursor(110)
    QTest.keyClick(view, Key.Key_X)
    window.chart.set_cursor(105)


def test_the_notes_editor_keeps_enter_and_tab_saves_with_ctrl_enter_cancels_with_esc(window,
                                                                                     qtbot):
    _trade_on_the_chart(window)
    layer, editor = window.annotations, window.annotations.notes_editor
    (trade,) = layer.model.annotations()
    QTest.keyClick(window.chart.view, Key.Key_E)
    assert editor.isVisible() and editor.parentWidget() is window
    qtbot.waitUntil(editor.text.hasFocus)
    QTest.keyClicks(editor.text, "first")
    QTest.keyClick(editor.text, Key.Key_Tab)
    QTest.keyClicks(editor.text, "tabbed")
    QTest.keyClick(editor.text, Key.Key_Return)
    QTest.keyClicks(editor.text, "second")
    assert editor.isVisible() and editor.text.hasFocus()  # Tab and Enter stayed in the text
    assert editor.text.toPlainText() == "first\ttabbed\nsecond"
    QTest.keyClick(editor.text, Key.Key_Escape)  # cancel: nothing saved
    assert not editor.isVisible()
    assert layer.store.get(trade.id).notes == ""
    qtbot.waitUntil(window.chart.view.hasFocus)

    QTest.keyClick(window.chart.view, Key.Key_E)
    qtbot.waitUntil(editor.text.hasFocus)
    QTest.keyClicks(editor.text, "saved")
    QTest.keyClick(editor.text, Key.Key_Enter)  # the keypad's Enter is a new line too
    QTest.keyClicks(editor.text, "too")
    QTest.keyClick(editor.text, Key.Key_Return, CTRL)
    assert not editor.isVisible()
    assert layer.store.get(trade.id).notes == "saved\ntoo"
    qtbot.waitUntil(window.chart.view.hasFocus)
    QTest.keyClick(window.chart.view, Key.Key_E)
    qtbot.waitUntil(editor.text.hasFocus)
    assert editor.text.toPlainText() == "saved\ntoo"  # it opens on the notes saved
    QTest.keyClicks(editor.text, "!")
    QTest.keyClick(editor.text, Key.Key_Enter, CTRL | QtCore.Qt.KeyboardModifier.KeypadModifier)
    assert layer.store.get(trade.id).notes == "saved\ntoo!"


def test_ctrl_1_brings_the_keyboard_back_to_the_chart_and_its_arrows_work_again(window,
                                                                                   qtbot):
    chart = window.chart
    chart.set_cursor(50)
    for field in (window.annotations.dock.filter, window.data_bar.symbol):
        field.setFocus()
        qtbot.waitUntil(field.hasFocus)
        QTest.keyClick(field, Key.Key_Right)  # the text field's, not the chart's
        assert chart.cursor_index == 50
        QTest.keyClick(field, Key.Key_1, CTRL)
        qtbot.waitUntil(chart.view.hasFocus)
        QTest.keyClick(chart.view, Key.Key_Right)
        assert chart.cursor_index == 51
        chart.set_cursor(50)
    tabs = next((w for w in _ancestors(chart) if isinstance(w, QtWidgets.QTabWidget)), None)
    if tabs is not None and tabs.count() > 1:  # another tab in front of the chart's
        chart_tab = tabs.currentIndex()
        tabs.setCurrentIndex(1 - chart_tab if chart_tab < 2 else 0)
        qtbot.waitUntil(lambda: not chart.view.isVisible())
        window.data_bar.symbol.setFocus()
        qtbot.waitUntil(window.data_bar.symbol.hasFocus)
        QTest.keyClick(window.data_bar.symbol, Key.Key_1, CTRL)
        qtbot.waitUntil(chart.view.hasFocus)  # its tab came forward
        assert tabs.currentIndex() == chart_tab
    window.cheat_sheet.open()
    assert ("Ctrl+1", "Focus chart 1") in window.cheat_sheet.rows()  # listed with its key


def _ancestors(widget):
    parent = widget.parentWidget()
    while parent is not None:
        yield parent
        parent = parent.parentWidget()


def test_tab_walks_the_areas_in_the_order_they_sit_on_screen(window, qtbot):
    areas = window_areas(window)

    def area_of(widget) -> int:
        return next(i for i, area in enumerate(areas) if area is widget
                    or area.isAncestorOf(widget))

    start = window.chart.view
    assert focused() is start
    visited = []
    for _ in range(200):
        widget = focused()
        visited.append((area_of(widget), widget))
        QTest.keyClick(widget, Key.Key_Tab)
        if focused() is start:
            break
    else:
        pytest.fail("Tab never came back to the chart")
    order = [i for i, _widget in visited]
    assert order == sorted(order)  # area after area, never back
    reached = {areas[i] for i in order}
    assert {window.centralWidget(), window.annotations.dock, window.log_dock} <= reached
    assert window.data_bar not in reached  # it takes the keyboard on its own keys only


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_the_focused_widget_wears_the_accent_in_both_themes(window, qtbot, theme):
    window.set_theme(theme)

    def accent_pixels(widget) -> int:
        QtWidgets.QApplication.processEvents()
        image = widget.grab().toImage()
        return sum(image.pixel(x, y) & 0xFFFFFF == ACCENT & 0xFFFFFF
                   for x in range(image.width()) for y in (0, image.height() // 2,
                                                           image.height() - 1))

    for widget in (window.chart.view, window.annotations.dock.filter,
                   window.data_bar.symbol, window.data_bar.open_button,
                   window.annotations.dock.table):
        widget.clearFocus()
        qtbot.waitUntil(lambda w=widget: not w.hasFocus())
        before = accent_pixels(widget)
        widget.setFocus(QtCore.Qt.FocusReason.TabFocusReason)
        qtbot.waitUntil(widget.hasFocus)
        after = accent_pixels(widget)
        assert after > before + 10, (type(widget).__name__, before, after)


def into(qtbot, top, field) -> None:
    top.activateWindow()
    qtbot.waitUntil(top.isActiveWindow)
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)


def test_in_its_own_window_the_workspace_has_the_window_wide_keys_too(window, qtbot):
    workspace = window.training_workspace
    workspace.set_mode("window")
    try:
        own = workspace.window
        own.show()
        qtbot.waitExposed(own)
        field = window.training.curves.x_axis_box  # enabled while the device warms up
        assert field.window() is own
        into(qtbot, own, field)
        QTest.keyClick(field, Key.Key_1, CTRL)  # Ctrl+1: back to the chart, in its window
        qtbot.waitUntil(window.chart.view.hasFocus)
        into(qtbot, own, field)
        QTest.keyClick(field, Key.Key_K, CTRL)  # the palette opens over the main window
        qtbot.waitUntil(window.command_palette.query.hasFocus)
        QTest.keyClick(window.command_palette.query, Key.Key_Escape)
        into(qtbot, own, field)
        QTest.keyClick(field, Key.Key_F8)  # F8 from there: the chart, with the keyboard
        qtbot.waitUntil(window.chart.view.hasFocus)
    finally:
        workspace.set_mode("tab")


def test_tab_leaves_a_table_instead_of_walking_its_cells(window, qtbot):
    evaluation = window.training.evaluation
    window.training_workspace.show_tab("Evaluation")
    evaluation.table.setRowCount(2)
    evaluation.table.setFocus()
    qtbot.waitUntil(evaluation.table.hasFocus)
    assert not evaluation.table.tabKeyNavigation()
    QTest.keyClick(evaluation.table, Key.Key_Tab)
    assert focused() is evaluation.events_table  # the next table, not the next cell


def test_the_wheel_over_an_unfocused_choice_scrolls_the_form_and_changes_nothing(window,
                                                                                 qtbot):
    window.training_workspace.show_tab("Curves")
    panel = window.training
    qtbot.waitUntil(lambda: panel.settings.preset.count() > 1)
    panel.scroll_area.resize(panel.scroll_area.width(), 200)  # the form scrolls
    preset, bar = panel.settings.preset, panel.scroll_area.verticalScrollBar()
    assert bar.maximum() > 0 and not preset.hasFocus()
    chosen, top = preset.currentText(), bar.value()
    centre = QtCore.QPointF(preset.rect().center())
    wheel = QtGui.QWheelEvent(centre, preset.mapToGlobal(centre), QtCore.QPoint(0, 0),
                              QtCore.QPoint(0, -120), QtCore.Qt.MouseButton.NoButton,
                              QtCore.Qt.KeyboardModifier.NoModifier,
                              QtCore.Qt.ScrollPhase.NoScrollPhase, False)
    QtWidgets.QApplication.sendEvent(preset, wheel)
    assert preset.currentText() == chosen and bar.value() > top
