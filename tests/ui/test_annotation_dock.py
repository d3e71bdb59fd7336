"""The annotation list dock: columns, sorting, filtering, totals, jumping, files."""

from __future__ import annotations

import json

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from workstation.annotations.model import Point, Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.paths import app_paths
from workstation.ui.annotations.list_model import (
    HOLDING,
    NOTES,
    PNL,
    TIME,
    TYPE,
    AnnotationFilter,
    AnnotationTableModel,
    Totals,
    format_duration,
)

from conftest import Host, make_candles

Key = QtCore.Qt.Key
C = make_candles()


def ts(i: int) -> int:
    return int(C.ts[i])


def trade(direction, i, j, entry, exit_, notes="", **kw):
    return Trade(symbol="ETH/USDT", timeframe="1m", direction=direction, entry_ts=ts(i),
                 entry_price=entry, exit_ts=ts(j), exit_price=exit_, notes=notes, **kw)


SAMPLE = [
    trade("long", 10, 70, 100.0, 102.0, "breakout retest"),   # +2.00 %, 1h
    trade("short", 100, 105, 100.0, 101.0, "faded the spike"),  # -1.00 %, 5m
    trade("long", 200, 230, 100.0, 100.5, tags=("scalp",)),    # +0.50 %, 30m
    Region(symbol="ETH/USDT", timeframe="1m", start_ts=ts(120), end_ts=ts(180),
           label="uptrend", notes="clean trend"),
    Point(symbol="ETH/USDT", timeframe="1m", ts=ts(150), notes="CPI print"),
]


@pytest.fixture
def host(qtbot, tmp_path, candles_csv):
    home = tmp_path / "ws"
    with AnnotationStore(app_paths(home).ensure().annotations_db) as store:
        store.merge(SAMPLE)
        store.add(Trade(symbol="BTC/USDT", timeframe="1m", direction="long", entry_ts=ts(10),
                        entry_price=1.0, exit_ts=ts(20), exit_price=2.0))  # not listed
    h = Host(qtbot, home)
    h.open_csv(candles_csv)
    yield h
    h.close()


def rows(view_model) -> list[list[str]]:
    return [[view_model.index(r, c).data() for c in range(view_model.columnCount())]
            for r in range(view_model.rowCount())]


def test_the_list_shows_every_annotation_of_the_series_with_its_columns(host):
    table = rows(host.layer.dock.proxy)
    assert [r[TYPE] for r in table] == ["long", "short", "uptrend", "point", "long"]
    first = table[0]
    assert first[TIME] == "2023-11-14 00:10"
    assert (first[PNL], first[HOLDING], first[NOTES]) == ("+2.00", "1h 00m", "breakout retest")
    assert table[1][PNL] == "-1.00" and table[1][HOLDING] == "5m"
    assert table[2][PNL] == "" and table[2][HOLDING] == "1h 00m"  # a region: its span
    assert table[3][HOLDING] == "" and table[3][NOTES] == "CPI print"
    assert host.layer.dock.totals.text() == (
        "5 annotations · 3 trades · win rate 66.7% · mean P&L +0.50%")


def test_sorting_by_a_header_keeps_the_selection(host, qtbot):
    dock = host.layer.dock
    dock.select(host.layer.annotations[SAMPLE[1].id])
    header = dock.table.horizontalHeader()
    header.setSortIndicator(PNL, QtCore.Qt.SortOrder.DescendingOrder)
    assert [r[PNL] for r in rows(dock.proxy)][:3] == ["+2.00", "+0.50", "-1.00"]
    assert dock.current().id == SAMPLE[1].id
    header.setSortIndicator(NOTES, QtCore.Qt.SortOrder.AscendingOrder)
    assert [r[NOTES] for r in rows(dock.proxy)] == ["", "breakout retest", "clean trend",
                                                     "CPI print", "faded the spike"]
    # A new annotation goes to its sorted place.
    host.layer.store.add(trade("short", 300, 310, 100.0, 99.0, "another"))
    assert [r[NOTES] for r in rows(dock.proxy)][1:3] == ["another", "breakout retest"]


def test_filters_by_kind_and_words_and_totals_follow(host, qtbot):
    dock = host.layer.dock
    dock.kind.setCurrentText("Long")
    assert [r[TYPE] for r in rows(dock.proxy)] == ["long", "long"]
    qtbot.waitUntil(lambda: dock.totals.text() ==
                    "2 annotations · 2 trades · win rate 100.0% · mean P&L +1.25%")
    dock.kind.setCurrentText("All")
    QTest.keyClicks(dock.filter, "SPIKE faded")
    assert [r[NOTES] for r in rows(dock.proxy)] == ["faded the spike"]
    dock.filter.clear()
    QTest.keyClicks(dock.filter, "scalp")  # tags are searched too
    assert [r[PNL] for r in rows(dock.proxy)] == ["+0.50"]
    dock.filter.clear()
    dock.kind.setCurrentText("Regions")
    assert [r[TYPE] for r in rows(dock.proxy)] == ["uptrend"]
    qtbot.waitUntil(lambda: dock.totals.text() ==
                    "1 annotation · 0 trades · win rate — · mean P&L —")


def test_enter_or_double_click_on_a_row_moves_the_chart_there(host, qtbot):
    dock = host.layer.dock
    table = dock.table
    table.setFocus()
    dock.select(host.layer.annotations[SAMPLE[3].id])
    QTest.keyClick(table, Key.Key_Return)
    assert host.chart.cursor_index == 120
    assert host.chart.view.hasFocus()
    lo, hi = host.chart.visible_range()
    assert lo <= 120 < hi
    point_row = dock.proxy.mapFromSource(host.layer.model.index(
        host.layer.model.row_of(SAMPLE[4].id), 0))
    rect = table.visualRect(point_row)
    QTest.mouseClick(table.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=rect.center())
    assert host.chart.cursor_index == 120  # a single click selects, nothing more
    QTest.mouseDClick(table.viewport(), QtCore.Qt.MouseButton.LeftButton,
                      pos=rect.center())
    assert host.chart.cursor_index == 150
    assert host.layer.graphics.selected.id == SAMPLE[4].id


def test_a_bad_import_file_imports_nothing_and_names_the_record_and_field(host, tmp_path,
                                                                           qtbot):
    from workstation.annotations.io import to_json_record

    good = to_json_record(trade("long", 300, 320, 100.0, 101.0))
    bad = to_json_record(trade("short", 330, 340, 100.0, 99.0))
    bad["exit_price"] = -5
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"version": 2, "annotations": [good, bad]}))
    before = len(host.layer.store)
    host.layer.import_file(path)
    box = host.window.findChild(QtWidgets.QMessageBox, "annotationFileError")
    assert box.isVisible() and "Nothing was imported from bad.json" in box.text()
    assert "Record: 2 in the file" in box.informativeText()
    assert "Field: exit_price" in box.informativeText()
    assert "annotations[1]" in box.informativeText()
    assert len(host.layer.store) == before and host.layer.model.rowCount() == 5
    box.accept()


def test_export_then_import_into_a_fresh_data_dir_brings_everything_back(host, qtbot,
                                                                         tmp_path,
                                                                         candles_csv):
    json_path, csv_path = tmp_path / "all.json", tmp_path / "trades.csv"
    host.layer.export_file(json_path)
    assert host.layer.last_message.startswith("Exported 6 annotations")  # every series
    host.layer.export_file(csv_path)
    assert "2 regions and points left out" in host.layer.last_message
    fresh = Host(qtbot, tmp_path / "fresh")
    fresh.open_csv(candles_csv)
    assert fresh.layer.model.rowCount() == 0
    fresh.layer.import_file(json_path)
    assert sorted(a.id for a in fresh.layer.model.annotations()) == sorted(a.id for a in SAMPLE)
    fresh.layer.import_file(json_path)  # again: nothing new
    assert "0 added" in fresh.layer.last_message and fresh.layer.model.rowCount() == 5
    fresh.close()


def test_a_csv_without_symbol_and_timeframe_gets_the_charts(host, tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("direction,entry_ts,entry_price,exit_ts,exit_price,notes\n"
                    f"short,{ts(250)},100,{ts(260)},95,from my spreadsheet\n")
    host.layer.import_file(path)
    (imported,) = [a for a in host.layer.model.annotations() if a.notes == "from my spreadsheet"]
    assert (imported.symbol, imported.timeframe, round(imported.pnl_pct, 2)) == (
        "ETH/USDT", "1m", 5.0)
    assert len(host.layer.graphics.trades) == 4


def test_marks_of_a_symbol_without_candles_import_with_one_line_saying_so(host, tmp_path):
    path = tmp_path / "sol.csv"
    path.write_text("symbol,timeframe,direction,entry_ts,entry_price,exit_ts,exit_price\n"
                    + "".join(f"SOL/USDT,1m,long,{ts(10 * i)},100,{ts(10 * i + 5)},101\n"
                              for i in range(3)))
    host.layer.import_file(path)
    message = host.window.statusBar().currentMessage()
    assert message == host.layer.last_message and message.startswith("Imported sol.csv:")
    assert message.endswith("; 3 annotations of SOL/USDT imported; no candles of SOL/USDT "
                            "are in the cache yet")
    assert len(host.layer.store.list(symbol="SOL/USDT")) == 3
    path.write_text("direction,entry_ts,entry_price,exit_ts,exit_price\n"
                    f"long,{ts(300)},100,{ts(310)},101\n")  # the chart's: ETH/USDT
    host.layer.import_file(path)
    assert "1 added" in host.layer.last_message and "no candles" not in host.layer.last_message


def test_totals_and_formats():
    assert Totals.of([]).text() == "0 annotations · 0 trades · win rate — · mean P&L —"
    assert Totals.of(SAMPLE[:3]).win_rate == pytest.approx(2 / 3)
    assert [format_duration(ms) for ms in (5_000, 720_000, 11_100_000, 187_200_000)] == [
        "5s", "12m", "3h 05m", "2d 04h"]


def test_the_model_and_filter_stand_alone(qtbot):
    model = AnnotationTableModel()
    proxy = AnnotationFilter()
    proxy.setSourceModel(model)
    model.set_annotations(SAMPLE)
    model.sort(TYPE, QtCore.Qt.SortOrder.DescendingOrder)
    assert [r[TYPE] for r in rows(model)] == ["uptrend", "short", "point", "long", "long"]
    proxy.set_kind("Trades")
    assert proxy.rowCount() == 3
    model.remove(SAMPLE[0].id)
    assert proxy.rowCount() == 2 and model.row_of(SAMPLE[0].id) == -1
    with pytest.raises(ValueError, match="unknown kind"):
        proxy.set_kind("Trade")


def test_bench_chart_annotations_prints_one_json_object_per_case(capsys):
    from workstation.cli import main

    assert main(["bench", "chart-annotations", "--candles", "20000", "--annotations", "500",
                 "--reps", "3", "--loads", "1", "--json"]) == 0
    cases = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert [c["case"] for c in cases] == ["load", "pan", "pan", "pan", "add"]
    load = cases[0]
    assert load["annotations"] == 500 and load["load_ms_median"] > 0 and load["store_ms"] > 0
    assert [c["view"] for c in cases[1:4]] == ["500", "20k", "all"]
    assert cases[3]["visible_annotations"] >= 495  # all but the first 40 candles shown
    for c in cases[1:4]:
        assert c["without_ms_median"] > 0 and 0 < c["with_ms_median"] <= c["with_ms_p95"]
        assert set(c["targets"]) == set(c["chart_alone_targets"]) == {"pan_ms_median",
                                                                      "pan_ms_p95"}
        assert c["chart_alone_targets"]["pan_ms_median"] == (c["without_ms_median"] <= 8.0)
    assert cases[4]["add_ms_median"] > 0


def test_n_visits_two_annotations_that_start_on_one_candle_and_the_list_follows(host):
    note = Point(symbol="ETH/USDT", timeframe="1m", ts=ts(100), notes="spike")
    host.layer.store.add(note)  # starts on the short trade's candle
    host.focus_chart()
    host.press(Key.Key_Home)
    stops = []
    for _ in range(4):
        host.press(Key.Key_N)
        stops.append((host.chart.cursor_index, host.layer.dock.current().id))
    assert stops == [(10, SAMPLE[0].id), (100, note.id), (100, SAMPLE[1].id),
                     (120, SAMPLE[3].id)]
    assert host.layer.graphics.selected.id == SAMPLE[3].id
    host.press(Key.Key_P, times=2)
    assert (host.chart.cursor_index, host.layer.dock.current().id) == (100, note.id)


def test_texts_that_do_not_fit_the_list_are_elided_in_the_middle_with_tooltips(host, qtbot):
    notes = "binance ETH/USDT breakout above the weekly high right after the CPI print"
    host.layer.store.add(Point(symbol="ETH/USDT", timeframe="1m", ts=ts(300), notes=notes))
    dock, table = host.layer.dock, host.layer.dock.table
    host.window.resizeDocks([dock], [300], QtCore.Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: dock.width() <= 320)
    index = dock.proxy.mapFromSource(host.layer.model.index(
        host.layer.model.row_of(host.layer.model.annotations()[-1].id), 4))
    assert index.data() == notes
    option = QtWidgets.QStyleOptionViewItem()
    table.itemDelegate().initStyleOption(option, index)
    option.rect = table.visualRect(index)
    text_rect = table.style().subElementRect(
        QtWidgets.QStyle.SubElement.SE_ItemViewItemText, option, table)
    assert option.fontMetrics.horizontalAdvance(notes) > text_rect.width()  # it does not fit
    assert table.textElideMode() == QtCore.Qt.TextElideMode.ElideMiddle
    shown = option.fontMetrics.elidedText(notes, table.textElideMode(), text_rect.width())
    head, tail = shown.split("…")
    assert head and tail and notes.startswith(head) and notes.endswith(tail)
    assert index.data(QtCore.Qt.ItemDataRole.ToolTipRole) == notes
    time_index = index.siblingAtColumn(0)
    assert time_index.data(QtCore.Qt.ItemDataRole.ToolTipRole) == time_index.data()
    dock.show_series(host.layer.series, "chart 1 of binance_ethusdt_spot_2023_11_1m.csv.gz")
    label = dock.series_label
    assert "…" in label.shown_text() and label.text() in label.toolTip()
