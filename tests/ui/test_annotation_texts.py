"""P&L texts on the chart are never drawn over each other: trades minutes apart exit on one
candle of an hourly chart, and share one label there ("3 trades +3.03%") whose tooltip lists
them."""

from __future__ import annotations

import numpy as np
from pyqtgraph.Qt import QtCore

from workstation.annotations.model import Trade
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import parse_timeframe
from workstation.timeparse import format_minute
from workstation.ui.annotations.drawing import AnnotationGraphics, _clear_of_each_other
from workstation.ui.chart.text import TextCache

from conftest import shown_chart

END = 1_767_225_600_000
HOUR = 3_600_000


def test_texts_that_would_cover_each_other_are_left_out_left_to_right():
    centre = np.array([100.0, 130.0, 100.0, 300.0, 160.0])
    top = np.array([50.0, 50.0, 200.0, 50.0, 50.0])
    width = np.full(5, 50.0)
    # 130 covers 100 at the same height; 100 lower down and 300 are clear; 160 is clear of
    # 100 (the one kept) though it overlaps 130 (left out)
    assert _clear_of_each_other(centre, top, width, 14.0) == [0, 2, 4, 3]
    assert _clear_of_each_other(centre[:0], top[:0], width[:0], 14.0) == []


def test_trades_exiting_in_one_hour_share_one_label_on_the_hourly_chart(qtbot, monkeypatch):
    chart = shown_chart(qtbot)
    hours = demo_candles(200, parse_timeframe("1h"), seed=1, end_ts=END)
    chart.set_candles(hours, SeriesKey("demo", "DEMO/USDT", parse_timeframe("1h")))
    hour, price = int(hours.ts[-30]), float(hours.close[-30])
    trades = [Trade(symbol="DEMO/USDT", market="demo", timeframe="1m", direction="long",
                    entry_ts=hour + start, entry_price=price,
                    exit_ts=hour + start + 120_000, exit_price=price * (1.01 + k * 1e-4))
              for k, start in enumerate((0, 600_000, 1_200_000))]
    trades.append(Trade(symbol="DEMO/USDT", market="demo", timeframe="1m", direction="short",
                        entry_ts=hour + 3 * HOUR, entry_price=price,
                        exit_ts=hour + 4 * HOUR, exit_price=price * 1.01))
    graphics = AnnotationGraphics(chart)
    graphics.set_annotations(trades)
    drawn = []
    draw = TextCache.draw

    def recording(self, p, x, top, text, *args, **kwargs):
        drawn.append(text)
        return draw(self, p, x, top, text, *args, **kwargs)

    monkeypatch.setattr(TextCache, "draw", recording)
    chart.set_cursor(len(hours) - 25)
    chart.zoom(40)  # some hours on screen: markers and texts, not lane ticks
    chart.view.viewport().grab()
    pnl = [t for t in drawn if t.endswith("%")]
    assert sorted(pnl) == ["-1.00%", "3 trades +3.03%"], pnl  # the short, hours later, alone
    (sx, dx, sy, dy), tips = graphics.label_tips
    [merged] = [rect for rect, rows in tips if len(rows) == 3]
    centre = merged.center()
    tip = graphics.tip_at(QtCore.QPointF((centre.x() - dx) / sx, (centre.y() - dy) / sy))
    assert tip.splitlines() == [
        f"long {format_minute(t.entry_ts)} → {format_minute(t.exit_ts)[11:]} "
        f"{t.pnl_pct:+.2f}%" for t in trades[:3]]
    assert graphics.tip_at(QtCore.QPointF(-1e9, -1e9)) == ""  # over no label: none
