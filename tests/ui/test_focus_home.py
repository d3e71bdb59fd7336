"""The keyboard belongs to the active chart: at launch, after a layout switch, after a dialog,
the palette, the cheat sheet or a source switch; the data bar takes it only on its own keys
and hands it back on Enter or Esc; the palette ranks the closest match first, always has a
row chosen, runs it on Enter (or says why not) and says when nothing matches; every control
is reachable from it. The real main window on the offscreen platform (the real-window tests
in ``test_real_window.py`` drive the same on an X server)."""

from __future__ import annotations

import asyncio

import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from workstation.ui.help import match_rank

from conftest import SERIES, Key

CTRL = QtCore.Qt.KeyboardModifier.ControlModifier
SHIFT = QtCore.Qt.KeyboardModifier.ShiftModifier
ALT = QtCore.Qt.KeyboardModifier.AltModifier


def focused() -> QtWidgets.QWidget | None:
    return QtWidgets.QApplication.focusWidget()


@pytest.fixture
def window(csv_window, candles_csv):
    """The main window as the app shows it (nothing focused by the test), on a CSV file."""
    return csv_window(candles_csv, *SERIES)


def test_at_launch_the_chart_has_the_keyboard_not_the_source_field(qtbot, paths):
    from workstation.ui.main_window import MainWindow

    win = MainWindow(paths)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    qtbot.waitUntil(win.chart.view.hasFocus)  # before any source is open
    QTest.keyClick(focused(), Key.Key_Question)  # a chart key: the cheat sheet, not "demo?"
    assert win.cheat_sheet.isVisible()
    assert "?" not in win.data_bar.values()[0]
    QTest.keyClick(focused(), Key.Key_Escape)
    qtbot.waitUntil(win.chart.view.hasFocus)
    asyncio.run(win.shutdown())


def test_a_source_switch_leaves_the_keyboard_on_the_chart(window, qtbot, candles_csv):
    window.data_bar.open_button.setFocus()  # a click on Open, say
    qtbot.waitUntil(window.data_bar.open_button.hasFocus)
    asyncio.run(window.open_source(f"csv:{candles_csv}", SERIES[0], SERIES[1]))
    qtbot.waitUntil(window.chart.view.hasFocus)


@pytest.mark.parametrize("key", [Key.Key_4, Key.Key_2, Key.Key_1])
def test_after_a_layout_switch_the_active_chart_has_the_keyboard(window, qtbot, key):
    qtbot.waitUntil(window.chart.view.hasFocus)
    QTest.keyClick(focused(), key, ALT)
    active = window.chart_area.active_chart
    qtbot.waitUntil(active.view.hasFocus)
    before = active.visible_range()
    QTest.keyClick(focused(), Key.Key_Minus)  # the chart's keys act at once
    assert active.visible_range() != before


@pytest.mark.parametrize("overlay", ["palette", "cheat sheet"])
def test_closing_an_overlay_gives_the_keyboard_to_the_chart_not_a_text_field(window, qtbot,
                                                                            overlay):
    field = window.annotations.dock.filter  # a text field had the keyboard before
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)
    if overlay == "palette":
        QTest.keyClick(field, Key.Key_K, CTRL)
        qtbot.waitUntil(window.command_palette.query.hasFocus)
    else:
        window.cheat_sheet.open()
        qtbot.waitUntil(window.cheat_sheet.tree.hasFocus)
    QTest.keyClick(focused(), Key.Key_Escape)
    qtbot.waitUntil(window.chart.view.hasFocus)
    QTest.keyClick(focused(), Key.Key_L)  # a chart key opens a trade, types nothing
    assert field.text() == ""


def test_after_a_dialog_closes_the_chart_has_the_keyboard(window, qtbot):
    window.data_bar.open_button.setFocus()
    qtbot.waitUntil(window.data_bar.open_button.hasFocus)
    box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Information, "Workstation",
                                "A dialog", QtWidgets.QMessageBox.StandardButton.Ok, window)
    QtCore.QTimer.singleShot(0, box.accept)
    box.exec()  # as show_about and every question of the window
    qtbot.waitUntil(window.chart.view.hasFocus)


def test_the_data_bar_takes_the_keyboard_on_its_keys_and_hands_it_back(window, qtbot):
    bar = window.data_bar
    shown = bar.values()
    qtbot.waitUntil(window.chart.view.hasFocus)
    QTest.keyClick(focused(), Key.Key_L, CTRL)  # Ctrl+L: the source field, its text chosen
    qtbot.waitUntil(bar.source_edit.hasFocus)
    assert bar.source_edit.selectedText() == bar.source.currentText()
    QTest.keyClicks(focused(), "binanse")
    QTest.keyClick(focused(), Key.Key_Tab)  # Tab walks the bar's own fields
    assert bar.symbol.hasFocus()
    QTest.keyClick(focused(), Key.Key_Tab)
    assert bar.timeframe.hasFocus()
    QTest.keyClick(focused(), Key.Key_Backtab)
    assert bar.symbol.hasFocus()
    QTest.keyClick(focused(), Key.Key_Escape)  # Esc: what is shown comes back, and the chart
    qtbot.waitUntil(window.chart.view.hasFocus)
    assert bar.values() == shown

    requested = []
    bar.open_requested.disconnect(window._open_requested)  # no event loop runs here to open
    bar.open_requested.connect(lambda *values: requested.append(values))
    QTest.keyClick(focused(), Key.Key_I, CTRL | SHIFT)  # the timeframe: Down, Enter opens
    qtbot.waitUntil(bar.timeframe.hasFocus)
    QTest.keyClick(focused(), Key.Key_Down)
    QTest.keyClick(focused(), Key.Key_Return)
    assert requested == [(shown[0], shown[1], "3m")]
    qtbot.waitUntil(window.chart.view.hasFocus)
    QTest.keyClick(focused(), Key.Key_S, CTRL | SHIFT)
    qtbot.waitUntil(bar.symbol.hasFocus)
    QTest.keyClick(focused(), Key.Key_Return)  # Enter in the symbol field opens too
    assert len(requested) == 2
    qtbot.waitUntil(window.chart.view.hasFocus)


def test_a_long_source_keeps_its_file_name_and_reads_whole_when_edited(window, qtbot):
    bar = window.data_bar
    folder = "csv:/home/trader/exports/binance/spot/2024"
    other = f"{folder}/btcusdt_1m.csv.gz"
    bar.set_values(other, "BTC/USDT", "1m")
    other_shown = bar.source.currentText()
    long = f"{folder}/ethusdt_1m.csv.gz"
    bar.set_values(long, "ETH/USDT", "1m")
    shown = bar.source.currentText()
    assert shown != long and "…" in shown and shown.endswith("/ethusdt_1m.csv.gz")
    assert shown.startswith("csv:/") and other_shown.endswith("/btcusdt_1m.csv.gz")
    assert long in bar.source.toolTip()
    assert bar.values()[0] == long
    bar.edit(bar.source)
    qtbot.waitUntil(bar.source_edit.hasFocus)
    assert bar.source.currentText() == long  # edited whole


def test_the_palette_ranks_the_closest_match_first_and_chooses_it(window, qtbot):
    palette = window.command_palette
    for query, first in (("Start training", "Training: Start training"),
                         ("stop", "Training: Stop"), ("zoom", "Chart: Zoom in"),
                         ("csv", "File: Open a candle file (CSV)…"),
                         ("open file", "File: Open a candle file (CSV)…"),
                         ("csv file", "File: Open a candle file (CSV)…")):
        palette.open_palette()
        QTest.keyClicks(palette.query, query)
        assert palette.labels()[0] == first, query
        assert palette.chosen() == first  # the first row is always the chosen one
        QTest.keyClick(palette.query, Key.Key_Escape)


def test_the_chosen_palette_row_is_drawn_highlighted(window, qtbot):
    palette = window.command_palette
    palette.open_palette()
    QTest.keyClicks(palette.query, "zoom")
    QtWidgets.QApplication.processEvents()
    rect = palette.list.visualItemRect(palette.list.item(0))
    image = palette.list.viewport().grab().toImage()
    colour = QtGui.QColor(image.pixel(rect.right() - 4, rect.center().y()))
    assert colour.name() == "#2962ff"


def test_enter_runs_the_chosen_row_says_why_not_or_that_nothing_matches(window, qtbot):
    palette = window.command_palette
    QTest.keyClick(window.chart.view, Key.Key_K, CTRL)
    qtbot.waitUntil(palette.query.hasFocus)
    QTest.keyClicks(palette.query, "xyzzy")
    assert palette.labels() == [] and palette.chosen() is None
    assert palette.hint.isVisible() and "xyzzy" in palette.hint.text()
    QTest.keyClick(palette.query, Key.Key_Return)  # nothing to run: it stays, nothing breaks
    assert palette.isVisible()

    palette.query.clear()
    QTest.keyClicks(palette.query, "Training: Stop")  # nothing runs: not available now
    assert palette.chosen() == "Training: Stop"
    QTest.keyClick(palette.query, Key.Key_Return)
    assert palette.isVisible() and "not available now" in palette.hint.text()

    palette.query.clear()
    QTest.keyClicks(palette.query, "light theme")
    QTest.keyClick(palette.query, Key.Key_Return)
    assert not palette.isVisible()
    assert window.theme_actions["light"].isChecked()
    qtbot.waitUntil(window.chart.view.hasFocus)


def test_match_rank_orders_exact_prefix_word_and_inside():
    assert match_rank("start training", "Training: Start training", "F5") == 0
    assert match_rank("start", "Training: Start training") == 1
    assert match_rank("start tr", "Training: Restart run") == 3  # inside words only
    assert match_rank("start", "Training: Restart run") == 3
    assert match_rank("tr st", "Training: Start training") == 2
    assert match_rank("candle", "File: Quit", "Ctrl+Q", "Stop and close the window") is None
    assert match_rank("cache", "File: Open a candle file (CSV)…", "", "imported into the "
                      "candle cache") == 4
    assert match_rank("", "Anything: at all") == 3


def test_every_control_is_reachable_from_the_palette(window, qtbot):
    from workstation.ui.help import palette_entries
    from workstation.ui.keymap import TRAINING_TABS

    labels = dict(palette_entries(window))
    for wanted in ("Data: Choose the source", "Data: Choose the symbol",
                   "Data: Choose the timeframe", "Charts: Four charts (2x2)",
                   "Charts: One chart", "File: Open a candle file (CSV)…",
                   *(f"View: Training workspace: {tab}" for tab in TRAINING_TABS)):
        assert wanted in labels, wanted
    labels["View: Training workspace: Runs"].trigger()
    tabs = window.training.curves.tabs
    assert window.centre_tabs.currentWidget() is window.training_workspace.page
    assert tabs.tabText(tabs.currentIndex()) == "Runs"
    qtbot.waitUntil(tabs.tabBar().hasFocus)
    QTest.keyClick(focused(), Key.Key_1, CTRL)  # and back to the chart
    qtbot.waitUntil(window.chart.view.hasFocus)
