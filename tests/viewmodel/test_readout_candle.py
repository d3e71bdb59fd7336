"""Which candle the chart's readout shows (``readout_candle``): no Qt here."""

from __future__ import annotations

from workstation.viewmodel.chart import ReadoutCandle, readout_candle

VISIBLE = (100, 250)  # candles 100-249 on screen


def test_the_cursor_over_the_chart_is_read_out_the_mouse_first():
    assert readout_candle(None, 180, VISIBLE) == ReadoutCandle(180, True)
    assert readout_candle(120, 180, VISIBLE) == ReadoutCandle(120, True)
    assert readout_candle(120, 999, VISIBLE) == ReadoutCandle(120, True)
    assert readout_candle(None, 100, VISIBLE) == ReadoutCandle(100, True)
    assert readout_candle(None, 249, VISIBLE) == ReadoutCandle(249, True)


def test_a_cursor_off_screen_gives_way_to_the_newest_visible_candle():
    assert readout_candle(None, 250, VISIBLE) == ReadoutCandle(249, False)  # just right of it
    assert readout_candle(None, 99, VISIBLE) == ReadoutCandle(249, False)  # left of it
    assert readout_candle(None, 1999, VISIBLE) == ReadoutCandle(249, False)
    # The mouse over empty space past the data (its candle clamped to the newest, off screen)
    # does not win over the keyboard cursor on screen, nor over the newest visible candle.
    assert readout_candle(1999, 180, VISIBLE) == ReadoutCandle(180, True)
    assert readout_candle(1999, 1999, VISIBLE) == ReadoutCandle(249, False)


def test_no_candle_on_screen_reads_out_none():
    assert readout_candle(None, 5, (0, 0)) is None
    assert readout_candle(3, -1, (10, 10)) is None
