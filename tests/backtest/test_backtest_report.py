"""The results in words (``backtest.report``): the CLI's table with every column apart and
aligned, a summary that says "after costs" only beside a return after costs, a return before
costs only beside its mean trade and break-even cost, what each edge is worth, and a CAGR
given only over a year or more."""

from __future__ import annotations

import re

import numpy as np
import pytest

from workstation.backtest.engine import Costs
from workstation.backtest.report import (
    BUY_AND_HOLD,
    COLUMN_GAP,
    IN_SAMPLE,
    SHORT_SPAN_CAGR,
    SHOWN,
    WORTH_SHOWN,
    backtest_signals,
    break_even_text,
    describe,
    format_metric,
    metric_text,
    summary,
    worth_text,
)
from workstation.market.candles import Candles
from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe

END = 1_700_006_400_000  # a UTC midnight


def results(candles, names):
    signal = np.zeros(len(candles), dtype=np.int8)
    signal[10:60], signal[100:140] = 1, -1
    return backtest_signals(candles, dict.fromkeys(names, (signal, IN_SAMPLE)),
                            series="DEMO/USDT 1m", costs=Costs(0.001, 2))


def test_every_column_of_the_printed_table_stands_apart_and_aligned():
    candles = demo_candles(600, ONE_MINUTE, seed=2, end_ts=END)
    names = [f"run 20261203-140139-123-ab12 position >= 0.{i}" for i in range(3)]
    shown = results(candles, names)
    lines = describe(shown)
    head = next(i for i, line in enumerate(lines) if names[0] in line)
    table = lines[head:head + 2 + len(SHOWN) + len(WORTH_SHOWN)]
    ends = [m.end() for m in re.finditer(r"\S+(?: \S+)*", table[0])]
    assert len(ends) == len(shown)  # the titles: one each, none touching the next
    for line in table[1:]:
        cells = re.split(r" {2,}", line.strip())
        assert len(cells) == 1 + len(shown), line  # the label and a cell per signal
        assert [m.end() for m in re.finditer(r"\S+(?: \S+)*", line)][1:] == ends, line
    assert re.split(r" {2,}", table[0].strip()) == [*names, BUY_AND_HOLD]


def test_the_summary_says_after_costs_beside_returns_after_costs_only():
    candles = demo_candles(600, ONE_MINUTE, seed=2, end_ts=END)
    marks, hold = results(candles, ["trader's marks"])
    before = format_metric(marks.metrics["Buy & Hold Return [%]"], "%")
    after = format_metric(hold.metrics["Return [%]"], "%")
    assert before != after  # the fee and slippage of one entry and one exit
    text = summary([marks, hold])
    returned = format_metric(marks.metrics["Return [%]"], "%")
    gross = format_metric(marks.worth.return_before * 100, "%")
    w, h = marks.worth, hold.worth
    assert text == (
        f"trader's marks: {len(marks.run.trades)} trades, return {returned} after costs "
        f"({gross} before costs; mean trade {w.mean_trade_bps_before:+.2f} bps before costs, "
        f"{w.mean_trade_bps:+.2f} bps after; {_break_even(marks)}) vs buy & hold {after} after "
        f"costs ({before} before costs; mean trade {h.mean_trade_bps_before:+.2f} bps before "
        f"costs, {h.mean_trade_bps:+.2f} bps after; {_break_even(hold)})")
    assert text in describe([marks, hold])


def _break_even(result) -> str:
    text = break_even_text(result.worth)
    return ("no break-even cost (it loses even without costs)" if text == "none"
            else f"break-even cost {text} per side")


def test_every_return_before_costs_stands_beside_its_mean_trade_and_break_even():
    base = demo_candles(2000, ONE_MINUTE, seed=3, end_ts=END)
    cents = [np.round(col, 2) for col in (base.open, base.high, base.low, base.close)]
    candles = Candles.from_arrays(base.ts, *cents, base.volume)  # prices on a 0.01 grid
    signal = np.zeros(len(candles), dtype=np.int8)
    signal[50:1500] = np.repeat([1, -1, 0, 1, -1], 290)
    shown = backtest_signals(candles, {"marks": (signal, IN_SAMPLE)}, series="ETH/USDT 1m",
                             costs=Costs(0.001, 1))
    lines = describe(shown)
    for line in lines:
        if "before costs" in line:
            assert "bps" in line and "break-even" in line, line
    marks = shown[0]
    w = marks.worth
    assert w.tick.size == 0.01 and w.trades == 4
    assert "prices: tick 0.01 (tick inferred from prices); the next candle opens at the signal " \
        f"candle's close on {w.next_open_is_close * 100:.1f} % of these candles (to the tick)" \
        in lines
    p = w.placebo
    assert any(line.startswith(f"marks: mean trade before costs {w.mean_trade_bps_before:+.2f} "
                               f"bps = ") and f"placebo rank {p.rank} / 201: beats "
               f"{(p.rank - 1) / 2:.0f} % of 200 copies shifted in time" in line
               for line in lines)
    rows = {line.split("  ")[0]: line for line in lines}
    for label in WORTH_SHOWN:  # one row each, with every column's figure
        assert rows[label].split(COLUMN_GAP)[-1].strip() == worth_text(shown[-1], label)
        assert worth_text(marks, label) in rows[label], label
    assert worth_text(marks, "Placebo Rank") == f"{p.rank} / 201"
    assert worth_text(shown[-1], "Placebo Rank") == "—"  # buy & hold: one trade, the span


@pytest.mark.parametrize(("candles", "shown"), [
    (demo_candles(21, parse_timeframe("1d"), seed=4, end_ts=END), False),
    (demo_candles(366, parse_timeframe("1d"), seed=4, end_ts=END), True)])
def test_a_cagr_is_shown_only_over_a_year_or_more(candles, shown):
    hold = results(candles, [])[-1]
    cagr = hold.metrics["CAGR [%]"]
    text = metric_text(hold, "CAGR [%]", "%")
    if shown:
        years = hold.metrics["Duration"] / 86_400_000 / 365.25
        assert cagr == pytest.approx(((1 + hold.metrics["Return [%]"] / 100) ** (1 / years)
                                      - 1) * 100)
        assert text == format_metric(cagr, "%")
    else:  # 20 days: no yearly rate, and the table says why; the plain return stays
        assert np.isnan(cagr) and text == SHORT_SPAN_CAGR == "— (under a year)"
        assert metric_text(hold, "Return [%]", "%") != "—"
    assert any(line.startswith("CAGR [%]") and line.endswith(text) for line in describe([hold]))
