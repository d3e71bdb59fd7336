"""The training workspace: settings, commands, state, curves, device gauges, live
predictions, the validation confusion matrices and the walk-forward evaluation.

Its left column keeps the state, the commands and the device gauges in sight (the settings
and the latest numbers scroll below them); the curves, confusion matrices and evaluation
fill the rest (``curves.TrainingCurves``). ``workspace.TrainingWorkspace`` shows it as a tab
beside the chart or in a window of its own.

State is always one of ``STATES`` and shown in words with what it is doing:

- ``preparing``: the device warms up (at startup), or a run builds its data and model;
- ``training``: a ``Trainer`` runs on the worker thread;
- ``live``: each closed candle goes to an ``OnlineLearner`` on the worker thread (with or
  without per-candle training); its predictions are drawn on the chart, the suggested
  position among them, and with PAPER trading on (``paper_view``) its signals trade a
  simulated account shown on the chart and in the Live tab;
- ``evaluating``: a walk-forward evaluation (``ml.evaluation``) runs on the worker thread,
  its folds and verdicts filling the Evaluation tab;
- ``stopping``: a stop was asked for; the worker ends at its next safe point and saves;
- ``failed``: the last run ended on an error, shown with its traceback (also in the log);
- ``idle``: nothing runs.

The GUI thread only copies settings, takes views of closed candles and draws: data
preparation, training, inference and checkpoint writes run on the worker thread, whose
progress arrives through a ``ProgressRelay`` (at most 20 deliveries a second).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import fields
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...errors import WorkstationError
from ...ml.device import DeviceChoice
from ...ml.events import (
    BatchEnd,
    CheckpointSaved,
    Compiling,
    EpochEnd,
    EvaluationFinished,
    Failed,
    Finished,
    FoldScored,
    LiveEnded,
    LiveReady,
    LiveSaved,
    LiveStep,
    LiveWaiting,
    RunStarted,
)
from ...ml.job import TrainingRequest
from ...ml.live import CandleSnapshot, LiveJob
from ...paths import AppPaths
from ...timeparse import format_minute
from ..live_data import LiveData
from ..resources import icon
from ..shortcuts import Command, create_actions, register
from .confusion import ConfusionMatrices
from .curves import MetricReadout, TrainingCurves, fmt, pct
from .device_warmup import DeviceWarmup
from .evaluation_view import EvaluationView
from .gauges import DeviceGauges
from .paper_view import PaperTrading
from .prediction_overlay import PredictionOverlay, position_text
from .reference_feed import ReferenceFeed
from .runs import Exported, RunList, RunsListed, export_run, list_store_runs
from .worker import (
    EvaluationJob,
    EvaluationWorker,
    LiveWorker,
    ProgressRelay,
    RunCurves,
    StoppedEvaluation,
    TaskFailed,
    TaskWorker,
    TrainingJob,
    TrainingWorker,
    WorkerThread,
    collect_garbage_on_gui_thread,
    read_run_curves,
)

log = logging.getLogger(__name__)
STATES = ("idle", "preparing", "compiling", "training", "live", "evaluating", "stopping",
          "failed")
WARMUP_DELAY_MS = 400  # after the window has shown (torch import would slow its start)
_STATE_COLORS = {"idle": "#b2b5be", "preparing": "#f5a623", "training": "#26a69a",
                 "live": "#42a5f5", "evaluating": "#ab47bc", "stopping": "#f5a623",
                 "failed": "#ef5350"}

TRAIN = "Training"
COMMANDS: tuple[Command, ...] = (
    Command("train.start", "Start training", ("F5",), TRAIN,
            "Train a new run on the closed candles on screen"),
    Command("train.live", "Live inference", ("F6",), TRAIN,
            "Predict every new candle with the latest trained model"),
    Command("train.live_train", "Live inference + per-candle training", ("Shift+F6",), TRAIN,
            "Predict every new candle and train one step on each (saved as a new run at Stop)"),
    Command("train.stop", "Stop", ("Shift+F5",), TRAIN,
            "Stop at the next safe point and save a checkpoint"),
    Command("train.restart", "Restart run", ("Ctrl+Shift+F5",), TRAIN,
            "Stop what runs, then train a fresh model as a new run"),
    Command("train.resume", "Resume", ("Ctrl+F5",), TRAIN,
            "Continue the latest run from its checkpoint"),
    Command("train.clear", "Clear checkpoints…", (), TRAIN,
            "Delete every saved checkpoint (asks first; stops a running run)"),
    Command("train.evaluate", "Run / stop walk-forward evaluation", ("F7",), TRAIN,
            "Train and test fold after fold on the closed candles on screen, every head "
            "beside its baselines (again: stop)"),
)
register(*COMMANDS)
_ICONS = {"train.start": "start", "train.live": "live", "train.live_train": "live_train",
          "train.stop": "stop", "train.restart": "restart", "train.resume": "resume",
          "train.clear": "clear", "train.evaluate": "start"}
_IN_EVALUATION_TAB = "train.evaluate"  # its button is on the Evaluation tab
_BUTTONS = ("train.start", "train.live", "train.live_train", "train.stop", "train.restart",
            "train.resume", "train.clear")
# What a button shows where its command's name does not fit (the tooltip names the command)
_BUTTON_TEXTS = {"train.live_train": "Live + training", "train.clear": "Clear runs…"}
CONTROLS_WIDTH = 300  # px: the left column of the workspace (the curves get the rest)


def _size_text(n_bytes: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= size:
            return f"{n_bytes / size:.1f} {unit}"
    return f"{n_bytes} bytes"


class TrainingSettings(QGroupBox):
    """The preset and the main hyperparameters, and the device picker."""

    def __init__(self, parent=None):
        super().__init__("Settings", parent)
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self.preset = QComboBox()
        self.device = QComboBox()
        for box in (self.preset, self.device):  # long device names must not widen the column
            box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(8)
        self.seq_len = QSpinBox()
        self.seq_len.setRange(8, 8192)
        self.seq_len.setToolTip("Candles per window the model sees")
        self.batch_size = QSpinBox()
        self.batch_size.setRange(1, 65536)
        self.lr = QDoubleSpinBox()
        self.lr.setDecimals(6)
        self.lr.setRange(1e-6, 1.0)
        self.lr.setSingleStep(1e-4)
        self.lr.setToolTip("Peak learning rate (warm-up, then cosine decay)")
        self.epochs = QSpinBox()
        self.epochs.setRange(1, 100000)
        self.epochs.setToolTip("Epochs in total (Resume continues up to this many)")
        self.dropout = QDoubleSpinBox()
        self.dropout.setDecimals(2)
        self.dropout.setRange(0.0, 0.9)
        self.dropout.setSingleStep(0.05)
        self.grad_checkpointing = QCheckBox("Gradient checkpointing")
        self.grad_checkpointing.setToolTip("Recompute block activations in backward: less "
                                           "memory, more compute")
        self.mixed_precision = QCheckBox("Mixed precision (bf16, CUDA)")
        self.higher_timeframes = QLineEdit()
        self.higher_timeframes.setPlaceholderText("none (e.g. 15m,1h)")
        self.higher_timeframes.setToolTip(
            "Also feed the last closed and the forming candle of these higher timeframes, "
            "resampled from the series")
        self.reference = QLineEdit()
        self.reference.setPlaceholderText("none (e.g. BTC/USDT)")
        self.reference.setToolTip(
            "Also feed this asset's candles at the same times, from the series' own source; "
            "a missing candle is masked, never filled in")
        form.addRow("Preset", self.preset)
        form.addRow("Device", self.device)
        form.addRow("Seq len", self.seq_len)
        form.addRow("Batch size", self.batch_size)
        form.addRow("Learning rate", self.lr)
        form.addRow("Epochs", self.epochs)
        form.addRow("Dropout", self.dropout)
        form.addRow(self.grad_checkpointing)
        form.addRow(self.mixed_precision)
        form.addRow("Higher timeframes", self.higher_timeframes)
        form.addRow("Reference asset", self.reference)
        self.preset.currentTextChanged.connect(self._preset_chosen)
        self.device.currentIndexChanged.connect(self._device_chosen)
        self.devices: list[DeviceChoice] = []
        self._has_precision_switch = False
        self.setEnabled(False)

    def fill(self, devices: list[DeviceChoice]) -> None:
        """Called once torch is loaded (device warm-up): presets, defaults and devices."""
        from ...ml.config import PRESETS, TrainConfig

        defaults = TrainConfig()
        self._has_precision_switch = "mixed_precision" in {f.name for f in fields(TrainConfig)}
        self.batch_size.setValue(defaults.batch_size)
        self.lr.setValue(defaults.lr)
        self.epochs.setValue(defaults.epochs)
        self.preset.clear()
        self.preset.addItems(list(PRESETS))
        self.preset.setCurrentText("tiny" if "tiny" in PRESETS else next(iter(PRESETS)))
        self._preset_chosen(self.preset.currentText())
        self.devices = list(devices)
        self.device.clear()
        for choice in devices:
            self.device.addItem(choice.label, choice.spec)
        self.setEnabled(True)
        self._device_chosen()

    def _preset_chosen(self, name: str) -> None:
        if not name:
            return
        from ...ml.config import PRESETS

        config = PRESETS[name]
        self.seq_len.setValue(config.seq_len)
        self.dropout.setValue(config.dropout)
        self.grad_checkpointing.setChecked(config.use_gradient_checkpointing)

    def _device_chosen(self, *_args) -> None:
        cuda = self.device_spec().startswith("cuda")
        self.mixed_precision.setEnabled(cuda and self._has_precision_switch)
        self.mixed_precision.setChecked(cuda)
        self.mixed_precision.setToolTip(
            "bf16 autocast on CUDA; CPU trains in fp32" if self._has_precision_switch else
            "The trainer always uses bf16 autocast on CUDA and fp32 on the CPU")

    def device_spec(self) -> str:
        return self.device.currentData() or "cpu"

    def device_choice(self) -> DeviceChoice | None:
        spec = self.device_spec()
        return next((d for d in self.devices if d.spec == spec), None)

    def model_overrides(self) -> dict:
        return {"seq_len": self.seq_len.value(), "dropout": round(self.dropout.value(), 4),
                "use_gradient_checkpointing": self.grad_checkpointing.isChecked()}

    def feature_overrides(self) -> dict:
        """Higher timeframes and the reference asset, as ``FeatureSpec`` fields (checked by
        ``ml.job.plan``)."""
        from ...ml.context import parse_higher_timeframes

        return {"higher_timeframes": parse_higher_timeframes(self.higher_timeframes.text()),
                "reference": self.reference.text().strip() or None}

    def apply_recorded(self, preset: str | None, model_config: dict, train_config: dict,
                       features: dict | None = None) -> None:
        """Take a recorded run's settings (its history's start record)."""
        features = features or {}
        self.higher_timeframes.setText(",".join(features.get("higher_timeframes") or ()))
        self.reference.setText(features.get("reference") or "")
        if preset and self.preset.findText(preset) >= 0:
            self.preset.setCurrentText(preset)
        for box, value in ((self.seq_len, model_config.get("seq_len")),
                           (self.batch_size, train_config.get("batch_size")),
                           (self.epochs, train_config.get("epochs"))):
            if isinstance(value, int):
                box.setValue(value)
        for box, value in ((self.lr, train_config.get("lr")),
                           (self.dropout, model_config.get("dropout"))):
            if isinstance(value, (int, float)):
                box.setValue(float(value))
        if isinstance(model_config.get("use_gradient_checkpointing"), bool):
            self.grad_checkpointing.setChecked(model_config["use_gradient_checkpointing"])
        if self.mixed_precision.isEnabled() and \
                isinstance(train_config.get("mixed_precision"), bool):
            self.mixed_precision.setChecked(train_config["mixed_precision"])

    def train_overrides(self) -> dict:
        out = {"epochs": self.epochs.value(), "batch_size": self.batch_size.value(),
               "lr": self.lr.value()}
        if self._has_precision_switch:
            out["mixed_precision"] = self.mixed_precision.isChecked()
        return out


class TrainingPanel(QWidget):
    """See the module docstring. The training workspace: a window's central tab or a window
    of its own (``workspace.TrainingWorkspace`` places it).

    Public: ``state`` (one of ``STATES``) and ``state_changed(str)``; ``detail`` (the words
    shown beside the state); ``command_actions`` (command id -> QAction, for the Train menu);
    ``current_run_id``; ``shutdown(timeout_s)``; ``warmup`` (the ``DeviceWarmup``, started by
    the panel); ``device_text_changed(str)`` for a status bar (the device, and while a run is
    active its memory and utilisation, once a second).
    """

    state_changed = Signal(str)
    device_text_changed = Signal(str)

    def __init__(self, paths: AppPaths, live_data: LiveData, chart=None, parent=None):
        super().__init__(parent)
        collect_garbage_on_gui_thread()  # before the first worker thread starts
        self.setObjectName("trainingPanel")
        self.setWindowTitle("Training")
        self.paths = paths
        self.live_data = live_data
        self.chart = chart
        self.state = "preparing"
        self.detail = "preparing device (loading torch)"
        self.current_run_id: str | None = None
        self.provenance: str | None = None
        self.events_seen: Counter = Counter()
        self.last_error: str | None = None
        self.overlay = PredictionOverlay(chart, live_data) if chart is not None else None
        self.paper = PaperTrading(paths, live_data, chart, self)
        self._runner: WorkerThread | None = None
        self._then = None  # what to do once the running worker has ended
        self._epochs: int | None = None
        self._live_ready = False
        self._live_mode = ""
        self._live_account = ""  # the model live mode runs, as its paper account names it
        self._live_steps = 0
        self._coalesced = 0
        self._live_reference: str | None = None  # the reference asset live mode follows
        self._reference_problem: str | None = None  # why live mode stopped for it
        self.reference_feed = ReferenceFeed(paths.candle_cache, self)
        self.reference_feed.changed.connect(self._reference_changed)
        self.reference_feed.failed.connect(self._reference_failed)
        self._evaluating = False
        self._generation = 0  # counts series shown; live results carry the one they are of
        self._tasks: list[WorkerThread] = []  # reads and exports of runs, off the GUI thread
        self._wanted_open: str | None = None  # the run whose recorded curves were asked for
        self.relay = ProgressRelay(self)
        self.relay.delivered.connect(self._on_delivered)
        self._build()
        self.gauges.sampled.connect(self._gauges_sampled)
        self.command_actions = create_actions(self, {
            "train.start": self.start_training,
            "train.live": self.start_live,
            "train.live_train": self.start_live_training,
            "train.stop": self.stop,
            "train.restart": self.restart_run,
            "train.resume": self.resume,
            "train.clear": self.clear_checkpoints,
            "train.evaluate": self.toggle_evaluation,
        }, context=Qt.WindowShortcut)
        for command_id, action in self.command_actions.items():
            action.setIcon(icon(_ICONS[command_id]))
            if command_id in _BUTTON_TEXTS:
                action.setIconText(_BUTTON_TEXTS[command_id])
                action.setToolTip(f"{action.text()}: {action.toolTip()}")
            self.buttons[command_id].setDefaultAction(action)
        self.paper.action.setIcon(icon("paper"))
        self.command_actions["train.paper"] = self.paper.action
        live_data.candle_closed.connect(self._on_candle_closed)
        live_data.candles_changed.connect(self._on_candles_changed)
        self.warmup = DeviceWarmup(self)
        self.warmup.ready.connect(self._devices_ready)
        self.warmup.failed.connect(self._devices_failed)
        self._show_state()
        # torch loads on its own thread, but its import holds the GIL for long stretches:
        # let the window appear first.
        self._shut_down = False
        self._warmup_delay = QTimer(self)
        self._warmup_delay.setSingleShot(True)
        self._warmup_delay.timeout.connect(self._start_warmup)
        self._warmup_delay.start(WARMUP_DELAY_MS)

    def _start_warmup(self) -> None:
        if not self._shut_down:
            self.warmup.start()

    # -- layout ------------------------------------------------------------------------------
    def _build(self) -> None:
        """Two columns: on the left what must stay in sight (state, commands, device gauges)
        above the settings and numbers (which scroll); on the right the curves, confusion
        matrices, evaluation and runs, filling the rest."""
        column = QWidget()
        column.setObjectName("trainingControls")
        outer = QVBoxLayout(column)
        outer.setContentsMargins(6, 6, 6, 6)
        self.state_label = QLabel()
        # Fixed sizes: progress text that changes length must not re-layout (and repaint)
        # the curves beside it.
        self.detail_label = QLabel()
        self.detail_label.setWordWrap(True)
        self.detail_label.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.detail_label.setFixedHeight(3 * self.detail_label.fontMetrics().lineSpacing() + 2)
        self.detail_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.run_label = QLabel("Run —")
        self.run_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        for label in (self.detail_label, self.run_label):
            label.setSizePolicy(QSizePolicy.Ignored, label.sizePolicy().verticalPolicy())
        outer.addWidget(self.state_label)
        outer.addWidget(self.detail_label)
        outer.addWidget(self.run_label)
        # a failure and its traceback: in this column, so the plots keep their room
        self.error_box = QPlainTextEdit()
        self.error_box.setReadOnly(True)
        self.error_box.setMaximumHeight(160)
        self.error_box.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.error_box.setStyleSheet("color: #ef5350")
        self.error_box.hide()
        outer.addWidget(self.error_box)
        grid = QGridLayout()
        grid.setSpacing(2)
        self.evaluation = EvaluationView()
        self.buttons: dict[str, QToolButton] = {_IN_EVALUATION_TAB: self.evaluation.run_button}
        for i, command in enumerate(c for c in COMMANDS if c.id in _BUTTONS):
            button = QToolButton()
            button.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
            button.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
            self.buttons[command.id] = button
            grid.addWidget(button, i // 2, i % 2)
        outer.addLayout(grid)
        outer.addWidget(self.paper.checkbox)
        self.gauges_box = QGroupBox("Device")
        self.gauges_box.setObjectName("deviceGauges")
        self.gauges = DeviceGauges()
        QVBoxLayout(self.gauges_box).addWidget(self.gauges)
        outer.addWidget(self.gauges_box)

        scrolled = QWidget()
        box = QVBoxLayout(scrolled)
        box.setContentsMargins(0, 0, 0, 0)
        self.settings = TrainingSettings()
        box.addWidget(self.settings)
        numbers = QGroupBox("Metrics")
        self.readout = MetricReadout()
        QVBoxLayout(numbers).addWidget(self.readout)
        box.addWidget(numbers)
        box.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.scroll.setFrameShape(QScrollArea.NoFrame)
        self.scroll.setFocusPolicy(Qt.NoFocus)  # Tab goes to the settings inside it
        self.scroll.setWidget(scrolled)
        outer.addWidget(self.scroll, 1)

        right = QWidget()
        side = QVBoxLayout(right)
        side.setContentsMargins(0, 0, 0, 0)
        side.setSpacing(2)
        self.curves = TrainingCurves()
        self.curves.live_page.layout().addWidget(self.paper.view, 2, 0)
        self.confusion = ConfusionMatrices()
        self.curves.tabs.addTab(self.confusion, "Confusion")
        self.curves.tabs.addTab(self.evaluation, "Evaluation")
        self.runs = RunList()
        self.runs.action_requested.connect(self._run_action)
        self.curves.tabs.addTab(self.runs, "Runs")
        side.addWidget(self.curves, 1)

        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.setObjectName("trainingSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(column)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([CONTROLS_WIDTH, 1000])
        column.setMinimumWidth(240)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

    # -- state -------------------------------------------------------------------------------
    def _set_state(self, state: str, detail: str = "") -> None:
        if state not in STATES:
            raise ValueError(f"unknown training state {state!r}")
        changed = state != self.state
        self.state, self.detail = state, detail
        if not changed:  # progress: the words change, nothing else
            self.detail_label.setText(detail)
            return
        self._show_state()
        active = state in ("preparing", "compiling", "training", "live", "evaluating",
                           "stopping") \
            and self.busy
        if active and not self.gauges.active:
            self.gauges.start()
        elif not active and self.gauges.active:
            self.gauges.stop()
            self.gauges.sample()
        log.info("training panel: %s%s", state, f" — {detail}" if detail else "")
        self.state_changed.emit(state)

    def _show_state(self) -> None:
        self.state_label.setText(self.state)
        self.state_label.setStyleSheet(f"font-weight: bold; font-size: 11pt; color: "
                                       f"{_STATE_COLORS[self.state]}")
        self.detail_label.setText(self.detail)
        ready = bool(self.settings.devices)
        idle = self.state in ("idle", "failed") and not self.busy
        enabled = {
            "train.start": ready and idle,
            "train.live": ready and idle,
            "train.live_train": ready and idle,
            "train.stop": self.busy and self.state != "stopping",
            "train.restart": ready and self.state != "stopping",
            "train.resume": ready and idle,
            "train.clear": ready and self.state != "stopping",
            "train.evaluate": ready and (idle or self.state == "evaluating"),
            "train.paper": True,
        }
        for command_id, action in self.command_actions.items():
            action.setEnabled(enabled[command_id])
        self.settings.setEnabled(ready and idle)
        self.evaluation.set_settings_enabled(ready and idle)

    @property
    def busy(self) -> bool:
        """A worker (training or live) is running."""
        return self._runner is not None

    # -- device warm-up ----------------------------------------------------------------------
    @Slot(list)
    def _devices_ready(self, devices: list) -> None:
        collect_garbage_on_gui_thread()  # again, to freeze what torch has loaded
        self.settings.fill(devices)
        self.settings.device.currentIndexChanged.connect(self._device_changed)
        self._device_changed()
        try:
            self.current_run_id = self._store().latest_run_id()
        except Exception as exc:  # noqa: BLE001 - an unreadable folder must not stop the panel
            log.warning("cannot list checkpoints: %s", exc)
        self._show_run()
        self._set_state("idle", f"ready: {', '.join(d.label for d in devices)}")
        self.refresh_runs()
        if self.current_run_id is not None:
            self.open_run(self.current_run_id)  # the last run's curves, as it recorded them

    @Slot(str, str)
    def _devices_failed(self, message: str, tb: str) -> None:
        self._show_failure(f"preparing the compute device failed: {message}", tb)

    def _device_changed(self, *_args) -> None:
        choice = self.settings.device_choice()
        if choice is None:
            return
        self.gauges.set_device(choice.spec, choice.label)
        self.gauges.sample()
        self.device_text_changed.emit(choice.label)

    @Slot(str)
    def _gauges_sampled(self, summary: str) -> None:
        """While a run is active the status bar shows the device's memory and use too."""
        choice = self.settings.device_choice()
        if choice is not None:
            self.device_text_changed.emit(f"{choice.label} · {summary}"
                                          if self.gauges.active and summary else choice.label)

    # -- commands ----------------------------------------------------------------------------
    def start_training(self) -> None:
        """A new run (fresh model, new run id) on the closed candles on screen."""
        if not self._can_start():
            return
        self._start_training(resume_run=None)

    def restart_run(self) -> None:
        """Stop what runs (saving it), then start a fresh run with a new run id."""
        if self.busy:
            self._after_stop(lambda: self._start_training(resume_run=None))
            return
        if self._can_start():
            self._start_training(resume_run=None)

    def resume(self) -> None:
        """Continue the newest run that can be resumed (the current one first)."""
        if not self._can_start():
            return
        store = self._store()
        point = store.newest_resumable(self.current_run_id)
        if point is None:
            self._refuse("nothing to resume: no run with a training checkpoint was found")
            return
        try:
            store.check_resumable(point.run_id, self.settings.epochs.value())
        except WorkstationError as exc:
            self._refuse(str(exc))
            return
        self._start_training(resume_run=point.run_id)

    def start_live(self) -> None:
        """Predict each closed candle with the latest trained model."""
        if self._can_start():
            self._start_live(train=False)

    def start_live_training(self) -> None:
        """Predict each closed candle and train one step on each."""
        if self._can_start():
            self._start_live(train=True)

    def toggle_evaluation(self) -> None:
        """Start a walk-forward evaluation, or stop the one that runs."""
        if self.state == "evaluating":
            self.stop()
        elif self._can_start():
            self._start_evaluation()

    def stop(self) -> None:
        """Ask the worker to stop at its next safe point (it saves before it ends)."""
        if not self.busy or self.state == "stopping":
            return
        self._runner.worker.stop.set()
        self._set_state("stopping", "stopping at the next safe point and saving…")

    def clear_checkpoints(self) -> bool:
        """Delete every checkpoint after a confirmation that gives their count and size; a
        running run is stopped first. Returns whether they were (or will be) cleared."""
        store = self._store()
        runs = store.list_runs()
        size = sum(r.size_bytes for r in runs)
        if not runs and not self.busy:
            self._refuse("there are no checkpoints to clear")
            return False
        text = (f"Delete {len(runs)} checkpoint run{'s' if len(runs) != 1 else ''} "
                f"({_size_text(size)}) in {store.folder}?")
        if self.busy:
            text += "\n\nThe running run is stopped first (its last checkpoint is deleted too)."
        answer = QMessageBox.question(self, "Clear checkpoints", text,
                                      QMessageBox.Yes | QMessageBox.No, QMessageBox.No)
        if answer != QMessageBox.Yes:
            return False
        if self.busy:
            self._after_stop(self._clear_now)
        else:
            self._clear_now()
        return True

    def shutdown(self, timeout_s: float = 60.0) -> bool:
        """Stop what runs at a safe point (saving a checkpoint), wait for the worker and the
        warm-up threads, and stop the gauges. True if every thread has ended in time."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        self._shut_down = True
        self._warmup_delay.stop()
        self._then = None
        ok = True
        if self.busy:
            self.stop()
            ok = self._runner.join(max(0.0, deadline - time.monotonic()))
            if ok:
                self._worker_finished()
            else:
                log.error("the training worker did not stop within %.0f s", timeout_s)
        ok = self.warmup.join(max(0.0, deadline - time.monotonic())) and ok
        for task in self._tasks:
            ok = task.join(max(0.0, deadline - time.monotonic())) and ok
        self._tasks = [t for t in self._tasks if t.is_running()]
        self.gauges.stop()
        return ok

    # -- helpers of the commands -------------------------------------------------------------
    def _can_start(self) -> bool:
        return bool(self.settings.devices) and not self.busy and \
            self.state in ("idle", "failed")

    def _refuse(self, why: str) -> None:
        """Say why a command did nothing (the state does not change)."""
        log.warning("training panel: %s", why)
        self.detail = why
        self.detail_label.setText(why)

    def _after_stop(self, then) -> None:
        self._then = then
        self.stop()

    def _store(self):
        from ...ml.checkpoints import CheckpointStore

        return CheckpointStore(self.paths.checkpoints_dir)

    def _closed_candles(self) -> CandleSnapshot | None:
        candles, key = self.live_data.candles, self.live_data.key
        snapshot = CandleSnapshot.of(candles)
        if key is None or not len(snapshot):
            self._refuse("no closed candles on screen to train on: open a data source first")
            return None
        return snapshot

    def _begin(self, worker, detail: str, state: str = "preparing") -> None:
        self._wanted_open = None  # recorded curves still being read are not shown now
        self.error_box.hide()
        self.last_error = None
        self.events_seen.clear()
        self._runner = WorkerThread(worker, "training worker")
        self._runner.finished.connect(self._worker_finished)
        self._set_state(state, detail)
        self._runner.start()

    def _start_training(self, resume_run: str | None) -> None:
        snapshot = self._closed_candles()
        if snapshot is None:
            return
        key = self.live_data.key
        run_id = resume_run or self._store().new_run_id()
        s = self.settings
        request = TrainingRequest(preset=s.preset.currentText(),
                                  model_overrides=s.model_overrides(),
                                  train_overrides=s.train_overrides(),
                                  feature_overrides=s.feature_overrides(),
                                  device=s.device_spec(), resume_run=resume_run)
        job = TrainingJob(request, snapshot, key, run_id, self.paths.checkpoints_dir,
                          self.paths.annotations_db)
        self.current_run_id = run_id
        self.provenance = key.provenance
        self._show_run()
        self.curves.reset()  # a resumed run's recorded curves come first from the worker
        self.runs.set_shown(run_id)
        self.readout.reset(s.epochs.value())
        self.confusion.reset()
        what = "resuming" if resume_run else "new run"
        self._begin(TrainingWorker(job, self.relay),
                    f"{what}: preparing {len(snapshot):,} candles of {key.provenance} on "
                    f"{s.device_spec()}")

    def _start_live(self, train: bool) -> None:
        key = self.live_data.key
        if key is None:
            self._refuse("no data source is open")
            return
        source = self._live_source_run()
        if source is None and not train:
            self._refuse("live inference needs a trained model: train one first, or use live "
                         "inference with per-candle training")
            return
        s = self.settings
        job = LiveJob(device=s.device_spec(), train=train,
                      checkpoints_root=self.paths.checkpoints_dir, provenance=key.provenance,
                      source_run=source, preset=s.preset.currentText(),
                      model_overrides=s.model_overrides(),
                      feature_overrides=s.feature_overrides())
        self._live_ready = False
        self._live_reference = None
        self._reference_problem = None
        self._live_steps = 0
        self._coalesced = 0
        self.curves.clear_live()
        self.curves.tabs.setCurrentIndex(1)
        if self.overlay is not None:
            self.overlay.clear()
        model = f"run {source}" if source else f"a fresh {s.preset.currentText()} model"
        self._begin(LiveWorker(job, self.relay),
                    f"live{' + per-candle training' if train else ''}: loading {model} on "
                    f"{s.device_spec()}")

    def _start_evaluation(self) -> None:
        snapshot = self._closed_candles()
        if snapshot is None:
            return
        key = self.live_data.key
        s, folds = self.settings, self.evaluation.folds.value()
        request = TrainingRequest(preset=s.preset.currentText(),
                                  model_overrides=s.model_overrides(),
                                  train_overrides=dict(s.train_overrides(),
                                                       epochs=self.evaluation.epochs.value()),
                                  feature_overrides=s.feature_overrides(),
                                  device=s.device_spec())
        job = EvaluationJob(request, snapshot, key, folds, self.paths.annotations_db)
        self.provenance = key.provenance
        self._show_run()
        self.evaluation.start(folds)
        self.curves.tabs.setCurrentWidget(self.evaluation)
        self._evaluating = True
        self._begin(EvaluationWorker(job, self.relay),
                    f"walk-forward evaluation: {folds} folds of {len(snapshot):,} candles of "
                    f"{key.provenance} on {s.device_spec()}", state="evaluating")

    def _live_source_run(self) -> str | None:
        return self._store().newest_with_checkpoint(self.current_run_id)

    def _clear_now(self) -> None:
        runs, freed = self._store().clear()
        log.info("cleared %d checkpoint runs (%s)", runs, _size_text(freed))
        self.current_run_id = None
        self._show_run()
        self.detail = f"cleared {runs} checkpoint runs ({_size_text(freed)})"
        self.detail_label.setText(self.detail)

    def _show_run(self) -> None:
        run = self.current_run_id or "—"
        where = f" · {self.provenance}" if self.provenance else ""
        self.run_label.setText(f"Run {run}{where}")
        self.run_label.setToolTip(self.run_label.text())

    def _show_failure(self, message: str, tb: str) -> None:
        self.last_error = message
        self.error_box.setPlainText(f"{message}\n\n{tb}".rstrip())
        self.error_box.show()
        self._set_state("failed", message)

    # -- worker -> GUI ------------------------------------------------------------------------
    @Slot(list)
    def _on_delivered(self, items: list) -> None:
        rest = []
        for item in items:
            if isinstance(item, (RunsListed, Exported, TaskFailed)):
                self._task_result(item)
            else:
                rest.append(item)
        items = rest
        if self._evaluating:
            for item in items:
                if isinstance(item, RunCurves):
                    self._run_curves(item)
            self._evaluation_delivered([i for i in items if not isinstance(i, RunCurves)])
            return
        training = []
        for item in items:
            self.events_seen[type(item).__name__] += 1
            match item:
                case RunCurves():
                    if training:  # what came before it, first
                        self.readout.add_events(training)
                        self.curves.add_events(training)
                        training = []
                    self._run_curves(item)
                case RunStarted() | BatchEnd() | EpochEnd():
                    training.append(item)
                    self._progress(item)
                    if isinstance(item, EpochEnd):
                        self.confusion.show_epoch(item)
                case CheckpointSaved():
                    log.info("checkpoint (%s) of run %s: %s", item.reason, item.run_id,
                             item.path)
                case LiveStep(generation=generation) if generation == self._generation:
                    self._live_step(item.step)
                case LiveWaiting(generation=generation) if generation == self._generation:
                    self._live_waiting(item)
                case LiveReady():
                    self._live_started(item)
                case LiveSaved():
                    self.current_run_id = item.run_id
                    self._show_run()
        if training:
            self.readout.add_events(training)
            self.curves.add_events(training)

    def _evaluation_delivered(self, items: list) -> None:
        """An evaluation's events: its folds' training and scores go to the Evaluation tab."""
        self.events_seen.update(type(item).__name__ for item in items)
        shown = [item for item in items if isinstance(
            item, (RunStarted, BatchEnd, EpochEnd, FoldScored, EvaluationFinished))]
        self.evaluation.add_events(shown)
        if shown and self.state == "evaluating":
            self._set_state("evaluating", self.evaluation.progress.text())

    def _progress(self, event) -> None:
        if self.state == "stopping":
            return
        match event:
            case RunStarted():
                self.provenance = event.provenance
                self._show_run()
                resumed = (f", resumed at step {event.start_step}" if event.resumed_from
                           else "")
                self._set_state("training", f"{event.n_params:,} parameters on "
                                            f"{event.device}; {event.train_windows} training "
                                            f"/ {event.val_windows} validation windows"
                                            f"{resumed}")
                self._epochs = event.train_config.get("epochs")
            case Compiling():
                self._set_state("compiling", f"compiling the training step (torch.compile, "
                                             f"{event.backend}): the first steps take longer")
            case BatchEnd():
                self._set_state("training", f"epoch {event.epoch + 1}/{self._epochs} · batch "
                                            f"{event.batch}/{event.batches_per_epoch} · step "
                                            f"{event.step} · loss {fmt(event.metrics.loss)}")
            case EpochEnd():
                self._set_state("training", f"epoch {event.epoch + 1}/{self._epochs} done · "
                                            f"validation loss {fmt(event.val.loss)}"
                                            + (" (best)" if event.is_best else ""))

    def _live_started(self, ready) -> None:
        self._live_ready = True
        model = f"run {ready.source_run}" if ready.source_run else "a fresh model"
        mode = "predicting with per-candle training" if ready.train else "predicting"
        self._live_mode = f"{mode} · {model} on {ready.device}"
        self._live_reference = ready.reference
        if ready.reference:
            self._live_mode += f" · reads {ready.reference}"
        if ready.source_run is None:  # a fresh model is this session's only
            model = f"{model} started {format_minute(int(time.time() * 1000))} UTC"
        self._live_account = model + (" + per-candle training" if ready.train else "")
        if self.state != "stopping":
            self._set_state("live", self._live_mode)
            self.paper.start(self.live_data.key, self._live_account)
        self._follow_reference()  # once live: a reference that fails at once stops it
        self._submit_live()

    def _follow_reference(self) -> None:
        key = self.live_data.key
        if self._live_reference and key is not None:
            self.reference_feed.start(self._live_reference, key, self.live_data.streaming,
                                      self.live_data.feed_settings)

    def _live_waiting(self, waiting) -> None:
        if self.state != "live":
            return
        then = (f"masked if it is not there {waiting.wait_s:g} s after it is offered"
                if not waiting.offered else f"masked after {waiting.wait_s:g} s")
        self._set_state("live", f"{self._live_mode} · waiting for the {waiting.reference} "
                                f"candle of {format_minute(waiting.ts)} ({then})")

    @Slot()
    def _reference_changed(self) -> None:
        if self._live_ready and self.state == "live":
            self._submit_live()

    @Slot(str)
    def _reference_failed(self, text: str) -> None:
        if self._live_ready and self.state == "live":
            self._reference_problem = text
            self.stop()

    def _live_step(self, step) -> None:
        self._live_steps += 1
        if self.overlay is not None:
            self.overlay.show_step(step)
        self.paper.step(step)
        a = step.averages
        self.curves.add_live(self._live_steps, step.train.loss if step.train else None,
                             a.live_candle_acc, a.live_trend_acc, a.live_candle_baseline,
                             a.live_trend_baseline)
        if step.coalesced:
            self._coalesced += step.coalesced
            log.warning("live: %d closed candles arrived during one step and were coalesced "
                        "(training is slower than the candle rate)", step.coalesced)
        behind = (f" · fell behind: {self._coalesced} candles coalesced"
                  if self._coalesced else "")
        loss = f" · step loss {fmt(step.train.loss)}" if step.train else ""
        if step.reference_present is False:
            behind += f" · no {self._live_reference} candle at this one's time: masked"
        p = step.prediction
        self.readout.set_live(
            f"{self._live_steps} predictions · candle {pct(a.live_candle_acc)} (majority "
            f"{pct(a.live_candle_baseline)}, n={a.live_candle_n}) · trend "
            f"{pct(a.live_trend_acc)} (majority {pct(a.live_trend_baseline)}, "
            f"n={a.live_trend_n}) · the chart's badge: {position_text(p)}, the position "
            f"the trader's head would hold after this candle (regime {p.regime_label})"
            f"{loss}{behind}")
        if self.state == "live":
            self._set_state("live", f"{self._live_mode} · next {p.candle_label} "
                                    f"{p.confidence:.0%}, trend {p.trend_label} · "
                                    f"{position_text(p)}{behind}")

    @Slot()
    def _worker_finished(self) -> None:
        runner = self._runner
        if runner is None or runner.is_running():
            return
        runner.join(0)
        self.relay.flush()
        self._runner = None
        self._live_ready = False
        self._evaluating = False
        self.paper.stop()
        self.reference_feed.close()
        outcome = runner.worker.outcome
        match outcome:
            case Failed():
                if self.overlay is not None:  # a failed live run suggests nothing any more
                    self.overlay.clear()
                self._show_failure(outcome.message, outcome.traceback)
            case EvaluationFinished():
                self._set_state("idle", f"evaluation finished: {outcome.folds} folds in "
                                        f"{outcome.elapsed_s:.0f} s (Evaluation tab)")
            case StoppedEvaluation():
                log.info("walk-forward evaluation: %s", outcome.message)
                self._set_state("idle", self.evaluation.stopped())
            case Finished():
                self._set_state("idle", f"run {outcome.run_id} {outcome.status} after "
                                        f"{outcome.step} steps · best validation loss "
                                        f"{fmt(outcome.best_val_loss)}")
            case LiveEnded() if self._reference_problem:
                if self.overlay is not None:
                    self.overlay.clear()
                self._show_failure(f"live mode stopped: {self._reference_problem}",
                                   "(the reference asset's feed; see the log)")
            case LiveEnded():
                if self.overlay is not None:
                    self.overlay.clear()
                self._set_state("idle", f"live mode ended after {outcome.predictions} "
                                        f"predictions and {outcome.steps} training steps")
            case _:
                self._show_failure("the worker ended without a result", "(see the log)")
        if isinstance(outcome, (Finished, Failed, LiveEnded)):
            self.refresh_runs()  # its row shows how it ended
        then, self._then = self._then, None
        if then is not None:
            then()

    # -- runs: the Runs tab's commands ------------------------------------------------------------
    @property
    def tasks_running(self) -> bool:
        """A read or export of a run is under way (or its result not yet shown)."""
        return bool(self._tasks)

    def _run_task(self, task, what: str) -> None:
        if self._shut_down:
            return
        runner = WorkerThread(TaskWorker(task, what, self.relay), what)
        runner.finished.connect(self._task_finished)
        self._tasks.append(runner)
        runner.start()

    @Slot()
    def _task_finished(self) -> None:
        self.relay.flush()  # the result it put is shown first
        for task in [t for t in self._tasks if not t.is_running()]:
            task.join(0)
            self._tasks.remove(task)

    @Slot(str, str)
    def _run_action(self, action: str, run_id: str) -> None:
        match action:
            case "refresh":
                self.refresh_runs()
            case "open":
                self.open_run(run_id)
            case "compare":
                self.compare_run(run_id)
            case "resume":
                self.resume_run(run_id)
            case "restart":
                self.restart_from(run_id)
            case "delete":
                self.delete_run(run_id)
            case "tensorboard" | "csv":
                self.export_run(run_id, action)

    def refresh_runs(self) -> None:
        """List the runs again (read off the GUI thread; the Runs tab fills when done)."""
        self._run_task(partial(list_store_runs, self.paths.checkpoints_dir), "listing the runs")

    def open_run(self, run_id: str) -> bool:
        """Show run ``run_id``'s recorded curves (not while a run is active: its own curves
        are shown then; overlay it instead)."""
        if self.busy:
            self._refuse(f"run {run_id} can be opened once this one has stopped; overlay it "
                         f"to see it beside this one")
            return False
        self._wanted_open = run_id
        self._run_task(partial(read_run_curves, self.paths.checkpoints_dir, run_id, "open"),
                       f"reading run {run_id}")
        return True

    def compare_run(self, run_id: str) -> None:
        """Draw run ``run_id`` beside the run shown (again on the same run: take it away)."""
        if self.curves.compare_run == run_id or run_id == self.curves.run_id:
            self.curves.clear_compare()
            self.runs.say("overlay cleared")
            return
        self._run_task(partial(read_run_curves, self.paths.checkpoints_dir, run_id, "compare"),
                       f"reading run {run_id}")

    def resume_run(self, run_id: str) -> None:
        """Continue run ``run_id`` from its checkpoint, up to the panel's Epochs."""
        if not self._can_start():
            self._refuse("a run is active: stop it before resuming another")
            return
        try:
            self._store().check_resumable(run_id, self.settings.epochs.value())
        except WorkstationError as exc:
            self._refuse(str(exc))
            self.runs.say(str(exc))
            return
        self._start_training(resume_run=run_id)

    def restart_from(self, run_id: str) -> None:
        """A new run with run ``run_id``'s recorded settings (read first, off the thread)."""
        if not self._can_start():
            self._refuse("a run is active: stop it before starting another")
            return
        self._run_task(partial(read_run_curves, self.paths.checkpoints_dir, run_id, "restart"),
                       f"reading run {run_id}")

    def delete_run(self, run_id: str) -> bool:
        """Delete run ``run_id``'s checkpoints and history after a confirmation that gives
        their size; the active run cannot be deleted. Returns whether it was deleted."""
        if self.busy and run_id == self.current_run_id:
            self._refuse(f"run {run_id} is active: stop it before deleting it")
            return False
        store = self._store()
        size = next((r.size_bytes for r in store.list_runs() if r.run_id == run_id), None)
        if size is None:
            self._refuse(f"there is no run {run_id}")
            self.refresh_runs()
            return False
        answer = QMessageBox.question(
            self, "Delete run", f"Delete run {run_id}: its checkpoints and its history "
                                f"({_size_text(size)}) in {store.run_dir(run_id)}?",
            QMessageBox.Yes | QMessageBox.No, QMessageBox.No)
        if answer != QMessageBox.Yes:
            return False
        try:
            freed = store.delete_run(run_id)
        except WorkstationError as exc:
            self._refuse(str(exc))
            self.runs.say(str(exc))
            return False
        log.info("deleted run %s (%s)", run_id, _size_text(freed))
        self.runs.say(f"deleted run {run_id} ({_size_text(freed)})")
        if self.curves.compare_run == run_id:
            self.curves.clear_compare()
        if run_id == self.current_run_id:
            self.current_run_id = None
            self._show_run()
            if not self.busy:
                self.curves.reset()
                self.readout.reset()
        self.refresh_runs()
        return True

    def export_run(self, run_id: str, kind: str, path: str | None = None) -> bool:
        """Export run ``run_id``: ``tensorboard`` (event files into the folder ``path``) or
        ``csv`` (the file ``path``); without ``path`` a dialog asks. The export runs off the
        GUI thread; the Runs tab says where it went."""
        if path is None:
            home = str(Path.home())
            if kind == "csv":
                path, _ = QFileDialog.getSaveFileName(self, f"Export run {run_id} as CSV",
                                                      str(Path(home) / f"{run_id}.csv"),
                                                      "CSV files (*.csv);;All files (*)")
            else:
                path = QFileDialog.getExistingDirectory(
                    self, f"Export run {run_id} for TensorBoard (a folder)", home)
            if not path:
                return False
        self.runs.say(f"exporting run {run_id} to {path}…")
        self._run_task(partial(export_run, self.paths.checkpoints_dir, run_id, kind, path),
                       f"exporting run {run_id}")
        return True

    def _task_result(self, item) -> None:
        match item:
            case RunsListed():
                self.runs.show_runs(item.runs)
            case Exported():
                log.info("%s", item.message)
                self.runs.say(item.message)
            case TaskFailed():
                self.runs.say(f"{item.what} failed: {item.message}")

    def _run_curves(self, item: RunCurves) -> None:
        """A run's recorded history, read for ``item.purpose``."""
        if item.history is None:
            log.warning("run %s: %s", item.run_id, item.error)
            self.runs.say(f"run {item.run_id}: {item.error}")
            if item.purpose == "restart":
                self._refuse(f"cannot restart run {item.run_id}: {item.error}")
            return
        match item.purpose:
            case "open":
                if self.busy or item.run_id != self._wanted_open:
                    return  # a run started since: its own curves are shown
                self._wanted_open = None
                self.current_run_id = item.run_id
                self.provenance = item.history.provenance
                self._show_run()
                self.curves.show_history(item.run_id, item.history)
                self.readout.show_recorded(item.history)
                self.confusion.reset()
                self.runs.set_shown(item.run_id)
            case "resume":
                if item.run_id == self.current_run_id:
                    self.curves.show_history(item.run_id, item.history)
            case "compare":
                self.curves.compare_with(item.run_id, item.history)
                self.runs.say(f"run {item.run_id} is drawn beside run "
                              f"{self.curves.run_id or '—'} (grey, dashed)")
            case "restart":
                start = next((m for m in reversed(item.history.markers)  # its latest
                              if m.get("type") in ("start", "resume")), None)
                if start is None or not self._can_start():
                    self._refuse(f"cannot restart run {item.run_id}: "
                                 + ("no settings recorded" if start is None else "busy"))
                    return
                self.settings.apply_recorded(start.get("preset"),
                                             start.get("model_config") or {},
                                             start.get("train_config") or {},
                                             start.get("features") or {})
                self.start_training()

    # -- live data -> worker -------------------------------------------------------------------
    @Slot(int)
    def _on_candle_closed(self, _index: int) -> None:
        if self._live_ready and self.state == "live":
            self._submit_live()

    @Slot(str)
    def _on_candles_changed(self, kind: str) -> None:
        if kind != "reset":
            return
        self._generation += 1  # another series: results of the old one are dropped
        if self._live_ready:
            if self.overlay is not None:
                self.overlay.clear()
            self.paper.start(self.live_data.key, self._live_account)
            self._follow_reference()  # beside the series now shown
            self._submit_live()

    def _submit_live(self) -> None:
        """Offer the live session the newest closed candles (it picks the window it needs),
        and the reference asset's when its model reads one."""
        reference, final = (self.reference_feed.candles(self.live_data.candles)
                            if self._live_reference else (None, False))
        self._runner.worker.session.offer(self.live_data.candles, self._generation, reference,
                                          final)
