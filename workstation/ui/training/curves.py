"""Training and live curves (pyqtgraph) and the numbers beside them.

Training: loss (train per logged batch, raw and smoothed; validation per epoch), candle and
trend accuracy (train and validation) each beside its best baseline (on validation the best
of majority, volatility, logistic and persistence, named on the line) drawn as a dashed line,
learning rate, and samples per second, all against the optimizer step.
Live: per-candle loss and the running candle and trend accuracy of matured predictions,
against the candle count.

A metric without data is left out of a curve and shown as "—" in the numbers; it is never
drawn or written as 0.

Each plot is its own view, and new points reach the screen one plot per ``REDRAW_MS`` tick
(only plots of the visible tab): repainting every plot at once costs 30-40 ms on a slow CPU,
more while training competes for it, and would stall the GUI thread.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QGridLayout, QLabel, QTabWidget, QVBoxLayout, QWidget

from ...ml.events import BatchEnd, EpochEnd, RunStarted
from ...ml.scoring import describe
from ...ml.targets import CLASS_HEADS

REDRAW_MS = 100  # one plot per tick: each of the five is redrawn at most twice a second
AXIS_WIDTH, AXIS_HEIGHT = 52, 22  # px
SMOOTHING = 0.8  # weight of the past in the smoothed training loss (debiased EMA)
NO_DATA = "—"
_COLORS = {"train": "#42a5f5", "smooth": "#1e88e5", "val": "#ff7043", "lr": "#ab47bc",
           "rate": "#26a69a", "live": "#ffca28", "trend": "#66bb6a"}


def fmt(value: float | None, spec: str = ".4f") -> str:
    """``value`` formatted, or "—" when there is no value (None or not finite)."""
    if value is None or not math.isfinite(value):
        return NO_DATA
    return format(value, spec)


def pct(value: float | None) -> str:
    return NO_DATA if value is None or not math.isfinite(value) else f"{value * 100:.1f}%"


class Series:
    """The points of one curve of ``plot``; ``None`` values are skipped, never drawn as 0."""

    def __init__(self, plot: pg.PlotItem, item: pg.PlotDataItem):
        self.plot = plot
        self.item = item
        self.x: list[float] = []
        self.y: list[float] = []
        self.dirty = False

    def add(self, x: float, y: float | None) -> None:
        if y is None or not math.isfinite(y):
            return
        self.x.append(float(x))
        self.y.append(float(y))
        self.dirty = True

    def clear(self) -> None:
        self.x.clear()
        self.y.clear()
        self.item.setData([], [])
        self.dirty = False

    def redraw(self) -> None:
        if self.dirty:
            self.item.setData(self.x, self.y)
            self.dirty = False

    def __len__(self) -> int:
        return len(self.x)


class Baseline:
    """The best baseline of one split (``split``): a dashed horizontal line labelled with the
    baseline's name and accuracy, hidden while unknown."""

    def __init__(self, plot: pg.PlotItem, color: str, split: str, *,
                 label_below: bool = False):
        self.split = split
        self.name: str | None = None
        self.value: float | None = None
        anchor = (1, 0) if label_below else (1, 1)
        self.line = pg.InfiniteLine(angle=0, movable=False,
                                    pen=pg.mkPen(color, width=1, style=Qt.DashLine),
                                    label=split, labelOpts={"position": 0.98, "color": color,
                                                           "anchors": [anchor, anchor]})
        self.line.setVisible(False)
        plot.addItem(self.line, ignoreBounds=True)

    def set(self, value: float | None, name: str | None = "majority") -> None:
        if (value, name) == (self.value, self.name):
            return
        self.value, self.name = value, name
        if value is None:
            self.line.setVisible(False)
        else:
            text = f"{name} ({self.split}) {value * 100:.1f}%"
            self.line.label.setFormat(text)
            self.line.label.setText(text)
            self.line.setValue(value * 100.0)
            self.line.setVisible(True)

    def clear(self) -> None:
        self.set(None)


class TrainingCurves(QWidget):
    """The curves of one training run and of live mode; ``reset()`` for a new run."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.tabs = QTabWidget()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self.series: dict[str, Series] = {}
        self.baselines: dict[str, Baseline] = {}
        self._plots: list[tuple[int, pg.PlotItem]] = []  # (tab, plot) in redraw order
        self._next = 0
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._redraw_one)

        train = self._tab("Training")
        self.loss_plot = self._plot(train, 0, 0, "Loss", colspan=2)
        self._line(self.loss_plot, "loss_train", "train (per batch)", _COLORS["train"], 1,
                   alpha=90)
        self._line(self.loss_plot, "loss_smooth", "train (smoothed)", _COLORS["smooth"], 2)
        self._line(self.loss_plot, "loss_val", "validation", _COLORS["val"], 2, symbol="o")
        self.candle_plot = self._plot(train, 1, 0, "Candle accuracy %")
        self.trend_plot = self._plot(train, 1, 1, "Trend accuracy %")
        for head, plot in (("candle", self.candle_plot), ("trend", self.trend_plot)):
            self._line(plot, f"{head}_train", "train", _COLORS["train"], 1)
            self._line(plot, f"{head}_val", "validation", _COLORS["val"], 2, symbol="o")
            self.baselines[f"{head}_train"] = Baseline(plot, _COLORS["train"], "train")
            self.baselines[f"{head}_val"] = Baseline(plot, _COLORS["val"], "val",
                                                     label_below=True)
        self.lr_plot = self._plot(train, 2, 0, "Learning rate")
        self._line(self.lr_plot, "lr", "lr", _COLORS["lr"], 2)
        self.rate_plot = self._plot(train, 2, 1, "Samples/s")
        self._line(self.rate_plot, "samples_per_s", "windows/s", _COLORS["rate"], 2)

        live = self._tab("Live")
        self.live_loss_plot = self._plot(live, 0, 0, "Per-candle loss")
        self._line(self.live_loss_plot, "live_loss", "training step", _COLORS["live"], 1)
        self.live_acc_plot = self._plot(live, 1, 0, "Live accuracy % (matured predictions)")
        self._line(self.live_acc_plot, "live_candle_acc", "candle", _COLORS["train"], 2)
        self._line(self.live_acc_plot, "live_trend_acc", "trend", _COLORS["trend"], 2)
        self.baselines["live_candle"] = Baseline(self.live_acc_plot, _COLORS["train"],
                                                 "candle")
        self.baselines["live_trend"] = Baseline(self.live_acc_plot, _COLORS["trend"],
                                                "trend", label_below=True)
        self.tabs.currentChanged.connect(self.redraw)
        self._smooth: float | None = None
        self._smooth_n = 0

    def _tab(self, title: str) -> QGridLayout:
        page = QWidget()
        grid = QGridLayout(page)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(2)
        self.tabs.addTab(page, title)
        return grid

    def _plot(self, grid: QGridLayout, row: int, col: int, title: str,
              colspan: int = 1) -> pg.PlotItem:
        view = pg.PlotWidget(title=title)
        grid.addWidget(view, row, col, 1, colspan)
        plot = view.getPlotItem()  # no grid: its translucent lines double the paint time
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")
        # fixed axis sizes: new tick labels then repaint the plot, not re-layout it
        plot.getAxis("left").setWidth(AXIS_WIDTH)
        plot.getAxis("bottom").setHeight(AXIS_HEIGHT)
        plot.addLegend(offset=(-4, 4), labelTextSize="8pt")
        self._plots.append((self.tabs.count() - 1, plot))
        return plot

    def _line(self, plot: pg.PlotItem, name: str, label: str, color: str, width: float,
              *, symbol: str | None = None, alpha: int = 255) -> None:
        pen_color = pg.mkColor(color)
        pen_color.setAlpha(alpha)
        kwargs = {"symbol": symbol, "symbolSize": 5, "symbolBrush": color,
                  "symbolPen": None} if symbol else {}
        item = plot.plot([], [], pen=pg.mkPen(pen_color, width=width), name=label, **kwargs)
        self.series[name] = Series(plot, item)

    # -- training ----------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget the curves of the previous run (and of live mode)."""
        for series in self.series.values():
            series.clear()
        for baseline in self.baselines.values():
            baseline.clear()
        self._smooth, self._smooth_n = None, 0

    def add_events(self, events) -> None:
        """Add the training events of one delivery (drawn by the next ticks)."""
        s = self.series
        for event in events:
            if isinstance(event, BatchEnd):
                m, x = event.metrics, event.step
                s["loss_train"].add(x, m.loss)
                s["loss_smooth"].add(x, self._smoothed(m.loss))
                s["candle_train"].add(x, _percent(m.accuracy("candle")))
                s["trend_train"].add(x, _percent(m.accuracy("trend")))
                s["lr"].add(x, event.lr)
                s["samples_per_s"].add(x, event.samples_per_s)
                self.baselines["candle_train"].set(*_best_baseline(m, "candle"))
                self.baselines["trend_train"].set(*_best_baseline(m, "trend"))
            elif isinstance(event, EpochEnd):
                v, x = event.val, event.step
                s["loss_val"].add(x, v.loss)
                s["candle_val"].add(x, _percent(v.accuracy("candle")))
                s["trend_val"].add(x, _percent(v.accuracy("trend")))
                self.baselines["candle_val"].set(*_best_baseline(v, "candle"))
                self.baselines["trend_val"].set(*_best_baseline(v, "trend"))
        self.redraw()

    def _smoothed(self, loss: float | None) -> float | None:
        """Exponential moving average, debiased like TensorBoard's smoothing (the first
        points are not pulled towards 0)."""
        if loss is None or not math.isfinite(loss):
            return None
        self._smooth_n += 1
        self._smooth = SMOOTHING * (self._smooth or 0.0) + (1 - SMOOTHING) * loss
        return self._smooth / (1 - SMOOTHING ** self._smooth_n)

    # -- live ---------------------------------------------------------------------------------
    def add_live(self, index: int, loss: float | None, candle_acc: float | None,
                 trend_acc: float | None, candle_baseline: float | None,
                 trend_baseline: float | None) -> None:
        """One closed candle in live mode: its training step's loss (None without training)
        and the running accuracies of matured predictions with their baselines."""
        s = self.series
        s["live_loss"].add(index, loss)
        s["live_candle_acc"].add(index, _percent(candle_acc))
        s["live_trend_acc"].add(index, _percent(trend_acc))
        self.baselines["live_candle"].set(candle_baseline)
        self.baselines["live_trend"].set(trend_baseline)
        self.redraw()

    def clear_live(self) -> None:
        for name in ("live_loss", "live_candle_acc", "live_trend_acc"):
            self.series[name].clear()
        self.baselines["live_candle"].clear()
        self.baselines["live_trend"].clear()

    # -- drawing ------------------------------------------------------------------------------
    def redraw(self, *_args) -> None:
        """Show new points soon: one plot per tick, the visible tab only."""
        if not self._timer.isActive():
            self._timer.start()

    def redraw_now(self) -> None:
        """Show every new point at once (all tabs)."""
        self._timer.stop()
        for series in self.series.values():
            series.redraw()

    def _dirty_plot(self) -> pg.PlotItem | None:
        tab, n = self.tabs.currentIndex(), len(self._plots)
        for k in range(n):
            i = (self._next + k) % n
            page, plot = self._plots[i]
            if page == tab and any(s.dirty for s in self.series.values() if s.plot is plot):
                self._next = (i + 1) % n
                return plot
        return None

    def _redraw_one(self) -> None:
        plot = self._dirty_plot()
        if plot is None:
            self._timer.stop()
            return
        for series in self.series.values():
            if series.plot is plot:
                series.redraw()


def _percent(value: float | None) -> float | None:
    return None if value is None else value * 100.0


def _best_baseline(metrics, head: str) -> tuple[float | None, str | None]:
    """The accuracy and the name of ``head``'s best baseline in ``metrics``."""
    score = metrics.heads.get(head)
    if score is None:
        return None, None
    return score.best_baseline_accuracy, score.best_baseline


class MetricReadout(QWidget):
    """The latest numbers as text: "—" for anything without data. Each head's accuracy
    stands beside its best baseline (on validation: with the margin's interval and whether
    it shows an edge), in the words ``ml.scoring.describe`` gives the CLI too."""

    ROWS = (("epoch", "Epoch"), ("step", "Step"), ("loss", "Train loss"),
            ("val_loss", "Validation loss"), ("candle", "Candle accuracy"),
            ("trend", "Trend accuracy"), ("position", "Position accuracy"),
            ("regime", "Regime accuracy"), ("lr", "Learning rate"), ("rate", "Samples/s"),
            ("live", "Live"))

    def __init__(self, parent=None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(1)
        self.values: dict[str, QLabel] = {}
        for row, (key, title) in enumerate(self.ROWS):
            name = QLabel(title)
            name.setStyleSheet("color: palette(mid)")
            value = QLabel(NO_DATA)
            value.setTextInteractionFlags(Qt.TextSelectableByMouse)
            grid.addWidget(name, row, 0)
            grid.addWidget(value, row, 1)
            self.values[key] = value
        grid.setColumnStretch(1, 1)
        self._epochs: int | None = None
        self._train: dict = {}
        self._val: dict = {}

    def text(self, key: str) -> str:
        return self.values[key].text()

    def reset(self, epochs: int | None = None) -> None:
        for label in self.values.values():
            label.setText(NO_DATA)
        self._epochs = epochs
        self._train = {}
        self._val = {}

    def add_events(self, events) -> None:
        v = self.values
        for event in events:
            if isinstance(event, RunStarted):
                self._epochs = int(event.train_config.get("epochs") or 0) or None
            elif isinstance(event, BatchEnd):
                m = event.metrics
                v["epoch"].setText(self._epoch_text(event.epoch + 1, event.batch,
                                                    event.batches_per_epoch))
                v["step"].setText(str(event.step))
                v["loss"].setText(fmt(m.loss))
                v["lr"].setText(fmt(event.lr, ".2e"))
                v["rate"].setText(fmt(event.samples_per_s, ".0f"))
                self._train = dict(m.heads)
                self._accuracies()
            elif isinstance(event, EpochEnd):
                v["val_loss"].setText(fmt(event.val.loss))
                self._val = dict(event.val.heads)
                self._accuracies()

    def _epoch_text(self, epoch: int, batch: int, batches: int) -> str:
        total = f"/{self._epochs}" if self._epochs else ""
        return f"{epoch}{total} (batch {batch}/{batches})"

    def _accuracies(self) -> None:
        for head in CLASS_HEADS:
            parts = [describe(split, scores[head]) for split, scores in
                     (("train", self._train), ("val", self._val))
                     if head in scores and scores[head].accuracy is not None]
            self.values[head].setText("; ".join(parts) if parts else NO_DATA)

    def set_live(self, text: str) -> None:
        self.values["live"].setText(text or NO_DATA)
