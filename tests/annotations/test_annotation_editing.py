"""The annotation tool's rules in the core: a trade is priced at closed candles only; N / P
visit every annotation."""

from __future__ import annotations

import pytest

from workstation.annotations.editing import AnnotationTools, ToolRefused, step_annotation
from workstation.annotations.model import Point, Region, Trade
from workstation.market.demo import demo_candles
from workstation.market.series import MarketKey
from workstation.market.timeframe_stack import TimeframeStack
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe

END = 1_767_225_600_000 + 17 * 60_000  # 17 minutes into an hour
MARKET = MarketKey("demo", "DEMO/USDT")


def hourly():
    """1h candles resampled from 1m ones whose last hour is 17 minutes old (forming)."""
    base = demo_candles(600, ONE_MINUTE, seed=2, end_ts=END)
    hours = TimeframeStack(base, {parse_timeframe("1h")}).candles(parse_timeframe("1h"))
    assert not hours.last_closed
    return hours


def test_a_forming_candle_neither_opens_nor_closes_a_trade():
    c, tools = hourly(), AnnotationTools()
    last = len(c) - 1
    with pytest.raises(ToolRefused, match="1h candle is still forming"):
        tools.open("long", c, last)
    assert tools.pending is None
    tools.open("long", c, last - 3)
    with pytest.raises(ToolRefused, match="still forming"):
        tools.close(c, last, MARKET, "1h")
    assert tools.pending is not None  # a refused close keeps the entry
    trade = tools.close(c, last - 1, MARKET, "1h")
    assert (trade.exit_ts, trade.exit_price) == (int(c.ts[last - 1]), float(c.close[last - 1]))


def test_a_region_may_reach_the_forming_candle():
    c, tools = hourly(), AnnotationTools()
    tools.set_mark(c, len(c) - 5)
    region = tools.label("uptrend", c, len(c) - 1, MARKET, "1h")
    assert region.end_ts == int(c.ts[-1])


def test_n_and_p_visit_every_annotation_in_order_of_start_end_and_id():
    c = demo_candles(100, ONE_MINUTE, seed=2, end_ts=END)

    def t(i: int) -> int:
        return int(c.ts[i])

    point = Point(symbol="DEMO/USDT", market="demo", timeframe="1m", ts=t(10))
    trade = Trade(symbol="DEMO/USDT", market="demo", timeframe="1m", direction="long",
                  entry_ts=t(10), entry_price=1.0, exit_ts=t(20), exit_price=1.1)
    region = Region(symbol="DEMO/USDT", market="demo", timeframe="1m", start_ts=t(10),
                    end_ts=t(30), label="uptrend")
    later = Trade(symbol="DEMO/USDT", market="demo", timeframe="1m", direction="short",
                  entry_ts=t(40), entry_price=1.0, exit_ts=t(50), exit_price=0.9)
    anns = [later, region, trade, point]  # in no order
    seen, selected, cursor = [], None, 0
    while (ann := step_annotation(anns, c, cursor, selected, 1)) is not None:
        seen.append(ann)
        selected, cursor = ann, c.index_of(ann.span[0])
    assert seen == [point, trade, region, later]  # three start on candle 10: each one
    back = []
    while (ann := step_annotation(anns, c, cursor, selected, -1)) is not None:
        back.append(ann)
        selected, cursor = ann, c.index_of(ann.span[0])
    assert back == [region, trade, point]
    # the cursor moved away from the selection: the next is found from the cursor
    assert step_annotation(anns, c, 35, region, 1) == later
    assert step_annotation(anns, c, 35, region, -1) == region  # the last before candle 35
    assert step_annotation(anns, c, 10, None, 1) == later
    assert step_annotation([], c, 10, None, 1) is None
