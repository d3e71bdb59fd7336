"""The blind replay's clock (issue 27): "now" is the close of the last candle shown, it steps by
whole candles, speeds are real-time multiples or candles a second, random starts fall inside the
chosen span with history before them."""

import random

import numpy as np
import pytest

from workstation.errors import WorkstationError
from workstation.market.demo import demo_candles
from workstation.market.replay_clock import (
    ReplayClock,
    Speed,
    index_at,
    parse_span,
    random_start,
    speed_ladder,
    stepped_speed,
)
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe

END = 1_700_000_000_000


def test_the_clock_is_the_close_of_the_last_candle_shown_and_steps_forward():
    c = demo_candles(100, ONE_MINUTE, seed=1, end_ts=END)
    clock = ReplayClock(c, 40, "60x")
    assert clock.now == int(c.ts[39]) + 60_000 == clock.started_at
    assert len(clock.visible()) == 40 and clock.left == 60
    new = clock.step(3)
    assert np.array_equal(new.ts, c.ts[40:43]) and clock.now == int(c.ts[42]) + 60_000
    assert clock.step(1000).ts[-1] == c.ts[-1] and clock.left == 0 and len(clock.step()) == 0
    assert np.array_equal(clock.visible().close, c.close)


def test_a_forming_candle_never_replays_and_a_start_keeps_one_candle_each_side():
    c = demo_candles(10, ONE_MINUTE, seed=1, end_ts=END)
    c.last_closed = False
    clock = ReplayClock(c, 50)
    assert len(clock.source) == 9 and clock.shown == 8
    assert ReplayClock(c, 0).shown == 1


def test_index_at_counts_the_candles_closed_by_a_time():
    c = demo_candles(10, ONE_MINUTE, seed=1, end_ts=END)
    t = int(c.ts[4])
    assert index_at(c, t + 60_000) == 5 and index_at(c, t + 59_999) == 4


def test_speeds_parse_and_step_through_one_ladder():
    assert Speed.parse("60x").candles_per_second(ONE_MINUTE) == 1.0
    assert Speed.parse(" 5 /s").candles_per_second(parse_timeframe("1h")) == 5.0
    for bad in ("0x", "2000x", "0.5x", "fast", "-1/s", "inf/s"):
        with pytest.raises(WorkstationError, match="replay speed"):
            Speed.parse(bad)
    ladder = [str(s) for s in speed_ladder(ONE_MINUTE)]
    assert ladder[:3] == ["1x", "10x", "60x"] and ladder[-1] == "50/s"
    top = Speed.parse("50/s")
    assert stepped_speed(top, ONE_MINUTE, +1) == top
    assert str(stepped_speed(Speed.parse("1x"), ONE_MINUTE, -1)) == "1x"
    assert str(stepped_speed(Speed.parse("5/s"), ONE_MINUTE, +1)) == "10/s"


def test_random_starts_fall_inside_the_span_with_history_before():
    c = demo_candles(2000, ONE_MINUTE, seed=1, end_ts=END)
    span = (int(c.ts[1000]), int(c.ts[1500]))
    rng = random.Random(4)
    starts = [random_start(c, span, rng) for _ in range(200)]
    assert min(starts) >= 999 and max(starts) <= 1501 and len(set(starts)) > 100
    whole = [random_start(c, None, rng) for _ in range(200)]
    assert min(whole) >= 300 and max(whole) <= 1999
    with pytest.raises(WorkstationError, match="holds no candles"):
        random_start(c, (END + 10**9, END + 2 * 10**9), rng)


def test_spans_read_from_to_and_refuse_nonsense():
    start, end = parse_span("2024-01-01..2024-01-31")
    assert end - start == 31 * 86_400_000 - 1
    for bad in ("2024-01-01", "..2024-01-01", "2024-02-01..2024-01-01", "x..y"):
        with pytest.raises(WorkstationError):
            parse_span(bad)
