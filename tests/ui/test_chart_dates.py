"""The date is always on screen: the time axis names the day at its boundaries and on its first
label, and the header readout shows a candle that is on screen.

The label rules are checked without Qt (``tick_labels``, ``axis_labels``), then on a real
``ChartWidget`` at 1500x900, offscreen: 1m candles over a midnight (UTC and local), a 2-hour
view, every zoom of 1s to 1d candles (labels whole, apart, the first with the date), and the
readout after PgUp (the cursor goes along) and after the view alone scrolled.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
from PySide6 import QtCore, QtGui
from PySide6.QtTest import QTest

from workstation.market.candles import Candles
from workstation.market.timeframes import parse_timeframe
from workstation.ui.chart import ChartWidget
from workstation.ui.chart.axis import axis_font
from workstation.ui.chart.chart_widget import ZOOM_STEP
from workstation.ui.chart.readout import OFF_CURSOR
from workstation.ui.chart.ticks import TimeTick, axis_labels, format_time, tick_labels

H = 3_600_000
D = 24 * H
MIDNIGHT = 1_679_875_200_000  # 2023-03-27 00:00 UTC
Key = QtCore.Qt.Key
DATED = re.compile(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b|^\d{4}$")


def make_candles(n: int, tf: str = "1m", start: int = MIDNIGHT - 12 * H) -> Candles:
    rng = np.random.default_rng(4)
    close = np.round(100 + np.cumsum(rng.normal(0, 0.3, n)), 2)
    open_ = np.concatenate(([100.0], close[:-1]))
    timeframe = parse_timeframe(tf)
    ts = start + np.arange(n, dtype=np.int64) * timeframe.ms
    return Candles.from_arrays(ts, open_, np.maximum(open_, close) + 0.1,
                               np.minimum(open_, close) - 0.1, close, rng.uniform(1, 9, n),
                               timeframe=timeframe)


@pytest.fixture
def chart(qtbot):
    widget = ChartWidget()
    qtbot.addWidget(widget)
    widget.resize(1500, 900)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.fixture
def india(monkeypatch):
    """The computer's zone is UTC+05:30 (a POSIX rule: no tz database needed)."""
    monkeypatch.setenv("TZ", "IST-5:30")
    time.tzset()
    yield
    monkeypatch.delenv("TZ")
    time.tzset()


def labels(chart: ChartWidget) -> list[tuple[int, str]]:
    return chart.time_axis.shown_ticks()


def x_of_candle(chart: ChartWidget, index: float) -> int:
    tr = chart.time_axis._view_to_local()
    return int(np.floor(tr.m11() * index + tr.dx()))


def tick_xs(chart: ChartWidget) -> list[int]:
    return [x_of_candle(chart, t.x) for t in chart.time_axis.ticks]


def span(x: int, text: str) -> tuple[float, float]:
    """The pixels a label centred at ``x`` covers."""
    half = QtGui.QFontMetricsF(axis_font()).horizontalAdvance(text) / 2
    return x - half, x + half


def on_axis(chart: ChartWidget, x: int, text: str) -> bool:
    left, right = span(x, text)
    return left >= 0 and right <= chart.time_axis.size().width()


def assert_whole_and_apart(chart: ChartWidget, shown: list[tuple[int, str]]) -> None:
    end = -float("inf")
    for x, text in shown:
        assert on_axis(chart, x, text), (x, text, chart.time_axis.size().width())
        left, right = span(x, text)
        assert left > end + 4, (x, text, shown)  # never touching the one before
        end = right


# -- the rules, without Qt ----------------------------------------------------------------------
def test_a_larger_unit_replaces_the_time_at_its_boundary_and_leads_the_first_label():
    minutes = ("fixed", 10 * 60_000)
    assert tick_labels(MIDNIGHT + 9 * H, *minutes, True) == ("09:00", "27 Mar 09:00")
    assert tick_labels(MIDNIGHT, *minutes, True) == ("27 Mar", "27 Mar")
    assert tick_labels(MIDNIGHT + 9 * H + 5_000, "fixed", 5_000, True) == \
        ("09:00:05", "27 Mar 09:00:05")
    new_year = 1_672_531_200_000  # 2023-01-01 00:00 UTC
    assert tick_labels(new_year, *minutes, True) == ("2023", "2023")
    assert tick_labels(MIDNIGHT, "days", 2, True) == ("27", "27 Mar")
    assert tick_labels(MIDNIGHT - 26 * D, "days", 2, True) == ("Mar", "Mar 2023")
    assert tick_labels(MIDNIGHT - 26 * D, "months", 1, True) == ("Mar", "Mar 2023")
    assert tick_labels(new_year, "days", 5, True) == ("2023", "2023")
    assert tick_labels(new_year, "years", 1, True) == ("2023", "2023")


def test_the_day_of_a_label_is_that_of_the_shown_zone(india):
    local_midnight = MIDNIGHT - 5 * H - H // 2  # 2023-03-27 00:00 at UTC+05:30
    assert tick_labels(local_midnight, "fixed", H, False) == ("27 Mar", "27 Mar")
    assert tick_labels(local_midnight, "fixed", H, True) == ("18:30", "26 Mar 18:30")
    assert tick_labels(MIDNIGHT, "fixed", H, False) == ("05:30", "27 Mar 05:30")


def test_the_first_label_that_fits_whole_reads_the_date_and_none_touches_the_next():
    ticks = [TimeTick(float(i), 0, f"{i:02d}:00", f"27 Mar {i:02d}:00") for i in range(6)]
    width = {5: 30.0, 12: 72.0}  # "09:00" 30 px, "27 Mar 09:00" 72 px

    def text_width(text: str) -> float:
        return width[len(text)]

    # At x = 20 the lead (half 36 px) would be cut at the left edge: the next tick leads.
    shown = axis_labels(ticks, [20, 100, 180, 260, 340, 420], text_width, 430, gap=8)
    assert shown == [(100, "27 Mar 01:00"), (180, "02:00"), (260, "03:00"), (340, "04:00")]
    # 420 + 15 > 430: a label the right edge would cut is left out too.
    shown = axis_labels(ticks, [40, 90, 140, 190, 240, 290], text_width, 1000, gap=8)
    assert shown == [(40, "27 Mar 00:00"), (140, "02:00"), (190, "03:00"), (240, "04:00"),
                     (290, "05:00")]  # 90 - 15 is within 8 px of the lead's right end (76)


# -- the widget --------------------------------------------------------------------------------
def test_the_axis_names_the_day_at_midnight_and_on_its_first_label(chart):
    c = make_candles(24 * 60)  # 1m candles from 26 Mar 12:00 to 27 Mar 12:00 UTC
    chart.set_candles(c)
    chart.show_time_range(MIDNIGHT - 3 * H, MIDNIGHT + 3 * H)
    shown = labels(chart)
    texts = [text for _, text in shown]
    assert "27 Mar" in texts, texts
    assert {text: x for x, text in shown}["27 Mar"] == x_of_candle(chart, 12 * 60)
    assert texts[0].startswith("26 Mar ") and re.fullmatch(r"26 Mar \d\d:\d\d", texts[0])
    assert all(re.fullmatch(r"\d\d:\d\d", t) for t in texts[1:] if t != "27 Mar"), texts
    assert len(texts) >= 8
    assert_whole_and_apart(chart, shown)


def test_a_view_of_two_hours_carries_the_date_on_its_first_label(chart):
    chart.set_candles(make_candles(24 * 60))
    chart.show_time_range(MIDNIGHT + 9 * H, MIDNIGHT + 11 * H)
    texts = [text for _, text in labels(chart)]
    assert re.fullmatch(r"27 Mar 09:\d\d", texts[0]), texts
    assert len(texts) >= 8 and all(re.fullmatch(r"\d\d:\d\d", t) for t in texts[1:]), texts
    chart.zoom(ZOOM_STEP ** 3, about=MIDNIGHT + 10 * H)  # closer: the date stays first
    texts = [text for _, text in labels(chart)]
    assert texts[0].startswith("27 Mar ") and len(texts) >= 4, texts


def test_the_day_boundary_moves_to_local_midnight_with_the_time_zone(chart, india):
    chart.set_candles(make_candles(24 * 60))
    local_midnight = MIDNIGHT - 5 * H - H // 2
    chart.show_time_range(local_midnight - 3 * H, local_midnight + 3 * H)  # no UTC midnight
    texts = [text for _, text in labels(chart)]
    assert chart.utc and "27 Mar" not in texts and texts[0].startswith("26 Mar "), texts
    chart.toggle_utc()  # the chart's command: local time
    shown = labels(chart)
    texts = [text for _, text in shown]
    assert not chart.utc and "27 Mar" in texts, texts
    at = {text: x for x, text in shown}["27 Mar"]
    assert at == x_of_candle(chart, (local_midnight - (MIDNIGHT - 12 * H)) // 60_000)
    assert texts[0].startswith("26 Mar ")
    assert_whole_and_apart(chart, shown)


@pytest.mark.parametrize("tf, n", [("1s", 200_000), ("1m", 200_000), ("1h", 50_000),
                                   ("1d", 5_000)])
def test_at_every_zoom_labels_are_whole_apart_and_the_first_names_the_date(chart, tf, n):
    chart.set_candles(make_candles(n, tf, start=MIDNIGHT - 3_000 * D if tf == "1d" else
                                   MIDNIGHT - 3 * D))
    chart.view_model.show_x_range(n / 2 - 4, n / 2 + 4)  # zoomed in the furthest
    seen = set()
    for _ in range(80):
        shown = labels(chart)
        assert len(shown) >= 3, (chart.visible_range(), shown)
        assert_whole_and_apart(chart, shown)
        first = shown[0][1]
        assert DATED.search(first), shown  # a month or a year: "27 Mar 09:00", "Mar 2023"
        leads = {t.lead for t in chart.time_axis.ticks}
        assert first in leads
        # The ticks are far enough apart for their longest labels: none but a lead that
        # the left edge would cut is left out.
        whole = [x for x, t in zip(tick_xs(chart), chart.time_axis.ticks)
                 if on_axis(chart, x, t.label)]
        assert len(shown) >= len(whole) - 1, (whole, shown)
        seen.add(first)
        (x0, x1) = chart.view_model.x_range()
        if x1 - x0 >= n:
            break
        chart.zoom(1 / ZOOM_STEP, about=chart.view_model.time_map.ts_of((x0 + x1) / 2))
    assert len(seen) > 5


def test_the_readout_shows_the_cursor_candle_only_while_it_is_on_screen(chart, qtbot):
    c = make_candles(24 * 60)
    chart.set_candles(c)
    chart.view.setFocus()
    chart.activateWindow()
    qtbot.waitUntil(chart.view.hasFocus)

    def when(i: int) -> str:
        return format_time(int(c.ts[i]), 60_000, True)

    for _ in range(3):  # PgUp: the view pans a screen and the cursor goes along
        QTest.keyClick(chart.view, Key.Key_PageUp)
    i0, i1 = chart.visible_range()
    assert i0 <= chart.cursor_index < i1 < len(c)
    text = chart.readout_text()
    assert text.startswith(when(chart.cursor_index)) and OFF_CURSOR not in text
    cursor = chart.cursor_index

    chart.pan(-(i1 - i0))  # the view alone scrolls back: the cursor is off screen, right
    i0, i1 = chart.visible_range()
    assert chart.cursor_index == cursor and cursor >= i1
    assert chart.readout_text().startswith(f"{OFF_CURSOR}  {when(i1 - 1)} UTC")
    (x0, x1), _ = chart.price_view.viewRange()  # a mouse drag moves the panes first
    chart.price_view.setXRange(x0 - 40, x1 - 40, padding=0)
    i0, i1 = chart.visible_range()
    assert chart.readout_text().startswith(f"{OFF_CURSOR}  {when(i1 - 1)} UTC")

    hovered = i0 + 10  # the mouse over a candle is the cursor over the chart
    scene = chart.price_view.mapViewToScene(QtCore.QPointF(hovered, float(c.close[hovered])))
    QTest.mouseMove(chart.view.viewport(), chart.view.mapFromScene(scene))
    qtbot.waitUntil(lambda: chart.crosshair.data_x == float(hovered))
    assert chart.readout_text().startswith(when(hovered))
    QtCore.QCoreApplication.sendEvent(chart.view.viewport(),
                                      QtCore.QEvent(QtCore.QEvent.Type.Leave))
    assert chart.readout_text().startswith(f"{OFF_CURSOR}  {when(i1 - 1)} UTC")

    QTest.keyClick(chart.view, Key.Key_Left)  # a cursor key brings the cursor into view
    i0, i1 = chart.visible_range()
    assert i0 <= chart.cursor_index == cursor - 1 < i1
    assert chart.readout_text().startswith(when(cursor - 1))
