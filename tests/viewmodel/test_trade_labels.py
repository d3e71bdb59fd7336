"""Trade labels merge per chart candle: one label per candle that trades exit on."""

from __future__ import annotations

import numpy as np

from workstation.viewmodel.trade_labels import pnl_text, trade_labels, trade_lines

HOUR = 3_600_000
T0 = 1_700_000_000_000 - 1_700_000_000_000 % HOUR


def test_trades_exiting_on_one_candle_share_one_label_with_their_summed_pnl():
    exit_ts = np.array([T0 + 40 * 60_000, T0 + 5 * HOUR, T0 + 12 * 60_000, T0 + 30 * 60_000])
    candle = np.array([7, 12, 7, 7])  # the chart candle of each exit: three in candle 7
    labels = trade_labels(candle, exit_ts, np.array([0.5, -1.0, 0.25, 0.45]))
    assert [(a.candle, a.rows.tolist(), a.text) for a in labels] == [
        (7, [2, 3, 0], "3 trades +1.20%"),  # by exit time
        (12, [1], "-1.00%")]
    assert trade_labels(np.array([], dtype=np.int64), exit_ts[:0], np.array([])) == []


def test_the_tooltip_lists_each_trade_and_the_pnl_reads_as_on_the_chart():
    lines = trade_lines(np.array([True, False]), np.array([T0, T0 + 23 * HOUR]),
                        np.array([T0 + 12 * 60_000, T0 + 27 * HOUR]), np.array([0.5, -0.25]))
    assert lines.splitlines() == [
        "long 2023-11-14 22:00 → 22:12 +0.50%",  # the same day: the exit's time only
        "short 2023-11-15 21:00 → 2023-11-16 01:00 -0.25%"]  # another day
    assert (pnl_text(1.2), pnl_text(-0.004), pnl_text(float("nan"))) == ("+1.20%", "-0.00%", "—")
