"""The training panel's commands that start and stop jobs: training (new, resumed,
restarted), live inference with or without per-candle training, the walk-forward
evaluation, Stop and Clear checkpoints.

``JobLaunchers`` is mixed into ``panel.TrainingPanel``, whose commands these are: each reads
the settings form (``TrainingSettings.request``) and the closed candles on screen, asks the
session (``viewmodel.training_session``) whether it may start, and hands the job to a worker
thread; the panel's event dispatch shows what the worker reports.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from PySide6.QtWidgets import QLabel, QMessageBox, QPlainTextEdit, QWidget

from ...display import size
from ...errors import WorkstationError
from ...ml.job import TrainingRequest
from ...ml.live import CandleSnapshot, LiveJob
from ...viewmodel import training_session
from .worker import (
    EvaluationJob,
    EvaluationWorker,
    LiveWorker,
    TrainingJob,
    TrainingWorker,
    WorkerThread,
)

if TYPE_CHECKING:
    from ...ml.checkpoints import CheckpointStore
    from ...paths import AppPaths
    from ...viewmodel.training_session import TrainingSession
    from ..live_data import LiveData
    from ..replay_mode import ReplayMode
    from .confusion import ConfusionMatrices
    from .curves import TrainingCurves
    from .evaluation_view import EvaluationView
    from .metric_readout import MetricReadout
    from .prediction_overlay import PredictionOverlay
    from .runs import RunList
    from .settings_form import TrainingSettings
    from .worker import ProgressRelay

log = logging.getLogger(__name__)


class JobLaunchers:
    """The panel's job commands (see the module docstring). Its host, the panel, has the
    session, the settings form, the live data, the paths and the relay, the views a job
    resets (curves, readout, confusion, evaluation, runs, overlay, error box), and
    ``_runner``, ``_then``, ``_on_completed``, ``_wanted_open``, ``_evaluating``,
    ``_set_state``, ``_refuse``, ``_show_run`` and ``_worker_finished``."""

    if TYPE_CHECKING:  # what the panel provides (``panel.TrainingPanel``)
        paths: AppPaths
        live_data: LiveData
        session: TrainingSession
        settings: TrainingSettings
        relay: ProgressRelay
        curves: TrainingCurves
        readout: MetricReadout
        confusion: ConfusionMatrices
        evaluation: EvaluationView
        runs: RunList
        overlay: PredictionOverlay | None
        error_box: QPlainTextEdit
        detail_label: QLabel
        events_seen: Counter[str]
        current_run_id: str | None
        provenance: str | None
        last_error: str | None
        _runner: WorkerThread | None
        _then: Callable[[], object] | None
        _on_completed: Callable[[str], object] | None
        _wanted_open: str | None
        _evaluating: bool
        blind_replay: ReplayMode | None  # the replay that runs

        @property
        def state(self) -> str: ...
        @property
        def detail(self) -> str: ...
        @property
        def busy(self) -> bool: ...
        def _set_state(self, state: str, detail: str = "") -> None: ...
        def _refuse(self, why: str) -> None: ...
        def _show_run(self) -> None: ...
        def _worker_finished(self) -> None: ...
        def _reset_live(self) -> None: ...  # live_mode.LiveMode
        def refresh_runs(self) -> None: ...  # runs_tab.RunsTab

    def start_training(self) -> None:
        """A new run (fresh model, new run id) on the closed candles on screen."""
        if not self._can_start():
            return
        self._start_training(resume_run=None)

    def train_then(self, completed: Callable[[str], object]) -> bool:
        """A new run as ``start_training`` starts it; once it has completed (not stopped or
        failed), ``completed(run_id)``. False if none could start (the panel said why)."""
        if not self._can_start():
            return False
        self._start_training(resume_run=None)
        started = self.busy
        self._on_completed = completed if started else None
        return started

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
        """Predict each closed candle with the latest trained model (in live mode with
        per-candle training: switch to it)."""
        self._live_command(train=False)

    def start_live_training(self) -> None:
        """Predict each closed candle and train one step on each (in live inference: switch
        to it)."""
        self._live_command(train=True)

    def _live_command(self, train: bool) -> None:
        """Start live mode, switch to it from the other live mode, or say why not
        (``TrainingSession.live_command``)."""
        match self.session.live_command(bool(self.settings.devices), self.busy, train):
            case training_session.START:
                self._start_live(train)
            case training_session.SWITCH:
                self._after_stop(lambda: self._start_live(train) if self._can_start() else None)
                self._set_state("stopping", f"switching to live inference"
                                f"{' with per-candle training' if train else ''}: stopping "
                                f"the live mode that runs first…")
            case why:
                self._refuse(why)

    def toggle_evaluation(self) -> None:
        """Start a walk-forward evaluation, or stop the one that runs."""
        if self.state == "evaluating":
            self.stop()
        elif self._can_start():
            self._start_evaluation()

    def stop(self) -> None:
        """Ask the worker to stop at its next safe point (it saves before it ends)."""
        if not self.session.can_stop(self.busy):
            return
        assert self._runner is not None  # can_stop: a worker runs
        worker = cast("TrainingWorker | EvaluationWorker | LiveWorker", self._runner.worker)
        worker.stop.set()
        self._set_state("stopping", "stopping at the next safe point and saving…")

    def clear_checkpoints(self) -> bool:
        """Delete every checkpoint after a confirmation that gives their count and size; a
        running run is stopped first. Returns whether they were (or will be) cleared."""
        store = self._store()
        runs = store.list_runs()
        total = sum(r.size_bytes for r in runs)
        if not runs and not self.busy:
            self._refuse("there are no checkpoints to clear")
            return False
        text = (f"Delete {len(runs)} checkpoint run{'s' if len(runs) != 1 else ''} "
                f"({size(total)}) in {store.folder}?")
        if self.busy:
            text += "\n\nThe running run is stopped first (its last checkpoint is deleted too)."
        answer = QMessageBox.question(
            cast(QWidget, self), "Clear checkpoints", text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        if answer != QMessageBox.StandardButton.Yes:
            return False
        if self.busy:
            self._after_stop(self._clear_now)
        else:
            self._clear_now()
        return True

    # -- helpers of the commands -------------------------------------------------------------
    def _can_start(self) -> bool:
        return self.session.can_start(bool(self.settings.devices), self.busy)

    def _after_stop(self, then: Callable[[], object]) -> None:
        self._then = then
        self.stop()

    def _store(self) -> CheckpointStore:
        from ...ml.checkpoints import CheckpointStore

        return CheckpointStore(self.paths.checkpoints_dir)

    def _settings_request(self, **kwargs) -> TrainingRequest | None:
        """The settings as a request (``TrainingSettings.request``), or None after saying in
        one line which setting is refused (a Train until or trend windows that are no such
        thing)."""
        try:
            return self.settings.request(**kwargs)
        except WorkstationError as exc:
            self._refuse(str(exc))
            return None

    def _closed_candles(self) -> CandleSnapshot | None:
        candles, key = self.live_data.candles, self.live_data.key
        snapshot = CandleSnapshot.of(candles)
        if key is None or not len(snapshot):
            self._refuse("no closed candles on screen to train on: open a data source first")
            return None
        return snapshot

    def _begin(self, worker: TrainingWorker | LiveWorker | EvaluationWorker, detail: str,
               state: str = "preparing") -> None:
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
        assert key is not None  # _closed_candles: a series is open
        request = self._settings_request(resume_run=resume_run)
        if request is None:
            return
        run_id = resume_run or self._store().new_run_id()
        job = TrainingJob(request, snapshot, key, run_id, self.paths.checkpoints_dir,
                          self.paths.annotations_db)
        self.current_run_id = run_id
        self.provenance = key.provenance
        self._show_run()
        self.curves.reset()  # a resumed run's recorded curves come first from the worker
        self.runs.set_shown(run_id)
        self.readout.reset(self.settings.epochs.value())
        self.confusion.reset()
        what = "resuming" if resume_run else "new run"
        self._begin(TrainingWorker(job, self.relay),
                    f"{what}: preparing {len(snapshot):,} candles of {key.provenance} on "
                    f"{request.device}")

    def _start_live(self, train: bool) -> None:
        key = self.live_data.key
        if key is None:
            self._refuse("no data source is open")
            return
        source, why = self._live_source_run()
        if source is None and not train:
            self._refuse(f"live inference during blind replay needs a model that learned "
                         f"nothing after the replay clock, and {why or 'none is trained'}: "
                         f"train one on earlier candles, or use live inference with "
                         f"per-candle training (a fresh model)" if self.blind_replay else
                         "live inference needs a trained model: train one first, or use live "
                         "inference with per-candle training")
            return
        request = self._settings_request()
        if request is None:
            return
        job = LiveJob(device=request.device, train=train,
                      checkpoints_root=self.paths.checkpoints_dir, provenance=key.provenance,
                      source_run=source, preset=request.preset,
                      model_overrides=request.model_overrides,
                      feature_overrides=request.feature_overrides)
        self._reset_live()
        self.session.live_train = train
        self.curves.clear_live()
        self.curves.tabs.setCurrentIndex(1)
        if self.overlay is not None:
            self.overlay.clear()
        model = f"run {source}" if source else f"a fresh {request.preset} model"
        if why:
            model += f" ({why})"
        self._begin(LiveWorker(job, self.relay),
                    f"live{' + per-candle training' if train else ''}: loading {model} on "
                    f"{request.device}")

    def _start_evaluation(self) -> None:
        snapshot = self._closed_candles()
        if snapshot is None:
            return
        key = self.live_data.key
        assert key is not None  # _closed_candles: a series is open
        folds = self.evaluation.folds.value()
        request = self._settings_request(epochs=self.evaluation.epochs.value())
        if request is None:
            return
        ray = self.evaluation.ray.text().strip()
        job = EvaluationJob(request, snapshot, key, folds, self.paths.annotations_db,
                            seeds=self.evaluation.seeds.value(),
                            candle_cache=self.paths.candle_cache, ray=ray)
        self.provenance = key.provenance
        self._show_run()
        self.evaluation.start(folds)
        self.curves.tabs.setCurrentWidget(self.evaluation)
        self._evaluating = True
        self._begin(EvaluationWorker(job, self.relay),
                    f"walk-forward evaluation: {folds} folds of {len(snapshot):,} candles of "
                    f"{key.provenance} on {request.device}{_on_ray(ray)}",
                    state="evaluating")

    def _live_source_run(self) -> tuple[str | None, str | None]:
        """The model live mode runs (the current run, else the newest), or None; in blind
        replay the first of them that learned nothing the clock hides
        (``ml.replay_models``), or None and why the first may not."""
        store = self._store()
        if self.blind_replay is None:
            return store.newest_with_checkpoint(self.current_run_id), None
        from ...ml.replay_models import blind_run

        return blind_run(store.folder, store.with_checkpoint(self.current_run_id),
                         self.blind_replay.clock_now())

    def _clear_now(self) -> None:
        runs, freed = self._store().clear()
        log.info("cleared %d checkpoint runs (%s)", runs, size(freed))
        self.current_run_id = None
        self._show_run()
        self.session.detail = f"cleared {runs} checkpoint runs ({size(freed)})"
        self.detail_label.setText(self.detail)
        self.refresh_runs()  # the Runs tab empties


def _on_ray(ray: str) -> str:
    """Where the folds train, in words after the device: nothing for this process."""
    from ...ml.ray_folds import LOCAL

    if not ray:
        return ""
    return (", as tasks on a local Ray cluster" if ray == LOCAL else
            f", as tasks on the Ray cluster at {ray}")
