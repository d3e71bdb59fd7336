"""Marks made on the replay clock (issue 27): each decision keeps the clock it was made at,
nothing is marked after it, a refusal never names a mark the clock hides, and a view holds back
every mark whose last candle has not closed by the clock."""

import pytest

from workstation.annotations.editing import AnnotationTools, ToolRefused
from workstation.annotations.horizon import Horizon, seen_at
from workstation.annotations.model import (
    AnnotationValidationError,
    Direction,
    Origin,
    Point,
    Region,
    Trade,
)
from workstation.market.demo import demo_candles
from workstation.market.series import MarketKey, MarketKind
from workstation.market.timeframes import ONE_MINUTE

END = 1_700_000_000_000
MARKET = MarketKey(MarketKind.DEMO, "DEMO/USDT")
M = 60_000


@pytest.fixture
def candles():
    return demo_candles(50, ONE_MINUTE, seed=2, end_ts=END)


def trade(candles, a, b, **blind):
    return Trade(market=MARKET.kind, symbol=MARKET.symbol, timeframe="1m",
                 direction=Direction.LONG, entry_ts=int(candles.ts[a]),
                 entry_price=float(candles.close[a]), exit_ts=int(candles.ts[b]),
                 exit_price=float(candles.close[b]), **blind)


def test_a_trade_opened_and_closed_on_the_clock_is_blind_with_both_decision_times(candles):
    tools = AnnotationTools()
    entry_clock = int(candles.ts[10]) + M
    tools.open("long", candles, 10, (), clock=entry_clock + 2 * M)  # looked at it 2 min later
    exit_clock = int(candles.ts[20]) + M
    made = tools.close(candles, 20, MARKET, "1m", (), clock=exit_clock)
    assert made.blind and made.origin is Origin.BLIND
    assert made.decided_at == (entry_clock + 2 * M, exit_clock)
    # opened outside replay: hindsight, whatever the close
    tools.open("short", candles, 25, ())
    late = tools.close(candles, 30, MARKET, "1m", (), clock=int(candles.ts[30]) + M)
    assert not late.blind and late.decided_at == () and late.origin is Origin.HINDSIGHT


def test_a_region_marked_and_labelled_on_the_clock_is_blind(candles):
    tools = AnnotationTools()
    tools.set_mark(candles, 15, clock=int(candles.ts[15]) + M)
    region = tools.label("reviewed", candles, 5, MARKET, "1m", clock=int(candles.ts[16]) + M)
    assert (region.start_ts, region.end_ts) == (int(candles.ts[5]), int(candles.ts[15]))
    assert region.blind and region.decided_at == (int(candles.ts[15]) + M, int(candles.ts[16]) + M)


def test_nothing_is_marked_after_the_clock(candles):
    tools = AnnotationTools()
    clock = int(candles.ts[10]) + M
    for ask in (lambda: tools.open("long", candles, 11, (), clock=clock),
                lambda: tools.set_mark(candles, 11, clock=clock)):
        with pytest.raises(ToolRefused, match="after the replay clock"):
            ask()
    tools.open("long", candles, 10, (), clock=clock)
    with pytest.raises(ToolRefused, match="after the replay clock"):
        tools.close(candles, 12, MARKET, "1m", (), clock=clock + M)


def test_a_refusal_does_not_name_a_mark_the_clock_hides(candles):
    hidden = trade(candles, 8, 30)
    tools = AnnotationTools()
    clock = int(candles.ts[12]) + M
    with pytest.raises(ToolRefused) as refused:
        tools.open("long", candles, 12, [hidden], clock=clock)
    assert "the replay still hides" in str(refused.value)
    assert "entered" not in str(refused.value)
    with pytest.raises(ToolRefused, match="entered"):  # outside replay it is named
        tools.open("long", candles, 12, [hidden])


def test_blind_marks_validate_their_decision_times(candles):
    with pytest.raises(AnnotationValidationError, match="before its candle closed"):
        trade(candles, 5, 9, blind=True, decided_at=(int(candles.ts[5]), int(candles.ts[9]) + M))
    with pytest.raises(AnnotationValidationError, match="decision time"):
        trade(candles, 5, 9, blind=True, decided_at=(int(candles.ts[9]) + M,))
    with pytest.raises(AnnotationValidationError, match="needs the replay clock"):
        trade(candles, 5, 9, blind=True)
    with pytest.raises(AnnotationValidationError, match="time order"):
        trade(candles, 5, 9, blind=True,
              decided_at=(int(candles.ts[9]) + 2 * M, int(candles.ts[9]) + M))
    point = Point(market=MARKET.kind, symbol=MARKET.symbol, timeframe="1m",
                  ts=int(candles.ts[3]), blind=True, decided_at=(int(candles.ts[3]) + M,))
    assert point.origin is Origin.BLIND


def test_changing_a_decision_unblinds_a_mark_and_keeps_what_it_was(candles):
    decided = (int(candles.ts[5]) + M, int(candles.ts[9]) + M)
    blind = trade(candles, 5, 9, blind=True, decided_at=decided)
    assert blind.edited(notes="why I took it").origin is Origin.BLIND
    moved = blind.edited(exit_ts=int(candles.ts[12]))
    assert moved.origin is Origin.UNBLINDED and not moved.blind
    assert moved.decided_at == decided and moved.unblinded_at == moved.updated_at
    region = Region(market=MARKET.kind, symbol=MARKET.symbol, timeframe="1m",
                    start_ts=int(candles.ts[1]), end_ts=int(candles.ts[4]), label="uptrend",
                    blind=True, decided_at=(int(candles.ts[1]) + M, int(candles.ts[4]) + M))
    assert region.edited(label="range").origin is Origin.UNBLINDED


def test_a_horizon_holds_back_what_the_clock_has_not_passed(candles):
    early, late = trade(candles, 2, 6), trade(candles, 8, 20)
    horizon = Horizon()
    assert horizon.split([early, late]) == [early, late]  # no clock: everything
    horizon.set_clock(seen_at(late) - 1)
    assert horizon.split([early, late]) == [early]
    assert horizon.set_clock(seen_at(late) - 1) == []
    assert horizon.set_clock(seen_at(late)) == [late]
    horizon.set_clock(seen_at(early))
    assert not horizon.admit(late) and horizon.admit(early)
    horizon.forget(late.id)
    assert horizon.set_clock(None) == []
    assert horizon.admit(late)
