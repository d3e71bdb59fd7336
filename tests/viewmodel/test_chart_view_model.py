"""The chart's view model, in time, and its time <-> x mapping: no Qt here."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from workstation.viewmodel import ChartViewModel, TimeMap, view_limits
from workstation.viewmodel.chart import DEFAULT_VISIBLE, MIN_VISIBLE, live_margin

TF = 60_000
T0 = 1_699_920_000_000  # 2023-11-14 00:00 UTC: beyond 32 bits, as every real time is


def grid(n: int, start: int = T0) -> np.ndarray:
    return start + np.arange(n, dtype=np.int64) * TF


def gappy() -> np.ndarray:
    """Candles 0-9, a gap of 100 minutes, candles 10-19."""
    return np.concatenate((grid(10), grid(10, T0 + 110 * TF)))


class Heard:
    """Everything a model announces, in order."""

    def __init__(self, model: ChartViewModel):
        self.events: list[tuple] = []
        model.range_changed.connect(lambda t0, t1: self.events.append(("range", t0, t1)))
        model.cursor_moved.connect(lambda ts: self.events.append(("cursor", ts)))

    def take(self) -> list[tuple]:
        events, self.events = self.events, []
        return events


def model_with(ts: np.ndarray) -> tuple[ChartViewModel, Heard]:
    model = ChartViewModel()
    model.set_series(TimeMap(ts, TF))
    return model, Heard(model)


# -- TimeMap ------------------------------------------------------------------------------
def test_candle_times_map_to_their_candle_and_back():
    tm = TimeMap(grid(100), TF)
    assert tm.x_of(T0) == -0.5  # an open time is its candle's left edge
    assert tm.x_of(T0 + 37 * TF + TF // 2) == 37.0
    assert tm.centre_x(T0 + 37 * TF) == 37.0  # where overlays and ticks stamp a candle
    rng = np.random.default_rng(0)
    times = rng.integers(T0 - 20 * TF, T0 + 120 * TF, 500)  # before, inside and after
    xs = tm.x_of(times)
    assert [tm.x_of(int(t)) for t in times] == pytest.approx(xs.tolist(), abs=1e-9)
    assert [tm.ts_of(x) for x in xs] == times.tolist()
    for x in rng.uniform(-60, 160, 500):
        assert tm.x_of(tm.ts_of(x)) == pytest.approx(x, abs=1 / TF)
    assert tm.index_at(T0 + 37 * TF + 5) == 37 and tm.index_at(T0 - 1) == -1


def test_outside_the_series_x_goes_on_along_the_timeframe_grid():
    tm = TimeMap(grid(10), TF)
    assert tm.x_of(T0 - 3 * TF) == -3.5
    assert tm.x_of(T0 + 12 * TF) == 11.5  # two candles after the last one's end
    assert tm.ts_of(-3.5) == T0 - 3 * TF and tm.ts_of(11.5) == T0 + 12 * TF
    empty = TimeMap(np.empty(0, dtype=np.int64), TF)  # along the grid from the epoch
    assert empty.x_of(5 * TF) == 4.5 and empty.ts_of(4.5) == 5 * TF


def test_a_gap_takes_no_space():
    tm = TimeMap(gappy(), TF)
    edge = 9.5  # between candle 9 and candle 10
    for t in (T0 + 10 * TF, T0 + 50 * TF, T0 + 110 * TF - 1):  # inside the gap
        assert tm.x_of(t) == edge
        assert tm.index_at(t) == 9
    assert tm.ts_of(edge) == T0 + 110 * TF  # the edge is the time after the gap
    assert tm.x_of(T0 + 110 * TF) == edge and tm.x_of(T0 + 111 * TF) == 10.5
    sweep = np.arange(T0 - 5 * TF, T0 + 125 * TF, 7_000)
    assert np.all(np.diff(tm.x_of(sweep)) >= 0)
    assert tm.index_range(8.9, 10.2) == (9, 11)  # candles partly inside [x0, x1]
    assert tm.index_range(-20, 100) == (0, 20)


# -- the view model -----------------------------------------------------------------------
def test_a_new_series_shows_the_live_edge_with_the_cursor_on_the_newest_candle():
    model = ChartViewModel()
    heard = Heard(model)
    model.set_series(TimeMap(grid(1_000), TF))
    x0, x1 = model.x_range()
    assert x1 - x0 == pytest.approx(DEFAULT_VISIBLE)
    assert x1 == pytest.approx(999.5 + live_margin(DEFAULT_VISIBLE))
    assert model.cursor_time == T0 + 999 * TF and model.cursor_index == 999
    assert model.follow_live
    assert heard.take() == [("range", *model.time_range), ("cursor", T0 + 999 * TF)]
    model.pan(-30)
    model.set_series(TimeMap(grid(500, T0 + 10**9), TF))  # another series keeps the zoom
    x0, x1 = model.x_range()
    assert x1 - x0 == pytest.approx(DEFAULT_VISIBLE, abs=1e-4)
    assert model.visible_indices()[1] == 500


def test_appended_candles_scroll_a_live_view_until_it_is_panned_away():
    model, heard = model_with(grid(500))
    x0, x1 = model.x_range()
    model.extend_series(TimeMap(grid(503), TF))
    assert model.x_range() == pytest.approx((x0 + 3, x1 + 3))  # the newest kept its place
    assert model.cursor_index == 502  # the cursor rode along on the newest candle
    assert [e[0] for e in heard.take()] == ["range", "cursor"]
    model.pan(-200)
    assert not model.follow_live
    model.set_cursor(T0 + 350 * TF)
    heard.take()
    times = model.time_range
    model.extend_series(TimeMap(grid(510), TF))
    assert model.time_range == times and model.cursor_index == 350
    assert heard.take() == []  # nothing changed, nothing said
    model.go_live()
    assert model.follow_live and model.visible_indices()[1] == 510
    # Panned only a little, the newest candle is still on screen: the view still follows.
    model.pan(-5)
    assert model.follow_live
    model.extend_series(TimeMap(grid(511), TF))
    assert model.visible_indices()[1] == 511


def test_zoom_keeps_a_time_in_its_place_on_screen():
    model, heard = model_with(grid(2_000))
    model.show(T0 + 1_000 * TF, T0 + 1_200 * TF)  # x 999.5 .. 1199.5
    heard.take()
    about = T0 + 1_050 * TF + TF // 2  # the centre of candle 1050
    model.zoom(2.0, about)
    x0, x1 = model.x_range()
    assert x1 - x0 == pytest.approx(100.0)
    assert (1_050 - x0) / (x1 - x0) == pytest.approx(50.5 / 200)
    assert len(heard.take()) == 1
    model.zoom(100.0, about)  # no closer than MIN_VISIBLE candles
    x0, x1 = model.x_range()
    assert x1 - x0 == pytest.approx(MIN_VISIBLE)
    model.set_cursor(T0 + 1_051 * TF)
    heard.take()
    model.zoom(0.5)  # about the cursor candle's centre by default
    y0, y1 = model.x_range()
    assert (1_051 - y0) / (y1 - y0) == pytest.approx((1_051 - x0) / (x1 - x0))
    model.zoom(1e-6)  # no further out than every candle and the margins
    x0, x1 = model.x_range()
    assert x1 - x0 == pytest.approx(view_limits(2_000).max_width)
    with pytest.raises(ValueError):
        model.zoom(0)


def test_each_change_is_announced_once_and_no_change_not_at_all():
    model, heard = model_with(grid(1_000))
    model.pan(-10)
    assert len(heard.take()) == 1
    model.set_cursor(T0 + 950 * TF)  # on screen: the view stays
    assert heard.take() == [("cursor", T0 + 950 * TF)]
    t0, t1 = model.time_range
    for same in (lambda: model.pan(0), lambda: model.show(t0, t1),
                 lambda: model.show_x_range(*model.x_range()),
                 lambda: model.set_cursor(T0 + 950 * TF + 30_000),  # the same candle
                 lambda: model.extend_series(model.time_map)):
        same()
        assert heard.take() == []
    model.set_cursor(T0 + 100 * TF)  # off screen: the view scrolls to it, once
    events = heard.take()
    assert [e[0] for e in events] == ["range", "cursor"] and events[1][1] == T0 + 100 * TF
    i0, i1 = model.visible_indices()
    assert i0 <= 100 < i1
    listener = heard.events.append
    model.cursor_moved.connect(listener)
    model.cursor_moved.disconnect(listener)
    model.set_cursor(T0 + 101 * TF)
    assert heard.take() == [("cursor", T0 + 101 * TF)]


def test_times_in_gaps_and_outside_the_series_snap_to_a_candle():
    model, _ = model_with(gappy())
    model.set_cursor(T0 + 50 * TF)  # in the gap: the candle before it
    assert model.cursor_index == 9 and model.cursor_time == T0 + 9 * TF
    model.set_cursor(T0 - 10**9)
    assert model.cursor_index == 0
    model.set_cursor(T0 + 10**9)
    assert model.cursor_index == 19
    model.show(T0 + 50 * TF, T0 + 120 * TF)  # starts in the gap: at the edge after it
    assert model.time_range[0] == T0 + 110 * TF
    assert model.x_range()[0] == 9.5
    with pytest.raises(ValueError):
        model.show(T0, T0)


def test_the_view_stays_within_its_limits():
    model, _ = model_with(grid(1_000))
    limits = view_limits(1_000)
    model.pan(-10_000)
    assert model.x_range()[0] == pytest.approx(limits.x_min)
    model.pan(10_000)
    assert model.x_range()[1] == pytest.approx(limits.x_max)
    model.fit_all()
    assert model.visible_indices() == (0, 1_000)
    model.show_x_range(100.0, 102.0)  # narrower than allowed: widened about its centre
    x0, x1 = model.x_range()
    assert (x0 + x1) / 2 == pytest.approx(101.0) and x1 - x0 == pytest.approx(MIN_VISIBLE)


def test_a_reset_keeps_the_times_on_screen_and_the_cursor_on_its_candle():
    model, heard = model_with(grid(1_000, T0 + 500 * TF))
    model.show(T0 + 800 * TF, T0 + 900 * TF)
    model.set_cursor(T0 + 850 * TF)
    heard.take()
    model.reset_series(TimeMap(grid(1_500), TF))  # 500 older candles back-filled
    assert model.time_range == (T0 + 800 * TF, T0 + 900 * TF)
    assert model.visible_indices() == (800, 900)
    assert model.cursor_index == 850 and model.cursor_time == T0 + 850 * TF
    assert heard.take() == []  # the same times: nothing to announce
    model.reset_series(TimeMap(grid(600), TF))  # shorter: the view and cursor move into it
    assert model.visible_indices()[1] == 600 and model.cursor_index == 599


def test_without_candles_there_is_no_cursor_and_the_first_candles_are_followed():
    model, heard = model_with(grid(100))
    model.set_series(TimeMap(np.empty(0, dtype=np.int64), TF))
    assert model.cursor_time is None and model.cursor_index == -1
    assert model.visible_indices() == (0, 0) and model.follow_live
    assert heard.take()[-1] == ("cursor", None)
    model.set_cursor(T0)
    model.fit_all()
    assert heard.take() == []
    model.extend_series(TimeMap(grid(3), TF))
    assert model.visible_indices() == (0, 3) and model.cursor_index == 2


def test_the_view_model_imports_no_qt():
    code = ("import sys, workstation.viewmodel\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'shiboken6', 'pyqtgraph', 'qasync')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"
