"""TimeframeStack: every derived timeframe equals the base's resample at every tick."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.errors import WorkstationError
from workstation.market.candles import Candles, CandleUpdate
from workstation.market.timeframe_stack import (
    TimeframeStack,
    common_base,
    first_complete_bucket,
)
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe

HOUR = 3_600_000


def ticks(start_ts: int, tf_ms: int, candles: int, per_candle: int, seed: int,
          gaps: tuple[int, ...] = ()):
    """Feed updates: ``per_candle`` forming updates per candle, the last one closing it;
    candle numbers in ``gaps`` are missing."""
    rng = np.random.default_rng(seed)
    price = 100.0
    for k in range(candles):
        if k in gaps:
            continue
        ts = start_ts + k * tf_ms
        o = h = l = c = price
        v = 0.0
        for j in range(per_candle):
            c = max(c * (1 + rng.normal(0, 1e-3)), 1e-6)
            h, l = max(h, c), min(l, c)
            v += float(rng.uniform(0, 3)) * 0.1  # sums that round differently by order
            yield CandleUpdate(ts, o, h, l, c, v, j == per_candle - 1)
        price = c


def frames(*names: str) -> tuple:
    """The timeframes ``names`` name."""
    return tuple(parse_timeframe(name) for name in names)


def expected(base: Candles, tf) -> Candles:
    """The reference: resample of the base from its first complete bucket."""
    tf = parse_timeframe(tf)
    start = first_complete_bucket(int(base.ts[0]), tf)
    return base.slice(int(np.searchsorted(base.ts, start)), len(base)).resample(tf)


def assert_same(got: Candles, want: Candles) -> None:
    assert len(got) == len(want)
    for a, b in zip(got.columns(), want.columns()):
        assert np.array_equal(a, b)  # bit-identical, not approximately
    if len(want):
        assert got.last_closed == want.last_closed


def run_ticks(stack: TimeframeStack, updates, tfs) -> int:
    checked = 0
    for update in updates:
        stack.apply(update)
        for tf in tfs:
            want = expected(stack.base, tf)
            assert_same(stack.candles(tf), want)
            checked += 1
    return checked


def test_every_tick_equals_resample_1m_base_with_gaps_and_partial_start():
    start = 1_767_225_600_000 + 37 * 60_000  # 00:37: the first hour (and 15m) is partial
    updates = list(ticks(start, 60_000, 300, 3, seed=1, gaps=(5, 6, 22, 100, 101, 102, 180)))
    stack = TimeframeStack(Candles(ONE_MINUTE), frames("15m", "1h", "4h"))
    checked = run_ticks(stack, updates, frames("15m", "1h", "4h"))
    assert checked == 3 * len(updates)
    hourly = stack.candles(parse_timeframe("1h"))
    assert int(hourly.ts[0]) == start - 37 * 60_000 + HOUR  # the partial 00:00 hour is not shown
    assert not hourly.last_closed or len(hourly) > 0


def test_every_tick_equals_resample_1s_base_across_bucket_boundaries():
    start = 1_767_225_600_000 - 90_000  # 90 s before midnight: crosses minute and day
    updates = list(ticks(start, 1_000, 400, 2, seed=2, gaps=(89, 150)))
    stack = TimeframeStack(Candles(parse_timeframe("1s")), frames("1m", "5m", "1h"))
    run_ticks(stack, updates, frames("1m", "5m", "1h"))
    minute = stack.candles(ONE_MINUTE)
    # the forming minute is the aggregate of its seconds
    last = int(minute.ts[-1])
    secs = stack.base.ts >= last
    assert minute.volume[-1] == np.add.reduceat(stack.base.volume[secs], [0])[0]
    assert minute.high[-1] == stack.base.high[secs].max()


def test_forming_candle_is_open_until_its_last_base_candle_closes():
    start = 1_767_225_600_000
    stack = TimeframeStack(Candles(ONE_MINUTE), frames("15m"))
    updates = list(ticks(start, 60_000, 15, 2, seed=3))
    for u in updates[:-1]:
        stack.apply(u)
        assert not stack.candles(parse_timeframe("15m")).last_closed
    stack.apply(updates[-1])
    assert stack.candles(parse_timeframe("15m")).last_closed
    assert len(stack.candles(parse_timeframe("15m"))) == 1


def test_sync_follows_a_base_changed_by_its_owner():
    """The window's feed applies updates to the base itself, then the stack syncs."""
    base = Candles.from_updates(ticks(1_767_225_600_000, 60_000, 120, 1, seed=4), ONE_MINUTE)
    stack = TimeframeStack(base, frames("1h"))
    assert_same(stack.candles(parse_timeframe("1h")), base.resample(parse_timeframe("1h")))
    kinds = []
    for u in ticks(int(base.ts[-1]) + 60_000, 60_000, 70, 2, seed=5):
        base.apply(u)
        kinds.append(stack.sync()[parse_timeframe("1h")])
        assert_same(stack.candles(parse_timeframe("1h")), base.resample(parse_timeframe("1h")))
    assert kinds.count("append") == 2 and set(kinds) == {"update", "append"}


def test_several_appended_base_candles_at_once():
    base = Candles.from_updates(ticks(1_767_225_600_000, 60_000, 10, 1, seed=6), ONE_MINUTE)
    stack = TimeframeStack(base, frames("5m"))
    for u in ticks(int(base.ts[-1]) + 60_000, 60_000, 23, 1, seed=7):
        base.apply(u)  # no sync in between: a back-filled gap
    assert stack.sync() == {parse_timeframe("5m"): "append"}
    assert_same(stack.candles(parse_timeframe("5m")), base.resample(parse_timeframe("5m")))


def test_history_is_merged_before_the_first_complete_bucket():
    start = 1_767_225_600_000 + 20 * 60_000  # the base starts 20 min into an hour
    base = Candles.from_updates(ticks(start, 60_000, 200, 1, seed=8), ONE_MINUTE)
    # 48 h before the partial hour, the partial hour, one more
    older = Candles.from_updates(ticks(start - 20 * 60_000 - 48 * HOUR, HOUR, 50, 1, seed=9),
                                 parse_timeframe("1h"))
    stack = TimeframeStack(base, frames("1h"), history={parse_timeframe("1h"): older})
    hourly = stack.candles(parse_timeframe("1h"))
    first_complete = first_complete_bucket(start, parse_timeframe("1h"))
    kept = older.ts < first_complete
    assert np.array_equal(hourly.ts[: kept.sum()], older.ts[kept])  # the cache's partial hour
    assert np.array_equal(hourly.close[: kept.sum()], older.close[kept])
    from_base = hourly.slice(int(kept.sum()), len(hourly))
    assert_same(from_base, expected(base, "1h"))
    assert np.all(np.diff(hourly.ts) > 0)


def test_an_empty_base_starts_at_its_first_complete_bucket():
    stack = TimeframeStack(Candles(ONE_MINUTE), frames("1h"))
    first = next(ticks(1_767_225_600_000 + 5 * 60_000, 60_000, 1, 1, seed=10))
    assert stack.apply(first)[parse_timeframe("1h")] == "reset"
    assert len(stack.candles(parse_timeframe("1h"))) == 0  # 00:05 .. is a partial hour
    assert stack.timeframes == (parse_timeframe("1m"), parse_timeframe("1h"))
    assert stack.candles(ONE_MINUTE) is stack.base


def test_timeframes_that_cannot_be_made_from_the_base_are_refused():
    with pytest.raises(WorkstationError, match="whole multiple"):
        TimeframeStack(Candles(parse_timeframe("3m")), frames("5m"))
    with pytest.raises(WorkstationError, match="whole multiple"):
        TimeframeStack(Candles(parse_timeframe("1h")), frames("15m"))
    with pytest.raises(WorkstationError, match="no 4h"):
        TimeframeStack(Candles(ONE_MINUTE), frames("1h")).candles(parse_timeframe("4h"))


def test_common_base():
    assert common_base(frames("3m", "5m")).name == "1m"
    assert common_base(frames("15m", "1h", "1d")).name == "15m"
    assert common_base(frames("1s", "1h")).name == "1s"
    assert common_base(frames("4h")).name == "4h"
