"""The drawing tool's rules without a window: the magnet snaps a point to its candle's open,
high, low or close and keeps it on the same one as the cursor moves; Up / Down step through
them (or by a tick with the magnet off); two-point shapes take their points in either order;
a replay clock refuses points on candles not closed by then; D / Shift+D go through the
drawings in time order."""

from __future__ import annotations

import pytest

from workstation.annotations.drawing_tool import DrawingTool, snapped, step_drawing
from workstation.annotations.drawings import Drawing, Shape
from workstation.annotations.editing import ToolRefused
from workstation.market.series import MarketKey

from conftest import make_candles

MARKET = MarketKey("real", "BTC/USDT")


@pytest.fixture
def candles():
    return make_candles(200)


def values(c, i):
    return {"open": float(c.open[i]), "high": float(c.high[i]), "low": float(c.low[i]),
            "close": float(c.close[i])}


def test_the_magnet_snaps_to_the_nearest_value(candles):
    v = values(candles, 50)
    assert snapped(candles, 50, v["high"] + 5) == (v["high"], "high")
    assert snapped(candles, 50, v["low"] - 0.01) == (v["low"], "low")


def test_keys_keep_the_point_on_its_value_and_step_through_them(candles):
    tool = DrawingTool()
    point = tool.begin(Shape.LEVEL, candles, 10)
    assert (point.price, point.field) == (float(candles.close[10]), "close")
    for _ in range(4):
        point = tool.nudge(candles, 10, 1, 0.5)
    assert (point.price, point.field) == (float(candles.high[10]), "high")  # stays at the top
    point = tool.follow(candles, 30)  # on the same value of the next candle
    assert (point.ts, point.price) == (int(candles.ts[30]), float(candles.high[30]))
    for _ in range(5):
        point = tool.nudge(candles, 30, -1, 0.5)
    assert point.field == "low"
    below = sorted(values(candles, 30).values())
    assert point.price == below[0]


def test_without_the_magnet_a_point_keeps_its_price(candles):
    tool = DrawingTool(magnet=False)
    tool.begin(Shape.LEVEL, candles, 10)
    start = float(candles.close[10])
    assert tool.nudge(candles, 10, 3, 0.25).price == pytest.approx(start + 0.75)
    assert tool.follow(candles, 20).price == pytest.approx(start + 0.75)
    tool.set_magnet(True, candles, 20)
    assert tool.point.price in values(candles, 20).values()
    tool.set_magnet(False)
    with pytest.raises(ToolRefused, match="above zero"):
        tool.nudge(candles, 20, -1, 1e9)


def test_shapes_from_their_points(candles):
    tool = DrawingTool()
    tool.begin(Shape.TREND, candles, 80)
    assert tool.place(candles, 80, MARKET, "1m") is None  # the first point
    tool.follow(candles, 40)
    trend = tool.place(candles, 40, MARKET, "1m")
    assert (trend.ts1, trend.ts2) == (int(candles.ts[40]), int(candles.ts[80]))
    assert (trend.price1, trend.price2) == (float(candles.close[40]), float(candles.close[80]))
    assert not tool.active and trend.symbol == "BTC/USDT" and trend.timeframe == "1m"

    tool.begin(Shape.VERTICAL, candles, 7)
    vertical = tool.place(candles, 7, MARKET, "1m")
    assert (vertical.ts1, vertical.price1, vertical.ts2) == (int(candles.ts[7]), None, None)

    tool.begin(Shape.BOX, candles, 5)
    tool.place(candles, 5, MARKET, "1m")
    with pytest.raises(ToolRefused, match="second point is its first"):
        tool.place(candles, 5, MARKET, "1m")
    assert tool.active
    assert tool.cancel() is Shape.BOX and not tool.active
    with pytest.raises(ToolRefused, match="No drawing tool"):
        tool.place(candles, 5, MARKET, "1m")


def test_clicks_snap_and_place(candles):
    tool = DrawingTool()
    tool.begin(Shape.MEASURE, candles, 0)
    assert tool.click(candles, 20, float(candles.low[20]) - 3, MARKET, "1m") is None
    measure = tool.click(candles, 60, float(candles.high[60]) + 0.01, MARKET, "1m")
    assert (measure.price1, measure.price2) == (float(candles.low[20]), float(candles.high[60]))
    free = DrawingTool(magnet=False)
    free.begin(Shape.LEVEL, candles, 0)
    level = free.click(candles, 9, 123.456, MARKET, "1m")
    assert level.price1 == 123.456


def test_the_replay_clock_refuses_candles_not_closed_by_then(candles):
    clock = int(candles.ts[100])  # candle 99 has closed, candle 100 has not
    tool = DrawingTool()
    with pytest.raises(ToolRefused, match="after the replay clock"):
        tool.begin(Shape.LEVEL, candles, 100, clock)
    tool.begin(Shape.TREND, candles, 90, clock)
    tool.place(candles, 90, MARKET, "1m", clock)
    tool.follow(candles, 100)
    with pytest.raises(ToolRefused, match="after the replay clock"):
        tool.place(candles, 100, MARKET, "1m", clock)
    tool.follow(candles, 99)
    trend = tool.place(candles, 99, MARKET, "1m", clock)
    assert trend.known_at == clock


def test_step_drawing_goes_in_time_order():
    def level(ts):
        return Drawing(shape=Shape.LEVEL, symbol="BTC/USDT", timeframe="1m", ts1=ts,
                       price1=10.0)

    a, b, c = level(60_000), level(120_000), level(180_000)
    found = [c, a, b]
    assert step_drawing(found, None, 1) is a and step_drawing(found, None, -1) is c
    assert step_drawing(found, a, 1) is b and step_drawing(found, b, -1) is a
    assert step_drawing(found, c, 1) is None and step_drawing([], None, 1) is None
