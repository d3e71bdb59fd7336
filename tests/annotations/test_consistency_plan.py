"""Which stretches a consistency check marks again (``annotations.consistency_plan``): only
blocks labelled on every candle, drawn at random with a seed, those already marked again left
out, and the plans file kept atomically and named when damaged."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.annotations.consistency_plan import (
    ConsistencyPlanError,
    ConsistencyPlans,
    Stretch,
    labelled_stretches,
    make_plan,
    remarked,
)
from workstation.annotations.model import Region, Trade
from workstation.market.series import MarketKey, MarketKind
from workstation.market.timeframes import parse_timeframe

H = 3_600_000
T0 = 1_700_006_400_000 - 1_700_006_400_000 % (24 * H)
N = 200
TS = T0 + H * np.arange(N, dtype=np.int64)
TF = parse_timeframe("1h")
ETH = MarketKey(MarketKind.REAL, "ETH/USDT")


def reviewed(start: int, end: int) -> Region:
    return Region(symbol="ETH/USDT", timeframe="1h", start_ts=int(TS[start]),
                  end_ts=int(TS[end]), label="reviewed")


def test_only_blocks_labelled_on_every_candle_are_stretches():
    marks = [reviewed(0, 49), reviewed(100, 159)]  # 50 and 60 candles reviewed
    assert labelled_stretches(marks, TS, TF, length=20) == [(0, 20), (20, 40), (100, 120),
                                                             (120, 140), (140, 160)]
    trade = Trade(symbol="ETH/USDT", timeframe="1h", direction="long", entry_ts=int(TS[70]),
                  entry_price=1.0, exit_ts=int(TS[75]), exit_price=2.0)
    # a trade labels its span widened by the review margin (10 candles each side)
    assert labelled_stretches([trade], TS, TF, length=10) == [(60, 70), (70, 80)]
    with pytest.raises(ConsistencyPlanError, match="at least 2 candles"):
        labelled_stretches(marks, TS, TF, length=1)


def test_a_plan_draws_with_its_seed_and_leaves_out_what_was_marked_again():
    old = [reviewed(0, 199)]
    plan = make_plan(ETH, "1h", old, [], TS, TF, count=3, length=40, seed=5)
    again = make_plan(ETH, "1h", old, [], TS, TF, count=3, length=40, seed=5)
    assert again.stretches == plan.stretches and plan.series == "real:ETH/USDT:1h"
    assert len(plan.stretches) == 3 and len(set(plan.stretches)) == 3
    assert [s.start_ts for s in plan.stretches] == sorted(s.start_ts for s in plan.stretches)
    every = {Stretch(int(TS[a]), int(TS[a + 39])) for a in range(0, 200, 40)}
    assert set(plan.stretches) <= every
    fresh = [reviewed(0, 79)]  # the first two stretches are marked again
    assert remarked(fresh, Stretch(int(TS[40]), int(TS[79])))
    assert not remarked(fresh, Stretch(int(TS[80]), int(TS[119])))
    rest = make_plan(ETH, "1h", old, fresh, TS, TF, count=10, length=40, seed=1)
    assert set(rest.stretches) == {s for s in every if s.start_ts >= TS[80]}


def test_no_stretch_to_check_is_one_line_saying_why():
    with pytest.raises(ConsistencyPlanError, match="mark trades and reviewed regions first"):
        make_plan(ETH, "1h", [], [], TS, TF, length=40, seed=1)
    with pytest.raises(ConsistencyPlanError, match="marked again already"):
        make_plan(ETH, "1h", [reviewed(0, 39)], [reviewed(0, 39)], TS, TF, length=40, seed=1)


def test_plans_round_trip_and_a_damaged_file_is_named_and_kept(tmp_path):
    plans = ConsistencyPlans(tmp_path / "consistency.json")
    assert plans.get("real:ETH/USDT:1h") is None
    plan = make_plan(ETH, "1h", [reviewed(0, 199)], [], TS, TF, count=2, length=40, seed=3)
    plans.put(plan)
    other = make_plan(MarketKey(MarketKind.REAL, "BTC/USDT"), "1h", [reviewed(0, 199)], [],
                      TS, TF, count=1, length=40, seed=3)
    plans.put(other)
    assert plans.get(plan.series) == plan and plans.get(other.series) == other
    plans.path.write_text("{not json")
    with pytest.raises(ConsistencyPlanError, match=r"consistency\.json cannot be read.*left as"):
        plans.get(plan.series)
    with pytest.raises(ConsistencyPlanError):
        plans.put(plan)
    assert plans.path.read_text() == "{not json"
