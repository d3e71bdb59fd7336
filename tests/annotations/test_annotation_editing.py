"""The annotation tool's rules in the core: a trade is priced at closed candles only."""

from __future__ import annotations

import pytest

from workstation.annotations.editing import AnnotationTools, ToolRefused
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
