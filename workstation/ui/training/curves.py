"""The training workspace's curves (pyqtgraph): the Curves and Live tabs of ``TrainingCurves``.

Training (the Curves tab, a 3 x 3 grid): loss (train per logged batch, raw and faint, with
its TensorBoard-style smoothed line; validation per epoch), the accuracy of each class head
(train and validation) beside two labelled dashed lines, its best baseline on validation (the
best of majority, volatility, logistic and persistence, named) and its majority baseline,
learning rate, gradient norm (before clipping), samples per second and device memory
(allocated, reserved, peak). The x axis is the optimizer step or the wall time since the run
began (``set_x_axis``); ``set_smoothing`` re-smooths the training loss (the raw line does not
change). Live (its own tab): per-candle loss and the running candle and trend accuracy of
matured predictions beside their majority baselines, against the candle count.

Every plot is a ``ui.plots.CurvePlot``: a legend naming its lines above it, axis labels that
never overlap, and a readout of the values under the mouse: a vertical cursor in every plot
of the tab and, in the plot under the mouse, each line's value at the nearest point.

A metric without data is left out of a curve (and shown as "—" by ``MetricReadout``); it is
never drawn as 0.

Each plot is its own view, and new points reach the screen one plot per ``REDRAW_MS`` tick
(only plots on screen): repainting every plot at once costs 30-40 ms on a slow CPU, more
while training competes for it, and would stall the GUI thread.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...ml.curve_points import BatchPoint, EpochPoint, batch_point, epoch_point
from ...ml.events import BatchEnd, EpochEnd, RunStarted
from ...ml.history.reader import history_points
from ...ml.targets import CLASS_HEADS
from ...viewmodel.curve_math import Smoother, percent_value, smooth
from ..plots import COLORS, CurvePlot, Level, Series

REDRAW_MS = 100  # one plot per tick: each of the nine is redrawn at most once a second
DEFAULT_SMOOTHING = 0.6  # TensorBoard's default weight of the past
MAX_SMOOTHING = 0.99
X_AXES = {"step": "step", "time": "wall time"}


# -- all the curves ----------------------------------------------------------------------------
_HEAD_TITLES = {"candle": "Candle accuracy %", "trend": "Trend accuracy %",
                "position": "Position accuracy %", "regime": "Regime accuracy %"}


class TrainingCurves(QWidget):
    """The curves of one training run (and of live mode), with the x-axis and smoothing
    controls; ``reset()`` for a new run, ``add_events`` for a delivery of events."""

    x_axis_changed = Signal(str)
    smoothing_changed = Signal(float)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self.series: dict[str, Series] = {}
        self.baselines: dict[str, Level] = {}
        self.plots: dict[str, CurvePlot] = {}
        self._tab_of: dict[str, QWidget] = {}
        self._order: list[CurvePlot] = []  # redraw order
        self._next = 0
        self.x_axis = "step"
        self.smoothing = DEFAULT_SMOOTHING
        self._smoother = Smoother(self.smoothing)
        self.run_id: str | None = None  # the run whose curves are shown
        self._wall_offset = 0.0  # wall time the run recorded before this session
        self._session_t0: float | None = None  # when this session's first event arrived
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._redraw_one)
        self._build_controls()

        page, grid = self._tab("Curves")
        self.curves_page = page
        loss = self._plot(grid, "loss", "Loss", 0, 0)
        self._add(loss, "loss_train", "train (raw)", COLORS["train"], width=1, alpha=80,
                  style="faint")
        self._add(loss, "loss_smooth", "train (smoothed)", COLORS["smooth"])
        self._add(loss, "loss_val", "validation", COLORS["val"], symbol="o")
        for i, head in enumerate(CLASS_HEADS):
            row, col = divmod(i + 1, 3)
            plot = self._plot(grid, head, _HEAD_TITLES.get(head, f"{head} accuracy %"), row, col)
            self._add(plot, f"{head}_train", "train", COLORS["train"], width=1)
            self._add(plot, f"{head}_val", "validation", COLORS["val"], symbol="o")
            self.baselines[f"{head}_best"] = plot.add_level("best", COLORS["best"])
            self.baselines[f"{head}_majority"] = plot.add_level("majority", COLORS["majority"])
        lr = self._plot(grid, "lr", "Learning rate", 1, 2)
        self._add(lr, "lr", "learning rate", COLORS["lr"])
        grad = self._plot(grid, "grad_norm", "Gradient norm", 2, 0)
        self._add(grad, "grad_norm", "before clipping", COLORS["grad"])
        rate = self._plot(grid, "rate", "Samples/s", 2, 1)
        self._add(rate, "samples_per_s", "windows/s", COLORS["rate"])
        memory = self._plot(grid, "memory", "Device memory, MiB", 2, 2)
        self._add(memory, "mem_allocated", "allocated", COLORS["allocated"])
        self._add(memory, "mem_reserved", "reserved", COLORS["reserved"], width=1)
        self._add(memory, "mem_peak", "peak", COLORS["peak"], width=1, style="dot")
        for r in range(3):
            grid.setRowStretch(r, 1)
            grid.setColumnStretch(r, 1)

        page, grid = self._tab("Live")
        self.live_page = page
        live_loss = self._plot(grid, "live_loss", "Per-candle loss", 0, 0)
        self._add(live_loss, "live_loss", "training step", COLORS["live"], width=1)
        live_acc = self._plot(grid, "live_acc", "Live accuracy % (matured predictions)", 1, 0)
        self._add(live_acc, "live_candle_acc", "candle", COLORS["train"])
        self._add(live_acc, "live_trend_acc", "trend", COLORS["trend"])
        self.baselines["live_candle"] = live_acc.add_level("majority (candle)", COLORS["train"])
        self.baselines["live_trend"] = live_acc.add_level("majority (trend)", COLORS["trend"])
        self.tabs.currentChanged.connect(self._tab_changed)
        self._compare: list[Series] = []
        self._compare_raw: Series | None = None
        self._compare_smooth: Series | None = None
        self.compare_run: str | None = None  # the run drawn beside the one shown
        self.compare_label: str | None = None

    def _build_controls(self) -> None:
        corner = QWidget()
        row = QHBoxLayout(corner)
        row.setContentsMargins(4, 0, 4, 0)
        row.setSpacing(4)
        self.x_axis_box = QComboBox()
        for key, text in X_AXES.items():
            self.x_axis_box.addItem(f"x: {text}", key)
        self.x_axis_box.setToolTip("The training curves' x axis: the optimizer step, or the "
                                   "wall time since the run began")
        self.smoothing_box = QDoubleSpinBox()
        self.smoothing_box.setRange(0.0, MAX_SMOOTHING)
        self.smoothing_box.setSingleStep(0.05)
        self.smoothing_box.setDecimals(2)
        self.smoothing_box.setPrefix("smoothing ")
        self.smoothing_box.setValue(self.smoothing)
        self.smoothing_box.setToolTip("Weight of the past in the smoothed training loss "
                                      "(TensorBoard's exponential moving average; 0: none). "
                                      "The raw loss is drawn faint behind it.")
        row.addWidget(self.x_axis_box)
        row.addWidget(self.smoothing_box)
        self.tabs.setCornerWidget(corner, Qt.Corner.TopRightCorner)
        self.x_axis_box.currentIndexChanged.connect(
            lambda _i: self.set_x_axis(self.x_axis_box.currentData()))
        self.smoothing_box.valueChanged.connect(self.set_smoothing)

    def _tab(self, title: str) -> tuple[QWidget, QGridLayout]:
        page = QWidget()
        grid = QGridLayout(page)
        grid.setContentsMargins(2, 2, 2, 2)
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(4)
        self.tabs.addTab(page, title)
        return page, grid

    def _plot(self, grid: QGridLayout, key: str, title: str, row: int, col: int) -> CurvePlot:
        plot = CurvePlot(key, title)
        grid.addWidget(plot, row, col)
        plot.hovered.connect(self._hovered)
        plot.left.connect(self._left)
        self.plots[key] = plot
        page = grid.parentWidget()
        assert page is not None  # the grid of a tab's page (``_page``)
        self._tab_of[key] = page
        self._order.append(plot)
        return plot

    def _add(self, plot: CurvePlot, name: str, label: str, color: str, **kwargs) -> None:
        self.series[name] = plot.add_series(label, color, **kwargs)

    def plots_on(self, page: QWidget) -> list[CurvePlot]:
        return [p for k, p in self.plots.items() if self._tab_of[k] is page]

    # -- controls ------------------------------------------------------------------------------
    def set_x_axis(self, axis: str) -> None:
        """``step`` or ``time`` (wall time since the run began) for the training curves."""
        if axis not in X_AXES:
            raise ValueError(f"unknown x axis {axis!r}; use one of {tuple(X_AXES)}")
        if self.x_axis_box.currentData() != axis:
            self.x_axis_box.setCurrentIndex(self.x_axis_box.findData(axis))
            return  # the box's signal comes back here
        if axis == self.x_axis:
            return
        self.x_axis = axis
        for plot in self.plots_on(self.curves_page):
            plot.bottom_axis.set_time_mode(axis == "time")
            plot.mark_dirty()
            plot.plot.enableAutoRange()
            plot.show_cursor(None)
            plot.show_tip("", None)
        self.redraw()
        self.x_axis_changed.emit(axis)

    def set_smoothing(self, weight: float) -> None:
        """Re-smooth the training loss with ``weight`` (0 to ``MAX_SMOOTHING``); the raw
        line is left as it is."""
        weight = min(max(float(weight), 0.0), MAX_SMOOTHING)
        if abs(self.smoothing_box.value() - weight) > 1e-9:
            self.smoothing_box.setValue(weight)
            return
        if weight == self.smoothing:
            return
        self.smoothing = weight
        raw, smoothed = self.series["loss_train"], self.series["loss_smooth"]
        self._smoother = Smoother(weight)
        smoothed.set_y(np.asarray([self._smoother.add(float(v)) for v in raw.y],
                                  dtype=np.float64))
        if self._compare_raw is not None and self._compare_smooth is not None:
            self._compare_smooth.set_y(smooth(self._compare_raw.y, weight))
        self.redraw()
        self.smoothing_changed.emit(weight)

    # -- training ----------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget the curves of the previous run (and of live mode)."""
        for series in self.series.values():
            series.clear()
        for baseline in self.baselines.values():
            baseline.clear()
        self._smoother = Smoother(self.smoothing)
        self._wall_offset = 0.0
        self._session_t0 = None
        self.run_id = None
        self.clear_compare()
        self.redraw()

    def _wall(self, stamp: float) -> float:
        """The run's wall time of an event that arrived at ``stamp``: what the run recorded
        before this session (a resumed run), plus the time since this session began."""
        if self._session_t0 is None:
            self._session_t0 = stamp
        return self._wall_offset + stamp - self._session_t0

    def add_events(self, events, stamp: float | None = None) -> None:
        """Add the training events of one delivery (drawn by the next ticks). ``stamp``: the
        wall time they arrived (s since the epoch; now if not given), for the time axis."""
        stamp = time.time() if stamp is None else stamp
        for event in events:
            if isinstance(event, RunStarted):
                self.run_id = event.run_id
                self._session_t0 = stamp
                if event.start_step:
                    self.rewind_to(event.start_step)
            elif isinstance(event, BatchEnd):
                self.add_batch(batch_point(event, self._wall(stamp)))
            elif isinstance(event, EpochEnd):
                self.add_epoch(epoch_point(event, self._wall(stamp)))
        self.redraw()

    def add_batch(self, point: BatchPoint) -> None:
        s, step, wall = self.series, point.step, point.wall
        if s["loss_train"].add(step, wall, point.loss) and point.loss is not None:
            s["loss_smooth"].add(step, wall, self._smoother.add(float(point.loss)))
        for head in CLASS_HEADS:
            s[f"{head}_train"].add(step, wall, percent_value(point.accuracy.get(head)))
        s["lr"].add(step, wall, point.lr)
        s["grad_norm"].add(step, wall, point.grad_norm)
        s["samples_per_s"].add(step, wall, point.samples_per_s)
        s["mem_allocated"].add(step, wall, point.allocated_mb)
        s["mem_reserved"].add(step, wall, point.reserved_mb)
        s["mem_peak"].add(step, wall, point.peak_mb)

    def add_epoch(self, point: EpochPoint) -> None:
        s, step, wall = self.series, point.step, point.wall
        s["loss_val"].add(step, wall, point.loss)
        for head in CLASS_HEADS:
            s[f"{head}_val"].add(step, wall, percent_value(point.accuracy.get(head)))
            if head in point.best:
                name, value = point.best[head]
                self.baselines[f"{head}_best"].set(value, name)
                self.baselines[f"{head}_majority"].set(point.majority.get(head), "majority")

    def show_history(self, run_id: str, history) -> None:
        """The recorded curves of run ``run_id`` (``ml.history.reader.History``), in place of what
        is shown; a resumed run's new points continue them (``add_events``)."""
        self.reset()
        self.run_id = run_id
        batches, epochs, wall = history_points(history)
        for point in batches:
            self.add_batch(point)
        for epoch in epochs:
            self.add_epoch(epoch)
        self._wall_offset = wall
        self.redraw()

    def rewind_to(self, step: int) -> None:
        """Drop the points after ``step`` (a run resumed from a checkpoint older than its
        last recorded points continues from there)."""
        for name, series in self.series.items():
            if not name.startswith("live_"):
                series.truncate_after(step)
        raw = self.series["loss_train"]
        self._smoother = Smoother(self.smoothing)
        self.series["loss_smooth"].set_y(np.asarray([self._smoother.add(float(v))
                                                     for v in raw.y], dtype=np.float64))

    # -- another run beside this one --------------------------------------------------------
    def compare_with(self, run_id: str, history) -> None:
        """Draw run ``run_id`` (its recorded ``ml.history.reader.History``) beside the one shown:
        its smoothed training loss, validation loss and validation accuracies as grey dashed
        lines named "run <its last four characters>"."""
        self.clear_compare()
        label = f"run {run_id[-4:]}"
        self.compare_run, self.compare_label = run_id, label
        batches, epochs, _wall = history_points(history)
        raw = Series(self.plots["loss"], pg.PlotDataItem(), "raw")
        for point in batches:
            raw.add(point.step, point.wall, point.loss)
        self._compare_raw = raw
        smoothed = self._compare_line("loss", f"{label} train (smoothed)")
        for step, wall, y in zip(raw.steps, raw.times, smooth(raw.y, self.smoothing),
                                 strict=True):
            smoothed.add(step, None if math.isnan(wall) else wall, y)
        self._compare_smooth = smoothed
        val = self._compare_line("loss", f"{label} validation", symbol="t")
        heads = {head: self._compare_line(head, f"{label} validation", symbol="t")
                 for head in CLASS_HEADS}
        for epoch in epochs:
            val.add(epoch.step, epoch.wall, epoch.loss)
            for head, series in heads.items():
                series.add(epoch.step, epoch.wall, percent_value(epoch.accuracy.get(head)))
        self.redraw()

    def _compare_line(self, plot_key: str, label: str, symbol: str | None = None) -> Series:
        series = self.plots[plot_key].add_series(label, COLORS["compare"], width=1,
                                                 style="dash", symbol=symbol)
        self._compare.append(series)
        return series

    def clear_compare(self) -> None:
        for series in self._compare:
            series.owner.remove_series(series)
        self._compare = []
        self._compare_raw = self._compare_smooth = None
        self.compare_run = self.compare_label = None

    @property
    def compare_series(self) -> list[Series]:
        return list(self._compare)

    # -- live ---------------------------------------------------------------------------------
    def add_live(self, index: int, loss: float | None, candle_acc: float | None,
                 trend_acc: float | None, candle_baseline: float | None,
                 trend_baseline: float | None) -> None:
        """One closed candle in live mode: its training step's loss (None without training)
        and the running accuracies of matured predictions with their baselines."""
        s = self.series
        s["live_loss"].add(index, None, loss)
        s["live_candle_acc"].add(index, None, percent_value(candle_acc))
        s["live_trend_acc"].add(index, None, percent_value(trend_acc))
        self.baselines["live_candle"].set(candle_baseline, "majority")
        self.baselines["live_trend"].set(trend_baseline, "majority")
        self.redraw()

    def clear_live(self) -> None:
        for name in ("live_loss", "live_candle_acc", "live_trend_acc"):
            self.series[name].clear()
        self.baselines["live_candle"].clear()
        self.baselines["live_trend"].clear()

    # -- hover --------------------------------------------------------------------------------
    def _axis_of(self, plot: CurvePlot) -> str:
        return self.x_axis if self._tab_of[plot.key] is self.curves_page else "step"

    @Slot(object, float)
    def _hovered(self, plot: CurvePlot, x: float) -> None:
        axis = self._axis_of(plot)
        snapped, text = plot.readout(x, axis)
        page = self._tab_of[plot.key]
        for other in self.plots_on(page):
            other.show_cursor(snapped)
            if other is not plot:
                other.show_tip("", None)
        plot.show_tip(text, snapped)

    @Slot(object)
    def _left(self, plot: CurvePlot) -> None:
        for other in self.plots_on(self._tab_of[plot.key]):
            other.show_cursor(None)
            other.show_tip("", None)

    # -- drawing ------------------------------------------------------------------------------
    def _tab_changed(self, _index: int) -> None:
        self.redraw()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.redraw()  # what arrived while hidden

    def redraw(self, *_args) -> None:
        """Show new points soon: one plot per tick, the plots on screen only."""
        if not self._timer.isActive() and self._dirty_plot(advance=False) is not None:
            self._timer.start()

    def stop_redraws(self) -> None:
        """Draw no more points (the panel shuts down)."""
        self._timer.stop()

    def redraw_now(self) -> None:
        """Show every new point at once (all tabs)."""
        self._timer.stop()
        for plot in self._order:
            plot.redraw(self._axis_of(plot))

    def _dirty_plot(self, advance: bool = True) -> CurvePlot | None:
        n = len(self._order)
        for k in range(n):
            i = (self._next + k) % n
            plot = self._order[i]
            if plot.dirty and plot.isVisible():
                if advance:
                    self._next = (i + 1) % n
                return plot
        return None

    def _redraw_one(self) -> None:
        plot = self._dirty_plot()
        if plot is None:
            self._timer.stop()
            return
        plot.redraw(self._axis_of(plot))
