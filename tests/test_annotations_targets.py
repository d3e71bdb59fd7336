"""Per-candle action/position targets from annotations: hand-worked cases for each rule, and
the vectorised code against a plain per-candle loop on random grids with gaps."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.annotations.model import AnnotationError, Point, Region, Trade
from workstation.annotations.targets import (
    ACTION_HOLD,
    ENTER_LONG,
    ENTER_SHORT,
    EXIT_LONG,
    EXIT_SHORT,
    OverlappingTradesError,
    action_targets,
)

M = 60_000
T0 = 1_700_000_000_000 - 1_700_000_000_000 % 3_600_000  # on the hour
GRID = T0 + M * np.arange(20, dtype=np.int64)  # 20 one-minute candles
_ = -1  # masked


def trade(entry, exit, direction="long", tf="1m"):
    return Trade(symbol="ETH/USDT", timeframe=tf, direction=direction, entry_ts=int(entry),
                 entry_price=100.0, exit_ts=int(exit), exit_price=101.0)


def region(start, end):
    return Region(symbol="ETH/USDT", timeframe="1m", start_ts=int(start), end_ts=int(end),
                  label="range")


def at(i, seconds=0):
    """A time inside one-minute candle i of GRID."""
    return T0 + i * M + seconds * 1000


def check(targets, actions, position):
    assert targets.actions.dtype == np.int8 and targets.position.dtype == np.int8
    assert targets.mask.dtype == np.bool_
    assert targets.actions.tolist() == actions
    assert targets.position.tolist() == position
    assert targets.mask.tolist() == [a >= 0 for a in actions]


def test_one_long_trade_inside_a_region():
    got = action_targets([region(at(1), at(12, 59)), trade(at(3, 10), at(7, 30))], GRID, "1m")
    check(got,
          [_, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, _, _, _, _, _, _, _],
          [0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    assert len(got) == 20


def test_span_runs_from_the_first_start_to_the_last_end_with_hold_between_trades():
    anns = [trade(at(2), at(4), "short"), Point(symbol="ETH/USDT", timeframe="1m", ts=at(15, 1)),
            trade(at(8), at(10))]
    check(action_targets(anns, GRID, "1m"),
          [_, _, 3, 0, 4, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, _, _, _, _],
          [0, 0, -1, -1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])


def test_reversal_exit_and_entry_on_one_candle_carries_the_entry():
    anns = [trade(at(3), at(7, 20)), trade(at(7, 20), at(10), "short")]
    check(action_targets(anns, GRID, "1m"),
          [_, _, _, 1, 0, 0, 0, 3, 0, 0, 4, _, _, _, _, _, _, _, _, _],
          [0, 0, 0, 1, 1, 1, 1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])


def test_trained_on_a_coarser_grid_times_floor_to_the_containing_candle():
    grid = T0 + 5 * M * np.arange(6, dtype=np.int64)  # 5m candles
    anns = [trade(at(6, 30), at(17, 59)), trade(at(22), at(27), "short")]
    check(action_targets(anns, grid, "5m"),
          [_, 1, 0, 2, 3, 4],
          [0, 1, 1, 0, -1, 0])
    # a one-minute round trip inside one five-minute candle: that candle is masked
    check(action_targets([trade(at(6, 30), at(17, 59)), trade(at(21), at(24, 59))], grid, "5m"),
          [_, 1, 0, 2, _, _],
          [0, 1, 1, 0, 0, 0])


def test_a_trade_inside_one_candle_masks_that_candle():
    anns = [region(at(0), at(9)), trade(at(5, 5), at(5, 50))]
    check(action_targets(anns, GRID, "1m"),
          [0, 0, 0, 0, 0, _, 0, 0, 0, 0, _, _, _, _, _, _, _, _, _, _],
          [0] * 20)


def test_times_in_a_gap_snap_to_the_first_candle_after_it():
    grid = np.delete(GRID, [5, 6, 7, 8])  # minutes 5..8 missing
    got = action_targets([trade(at(2), at(6, 30)), trade(at(9), at(13))], grid, "1m")
    minutes = ((grid - T0) // M).tolist()
    by_minute = dict(zip(minutes, got.actions.tolist()))
    assert by_minute[2] == ENTER_LONG and by_minute[3] == by_minute[4] == ACTION_HOLD
    assert by_minute[9] == ENTER_LONG  # the exit at minute 6 also lands here: the entry wins
    assert by_minute[13] == EXIT_LONG
    assert dict(zip(minutes, got.position.tolist()))[9] == 1


def test_trades_cut_by_the_ends_of_the_series():
    anns = [trade(T0 - 30 * M, at(4, 10), "short"), trade(at(15), T0 + 90 * M)]
    check(action_targets(anns, GRID, "1m"),
          [0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0],
          [-1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    # a trade that began before the series and ends in its first candle still exits there
    check(action_targets([trade(T0 - 5 * M, at(0, 30))], GRID, "1m"),
          [2] + [_] * 19, [0] * 20)


def test_nothing_to_learn_is_all_masked():
    for anns in ([], [trade(T0 - 50 * M, T0 - 40 * M)], [region(at(25), at(30))]):
        got = action_targets(anns, GRID, "1m")
        assert not got.mask.any() and (got.actions == -1).all() and not got.position.any()
    empty = action_targets([trade(at(1), at(2))], np.array([], dtype=np.int64), "1m")
    assert len(empty) == 0


def test_overlapping_trades_are_an_error_naming_both():
    first, second = trade(at(2), at(8)), trade(at(5), at(12), "short")
    with pytest.raises(OverlappingTradesError) as err:
        action_targets([second, region(at(0), at(19)), first], GRID, "1m")
    assert err.value.pairs == [(first, second)]
    assert "1m long entered on the 2023-11-14 22:02 candle, exited on the 22:08 candle " \
           "overlaps 1m short entered on the 2023-11-14 22:05 candle" in str(err.value)
    nested = trade(at(4), at(4))  # a zero-length trade inside another
    with pytest.raises(OverlappingTradesError):
        action_targets([first, nested], GRID, "1m")
    # trades far outside the series are not checked
    action_targets([first, trade(T0 - 9 * M, T0 - 2 * M), trade(T0 - 8 * M, T0 - 3 * M)],
                   GRID, "1m")


def test_an_action_lands_where_the_trader_acted_on_the_timeframe_marked():
    hour = 60 * M
    long_1h = trade(T0 + hour, T0 + 3 * hour, tf="1h")  # decided at 02:00, out at 04:00
    grid = T0 + M * np.arange(5 * 60, dtype=np.int64)
    got = action_targets([long_1h], grid, "1m")
    assert got.actions[119] == ENTER_LONG and got.actions[239] == EXIT_LONG  # 01:59 and 03:59
    assert not got.mask[:60].any()  # the span starts with the 01:00 candle marked
    assert (got.actions[60:119] == ACTION_HOLD).all() and (got.actions[120:239] == 0).all()
    assert got.position[119:239].tolist() == [1] * 120 and got.position[239] == 0
    # the same trade on its own grid, and on a coarser one, is on the marked candle's close
    hours = T0 + hour * np.arange(5, dtype=np.int64)
    assert action_targets([long_1h], hours, "1h").actions.tolist() == [_, 1, 0, 2, _]
    fours = T0 + 4 * hour * np.arange(2, dtype=np.int64)
    assert action_targets([long_1h], fours, "4h").actions.tolist() == [_, _]  # one candle


def test_finer_marks_land_on_the_coarser_candle_that_closes_after_them():
    hour = 60 * M
    hours = T0 + hour * np.arange(6, dtype=np.int64)
    # a 1m long in at the close of 01:20 (01:21), out at the close of 03:00 (03:01)
    minute_trade = trade(T0 + hour + 20 * M, T0 + 3 * hour, tf="1m")
    assert action_targets([minute_trade], hours, "1h").actions.tolist() == [_, 1, 0, 2, _, _]
    # a 1s mark at the close of 00:00:59 lands on the 1m candle that closes at 00:01: candle 0;
    # one at the close of 00:01:00 is too late for candle 0 and lands on candle 1
    second_trade = Trade(symbol="ETH/USDT", timeframe="1s", direction="short",
                         entry_ts=T0 + 59_000, entry_price=1.0, exit_ts=T0 + 5 * M,
                         exit_price=1.0)
    got = action_targets([second_trade], GRID, "1m")
    assert got.actions[:7].tolist() == [3, 0, 0, 0, 0, 4, _]
    late = Trade(symbol="ETH/USDT", timeframe="1s", direction="short", entry_ts=T0 + M,
                 entry_price=1.0, exit_ts=T0 + 5 * M, exit_price=1.0)
    assert action_targets([late], GRID, "1m").actions[:3].tolist() == [_, 3, 0]


def test_overlap_is_judged_on_held_time_across_timeframes():
    hour = 60 * M
    long_1h = trade(T0, T0 + 2 * hour, tf="1h")  # held 01:00 .. 03:00
    grid = T0 + M * np.arange(4 * 60, dtype=np.int64)
    before = trade(T0 + 10 * M, T0 + 59 * M, "short")  # held 00:11 .. 01:00: before the entry
    got = action_targets([long_1h, before], grid, "1m")
    assert got.actions[10] == ENTER_SHORT and got.actions[59] == ENTER_LONG  # a reversal
    inside = trade(T0 + 70 * M, T0 + 80 * M, "short")
    with pytest.raises(OverlappingTradesError) as err:
        action_targets([long_1h, before, inside], grid, "1m")
    assert err.value.pairs == [(long_1h, inside)]


def test_bad_grids_are_refused():
    with pytest.raises(AnnotationError, match="strictly increasing"):
        action_targets([trade(at(1), at(2))], GRID[::-1], "1m")
    with pytest.raises(AnnotationError, match="one-dimensional"):
        action_targets([trade(at(1), at(2))], GRID.reshape(4, 5), "1m")


def reference(annotations, ts, tf_ms):
    """The documented rules, one candle at a time."""
    n = len(ts)
    actions, position, single = [-1] * n, [0] * n, []

    def snap(t):
        return next((i for i in range(n) if ts[i] + tf_ms > t), n)

    # The annotations here are on 1m and the grids 1m, 5m or 1h: the first candle closing
    # after a time is also the first closing at or after its 1m candle's close.

    start = min(a.span[0] for a in annotations)
    end = max(a.span[1] for a in annotations)
    if not annotations or end < ts[0] or start >= ts[-1] + tf_ms:
        return actions, position
    for i in range(snap(start), min(snap(end), n - 1) + 1):
        actions[i] = ACTION_HOLD
    exits, entries = [], []
    for t in (a for a in annotations if isinstance(a, Trade)):
        if t.exit_ts < ts[0] or t.entry_ts >= ts[-1] + tf_ms:
            continue
        e, x, before = snap(t.entry_ts), snap(t.exit_ts), t.entry_ts < ts[0]
        if e == x and not before:
            single.append(e)
            continue
        for i in range(e, min(x, n)):
            position[i] = t.direction.sign
        if t.exit_ts < ts[-1] + tf_ms:
            exits.append((x, EXIT_LONG if t.direction.sign > 0 else EXIT_SHORT))
        if not before:
            entries.append((e, ENTER_LONG if t.direction.sign > 0 else ENTER_SHORT))
    for i, action in exits + entries:
        actions[i] = action
    for i in single:
        actions[i] = -1
    return actions, [p if a >= 0 else 0 for p, a in zip(position, actions)]


@pytest.mark.parametrize("seed", range(12))
def test_vectorised_targets_match_the_per_candle_rules(seed):
    rng = np.random.default_rng(seed)
    tf_name, tf_ms = [("1m", M), ("5m", 5 * M), ("1h", 60 * M)][seed % 3]
    grid = T0 + tf_ms * np.sort(rng.choice(400, size=300, replace=False)).astype(np.int64)
    times = np.sort(rng.choice(np.arange(-40 * tf_ms, 440 * tf_ms, 7_000), size=60,
                               replace=False)) + T0
    anns = []
    for k in range(0, len(times) - 1, 2):
        entry, exit = int(times[k]), int(times[k + 1])
        if rng.random() < 0.2:
            exit = entry + int(rng.integers(0, tf_ms // 2))  # many inside one candle
            exit = min(exit, int(times[k + 1]))
        anns.append(trade(entry, exit, "long" if rng.random() < 0.5 else "short"))
    anns.append(region(times[0] - int(rng.integers(0, 50 * tf_ms)), times[-1] + 3 * tf_ms))
    rng.shuffle(anns)
    got = action_targets(anns, grid, tf_name)
    actions, position = reference(anns, grid.tolist(), tf_ms)
    assert got.actions.tolist() == actions
    assert got.position.tolist() == position
    assert got.mask.tolist() == [a >= 0 for a in actions]
    assert {ENTER_LONG, EXIT_SHORT} & set(actions)  # the cases exercise trades
