"""The training workspace: settings, commands, state, curves, device gauges, live
predictions, the validation confusion matrices and the walk-forward evaluation.

Its left column keeps the state, the commands and the device gauges in sight (the settings
and the latest numbers scroll below them); the curves, confusion matrices and evaluation
fill the rest (``curves.TrainingCurves``). ``workspace.TrainingWorkspace`` shows it as a tab
beside the chart or in a window of its own.

Its state is always one of ``viewmodel.training_session.STATES`` (that module says what
each means and allows), shown in words with what it is doing.

The GUI thread only copies settings, takes views of closed candles and draws: data
preparation, training, inference and checkpoint writes run on the worker thread, whose
progress arrives through a ``ProgressRelay`` (at most 20 deliveries a second).

This module is the widget and the dispatch of the worker's events; the commands come from
``launchers.JobLaunchers`` (start and stop jobs), ``runs_tab.RunsTab`` (the Runs tab) and
``live_mode.LiveMode`` (candles to the live session), the form from ``settings_form``.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QGroupBox,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...annotations.suspects import SuspectReport
from ...backtest.walk_forward import WalkForwardBacktest
from ...display import number
from ...errors import WorkstationError
from ...market.series import SeriesKey
from ...ml.epoch_choice import describe_choice
from ...ml.events import (
    BatchEnd,
    CheckpointSaved,
    Compiling,
    EpochEnd,
    EvaluationFinished,
    Failed,
    Finished,
    FoldRetried,
    FoldScored,
    FoldStarted,
    LiveEnded,
    LiveReady,
    LiveSaved,
    LiveStep,
    LiveWaiting,
    RunStarted,
)
from ...ml.live import CandleSnapshot
from ...paths import AppPaths
from ...timeparse import format_minute
from ...viewmodel.training_session import TrainingSession
from ..command_registry import commands, create_command_actions
from ..focus import wheel_only_when_focused
from ..keymap import TRAINING
from ..live_data import LiveData
from ..resources import icon
from .confusion import ConfusionMatrices
from .curves import TrainingCurves
from .device_warmup import DeviceWarmup
from .evaluation_view import EvaluationView
from .gauges import DeviceGauges
from .launchers import JobLaunchers
from .live_mode import LiveMode
from .marks_preview import MarksBox
from .metric_readout import MetricReadout
from .paper_view import PaperTrading
from .prediction_overlay import PredictionOverlay
from .report_view import ReportView
from .review_view import ReviewView
from .runs import Exported, RunList, RunsListed
from .runs_tab import RunsTab
from .settings_form import TrainingSettings
from .worker import (
    EvaluationWorker,
    LiveWorker,
    ProgressRelay,
    RunCurves,
    StoppedEvaluation,
    TaskFailed,
    TrainingWorker,
    WorkerThread,
    collect_garbage_on_gui_thread,
)

if TYPE_CHECKING:
    from ..replay_mode import ReplayMode

log = logging.getLogger(__name__)
WARMUP_DELAY_MS = 400  # after the window has shown (torch import would slow its start)

_ICONS = {"train.start": "start", "train.live": "live", "train.live_train": "live_train",
          "train.stop": "stop", "train.restart": "restart", "train.resume": "resume",
          "train.clear": "clear", "train.evaluate": "start", "train.until_cursor": "hold_out"}
_IN_EVALUATION_TAB = "train.evaluate"  # its button is on the Evaluation tab
_BUTTONS = ("train.start", "train.live", "train.live_train", "train.stop", "train.restart",
            "train.resume", "train.clear")
# What a button shows where its command's name does not fit (the tooltip names the command)
_BUTTON_TEXTS = {"train.live_train": "Live + training", "train.clear": "Clear runs…"}
CONTROLS_WIDTH = 300  # px: the left column of the workspace (the curves get the rest)


class TrainingPanel(JobLaunchers, RunsTab, LiveMode, QWidget):
    """See the module docstring. The training workspace: a window's central tab or a window
    of its own (``workspace.TrainingWorkspace`` places it).

    Public: ``state`` (one of ``training_session.STATES``) and ``state_changed(str)``;
    ``detail`` (the words shown beside the state); ``command_actions`` (command id -> QAction,
    for the Train menu); ``current_run_id``; ``shutdown(timeout_s)``; ``warmup`` (the
    ``DeviceWarmup``, started by the panel); ``device_text_changed(str)`` for a status bar
    (the device, and while a run is active its memory and utilisation, once a second).

    The slots that hear a worker thread or the live data are defined here, not in the
    mixins: a call that reaches the panel after it was deleted is dropped only for these.
    """

    state_changed = Signal(str)
    device_text_changed = Signal(str)
    live_stepped = Signal(object)  # each live step (``ml.events``), after the chart shows it

    def __init__(self, paths: AppPaths, live_data: LiveData, chart=None, parent=None):
        super().__init__(parent)
        collect_garbage_on_gui_thread()  # before the first worker thread starts
        self.setObjectName("trainingPanel")
        self.setWindowTitle("Training")
        self.paths = paths
        self.live_data = live_data
        self.blind_replay: ReplayMode | None = None  # the blind replay that runs
        self.chart = chart
        self.session = TrainingSession()
        self.current_run_id: str | None = None
        self.provenance: str | None = None
        self.events_seen: Counter[str] = Counter()
        self.last_error: str | None = None
        self.overlay = PredictionOverlay(chart, live_data) if chart is not None else None
        self.paper = PaperTrading(paths, live_data, chart, self)
        self._runner: WorkerThread | None = None
        self._then = None  # what to do once the running worker has ended
        self._on_completed = None  # what to do with the run id once a run has completed
        self._epochs: int | None = None
        self._init_live_mode(paths.candle_cache)
        self._evaluating = False
        self._tasks: list[WorkerThread] = []  # reads and exports of runs, off the GUI thread
        self._listings = self._listed = 0  # the run listings asked for, and the one shown
        self._wanted_open: str | None = None  # the run whose recorded curves were asked for
        self.relay = ProgressRelay(self)
        self.relay.delivered.connect(self._on_delivered)
        self._build()
        self.gauges.sampled.connect(self._gauges_sampled)
        self.command_actions = create_command_actions(self, {
            "train.start": self.start_training,
            "train.live": self.start_live,
            "train.live_train": self.start_live_training,
            "train.stop": self.stop,
            "train.restart": self.restart_run,
            "train.resume": self.resume,
            "train.clear": self.clear_checkpoints,
            "train.evaluate": self.toggle_evaluation,
            "train.until_cursor": self.train_until_cursor,
        }, context=Qt.ShortcutContext.WindowShortcut)
        for command_id, action in self.command_actions.items():
            action.setIcon(icon(_ICONS[command_id]))
            if command_id in _BUTTON_TEXTS:
                action.setIconText(_BUTTON_TEXTS[command_id])
                action.setToolTip(f"{action.text()}: {action.toolTip()}")
            if command_id in self.buttons:
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
        self.detail_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.detail_label.setFixedHeight(3 * self.detail_label.fontMetrics().lineSpacing() + 2)
        self.detail_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.run_label = QLabel("Run —")
        self.run_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        for label in (self.detail_label, self.run_label):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, label.sizePolicy().verticalPolicy())
        # a run's warnings about its marks: in sight until the next run starts
        self.marks_warning = QLabel()
        self.marks_warning.setObjectName("marksWarning")
        self.marks_warning.setWordWrap(True)
        self.marks_warning.setStyleSheet("color: #ffa726")
        self.marks_warning.hide()
        outer.addWidget(self.state_label)
        outer.addWidget(self.detail_label)
        outer.addWidget(self.run_label)
        outer.addWidget(self.marks_warning)
        # a failure and its traceback: in this column, so the plots keep their room
        self.error_box = QPlainTextEdit()
        self.error_box.setReadOnly(True)
        self.error_box.setMaximumHeight(160)
        self.error_box.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.error_box.setStyleSheet("color: #ef5350")
        self.error_box.hide()
        outer.addWidget(self.error_box)
        grid = QGridLayout()
        grid.setSpacing(2)
        self.evaluation = EvaluationView()
        self.buttons: dict[str, QToolButton] = {_IN_EVALUATION_TAB: self.evaluation.run_button}
        for i, command in enumerate(c for c in commands(TRAINING) if c.id in _BUTTONS):
            button = QToolButton()
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
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
        self.settings = TrainingSettings(remembered=QSettings(
            str(self.paths.config_dir / "workstation.ini"), QSettings.Format.IniFormat))
        self.marks_box = MarksBox(self.settings.request, self._shown_candles,
                                  self.paths.annotations_db)
        box.addWidget(self.marks_box)
        box.addWidget(self.settings)
        for changed in (self.settings.seq_len.valueChanged, self.settings.preset.currentTextChanged,
                        self.settings.train_until.editingFinished):
            changed.connect(self.marks_box.refresh)
        numbers = QGroupBox("Metrics")
        self.readout = MetricReadout()
        QVBoxLayout(numbers).addWidget(self.readout)
        box.addWidget(numbers)
        box.addStretch(1)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab: the settings inside it
        self.scroll_area.setWidget(scrolled)
        wheel_only_when_focused(scrolled)
        outer.addWidget(self.scroll_area, 1)

        right = QWidget()
        side = QVBoxLayout(right)
        side.setContentsMargins(0, 0, 0, 0)
        side.setSpacing(2)
        self.curves = TrainingCurves()
        live_grid = self.curves.live_page.layout()
        assert isinstance(live_grid, QGridLayout)  # curves.TrainingCurves._tab's
        live_grid.addWidget(self.paper.view, 2, 0)
        self.confusion = ConfusionMatrices()
        self.curves.tabs.addTab(self.confusion, "Confusion")
        self.curves.tabs.addTab(self.evaluation, "Evaluation")
        self.review = ReviewView(self.paths, lambda: self.current_run_id, self._shown_candles)
        self.curves.tabs.addTab(self.review, "Review")
        self.report = ReportView(self.paths, lambda: self.current_run_id, self._shown_candles)
        self.curves.tabs.addTab(self.report, "Report")
        self.runs = RunList()
        self.runs.action_requested.connect(self._run_action)
        self.curves.tabs.addTab(self.runs, "Runs")
        side.addWidget(self.curves, 1)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
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
    @property
    def state(self) -> str:
        return self.session.state

    @property
    def detail(self) -> str:
        return self.session.detail

    def _set_state(self, state: str, detail: str = "") -> None:
        if not self.session.move(state, detail):  # progress: the words change, nothing else
            self.detail_label.setText(detail)
            return
        self._show_state()
        active = self.session.gauges_run(self.busy)
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
                                       f"{self.session.color}")
        self.detail_label.setText(self.detail)
        ready = bool(self.settings.devices)
        enabled = self.session.enabled(ready, self.busy)
        for command_id, action in self.command_actions.items():
            action.setEnabled(enabled[command_id])
        editable = self.session.can_start(ready, self.busy)
        self.settings.setEnabled(editable)
        self.evaluation.set_settings_enabled(editable)

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
        self.marks_box.refresh()
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

    # -- shutdown, and what the panel says ---------------------------------------------------
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
            assert self._runner is not None  # busy
            ok = self._runner.join(max(0.0, deadline - time.monotonic()))
            if ok:
                self._worker_finished()
            else:
                log.error("the training worker did not stop within %.0f s", timeout_s)
        ok = self.warmup.join(max(0.0, deadline - time.monotonic())) and ok
        ok = self.report.join(max(0.0, deadline - time.monotonic())) and ok
        ok = self.review.join(max(0.0, deadline - time.monotonic())) and ok
        ok = self.marks_box.join(max(0.0, deadline - time.monotonic())) and ok
        for task in self._tasks:
            ok = task.join(max(0.0, deadline - time.monotonic())) and ok
        self._tasks = [t for t in self._tasks if t.is_running()]
        self.gauges.stop()
        self.curves.stop_redraws()
        return ok

    def _refuse(self, why: str) -> None:
        """Say why a command did nothing (the state does not change)."""
        log.warning("training panel: %s", why)
        self.session.detail = why
        self.detail_label.setText(why)

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
        training: list[RunStarted | BatchEnd | EpochEnd] = []
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
                    if isinstance(item, RunStarted | EpochEnd):  # recorded in its history
                        self.refresh_runs()
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
            item, (FoldStarted, FoldRetried, RunStarted, BatchEnd, EpochEnd, FoldScored,
                   EvaluationFinished, SuspectReport, WalkForwardBacktest))]
        self.evaluation.add_events(shown)
        if shown and self.state == "evaluating":
            self._set_state("evaluating", self.evaluation.progress.text())

    def _progress(self, event) -> None:
        if not self.session.takes_progress:
            return
        match event:
            case RunStarted():
                self.provenance = event.provenance
                self._show_marks(event)
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
                                            f"{event.step} · loss {number(event.metrics.loss)}")
            case EpochEnd():
                self._set_state("training", f"epoch {event.epoch + 1}/{self._epochs} done · "
                                            f"validation loss {number(event.val.loss)}"
                                            + describe_choice(event.chosen_loss,
                                                              event.chosen_by)
                                            + (" (best)" if event.is_best else ""))

    def _show_marks(self, event: RunStarted) -> None:
        """Where the run's spans lie and the marks each holds, and its warnings (they stay
        until the next run starts)."""
        self.marks_box.show_run(event)
        self.marks_warning.setText("\n".join(f"⚠ {w}" for w in event.warnings))
        self.marks_warning.setVisible(bool(event.warnings))

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.settings.devices and not self.busy:
            self.marks_box.refresh()  # the marks may have changed on the chart meanwhile

    def _shown_candles(self) -> tuple[CandleSnapshot, SeriesKey] | None:
        """The closed candles on screen and their series (None: none)."""
        key = self.live_data.key
        return None if key is None else (CandleSnapshot.of(self.live_data.candles), key)

    def train_until_cursor(self) -> None:
        """Hold out the candles after the chart's cursor candle (on it again: none)."""
        when = self.chart.cursor_time if self.chart is not None else None
        if when is None:
            self._refuse("train until the cursor's candle: no candle is under the cursor")
            return
        try:
            same = self.settings.train_until_ms() == when
        except WorkstationError:
            same = False
        self.settings.set_train_until(None if same else when)
        self.marks_box.refresh()
        self._refuse("new runs train on every candle" if same else
                     f"new runs train until {format_minute(when)}: later candles are held "
                     f"out (Ctrl+U on the same candle: every candle)")

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
        worker = cast("TrainingWorker | EvaluationWorker | LiveWorker", runner.worker)
        outcome = worker.outcome
        match outcome:
            case Failed():
                if self.overlay is not None:  # a failed live run suggests nothing any more
                    self.overlay.clear()
                if isinstance(worker, EvaluationWorker):
                    self.evaluation.failed(outcome.message)
                self._show_failure(outcome.message, outcome.traceback)
            case EvaluationFinished():
                self._set_state("idle", f"evaluation finished: {outcome.folds} folds in "
                                        f"{outcome.elapsed_s:.0f} s (Evaluation tab)")
            case StoppedEvaluation():
                log.info("walk-forward evaluation: %s", outcome.message)
                self._set_state("idle", self.evaluation.stopped())
            case Finished():
                self._set_state("idle", f"run {outcome.run_id} {outcome.status} after "
                                        f"{outcome.step} steps · best validation "
                                        f"{outcome.chosen_by} {number(outcome.best_val_loss)}")
                if outcome.status == "completed" and self._on_completed is not None:
                    completed, self._on_completed = self._on_completed, None
                    completed(outcome.run_id)
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
            self._on_completed = None  # a run that did not complete: nothing follows it
            self.refresh_runs()  # its row shows how it ended
        then, self._then = self._then, None
        if then is not None:
            then()

    @Slot()
    def _task_finished(self) -> None:
        """A read or export of a run has ended."""
        self.relay.flush()  # the result it put is shown first
        for task in [t for t in self._tasks if not t.is_running()]:
            task.join(0)
            self._tasks.remove(task)

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
        if not self.busy:
            self.marks_box.refresh()
        if self._live_ready:
            if self.overlay is not None:
                self.overlay.clear()
            key = self.live_data.key
            assert key is not None  # a reset always shows a series
            self.paper.start(key, self._live_account)
            self._follow_reference()  # beside the series now shown
            self._submit_live()
