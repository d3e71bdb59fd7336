"""The trader as a baseline: their blind marks and their hindsight marks are two samples on the
same span, costs and fills as every signal (``backtest.signals.marks_signals``), a blind mark
filled at the first open after its decision, a sample without trades "—" (never 0), and the
hindsight gap (hindsight minus blind: return, win rate, mean trade) per span and overall, in
words, in JSON and in the Backtest view."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workstation.annotations.model import Trade
from workstation.backtest.engine import Costs
from workstation.backtest.report import (
    BLIND_MARKS,
    BUY_AND_HOLD,
    GAP_COLUMNS,
    HINDSIGHT_MARKS,
    SHOWN,
    WHOLE_SPAN,
    WORTH_SHOWN,
    backtest_signals,
    describe,
    describe_gaps,
    gap_cells,
    gap_line,
    hindsight_gap,
    lead,
    marks_columns,
    metric_text,
    span_gaps,
    summary,
    worth_text,
)
from workstation.backtest.signals import (
    BLIND_MARKS_SIGNAL,
    HINDSIGHT_MARKS_SIGNAL,
    annotation_signal,
    decided_signal,
    marks_signals,
)
from workstation.market.candles import Candles
from workstation.market.timeframes import ONE_MINUTE

MIN = 60_000
T0 = 1_700_000_040_000 - 1_700_000_040_000 % MIN
FEE, SLIP = 0.001, 5.0  # 0.1 % a side, 5 bps of slippage a side
# 20 one-minute candles whose opens say which candle filled a trade
OPENS = np.array([100, 101, 102, 103, 104, 105, 107, 108, 106, 104,
                  103, 108, 109, 110, 108, 106, 104, 103, 102, 101], dtype=np.float64)


def candles() -> Candles:
    ts = T0 + np.arange(len(OPENS), dtype=np.int64) * MIN
    close = np.r_[OPENS[1:], OPENS[-1]]  # each candle closes at the next one's open
    return Candles.from_arrays(ts, OPENS, np.maximum(OPENS, close) + 0.5,
                               np.minimum(OPENS, close) - 0.5, close,
                               np.ones(len(OPENS)), ONE_MINUTE)


def trade(entry: int, exit_: int, direction: str, decided: tuple[int, int] | None = None
          ) -> Trade:
    """A trade marked on candles ``entry`` .. ``exit_``; ``decided``: blind, its decisions at
    the opens of those candles (the closes of the ones before)."""
    ts = lambda i: T0 + i * MIN  # noqa: E731
    blind = {} if decided is None else {"blind": True,
                                        "decided_at": (ts(decided[0]), ts(decided[1]))}
    return Trade(symbol="ETH/USDT", timeframe="1m", direction=direction, entry_ts=ts(entry),
                 entry_price=float(OPENS[entry + 1]), exit_ts=ts(exit_), created_at=T0,
                 updated_at=T0, exit_price=float(OPENS[exit_ + 1]), **blind)


# a blind long marked on candles 3..8 but decided at the closes of candles 4 and 9 (the
# trader put the cursor back): filled at the opens of 5 and 10, not of 4 and 9; and a
# hindsight short on candles 12..15, filled at the opens of 13 and 16
BLIND = trade(3, 8, "long", decided=(5, 10))
HINDSIGHT = trade(12, 15, "short")


def by_hand(direction: int, entry_open: float, exit_open: float) -> dict[str, float]:
    """One trade of all the equity, after the fee and slippage of both sides: its return,
    win rate and mean trade as the backtest reports them."""
    entry = entry_open * (1 + SLIP / 10_000 * direction)
    exit_ = exit_open * (1 - SLIP / 10_000 * direction)
    gross, fees = direction * (exit_ - entry), FEE * (entry + exit_)
    growth = 1 + (gross - fees) / (entry * (1 + FEE))
    return {"entry": entry, "exit": exit_, "return_pct": (growth - 1) * 100,
            "win_rate_pct": 100.0 if gross > fees else 0.0,
            "mean_trade_bps": (gross - fees) / entry * 10_000}


def backtested(annotations, **kwargs):
    c = candles()
    return c, backtest_signals(c, marks_columns(marks_signals(annotations, c.ts, c.timeframe)),
                               series="ETH/USDT 1m", costs=Costs(FEE, SLIP), **kwargs)


def test_a_blind_mark_is_filled_at_the_first_open_after_its_decision():
    c = candles()
    blind = decided_signal([BLIND], c.ts, c.timeframe)
    assert np.flatnonzero(blind).tolist() == [4, 5, 6, 7, 8]  # decided at closes 4 and 9
    # as a hindsight mark the same trade acts at the close of the candles it marks
    marked = annotation_signal([BLIND.edited(blind=False)], c.ts, c.timeframe)
    assert np.flatnonzero(marked).tolist() == [3, 4, 5, 6, 7]
    # decided at its candles' closes, a blind mark fills where a hindsight one does
    prompt = trade(3, 8, "long", decided=(4, 9))
    assert decided_signal([prompt], c.ts, c.timeframe).tolist() == marked.tolist()
    # a hindsight or unblinded mark is not blind; an unblinded one is a hindsight sample
    unblinded = BLIND.edited(exit_ts=BLIND.exit_ts + MIN)
    assert unblinded.origin.value == "unblinded"
    signals = marks_signals([unblinded, HINDSIGHT], c.ts, c.timeframe)
    assert not signals[BLIND_MARKS_SIGNAL].any()
    assert np.flatnonzero(signals[HINDSIGHT_MARKS_SIGNAL]).tolist() == [3, 4, 5, 6, 7, 8,
                                                                          12, 13, 14]


def test_the_blind_and_hindsight_samples_and_their_gap_equal_the_hand_computed_trades():
    _, results = backtested([BLIND, HINDSIGHT])
    blind, hindsight, hold = results
    assert [r.name for r in results] == [BLIND_MARKS_SIGNAL, HINDSIGHT_MARKS_SIGNAL,
                                         BUY_AND_HOLD]
    assert (blind.assumptions.sample, hindsight.assumptions.sample) == (BLIND_MARKS,
                                                                        HINDSIGHT_MARKS)
    assert blind.run.span == hindsight.run.span == hold.run.span == (0, 20)  # the same span
    assert blind.assumptions.costs == hindsight.assumptions.costs == hold.assumptions.costs
    want_blind = by_hand(+1, OPENS[5], OPENS[10])  # 105 -> 103: a loss
    want_hindsight = by_hand(-1, OPENS[13], OPENS[16])  # short 110 -> 104: a win
    for result, want, bars in ((blind, want_blind, (5, 10)),
                               (hindsight, want_hindsight, (13, 16))):
        t = result.run.trades
        assert (t.entry_bar.tolist(), t.exit_bar.tolist()) == ([bars[0]], [bars[1]])
        assert t.entry_price[0] == pytest.approx(want["entry"], rel=1e-12)
        assert t.exit_price[0] == pytest.approx(want["exit"], rel=1e-12)
        assert result.metrics["Return [%]"] == pytest.approx(want["return_pct"], rel=1e-9)
        assert result.metrics["Win Rate [%]"] == want["win_rate_pct"]
        assert result.worth.mean_trade_bps == pytest.approx(want["mean_trade_bps"], rel=1e-9)
    assert want_blind["win_rate_pct"] == 0 and want_hindsight["win_rate_pct"] == 100
    gap = hindsight_gap(results, WHOLE_SPAN)
    assert gap is not None and (gap.blind.trades, gap.hindsight.trades) == (1, 1)
    assert gap.return_pp == pytest.approx(want_hindsight["return_pct"] - want_blind["return_pct"],
                                          rel=1e-9)
    assert gap.win_rate_pp == 100.0
    assert gap.mean_trade_bps == pytest.approx(
        want_hindsight["mean_trade_bps"] - want_blind["mean_trade_bps"], rel=1e-9)
    # in words (the table's row and the CLI's line) and in JSON
    assert gap_cells(gap) == (WHOLE_SPAN, "1", "1", f"{gap.return_pp:+,.2f} pp", "+100.00 pp",
                              f"{gap.mean_trade_bps:+,.2f} bps")
    assert gap_line(gap) in describe(results)
    assert describe(results)[-1] == summary(results)
    plain = json.loads(json.dumps(gap.to_dict(), allow_nan=False))
    assert plain["gap"]["win_rate_pp"] == 100.0 and plain["blind"]["trades"] == 1
    assert plain["gap"]["return_pp"] == pytest.approx(gap.return_pp)


def test_the_gap_per_span_is_each_span_backtested_on_its_own_and_dash_where_one_side_is_empty():
    c = candles()
    marks = marks_signals([BLIND, HINDSIGHT], c.ts, c.timeframe)
    first, second = span_gaps(c, marks, [("fold 1/2", (0, 11)), ("fold 2/2", (11, 20))],
                              costs=Costs(FEE, SLIP))
    assert (first.blind.trades, first.hindsight.trades) == (1, 0)
    assert (second.blind.trades, second.hindsight.trades) == (0, 1)
    assert first.blind.return_pct == pytest.approx(by_hand(+1, OPENS[5], OPENS[10])["return_pct"],
                                                   rel=1e-9)
    assert second.hindsight.mean_trade_bps == pytest.approx(
        by_hand(-1, OPENS[13], OPENS[16])["mean_trade_bps"], rel=1e-9)
    for gap in (first, second):  # one side without a trade: no gap, "—", null
        assert np.isnan([gap.return_pp, gap.win_rate_pp, gap.mean_trade_bps]).all()
        assert gap_cells(gap)[3:] == ("—", "—", "—")
        assert set(gap.to_dict()["gap"].values()) == {None}
    assert gap_line(first).endswith(": no hindsight trade on this span")
    assert gap_line(second).endswith(": no blind trade on this span")
    assert first.period == (int(c.ts[0]), int(c.ts[10]))
    lines = describe_gaps([first, second])
    assert lines[1].split() == [word for col in GAP_COLUMNS for word in col.split()]
    assert lines[2].split()[:4] == ["fold", "1/2", "1", "0"] and lines[2].endswith("—")


def test_a_marks_sample_without_trades_is_dashes_never_zero():
    _, results = backtested([HINDSIGHT])  # no blind mark
    blind, hindsight, _ = results
    assert blind.no_trades and not hindsight.no_trades
    assert metric_text(blind, "# Trades", "n") == "0"
    assert {metric_text(blind, label, unit) for label, unit in SHOWN
            if label != "# Trades"} == {"—"}
    assert {worth_text(blind, label) for label in WORTH_SHOWN} == {"—"}
    plain = json.loads(json.dumps(blind.to_dict(), allow_nan=False))
    assert plain["metrics"]["Return [%]"] is None and plain["metrics"]["Win Rate [%]"] is None
    assert plain["worth"]["return_before_costs_pct"] is None
    assert lead(results) is hindsight  # the summary and the trades table show the one traded
    assert summary(results).startswith(f"{HINDSIGHT_MARKS_SIGNAL}: 1 trade, return ")
    gap = hindsight_gap(results, WHOLE_SPAN)
    assert gap is not None and gap_cells(gap) == (WHOLE_SPAN, "0", "1", "—", "—", "—")
    # without both marks samples there is no gap at all
    assert hindsight_gap([hindsight], WHOLE_SPAN) is None


def test_the_backtest_view_shows_the_gap_row(qtbot, paths):
    from workstation.ui.backtest.view import BacktestView

    _, results = backtested([BLIND, HINDSIGHT])
    view = BacktestView(paths, live=None, chart=None)
    qtbot.addWidget(view)
    view.show()
    assert view.gap.isHidden()  # nothing until a backtest of the marks
    view.show_gap(results)
    gap = hindsight_gap(results, WHOLE_SPAN)
    assert gap is not None
    assert view.gap_rows() == [gap_cells(gap)]
    assert view.gap.item(0, 4).text() == "+100.00 pp"
    assert view.gap.item(0, 0).toolTip() == gap_line(gap)
    view.show_gap(results[1:])  # the hindsight marks alone: no gap, hidden
    assert view.gap_rows() == [] and view.gap.isHidden()
