"""The trader's per-candle targets from annotations (``annotations.targets``): positions at the
moment the trader could act, on the timeframe marked; only reviewed candles labelled; regimes
inside their regions; hand-worked cases for each rule, and the vectorised code against a plain
per-candle loop on random grids with gaps."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.annotations.model import AnnotationError, Point, Region, Trade
from workstation.annotations.targets import (
    DOWNTREND,
    FLAT,
    LONG,
    MASKED,
    RANGE,
    SHORT,
    UPTREND,
    OverlappingTradesError,
    trader_targets,
)
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe

M = 60_000
H = 60 * M
T0 = 1_700_000_000_000 - 1_700_000_000_000 % H  # on the hour
GRID = T0 + M * np.arange(20, dtype=np.int64)  # 20 one-minute candles
_ = MASKED
L, S, F = LONG, SHORT, FLAT


def trade(entry, exit, direction="long", tf="1m", symbol="ETH/USDT"):
    return Trade(symbol=symbol, timeframe=tf, direction=direction, entry_ts=int(entry),
                 entry_price=100.0, exit_ts=int(exit), exit_price=101.0)


def region(start, end, label="range", tf="1m"):
    return Region(symbol="ETH/USDT", timeframe=tf, start_ts=int(start), end_ts=int(end),
                  label=label)


def at(i, seconds=0):
    """A time inside one-minute candle i of GRID."""
    return T0 + i * M + seconds * 1000


def check(targets, position, regime=None, reviewed=None):
    assert targets.position.dtype == np.int8 and targets.regime.dtype == np.int8
    assert targets.position.tolist() == position
    assert targets.regime.tolist() == (regime if regime is not None else [_] * len(position))
    assert targets.reviewed.tolist() == (reviewed if reviewed is not None
                                         else [p != _ for p in position])


def test_a_trade_is_held_from_its_entry_close_and_reviewed_with_a_margin():
    got = trader_targets([trade(at(5), at(9))], GRID, ONE_MINUTE, review_margin=2)
    # reviewed: from the open of 00:03 to the close of 00:11; held from the close of 00:05
    # (candle 5) up to the close of 00:09 (candle 9, where it is flat again)
    check(got, [_, _, _, F, F, L, L, L, L, F, F, F, _, _, _, _, _, _, _, _])
    assert trader_targets([trade(at(5), at(9))], GRID, ONE_MINUTE, review_margin=0).position[
        :12].tolist() == [_, _, _, _, _, L, L, L, L, F, _, _]


def test_only_reviewed_candles_say_no_trade():
    anns = [trade(at(2), at(4), "short"), Point(symbol="ETH/USDT", timeframe="1m", ts=at(15)),
            region(at(10), at(13), "uptrend"), region(at(16), at(18), "reviewed")]
    got = trader_targets(anns, GRID, ONE_MINUTE, review_margin=1)
    # a point note and a regime region are not reviews: candles 10..15 stay masked
    check(got, [_, F, S, S, F, F, _, _, _, _, _, _, _, _, _, _, F, F, F, _],
          [_] * 10 + [UPTREND] * 4 + [_] * 6)


def test_a_reversal_goes_from_long_to_short_on_one_close():
    anns = [trade(at(3), at(7)), trade(at(7), at(10), "short")]
    got = trader_targets(anns, GRID, ONE_MINUTE, review_margin=0)
    assert got.position[:12].tolist() == [_, _, _, L, L, L, L, S, S, S, F, _]


def test_hourly_marks_on_minute_candles_start_when_the_hour_closed():
    long_1h = trade(T0 + H, T0 + 3 * H, tf="1h")  # decided at 02:00, out at 04:00
    grid = T0 + M * np.arange(5 * 60, dtype=np.int64)
    got = trader_targets([long_1h], grid, ONE_MINUTE, review_margin=0)
    assert got.position[60:119].tolist() == [F] * 59  # the 01:00 hour forms: still flat
    assert got.position[119:239].tolist() == [L] * 120  # 01:59 closes at 02:00: long
    assert got.position[239] == F and not got.reviewed[:60].any() and not got.reviewed[240:].any()


def test_minute_marks_on_hourly_candles_land_on_the_hour_that_closes_after_them():
    hours = T0 + H * np.arange(6, dtype=np.int64)
    minute_trade = trade(T0 + H + 20 * M, T0 + 3 * H + 5 * M)  # held 01:21 .. 03:06
    got = trader_targets([minute_trade], hours, parse_timeframe("1h"), review_margin=0)
    # the 01:00 hour closes at 02:00, inside the trade: long; the 03:00 hour closes at 04:00
    assert got.position.tolist() == [_, L, L, F, _, _]


def test_second_marks_on_minute_candles():
    short_1s = Trade(symbol="ETH/USDT", timeframe="1s", direction="short", entry_ts=T0 + 59_000,
                     entry_price=1.0, exit_ts=T0 + 5 * M, exit_price=1.0)
    got = trader_targets([short_1s], GRID, ONE_MINUTE, review_margin=0)
    assert got.position[:7].tolist() == [S, S, S, S, S, F, _]  # held 00:01:00 .. 00:05:01
    late = Trade(symbol="ETH/USDT", timeframe="1s", direction="short", entry_ts=T0 + M,
                 entry_price=1.0, exit_ts=T0 + 5 * M, exit_price=1.0)
    got = trader_targets([late], GRID, ONE_MINUTE, review_margin=0)
    assert got.position[:7].tolist() == [_, S, S, S, S, F, _]  # too late for candle 0


def test_times_in_a_gap_land_on_the_first_candle_after_it():
    grid = np.delete(GRID, [5, 6, 7, 8])  # minutes 5..8 missing
    got = trader_targets([trade(at(2), at(6, 30)), trade(at(9), at(13))], grid, ONE_MINUTE,
                         review_margin=0)
    by_minute = dict(zip(((grid - T0) // M).tolist(), got.position.tolist()))
    assert [by_minute[m] for m in (2, 3, 4, 9, 12, 13)] == [L, L, L, L, L, F]


def test_regimes_are_labelled_inside_their_regions_and_masked_where_they_disagree():
    anns = [region(at(1), at(6), "uptrend"), region(at(5), at(9), "downtrend"),
            region(at(12), at(14), "range"), region(at(16), at(17), "my own label"),
            region(at(14), at(15), "range")]
    got = trader_targets(anns, GRID, ONE_MINUTE)
    up, down = UPTREND, DOWNTREND
    assert got.regime.tolist() == [_, up, up, up, up, _, _, down, down, down, _, _, RANGE,
                                   RANGE, RANGE, RANGE, _, _, _, _]
    assert not got.reviewed.any() and (got.position == _).all()
    hourly = region(T0, T0, "range", tf="1h")  # one 1h candle: all sixty 1m candles of it
    assert (trader_targets([hourly], T0 + M * np.arange(90), ONE_MINUTE).regime
            == [RANGE] * 60 + [_] * 30).all()


def test_overlapping_trades_are_an_error_naming_both():
    first, second = trade(at(2), at(8)), trade(at(5), at(12), "short")
    with pytest.raises(OverlappingTradesError) as err:
        trader_targets([second, region(at(0), at(19)), first], GRID, ONE_MINUTE)
    assert err.value.pairs == [(first, second)]
    assert "1m long entered on the 2023-11-14 22:02 candle, exited on the 22:08 candle " \
           "overlaps 1m short entered on the 2023-11-14 22:05 candle" in str(err.value)
    # trades far outside the series are not checked
    trader_targets([first, trade(T0 - 9 * M, T0 - 2 * M), trade(T0 - 8 * M, T0 - 3 * M)],
                   GRID, ONE_MINUTE)


def test_nothing_to_learn_is_all_masked():
    for anns in ([], [trade(T0 - 50 * M, T0 - 40 * M)], [region(at(25), at(30))]):
        got = trader_targets(anns, GRID, ONE_MINUTE)
        assert (got.position == _).all() and (got.regime == _).all() and not got.reviewed.any()
    assert len(trader_targets([trade(at(1), at(2))], np.array([], dtype=np.int64), ONE_MINUTE)) == 0


def test_bad_grids_and_margins_are_refused():
    with pytest.raises(AnnotationError, match="strictly increasing"):
        trader_targets([trade(at(1), at(2))], GRID[::-1], ONE_MINUTE)
    with pytest.raises(AnnotationError, match="one-dimensional"):
        trader_targets([trade(at(1), at(2))], GRID.reshape(4, 5), ONE_MINUTE)
    with pytest.raises(AnnotationError, match="review_margin"):
        trader_targets([trade(at(1), at(2))], GRID, ONE_MINUTE, review_margin=-1)


def reference(annotations, ts, tf_ms, margin):
    """The documented rules, one candle at a time."""
    position, regime, reviewed = [], [], []
    trades = [a for a in annotations if isinstance(a, Trade)
              and a.held[1] > ts[0] and a.held[0] <= ts[-1] + tf_ms]
    lands = {a.id: next((u + tf_ms for u in ts if u + tf_ms >= a.held[1]), None)
             for a in trades}
    for t in ts:
        close = t + tf_ms
        looked = False
        for a in annotations:
            tf = a.timeframe_ms
            first, last = a.span
            start, end = first - first % tf, last - last % tf + tf
            if isinstance(a, Trade):
                start, end = start - margin * tf, end + margin * tf
            elif a.label != "reviewed":
                continue
            looked = looked or start < close <= end
        held = [a for a in annotations if isinstance(a, Trade)
                and a.held[0] <= close < a.held[1]]
        # the candles from where an entry lands (first close >= held start) to where the
        # exit lands (first close >= held end) are reviewed too
        for a in trades:
            landed = lands[a.id]
            looked = looked or (a.held[0] <= close and (landed is None or close <= landed))
        reviewed.append(looked)
        position.append(_ if not looked else (L if held and held[0].direction.sign > 0
                                              else S if held else F))
        labels = set()
        for a in annotations:
            if isinstance(a, Region) and a.label in ("uptrend", "downtrend", "range"):
                tf = a.timeframe_ms
                if a.start_ts - a.start_ts % tf < close <= a.end_ts - a.end_ts % tf + tf:
                    labels.add(("uptrend", "downtrend", "range").index(a.label))
        regime.append(labels.pop() if len(labels) == 1 else _)
    return position, regime, reviewed


@pytest.mark.parametrize("seed", range(12))
def test_vectorised_targets_match_the_per_candle_rules(seed):
    rng = np.random.default_rng(seed)
    tf_name, tf_ms = [("1m", M), ("5m", 5 * M), ("1h", H)][seed % 3]
    grid = T0 + tf_ms * np.sort(rng.choice(400, size=300, replace=False)).astype(np.int64)
    times = np.sort(rng.choice(np.arange(-40 * tf_ms, 440 * tf_ms, 60_000), size=40,
                               replace=False)) + T0
    anns: list = []
    for k in range(0, len(times) - 1, 2):  # trades one after another: never overlapping
        entry, exit_ = int(times[k]), int(times[k + 1])
        if exit_ - entry > 2 * M:
            anns.append(trade(entry, exit_ - M, "long" if rng.random() < 0.5 else "short"))
    for _k in range(6):
        a, b = np.sort(rng.choice(np.arange(0, 400 * tf_ms, M), size=2, replace=False)) + T0
        anns.append(region(a, b, str(rng.choice(["uptrend", "downtrend", "range", "reviewed",
                                                  "custom note"]))))
    rng.shuffle(anns)
    margin = int(rng.integers(0, 4))
    got = trader_targets(anns, grid, parse_timeframe(tf_name), review_margin=margin)
    position, regime, reviewed = reference(anns, grid.tolist(), tf_ms, margin)
    assert got.position.tolist() == position
    assert got.regime.tolist() == regime
    assert got.reviewed.tolist() == reviewed
    assert {LONG, SHORT} & set(position) and {UPTREND, DOWNTREND, RANGE} & set(regime)
