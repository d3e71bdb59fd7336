"""The training workspace in the real main window (offscreen, 1500 x 900): a tab beside the
chart or a window of its own (remembered), every plot at least 160 px tall with a legend
naming its lines and tick labels that never overlap, the device gauges in sight while a run
trains, the smoothing and x-axis controls, the hover readout, and curves that continue
across a resume and come back after the app restarts (tiny preset, CPU, real training)."""

from __future__ import annotations

import asyncio
import itertools

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, QPointF, QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QScrollArea

from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.curve_points import BatchPoint, EpochPoint
from workstation.ml.targets import CLASS_HEADS
from workstation.ui.main_window import MainWindow
from workstation.ui.plots import CurvePlot
from workstation.ui.training import gauges as gauges_module
from workstation.ui.training.curves import TrainingCurves
from workstation.ui.training.workspace import MODE_KEY, TrainingWindow
from workstation.viewmodel.curve_math import smooth

from conftest import END_TS, WAIT_MS, tiny_training

MIN_PLOT_PX = 160
LEGENDS = {  # every line of every plot of the Curves tab, named
    "loss": ["train (raw)", "train (smoothed)", "validation"],
    **{head: ["train", "validation", "best baseline", "majority"] for head in CLASS_HEADS},
    "lr": ["learning rate"], "grad_norm": ["before clipping"], "rate": ["windows/s"],
    "memory": ["allocated", "reserved", "peak"],
}


# -- the window ----------------------------------------------------------------------------------
@pytest.fixture
def windows(qtbot, paths):
    """``make()``: the main window at its default size on 1500 demo candles, warmed up, the
    training settings tiny on the CPU; ``close(window)`` shuts one down as the app does."""
    made = []

    def make():
        window = MainWindow(paths)
        made.append(window)
        window.show()
        qtbot.waitExposed(window)
        live = window.live
        live.candles = demo_candles(1500, seed=3, end_ts=END_TS)
        live.key = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
        live.candles_changed.emit("reset")
        tiny_training(window, qtbot, epochs=None)
        return window

    def close(window):
        made.remove(window)
        asyncio.run(window.shutdown())
        window.deleteLater()

    make.close = close
    yield make
    for window in list(made):
        close(window)


def settle(qtbot, window) -> None:
    """Let layouts and the curves' redraw ticks run, then draw every point now."""
    qtbot.wait(50)
    window.training.curves.redraw_now()
    qtbot.wait(20)


def train(qtbot, panel, epochs: int) -> str:
    panel.settings.epochs.setValue(epochs)
    panel.start_training()
    qtbot.waitUntil(lambda: panel.state in ("idle", "failed") and not panel.busy
                    and not panel.tasks_running, timeout=WAIT_MS)
    assert panel.state == "idle", panel.detail
    return panel.current_run_id


def overlapping(rects) -> list:
    return [(a, b) for a, b in itertools.combinations(rects, 2) if a.intersects(b)]


def tab_texts(window) -> list[str]:
    tabs = window.centre_tabs
    return [tabs.tabText(i) for i in range(tabs.count())]


def check_plots(curves, page) -> None:
    """Every plot of ``page``: tall enough, its lines named, its tick labels apart."""
    for plot in curves.plots_on(page):
        assert plot.isVisible(), plot.key
        assert plot.view.height() >= MIN_PLOT_PX, (plot.key, plot.view.height())
        assert plot.legend.isVisible() and plot.legend.text().startswith(f"<b>{plot.title}")
        names = plot.legend_names()
        for line in names:
            assert line in plot.legend.text()
        legend = plot.legend  # every line of it fits: none is cut off
        assert legend.heightForWidth(legend.width()) <= legend.height(), plot.key
        if page is curves.curves_page:
            assert [n.split(":")[0] for n in names] == LEGENDS[plot.key]
        left, bottom = plot.left_axis.label_rects(), plot.bottom_axis.label_rects()
        assert len(left) >= 2 and len(bottom) >= 2, plot.key  # labels are drawn
        assert overlapping(left + bottom) == [], plot.key
        box = plot.view.mapToScene(plot.view.viewport().rect()).boundingRect()
        assert all(box.contains(r) for r in left + bottom), plot.key  # none cut off


def test_workspace_tab_then_window_remembered_with_tall_plots_legends_and_gauges(qtbot, windows,
                                                                                paths):
    window = windows()
    panel, workspace, curves = window.training, window.training_workspace, window.training.curves
    assert window.size().toTuple() == (1500, 900)
    assert workspace.mode == "tab" and tab_texts(window) == ["Chart", "Training", "Backtest"]
    assert window.centre_tabs.currentIndex() == 0  # the chart first

    panel.settings.epochs.setValue(500)
    panel.start_training()  # a run that starts training brings the workspace forward
    assert window.centre_tabs.currentIndex() == 0  # not while it prepares
    qtbot.waitUntil(lambda: panel.state == "training", timeout=WAIT_MS)
    assert workspace.visible and window.centre_tabs.currentWidget() is workspace.page
    sampled = panel.gauges.samples
    qtbot.waitUntil(lambda: panel.events_seen["EpochEnd"] >= 1
                    and panel.gauges.samples >= sampled + 1
                    and len(curves.series["mem_allocated"]) >= 2,  # sampled now and then
                    timeout=WAIT_MS)
    # the gauges are in sight while it trains: beside the curves, never in the scroll area
    box = panel.gauges_box
    assert panel.state == "training" and panel.gauges.active and box.isVisible()
    assert not any(isinstance(w, QScrollArea) for w in _ancestors(box, panel))
    top_left = box.mapTo(panel, QPoint(0, 0))
    assert panel.rect().contains(top_left) and top_left.y() + box.height() <= panel.height()
    assert gauges_module.INTERVAL_MS == 1000  # sampled once a second, not per step
    for gauge in (panel.gauges.allocated, panel.gauges.peak, panel.gauges.total,
                  panel.gauges.utilisation):
        assert gauge.text.isVisible() and gauge.text.text() != "—"
    assert "RAM" in window.status.device.text()  # and in the status bar, over the chart too
    panel.stop()
    qtbot.waitUntil(lambda: panel.state == "idle" and not panel.tasks_running,
                    timeout=WAIT_MS)
    settle(qtbot, window)
    check_plots(curves, curves.curves_page)
    curves.tabs.setCurrentWidget(curves.live_page)
    settle(qtbot, window)
    for plot in curves.plots_on(curves.live_page):
        assert plot.view.height() >= MIN_PLOT_PX and plot.legend_names()
    curves.tabs.setCurrentWidget(curves.curves_page)

    workspace.command_actions["view.training_window"].trigger()  # the menu's way
    assert workspace.mode == "window" and isinstance(panel.window(), TrainingWindow)
    assert tab_texts(window) == ["Chart", "Backtest"]
    qtbot.waitExposed(workspace.window)
    settle(qtbot, window)
    check_plots(curves, curves.curves_page)
    assert QSettings(str(paths.config_dir / "workstation.ini"),
                     QSettings.IniFormat).value(MODE_KEY) == "window"
    run_id, points = panel.current_run_id, len(curves.series["loss_train"])
    validations = len(curves.series["loss_val"])
    windows.close(window)

    again = windows()  # a restart: the window, and the run's recorded curves, come back
    assert again.training_workspace.mode == "window"
    assert again.training_workspace.window.isVisible()
    curves = again.training.curves
    qtbot.waitUntil(lambda: curves.run_id == run_id, timeout=WAIT_MS)
    assert len(curves.series["loss_train"]) == points
    assert len(curves.series["loss_val"]) == validations >= 1
    assert curves.baselines["candle_best"].visible
    assert again.training.readout.text("val_loss") != "—"
    again.training_workspace.window.close()  # closing the window puts the panel back
    assert again.training_workspace.mode == "tab"
    assert tab_texts(again) == ["Chart", "Training", "Backtest"]  # back beside the chart
    again.training_workspace.toggle()  # F8: chart <-> workspace
    assert again.centre_tabs.currentWidget() is again.training_workspace.page
    again.training_workspace.toggle()
    assert again.centre_tabs.currentIndex() == 0
    assert again.training_workspace.command_actions["view.training"].shortcut().toString() == "F8"


def _ancestors(widget, stop):
    while widget is not None and widget is not stop:
        yield widget
        widget = widget.parentWidget()


def test_curves_continue_across_a_resume_in_steps_and_in_time(qtbot, windows):
    window = windows()
    panel, curves = window.training, window.training.curves
    panel.settings.batch_size.setValue(4)  # steps enough for several points an epoch
    first = train(qtbot, panel, epochs=3)
    loss = curves.series["loss_train"]
    steps_before, walls_before = loss.steps.copy(), loss.times.copy()
    assert len(steps_before) >= 2 and np.all(np.isfinite(walls_before))
    panel.settings.epochs.setValue(5)
    panel.resume()
    qtbot.waitUntil(lambda: panel.state in ("idle", "failed") and not panel.busy
                    and not panel.tasks_running, timeout=WAIT_MS)
    assert panel.state == "idle" and panel.current_run_id == first
    steps, walls = loss.steps, loss.times
    assert np.array_equal(steps[:len(steps_before)], steps_before)  # the first session's
    assert len(steps) > len(steps_before) and np.all(np.diff(steps) > 0)
    assert np.all(np.diff(walls) >= 0)  # the time axis goes on from where the run stopped
    assert len(curves.series["loss_val"]) == 5
    from workstation.ml.checkpoints import CheckpointStore
    from workstation.ml.history.reader import read_history

    recorded = read_history(CheckpointStore(panel.paths.checkpoints_dir).run_dir(first))
    assert [b["step"] for b in recorded.batches] == [int(s) for s in steps]


# -- the curves' controls on recorded points (no training) ---------------------------------
def points(n: int = 40):
    rng = np.random.default_rng(1)
    losses = 2.0 + np.cumsum(rng.normal(-0.02, 0.2, n))
    batches = [BatchPoint(step=10 * (i + 1), wall=3.0 * i + 1.0, loss=float(loss),
                          accuracy=dict.fromkeys(CLASS_HEADS, 0.4 + 0.001 * i), lr=1e-4,
                          grad_norm=1.0 + i, samples_per_s=500.0, allocated_mb=100.0 + i,
                          reserved_mb=None, peak_mb=120.0 + i)
               for i, loss in enumerate(losses)]
    epochs = [EpochPoint(step=200 * (k + 1), wall=60.0 * (k + 1), loss=1.5 - 0.1 * k,
                         accuracy=dict.fromkeys(CLASS_HEADS, 0.45),
                         best=dict.fromkeys(CLASS_HEADS, ("logistic", 0.43)),
                         majority=dict.fromkeys(CLASS_HEADS, 0.41)) for k in range(2)]
    return batches, epochs


@pytest.fixture
def curves(qtbot):
    widget = TrainingCurves()
    qtbot.addWidget(widget)
    widget.resize(1100, 640)
    widget.show()
    qtbot.waitExposed(widget)
    batches, epochs = points()
    for point in batches:
        widget.add_batch(point)
    for point in epochs:
        widget.add_epoch(point)
    widget.redraw_now()
    for plot in widget.plots.values():  # the views take their new ranges now, not at a paint
        plot.plot.vb.updateAutoRange()
    return widget


def test_smoothing_changes_the_smoothed_line_and_never_the_raw(curves):
    raw, smoothed = curves.series["loss_train"], curves.series["loss_smooth"]
    values = raw.y.copy()
    w = curves.smoothing
    expected, last = [], 0.0  # TensorBoard's debiased moving average, by hand
    for i, v in enumerate(values, 1):
        last = w * last + (1 - w) * v
        expected.append(last / (1 - w ** i))
    assert np.allclose(smoothed.y, expected)
    curves.smoothing_box.setValue(0.9)  # the control
    assert curves.smoothing == 0.9
    assert np.array_equal(raw.y, values) and np.allclose(smoothed.y, smooth(values, 0.9))
    assert not np.allclose(smoothed.y, expected)
    curves.set_smoothing(0.0)  # no smoothing: the smoothed line is the raw one
    assert np.allclose(smoothed.y, values) and np.array_equal(raw.y, values)
    curves.redraw_now()
    _x, drawn = smoothed.item.getData()
    assert np.allclose(drawn, values)
    curves.set_smoothing(0.6)
    curves.add_batch(points(41)[0][-1])  # a new point is smoothed with the current weight
    assert np.allclose(smoothed.y, smooth(raw.y, 0.6))


def test_the_x_axis_switches_between_step_and_wall_time(curves):
    loss, val = curves.series["loss_train"], curves.series["loss_val"]
    x, _ = loss.item.getData()
    assert np.array_equal(x, loss.steps)
    curves.x_axis_box.setCurrentIndex(curves.x_axis_box.findData("time"))  # the control
    assert curves.x_axis == "time"
    curves.redraw_now()
    x, _ = loss.item.getData()
    assert np.array_equal(x, loss.times) and np.array_equal(val.item.getData()[0], [60, 120])
    best = curves.baselines["candle_best"]
    bx, by = best.item.getData()
    assert list(bx) == [1.0, 120.0] and list(by) == [43.0, 43.0]  # spans the points' times
    axis = curves.plots["loss"].bottom_axis
    assert axis.time_mode and axis.tickStrings([60, 90], 1, 30) == ["1:00", "1:30"]
    assert not curves.plots["live_loss"].bottom_axis.time_mode  # live counts candles
    curves.set_x_axis("step")
    curves.redraw_now()
    assert np.array_equal(loss.item.getData()[0], loss.steps) and not axis.time_mode
    with pytest.raises(ValueError):
        curves.set_x_axis("epoch")


def test_hovering_a_plot_reads_out_each_line_at_the_cursor(qtbot, curves):
    plot = curves.plots["loss"]
    loss = curves.series["loss_train"]
    target = QPointF(float(loss.steps[20]), float(loss.y[20]))
    where = plot.view.mapFromScene(plot.plot.vb.mapViewToScene(target))
    QTest.mouseMove(plot.view.viewport(), where)
    qtbot.waitUntil(lambda: plot.tip.isVisible())
    text = plot.hover_text
    assert text.startswith(f"step {loss.steps[20]:,.0f}")
    assert f"train (raw): {loss.y[20]:.4f}" in text
    assert f"train (smoothed): {curves.series['loss_smooth'].y[20]:.4f}" in text
    assert "validation: 1.5000 (step 200)" in text  # its nearest point, said where
    for other in curves.plots_on(curves.curves_page):  # the cursor in every plot of the tab
        assert other.hover_line.isVisible() and other.hover_line.value() == loss.steps[20]
        assert other is plot or not other.tip.isVisible()
    accuracy = curves.plots["candle"]
    QTest.mouseMove(accuracy.view.viewport(), accuracy.view.mapFromScene(
        accuracy.plot.vb.mapViewToScene(QPointF(200.0, 45.0))))
    qtbot.waitUntil(lambda: accuracy.tip.isVisible())
    assert "best baseline: logistic: 43.0" in accuracy.hover_text
    assert "majority: 41.0" in accuracy.hover_text and not plot.tip.isVisible()
    for corner in (QPoint(4, 4), QPoint(2, 2)):  # off the plot (over its axes): gone
        QTest.mouseMove(accuracy.view.viewport(), corner)
        qtbot.wait(10)
    qtbot.waitUntil(lambda: not accuracy.tip.isVisible())
    assert not any(p.hover_line.isVisible() for p in curves.plots_on(curves.curves_page))


def test_tick_labels_never_overlap_even_on_a_cramped_plot(qtbot):
    plot = CurvePlot("cramped", "Cramped")
    qtbot.addWidget(plot)
    series = plot.add_series("line", "#42a5f5")
    for i in range(50):
        series.add(1_000_000 + 137 * i, None, 1e-4 * (1 + np.sin(i)))
    series.redraw("step")
    for size in ((220, 60), (140, 140), (600, 300)):
        plot.resize(*size)
        plot.show()
        qtbot.waitExposed(plot)
        qtbot.wait(20)
        left, bottom = plot.left_axis.label_rects(), plot.bottom_axis.label_rects()
        assert left and bottom, size
        assert overlapping(left + bottom) == [], size


def test_a_failure_keeps_the_plots_tall_and_no_plot_is_a_tab_stop(qtbot, windows):
    from workstation.ui.focus import focus_chain, tab_stops

    window = windows()
    panel = window.training
    panel._show_failure("the run failed: a test", "Traceback (most recent call last):\n" * 40)
    assert panel.state == "failed" and panel.error_box.isVisible()
    assert window.centre_tabs.currentWidget() is window.training_workspace.page  # brought up
    settle(qtbot, window)
    for plot in panel.curves.plots_on(panel.curves.curves_page):
        assert plot.view.height() >= MIN_PLOT_PX, (plot.key, plot.view.height())
    stops = tab_stops(window.training_workspace.page, focus_chain(window))
    assert stops and not [w for w in stops if isinstance(w, (pg.GraphicsView, QScrollArea))]


def test_shift_f7_brings_the_report_of_the_run_shown_forward(qtbot, windows):
    from workstation.ui.training.run_task_view import NO_RUN

    window = windows()
    action = window.training_workspace.command_actions["train.report"]
    assert action.shortcut().toString() == "Shift+F7"
    action.trigger()
    tabs = window.training.curves.tabs
    assert window.centre_tabs.currentWidget() is window.training_workspace.page
    assert tabs.currentWidget() is window.training.report
    assert window.training.report.status.text() == NO_RUN  # no run shown yet: it says so


@pytest.mark.parametrize("values", [[20_480.1, 20_480.2], [1_050.1, 1_050.2, 1_050.3],
                                    [35.0, 35.0001]])
def test_a_nearly_flat_line_of_big_numbers_still_gets_its_labels(qtbot, values):
    plot = CurvePlot("memory", "Device memory, MiB")  # e.g. a GPU's 20 GiB, barely moving
    qtbot.addWidget(plot)
    series = plot.add_series("allocated", "#42a5f5")
    for step, value in enumerate(values, start=1):
        series.add(step, None, value)
    plot.resize(280, 180)
    plot.show()
    qtbot.waitExposed(plot)
    plot.redraw("step")
    qtbot.wait(20)
    assert len(plot.left_axis.label_rects()) >= 2 and len(plot.bottom_axis.label_rects()) >= 2


def test_tab_walks_the_evaluation_settings_in_order(qtbot, windows):
    """The evaluation's settings are disabled while the device warms up, when the window
    chains its Tab order; left out of it, Tab jumped over them ever after: they follow the
    tab bar now, in order."""
    window = windows()
    tabs = window.training.curves.tabs
    view = window.training.evaluation
    window.centre_tabs.setCurrentWidget(window.training_workspace.page)
    tabs.setCurrentWidget(view)
    settle(qtbot, window)
    order = [view.folds, view.epochs, view.seeds, view.ray, view.run_button]
    view.folds.setFocus()
    qtbot.waitUntil(view.folds.hasFocus)
    for widget in order[1:]:
        QTest.keyClick(window.focusWidget(), Qt.Key.Key_Tab)
        qtbot.waitUntil(widget.hasFocus, timeout=2_000)
    tabs.tabBar().setFocus()
    reached = []
    for _ in range(6):
        QTest.keyClick(window.focusWidget(), Qt.Key.Key_Tab)
        reached.append(window.focusWidget())
    assert view.folds in reached  # from the tab bar, the settings come before the tables
