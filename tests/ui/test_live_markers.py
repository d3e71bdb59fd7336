"""Live predictions on the chart: one mark per predicted candle in a lane along the bottom of
the price pane (the candle head's call, as opaque as the model was sure; hollow when it was
wrong, with outcomes shown), a legend that says so and gives each market head's rolling
accuracy beside its majority and persistence baselines (scored in the core by
``ml.live.RollingAccuracy``, in both live modes), nothing cut by the axes, and marks that
stay after live mode stops until the trader clears them. Real tiny models on the CPU, a real
chart offscreen, pixels read back from it."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest
from PySide6 import QtCore, QtGui
from PySide6.QtTest import QTest

from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.events import LiveAccuracy, LiveEnded, LiveReady, LiveSaved, LiveStep
from workstation.ml.live import LiveJob, LiveSession, RollingAccuracy
from workstation.ui import command_registry
from workstation.ui.chart.overlays import LANE_BOTTOM_PX, LANE_SHAPES, lane_mark_px
from workstation.ui.theme import CHART_COLORS
from workstation.ui.training.prediction_overlay import (
    CURRENT,
    LEGEND,
    MARKS,
    MIN_OPACITY,
    PredictionOverlay,
    accuracy_text,
    confidence_opacity,
    direction_colors,
)

from conftest import shown_chart, tiny_live_steps

END_TS = 1_700_000_000_000
KEY = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
N = 300  # candles on the chart
STEPS = 60  # live steps, on the candles before the last ones
Key = QtCore.Qt.Key
SHIFT = QtCore.Qt.KeyboardModifier.ShiftModifier


def outcome(head, made, matured, predicted, actual):
    from workstation.ml.online import Outcome

    return Outcome(head, made, matured, predicted, actual, 0.5, 0.0)


# -- the core: the rolling accuracy -------------------------------------------------------------
def test_rolling_accuracy_scores_the_window_beside_majority_and_persistence():
    actual = [2, 2, 0, 2, 1, 2, 2, 0, 0, 2]      # the move after candle i (i -> i + 1)
    called = [2, 0, 0, 2, 2, 2, 1, 0, 2, 2]
    score = RollingAccuracy(window=6, heads=("candle",))
    empty = score.score("candle")
    assert (empty.n, empty.accuracy, empty.majority, empty.persistence) == (0, None, None, None)
    assert empty.best_baseline is None and empty.margin is None
    for i, (p, a) in enumerate(zip(called, actual)):
        score.add([outcome("candle", i, i + 1, p, a)])
    s = score.score("candle")
    last = slice(4, 10)  # the newest six
    assert s.n == 6 and s.window == 6
    assert s.accuracy == pytest.approx(np.mean(np.equal(called, actual)[last]))
    assert s.majority_class == "up" and s.majority == pytest.approx(3 / 6)
    # persistence: the move after i - 1, the outcome that matured at candle i
    same = [actual[i - 1] == actual[i] for i in range(4, 10)]
    assert s.persistence_n == 6 and s.persistence == pytest.approx(np.mean(same))
    assert s.persistence == pytest.approx(2 / 6) and s.accuracy == pytest.approx(3 / 6)
    assert s.best_baseline == "majority" and s.margin == pytest.approx(0.0)

    # the trend head: its persistence looks one horizon back (the outcome matured at i)
    trend = RollingAccuracy(window=100, heads=("trend",))
    h = 3
    moves = [2, 0, 0, 2, 0, 1, 2, 0]
    trend.add([outcome("trend", i, i + h, 1, a) for i, a in enumerate(moves)])
    t = trend.score("trend")
    hits = [moves[i - h] == moves[i] for i in range(h, len(moves))]
    assert t.n == len(moves) and t.persistence_n == len(moves) - h
    assert t.persistence == pytest.approx(np.mean(hits))
    assert t.accuracy == pytest.approx(1 / len(moves))
    trend.reset()
    assert trend.score("trend").n == 0


# -- the core: the session reports it, in both live modes ---------------------------------------
def wait(condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def run_session(job: LiveJob, series, first: int, last: int) -> list:
    events: list = []
    lock = threading.Lock()

    def record(event):
        with lock:
            events.append(event)

    session = LiveSession(job, record)
    thread = threading.Thread(target=session.run, name="live session")
    thread.start()
    try:
        wait(lambda: any(isinstance(e, LiveReady) for e in events))
        for n in range(first, last + 1):  # one closed candle at a time: nothing coalesced
            assert session.offer(series.slice(0, n), 0)
            wait(lambda n=n: session.processed == (0, int(series.ts[n - 1])))
    finally:
        session.stop.set()
        thread.join(120)
    assert not thread.is_alive()
    return events


def candle_truth(series, steps):
    """From the candles alone: each next-candle call's class, the class of the move after
    its candle and of the move before it, judged by the call's own flat band."""
    index = {int(t): i for i, t in enumerate(series.ts)}
    close = series.close
    rows = []
    for s in steps:
        p = s.prediction
        i = index[p.ts]
        after = math.log(close[i + 1] / close[i]) * 1e4 if i + 1 < len(close) else None
        before = math.log(close[i] / close[i - 1]) * 1e4

        def cls(bps, band=p.candle_band_bps):
            return 0 if bps < -band else 2 if bps > band else 1

        rows.append((p.ts, p.candle_class, None if after is None else cls(after), before,
                     p.candle_band_bps))
    return rows


@pytest.mark.parametrize("train", [True, False], ids=["with training", "inference only"])
def test_the_session_reports_the_rolling_accuracy_beside_its_baselines(tmp_path, train):
    series = demo_candles(700, seed=4, end_ts=END_TS)
    root = tmp_path / "ckpt"
    job = LiveJob(device="cpu", train=True, checkpoints_root=root, provenance="DEMO test",
                  model_overrides={"seq_len": 16})
    if not train:  # inference needs a trained run: make one with per-candle training
        (saved,) = [e for e in run_session(job, series, 580, 586) if isinstance(e, LiveSaved)]
        job = LiveJob(device="cpu", train=False, checkpoints_root=root,
                      provenance="DEMO test", source_run=saved.run_id)
    events = run_session(job, series, 600, 645)
    steps = [e for e in events if isinstance(e, LiveStep)]
    assert len(steps) == 46 and all(set(e.accuracy) == {"candle", "trend"} for e in steps)
    # The next-candle score, recomputed from the candles and the calls alone.
    truth = candle_truth(series, [e.step for e in steps])
    final = steps[-1].accuracy["candle"]
    matured = truth[:-1]  # the newest call's candle has not closed yet
    assert final.n == len(matured) == 45 and final.window == 100
    assert final.accuracy == pytest.approx(np.mean([c == a for _, c, a, _, _ in matured]))
    counts = np.bincount([a for _, _, a, _, _ in matured], minlength=3)
    assert final.majority == pytest.approx(counts.max() / counts.sum())
    # persistence: the previous candle's move, as the previous call's band judged it
    hits = [truth[k - 1][2] == truth[k][2] for k in range(1, len(matured))]
    assert final.persistence_n == len(hits) and final.persistence == pytest.approx(np.mean(hits))
    assert final.best_baseline in ("majority", "persistence") and final.margin is not None
    trend = steps[-1].accuracy["trend"]
    horizon = steps[-1].step.prediction.trend_horizon
    assert trend.n == 46 - horizon and trend.persistence_n == trend.n - horizon
    assert trend.majority is not None and trend.persistence is not None
    (ended,) = [e for e in events if isinstance(e, LiveEnded)]
    assert ended.accuracy == steps[-1].accuracy
    assert (ended.steps > 0) == train


# -- the chart ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def live_steps():
    """A tiny model with per-candle training predicting ``STEPS`` candles, the newest one's
    target the last candle on the chart (the live candle)."""
    return tiny_live_steps(N, STEPS, train=True)


@pytest.fixture
def chart(qtbot, live_steps):
    widget = shown_chart(qtbot, 1000, 560)
    widget.set_candles(live_steps[0], KEY)
    return widget


def grab(qtbot, chart) -> QtGui.QImage:
    qtbot.wait(1)
    QtCore.QCoreApplication.processEvents()
    return chart.view.viewport().grab().toImage()


def pane(chart) -> QtCore.QRect:
    """The price pane's pixels in the viewport (``right()`` and ``bottom()`` the last ones
    inside it)."""
    rect = chart.price_view.sceneBoundingRect()
    origin = chart.view.mapFromScene(QtCore.QPointF(0, 0))
    left, top = round(rect.left()) + origin.x(), round(rect.top()) + origin.y()
    right, bottom = round(rect.right()) + origin.x(), round(rect.bottom()) + origin.y()
    return QtCore.QRect(QtCore.QPoint(left, top), QtCore.QPoint(right - 1, bottom - 1))


def changed(a: QtGui.QImage, b: QtGui.QImage) -> np.ndarray:
    """(x, y) of the pixels that differ between two grabs of the same size."""
    def rgb(img):
        img = img.convertToFormat(QtGui.QImage.Format.Format_RGB32)
        return np.frombuffer(img.constBits(), np.uint32).reshape(img.height(), -1)[
            :, :img.width()].copy()

    ys, xs = np.nonzero(rgb(a) != rgb(b))
    return np.column_stack((xs, ys))


def centre_of(chart, ts: int) -> tuple[int, int]:
    """The viewport pixel at the middle of the lane mark of candle time ``ts``."""
    x = chart.view_model.time_map.centre_x(ts)
    scene = chart.price_view.mapViewToScene(QtCore.QPointF(x, 0))
    px = math.floor(chart.view.mapFromScene(scene).x())
    s = lane_mark_px(chart.price_view.width() / np.diff(chart.price_view.viewRange()[0])[0])
    bottom = pane(chart).bottom() + 1
    return px, bottom - LANE_BOTTOM_PX - s // 2 - 1


def shown(chart, steps) -> PredictionOverlay:
    overlay = PredictionOverlay(chart)
    for step in steps:
        overlay.show_step(step)
    return overlay


def test_one_mark_per_predicted_candle_its_legend_and_its_score(chart, live_steps):
    _, steps = live_steps
    overlay = shown(chart, steps)
    o = chart.overlays
    lane = o.lanes[MARKS]
    predictions = [s.prediction for s in steps]
    # one compact mark per predicted candle, at that candle; nothing else per candle
    assert len(lane) == overlay.marks == STEPS
    assert lane.ts.tolist() == [p.target_ts for p in predictions]
    assert o.ghost is None and not len(o.markers) and not len(o.segments) and not len(o.labels)
    assert lane.shape.tolist() == [LANE_SHAPES.index(p.candle_label) for p in predictions]
    assert [lane.palette[i].name() for i in lane.color_index] == [
        direction_colors(chart.colors)[p.candle_label] for p in predictions]
    assert lane.opacity.tolist() == pytest.approx([confidence_opacity(p.confidence)
                                                   for p in predictions])
    assert confidence_opacity(1 / 3) < confidence_opacity(0.5) < confidence_opacity(0.8) == 1.0
    # a settled call's mark is hollow when it was wrong (outcomes shown by default)
    settled = {o_.ts: o_.correct for s in steps for o_ in s.outcomes if o_.head == "candle"}
    assert len(settled) == STEPS - 1 and 0 < sum(settled.values()) < STEPS - 1
    assert lane.hollow.tolist() == [settled.get(p.ts) is False for p in predictions]
    assert overlay.right == sum(settled.values()) and overlay.wrong == len(settled) - overlay.right
    # the position head is the badge
    assert o.badge.group == CURRENT and o.badge.text.startswith("suggested ")
    # the legend: which head each shows, the toggle, and the score beside its baselines
    expected = RollingAccuracy()
    for s in steps:
        expected.add(s.outcomes)
    assert overlay.accuracy == expected.scores()
    assert overlay.accuracy["candle"].n == STEPS - 1
    texts = [row.text for row in o.legend.rows]
    assert o.legend.group == LEGEND
    assert "candle head: next candle up / flat / down" in texts[0]
    assert [g[0] for g in o.legend.rows[0].glyphs] == ["up", "flat", "down"]
    assert "right / wrong (O)" in texts[1] and "position head" in texts[1]
    assert accuracy_text(overlay.accuracy["candle"], "candle") in texts
    h = steps[-1].prediction.trend_horizon
    assert accuracy_text(overlay.accuracy["trend"], f"{h}-candle trend") in texts
    assert "majority" in texts[2] and "persistence" in texts[2] and "(last 59)" in texts[2]


def test_a_live_step_event_brings_the_sessions_score(chart, live_steps):
    _, steps = live_steps
    overlay = PredictionOverlay(chart)
    score = LiveAccuracy("candle", 100, 7, 0.57, 0.43, "up", 0.5, 6)
    overlay.show_step(LiveStep(0, steps[0], {"candle": score}))
    assert overlay.accuracy == {"candle": score}
    assert accuracy_text(score, "candle") == ("candle 57% · majority 43% · persistence 50% "
                                              "(last 7)")
    assert accuracy_text(score, "candle") in [r.text for r in chart.overlays.legend.rows]


def test_marks_are_drawn_by_shape_colour_opacity_and_outcome(chart, live_steps, qtbot):
    _, steps = live_steps
    chart.price_view.setXRange(N - 40.5, N - 0.5, padding=0)  # 25 px a candle: 15 px marks
    overlay = shown(chart, steps)
    overlay.clear_predictions()  # the legend stays (live), so the plot keeps its height
    bare = grab(qtbot, chart)
    for step in steps:
        overlay.show_step(step)
    img = grab(qtbot, chart)
    predictions = {s.prediction.ts: s.prediction for s in steps}
    wrong = {o.ts for s in steps for o in s.outcomes if o.head == "candle" and not o.correct}
    right = {o.ts for s in steps for o in s.outcomes if o.head == "candle" and o.correct}
    lo = int(chart.candles.ts[N - 40])

    def centre(ts, image=None):
        return (image or img).pixelColor(*centre_of(chart, predictions[ts].target_ts))

    def near(color, want, alpha, behind):  # ``want`` at ``alpha`` over what was ``behind``
        return all(abs(getattr(color, ch)() - (alpha * getattr(want, ch)() + (1 - alpha)
                                              * getattr(behind, ch)())) <= 3
                   for ch in ("red", "green", "blue"))

    filled = [t for t in right if t >= lo]
    hollow = [t for t in wrong if t >= lo]
    assert filled and hollow
    for t in filled:  # its colour, as opaque as the call was sure
        p = predictions[t]
        want = QtGui.QColor(direction_colors(chart.colors)[p.candle_label])
        assert near(centre(t), want, confidence_opacity(p.confidence), centre(t, bare)), \
            (t, centre(t).name(), centre(t, bare).name())
    for t in hollow:  # an outline only: the middle shows what is behind
        assert centre(t) == centre(t, bare), (t, centre(t).name())

    # O hides the outcomes: every mark filled
    chart.view.setFocus()
    chart.activateWindow()
    qtbot.waitUntil(chart.view.hasFocus)
    QTest.keyClick(chart.view, Key.Key_O)
    assert (not overlay.show_outcomes
            and not overlay.command_actions["predictions.outcomes"].isChecked())
    assert not chart.overlays.lanes[MARKS].hollow.any()
    img = grab(qtbot, chart)
    for t in hollow:
        assert centre(t) != centre(t, bare)
    assert "O: show right / wrong" in chart.overlays.legend.rows[1].text
    QTest.keyClick(chart.view, Key.Key_O)
    assert overlay.show_outcomes and chart.overlays.lanes[MARKS].hollow.sum() == len(wrong)


def test_opacity_shows_in_the_pixels(chart, qtbot):
    ts = chart.candles.ts
    chart.price_view.setXRange(N - 40.5, N - 0.5, padding=0)
    up = LANE_SHAPES.index("up")
    chart.overlays.set_lane_marks([ts[N - 30], ts[N - 20]], [up, up], [0, 0], ["#00ff00"],
                                  opacity=[1.0, 0.4])
    img = grab(qtbot, chart)
    solid = img.pixelColor(*centre_of(chart, int(ts[N - 30])))
    faint = img.pixelColor(*centre_of(chart, int(ts[N - 20])))
    assert solid.green() == 255 and 60 < faint.green() < 140


def test_nothing_is_cut_by_the_axes_at_the_live_edge(chart, live_steps, qtbot):
    candles, steps = live_steps
    last = N - 1
    # The live candle at the price axis: its centre on the pane's right edge.
    chart.price_view.setXRange(last - 80, last, padding=0)
    qtbot.wait(1)
    assert chart.price_view.viewRange()[0][1] == pytest.approx(last)
    overlay = shown(chart, steps)
    overlay.clear_predictions()  # the legend stays above the plot (live): the same height
    before = grab(qtbot, chart)
    for step in steps:
        overlay.show_step(step)
    label = "a label at the live candle, wider than half a candle"
    chart.overlays.add_label(int(candles.ts[last]), float(candles.close[last]), label,
                             "#ffffff", group="notes")
    chart.overlays.add_marker(int(candles.ts[last]), float(candles.high[last]), "down",
                              "#ff00ff", "marker text", group="notes")
    after = grab(qtbot, chart)
    box = pane(chart)
    diff = changed(before, after)
    assert len(diff)
    # every pixel drawn lies inside the pane
    assert diff[:, 0].min() >= box.left() and diff[:, 0].max() <= box.right()
    assert diff[:, 1].min() >= box.top() and diff[:, 1].max() <= box.bottom()
    # the newest mark, the live candle's, is whole: as wide as a mark, left of the axis
    assert overlay.prediction.target_ts == int(candles.ts[last])
    overlay.clear_predictions()
    chart.overlays.clear("notes")
    alone = grab(qtbot, chart)
    overlay.show_step(steps[-1])
    mark = changed(alone, grab(qtbot, chart))
    mark = mark[mark[:, 1] > box.bottom() - 20]  # the lane, not the badge
    s = lane_mark_px(chart.price_view.width() / 80)
    assert mark[:, 0].max() == box.right() and mark[:, 0].max() - mark[:, 0].min() + 1 == s
    assert box.bottom() - LANE_BOTTOM_PX - 2 <= mark[:, 1].max() <= box.bottom() - LANE_BOTTOM_PX
    # the label is drawn whole: as wide as its text
    metrics = QtGui.QFontMetricsF(chart.overlays.item._font)
    chart.overlays.clear("notes")
    without_label = grab(qtbot, chart)
    chart.overlays.add_label(int(candles.ts[last]), float(candles.close[last]), label,
                             "#ffffff", group="notes")
    text = changed(without_label, grab(qtbot, chart))
    assert text[:, 0].max() <= box.right()
    assert text[:, 0].max() - text[:, 0].min() + 1 >= metrics.horizontalAdvance(label) - 3
    # the badge is inside too, at any zoom and height (the legend is above the plot)
    chart.resize(520, 260)
    chart.fit_all()
    small = grab(qtbot, chart)
    chart.overlays.clear(CURRENT)
    chart.overlays.clear(MARKS)
    chart.overlays.clear("notes")
    box = pane(chart)
    drawn = changed(grab(qtbot, chart), small)
    assert drawn[:, 0].min() >= box.left() and drawn[:, 0].max() <= box.right()
    assert drawn[:, 1].min() >= box.top() and drawn[:, 1].max() <= box.bottom()


def test_marks_stay_after_live_mode_until_the_trader_clears_them(chart, live_steps, qtbot):
    _, steps = live_steps
    overlay = shown(chart, steps[:30])
    overlay.clear()  # live mode ended (the dock calls it)
    o = chart.overlays
    assert o.badge is None and overlay.prediction is None
    assert len(o.lanes[MARKS]) == 30 and overlay.right + overlay.wrong == 29
    assert "Shift+C clears" in o.legend.rows[1].text
    scores = overlay.accuracy
    assert scores["candle"].n == 29  # the last score stays beside the marks

    # live mode starts again: the old marks stay, the new session's score starts over
    overlay.show_step(steps[30])
    assert len(o.lanes[MARKS]) == 31 and overlay.accuracy["candle"].n == 1
    overlay.clear()

    chart.view.setFocus()
    chart.activateWindow()
    qtbot.waitUntil(chart.view.hasFocus)
    QTest.keyClick(chart.view, Key.Key_C, SHIFT)
    assert MARKS not in o.lanes and o.legend is None and overlay.marks == 0

    # another series drops the marks of the old one
    overlay.show_step(steps[40])
    assert len(o.lanes[MARKS]) == 1
    chart.set_candles(demo_candles(N, seed=8, end_ts=END_TS + 86_400_000),
                      SeriesKey("demo", "OTHER/USDT", ONE_MINUTE))
    overlay.clear()
    assert MARKS not in o.lanes and overlay.marks == 0


def test_the_two_commands_have_keys_menus_and_a_place_in_the_cheat_sheet(chart):
    overlay = PredictionOverlay(chart)
    outcomes = command_registry.command("predictions.outcomes")
    clear = command_registry.command("predictions.clear")
    assert outcomes.keys == ("O",) and clear.keys == ("Shift+C",)
    assert command_registry.app_registry().owner("o") is outcomes
    assert command_registry.app_registry().owner("shift+c") is clear
    sheet = dict(command_registry.cheat_sheet())
    assert ("O", "Show prediction outcomes") in sheet["Predictions"]
    assert any(text == "Clear predictions" for _, text in sheet["Predictions"])
    # the chart's actions (the View menu lists them) with the keys in their tooltips
    for command_id in ("predictions.outcomes", "predictions.clear"):
        action = chart.command_actions[command_id]
        assert action is overlay.command_actions[command_id] and action in chart.actions()
        keys = command_registry.keys_text(command_registry.command(command_id))
        assert action.toolTip().endswith(f"({keys})")
    assert chart.command_actions["predictions.outcomes"].isCheckable()


def contrast(a: QtGui.QColor, b: QtGui.QColor) -> float:
    """WCAG's contrast ratio of two opaque colours."""
    def luminance(c: QtGui.QColor) -> float:
        def channel(v: float) -> float:
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
        return (0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF())
                + 0.0722 * channel(c.blueF()))
    lo, hi = sorted((luminance(a), luminance(b)))
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_marks_are_legible_and_the_legend_covers_no_candle(qtbot, live_steps, theme):
    colors = CHART_COLORS[theme]
    chart = shown_chart(qtbot, 1000, 560)
    chart.set_colors(colors)
    chart.set_candles(live_steps[0], KEY)
    shown(chart, live_steps[1])
    chart.fit_all()  # every candle on screen: 3 px each
    qtbot.wait(1)
    QtCore.QCoreApplication.processEvents()
    lane = chart.overlays.lanes[MARKS]
    (x0, x1), _ = chart.price_view.viewRange()
    assert lane_mark_px(chart.price_view.width() / (x1 - x0)) >= 8  # narrow candles: 9 px
    assert lane_mark_px(25.0) == 15 and lane_mark_px(1.0) == 9
    # coloured by the call in the theme's colours, legible even as faint as a mark gets
    background = QtGui.QColor(colors.background)
    assert {c.name() for c in lane.palette} == {colors.up, colors.down, colors.axis_text}
    for color in lane.palette:
        a = MIN_OPACITY
        faint = QtGui.QColor.fromRgbF(*(a * x + (1 - a) * y for x, y in (
            (color.redF(), background.redF()), (color.greenF(), background.greenF()),
            (color.blueF(), background.blueF()))))
        assert contrast(faint, background) >= 3.0, (theme, color.name())
    # the legend lies outside every visible candle's body
    strip = chart.overlays.legend_strip
    assert strip.isVisible() and strip.height() > 0
    legend = QtCore.QRect(strip.mapToGlobal(QtCore.QPoint(0, 0)), strip.size())
    c = chart.candles
    i0, i1 = chart.view_model.time_map.index_range(x0, x1)
    assert i1 - i0 == len(c)
    for i in range(i0, i1):
        corners = [chart.view.viewport().mapToGlobal(chart.view.mapFromScene(
            chart.price_view.mapViewToScene(QtCore.QPointF(x, y))))
            for x, y in ((i - 0.4, float(c.open[i])), (i + 0.4, float(c.close[i])))]
        body = QtCore.QRect(corners[0], corners[1]).normalized()
        assert not legend.intersects(body), (i, legend, body)
    assert legend.bottom() < chart.view.viewport().mapToGlobal(QtCore.QPoint(0, 0)).y()
