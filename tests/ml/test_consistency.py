"""The trader against their own blind self (``ml.consistency``): agreement, chance agreement
and Cohen's kappa worked out by hand, masked candles left out, entries matched within the
window asked for, intervals only with enough days, and the old label's origin kept apart."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.annotations.model import Region, Trade
from workstation.market.timeframes import parse_timeframe
from workstation.ml.consistency import agreement, consistency
from workstation.ml.targets import MASKED

H = 3_600_000
T0 = 1_700_006_400_000 - 1_700_006_400_000 % (24 * H)
N = 24 * 12
TS = T0 + H * np.arange(N, dtype=np.int64)
TF = parse_timeframe("1h")


def test_agreement_chance_and_kappa_are_the_hand_worked_ones():
    old = np.array([0] * 6 + [1] * 4, dtype=np.int8)
    fresh = np.array([0] * 5 + [1] * 5, dtype=np.int8)
    a = agreement(old, fresh, TS[:10])
    # 9 of 10 the same; shares old 0.6 / 0.4, fresh 0.5 / 0.5: chance 0.3 + 0.2
    assert (a.candles, a.observed, a.chance) == (10, pytest.approx(0.9), pytest.approx(0.5))
    assert a.kappa == pytest.approx(0.8)
    assert a.observed_interval is None  # one day: too few for an interval
    masked = agreement(np.array([MASKED, 0, 1]), np.array([0, MASKED, 1]), TS[:3])
    assert (masked.candles, masked.observed, masked.kappa) == (1, 1.0, None)  # one class only
    assert agreement(np.array([MASKED]), np.array([0]), TS[:1]).candles == 0


def test_intervals_come_with_enough_days_and_hold_the_estimate():
    rng = np.random.default_rng(0)
    old = rng.integers(0, 3, N).astype(np.int8)
    fresh = np.where(rng.random(N) < 0.7, old, rng.integers(0, 3, N)).astype(np.int8)
    a = agreement(old, fresh, TS)
    assert a.observed_interval is not None and a.kappa_interval is not None
    assert a.observed_interval[0] <= a.observed <= a.observed_interval[1]
    assert a.kappa_interval[0] <= a.kappa <= a.kappa_interval[1]
    assert 0.5 < a.kappa < 0.9


def trade(entry: int, exit_: int, direction: str = "long") -> Trade:
    return Trade(symbol="ETH/USDT", timeframe="1h", direction=direction,
                 entry_ts=int(TS[entry]), entry_price=1.0, exit_ts=int(TS[exit_]),
                 exit_price=2.0)


def reviewed(start: int, end: int, **kw) -> Region:
    return Region(symbol="ETH/USDT", timeframe="1h", start_ts=int(TS[start]),
                  end_ts=int(TS[end]), label="reviewed", **kw)


ENTRIES = range(20, 260, 24)  # ten trades, one a day


def test_the_same_marks_agree_wholly_and_shifted_entries_meet_only_within_the_window():
    old = [reviewed(0, N - 1), *(trade(e, e + 6) for e in ENTRIES)]
    fresh_region = reviewed(0, N - 1)
    same = consistency("ETH", old, [fresh_region, *(trade(e, e + 6) for e in ENTRIES)], TS, TF)
    assert same.overall.observed == 1.0 and same.overall.kappa == pytest.approx(1.0)
    assert same.events.entries.recall == 1.0 and same.events.entries.precision == 1.0
    assert same.events.entries.random_recall < 0.5
    late = [fresh_region, *(trade(e + 2, e + 8) for e in ENTRIES)]
    within = consistency("ETH", old, late, TS, TF, window=2)
    assert within.events.entries.recall == 1.0 and within.events.entries.timing == 2.0
    outside = consistency("ETH", old, late, TS, TF, window=1)
    assert outside.events.entries.recall == 0.0
    assert within.overall.observed < 1.0 and within.overall.kappa < 1.0
    lines = "\n".join(within.lines())
    assert "entries within 2 candles: old 10, fresh 10; recall 100" in lines
    assert within.to_dict()["entries"]["found"] == 10


def test_only_candles_marked_both_times_count_and_the_old_origin_is_kept():
    old = [reviewed(0, N - 1), *(trade(e, e + 6) for e in ENTRIES)]
    fresh = [reviewed(0, 47), trade(20, 26), trade(30, 34)]  # two days marked again
    report = consistency("ETH", old, fresh, TS, TF)
    assert report.overall.candles == 48
    assert set(report.by_origin) == {"hindsight"}  # every old mark was made in hindsight
    assert report.by_origin["hindsight"] == report.overall
    assert (report.old_marks, report.fresh_marks) == (11, 3)
    with pytest.raises(ValueError, match="at least 0"):
        consistency("ETH", old, fresh, TS, TF, window=-1)
