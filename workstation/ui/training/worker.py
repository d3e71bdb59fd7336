"""Work off the GUI thread: a QObject worker on its own QThread, and the relay that brings its
progress back.

- ``ThreadWorker``/``WorkerThread``: ``work()`` of a QObject runs on a dedicated QThread; the
  thread ends by itself when ``work()`` returns, and the worker moves back to the GUI thread
  so that it can be dropped there safely. Compute workers run at a lower priority (and so do
  the torch threads they start), so that the GUI thread wins the CPU when it wakes up.
- ``collect_garbage_on_gui_thread``: Python's cyclic garbage collection runs on a GUI timer
  only, never in a worker thread (where it would destroy Qt objects on the wrong thread, and
  hold the GIL for a whole collection), and the objects alive once torch is loaded are frozen
  out of it (a full collection of them takes 0.3 s, a stall of the GUI wherever it runs).
- ``ProgressRelay``: a worker thread ``put``s items (training events, live predictions); the
  GUI thread receives them in batches through ``delivered(list)``, at most
  ``MAX_DELIVERIES_PER_S`` times a second and never later than one interval after they were
  put. The worker wakes the relay with one queued signal per batch, so the signal rate is
  bounded too.
- ``TrainingWorker``: runs the one training job of ``ml.job`` (plan, build, ``Trainer.run``)
  on its thread, so the trainer owns its model there; stop with ``stop`` (a
  ``threading.Event``, checked within one batch).
- ``LiveWorker``: runs an ``ml.live.LiveSession`` on its thread, which owns windowing,
  coalescing, resets and prediction maturation; the GUI offers it the newest candles.
- ``EvaluationWorker``: runs the walk-forward evaluation of ``ml.evaluation`` on the data
  ``ml.job`` makes (its folds as tasks on a Ray cluster where the job names one, as
  ``workstation evaluate --ray`` does), then backtests the test spans (as ``workstation
  evaluate --backtest`` does); stop with ``stop`` too.
- ``TaskWorker``: one short task off the GUI thread (reading a run's history, listing the
  runs, an export); its result, or a ``TaskFailed``, goes to ``relay``. A resumed run's
  ``TrainingWorker`` reads the run's history first, the same way (``RunCurves``), so that its
  recorded curves reach the window before the new points.

Slots that receive signals from a worker thread are QObject methods: PySide6 runs a lambda or
plain function slot in the emitting thread.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import math
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, QTimer, Signal, Slot

from ...errors import WorkstationError
from ...market.series import SeriesKey
from ...ml.config import DEFAULT_SEEDS, EvaluationConfig
from ...ml.events import EvaluationFinished, Failed, Finished
from ...ml.job import TrainingRequest
from ...ml.live import CandleSnapshot, LiveJob, LiveSession

log = logging.getLogger(__name__)
MAX_DELIVERIES_PER_S = 20
WORKER_NICE = 10  # Linux nice of compute threads: the GUI thread gets ~90 % of a contended core


def lower_thread_priority() -> None:
    """Make the calling thread (and the threads it creates from now on, such as torch's
    intra-op pool) yield the CPU to the GUI thread. Linux: a per-thread nice value; elsewhere
    ``QThread.setPriority`` does it."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICE)
        except OSError as exc:
            log.debug("cannot lower the priority of the worker thread: %s", exc)


_gui_collector = None


def collect_garbage_on_gui_thread() -> None:
    """See the module docstring. Call it on the GUI thread before starting worker threads,
    and again once heavy modules are loaded (a call after the first only freezes)."""
    global _gui_collector
    gc.freeze()
    if _gui_collector is None:
        from pyqtgraph.util.garbage_collector import GarbageCollector

        _gui_collector = GarbageCollector(interval=0.5)


class ThreadWorker(QObject):
    """A QObject whose ``work()`` runs on a ``WorkerThread``, at a lower CPU priority than
    the GUI; subclasses implement ``work``."""

    def work(self) -> None:
        raise NotImplementedError

    @Slot()
    def run(self) -> None:
        try:
            lower_thread_priority()
            self.work()
        finally:
            app = QCoreApplication.instance()
            if app is not None:
                self.moveToThread(app.thread())
            QThread.currentThread().quit()


_started: list[WorkerThread] = []  # kept alive until seen finished (see WorkerThread.start)


class WorkerThread:
    """One ``ThreadWorker`` on its own QThread. ``finished`` is the QThread's signal, delivered
    in the GUI thread once ``work()`` has returned."""

    def __init__(self, worker: ThreadWorker, name: str):
        self.worker = worker
        self.thread = QThread()
        self.thread.setObjectName(name)
        worker.moveToThread(self.thread)
        self.thread.started.connect(worker.run)
        self.finished = self.thread.finished

    def start(self) -> None:
        """Start the thread. It is referenced here until a later start sees it finished, so
        that dropping it early never destroys a running QThread (Qt aborts the process)."""
        _started[:] = [w for w in _started if w.is_running()]
        _started.append(self)
        self.thread.start(QThread.Priority.LowPriority)

    def is_running(self) -> bool:
        return self.thread.isRunning()

    def join(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the thread to end; True if it has."""
        return self.thread.wait(max(0, int(timeout_s * 1000)))


class ProgressRelay(QObject):
    """Items from any thread to the GUI thread in throttled batches (see the module docstring).
    Create it on the GUI thread."""

    delivered = Signal(list)
    _wake = Signal()

    def __init__(self, parent=None, max_per_s: float = MAX_DELIVERIES_PER_S):
        super().__init__(parent)
        self.interval_s = 1.0 / max_per_s
        self._lock = threading.Lock()
        self._items: list = []
        self._woken = False
        self.last_delivery_s = -1e9  # time.monotonic() of the last delivery
        self.deliveries = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._on_wake)  # one that fires early waits again
        self._wake.connect(self._on_wake)

    def put(self, item) -> None:
        """Queue ``item`` for the GUI thread; callable from any thread."""
        with self._lock:
            self._items.append(item)
            wake = not self._woken
            self._woken = True
        if wake:
            self._wake.emit()

    @Slot()
    def _on_wake(self) -> None:
        wait = self.last_delivery_s + self.interval_s - time.monotonic()
        if wait > 0:
            if not self._timer.isActive():
                self._timer.start(max(1, math.ceil(wait * 1000)))
        else:
            self.flush()

    @Slot()
    def flush(self) -> None:
        """Deliver what is queued now (the GUI thread only)."""
        self._timer.stop()
        with self._lock:
            items, self._items = self._items, []
            self._woken = False
        if items:
            self.last_delivery_s = time.monotonic()
            self.deliveries += 1
            self.delivered.emit(items)


@dataclass(frozen=True)
class TrainingJob:
    """A run to train on the worker thread: ``request`` (the panel's settings as plain
    values; ``ml.job`` checks and builds everything from it), the closed candles of ``series``
    and where checkpoints and annotations live. ``run_id`` names a new run (a resumed run
    keeps its own)."""

    request: TrainingRequest
    candles: CandleSnapshot
    series: SeriesKey
    run_id: str
    checkpoints_root: Path
    annotations_db: Path | None = None


@dataclass(frozen=True)
class RunCurves:
    """Run ``run_id``'s recorded history (``ml.history.reader.History``), read for ``purpose``:
    ``open`` (show it), ``resume`` (show it, then the resumed run's points), ``compare``
    (draw it beside the run shown) or ``restart`` (take its settings); ``error`` says why
    it could not be read (``history`` is None then)."""

    run_id: str
    purpose: str
    history: Any = None
    error: str | None = None


def read_run_curves(checkpoints_root: Path, run_id: str, purpose: str) -> RunCurves:
    """``RunCurves`` of a run of the default model's store (reads the file: off the GUI
    thread)."""
    from ...ml.checkpoints import CheckpointStore
    from ...ml.history.format import HistoryError
    from ...ml.history.reader import read_history

    try:
        return RunCurves(run_id, purpose,
                         read_history(CheckpointStore(checkpoints_root).run_dir(run_id)))
    except (HistoryError, OSError) as exc:
        return RunCurves(run_id, purpose, error=str(exc))


@dataclass(frozen=True)
class TaskFailed:
    """A ``TaskWorker``'s task ``what`` raised: ``message`` says what went wrong."""

    what: str
    message: str


class TaskWorker(ThreadWorker):
    """Runs ``task()`` on the worker thread and puts its result (or a ``TaskFailed``) into
    ``relay``; ``outcome`` is that item once ``work()`` has returned."""

    def __init__(self, task: Callable[[], object], what: str, relay: ProgressRelay):
        super().__init__()
        self.task = task
        self.what = what
        self.relay = relay
        self.outcome: object = None

    def work(self) -> None:
        try:
            self.outcome = self.task()
        except Exception as exc:
            message = str(exc) if isinstance(exc, WorkstationError) else \
                f"{type(exc).__name__}: {exc}"
            log.error("%s failed: %s", self.what, message,
                      exc_info=not isinstance(exc, WorkstationError))
            self.outcome = TaskFailed(self.what, message)
        self.relay.put(self.outcome)


class OneTask(QObject):
    """One task at a time off the GUI thread (a ``TaskWorker`` on a ``WorkerThread`` named
    ``name``): ``start(task, what)`` (False while one runs), ``busy`` until its result is
    handed on, ``join``; the result (or a ``TaskFailed``) reaches ``done`` on the GUI thread."""

    done = Signal(object)

    def __init__(self, name: str, parent: QObject):
        super().__init__(parent)
        self.name = name
        self.relay = ProgressRelay(self)
        self.relay.delivered.connect(self._delivered)
        self._thread: WorkerThread | None = None
        self.busy = False

    def start(self, task: Callable[[], object], what: str) -> bool:
        if self.busy:
            return False
        self.busy = True
        self._thread = WorkerThread(TaskWorker(task, what, self.relay), self.name)
        self._thread.start()
        return True

    def join(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for a task under way; True if none runs."""
        return self._thread is None or self._thread.join(timeout_s)

    @Slot(list)
    def _delivered(self, items: list) -> None:
        self.busy = False
        for item in items:
            self.done.emit(item)


class TrainingWorker(ThreadWorker):
    """Plans, builds (``ml.job``) and runs ``job``'s ``Trainer`` on the worker thread; every
    event goes to ``relay``. ``outcome`` is the final ``Finished`` or ``Failed`` event once
    ``work()`` has returned; an error before the trainer starts ends as ``Failed`` too. A run
    that resumes first puts its recorded history (``RunCurves``, purpose ``resume``)."""

    def __init__(self, job: TrainingJob, relay: ProgressRelay):
        super().__init__()
        self.job = job
        self.relay = relay
        self.stop = threading.Event()
        self.outcome: Finished | Failed | None = None

    def work(self) -> None:
        from ...ml import job as training
        from ...ml.checkpoints import CheckpointStore

        job = self.job
        if job.request.resume_run is not None:
            self.relay.put(read_run_curves(job.checkpoints_root, job.request.resume_run,
                                           "resume"))
        try:
            store = CheckpointStore(job.checkpoints_root)
            plan = training.plan(job.request, store)
            prepared = training.build(plan, job.candles.candles(), job.series, store=store,
                                      annotations_db=job.annotations_db,
                                      on_event=self.relay.put, stop=self.stop,
                                      run_id=job.run_id,
                                      reference=training.load_reference(plan.feature_spec,
                                                                        job.series))
            self.outcome = prepared.trainer.run()
        except Exception as exc:  # noqa: BLE001 - every error ends the run as failed
            tb = "".join(traceback.format_exception(exc))
            message = str(exc) if isinstance(exc, WorkstationError) else \
                f"{type(exc).__name__}: {exc}"
            log.error("training run %s failed before it started: %s\n%s", job.run_id,
                      message, tb)
            self.outcome = Failed(job.run_id, message, tb, 0, 0, None)
            self.relay.put(self.outcome)


@dataclass(frozen=True)
class EvaluationJob:
    """A walk-forward evaluation of ``folds`` folds on the closed candles of ``series``, each
    fold trained as ``request`` says (its ``epochs`` per fold), ``seeds`` times; the test
    spans are then backtested at the market's default costs (``candle_cache``: where the
    exchange's price tick may be recorded). ``ray``: the Ray cluster the folds train on
    (``ml.ray_folds``: ``local`` or an address; empty: this process)."""

    request: TrainingRequest
    candles: CandleSnapshot
    series: SeriesKey
    folds: int
    annotations_db: Path | None = None
    seeds: int = DEFAULT_SEEDS
    candle_cache: Path | None = None
    ray: str = ""


@dataclass(frozen=True)
class StoppedEvaluation:
    """An evaluation that ended at a stop before it scored every fold."""

    message: str


class EvaluationWorker(ThreadWorker):
    """Plans the run, makes its data (``ml.job``), evaluates it (``ml.evaluation``) and
    backtests each fold's model on its test span (``backtest.walk_forward``: every head that
    can signal at the default confidence, beside the trader's marks and buy & hold) on the
    worker thread; every event (the folds' training events, ``FoldScored``,
    ``EvaluationFinished``, the ``annotations.suspects.SuspectReport`` of the marks the held-out
    models read otherwise, then the ``WalkForwardBacktest``) goes to ``relay``. ``outcome``
    is the ``EvaluationFinished``, a ``StoppedEvaluation`` or a ``Failed`` once ``work()`` has
    returned."""

    def __init__(self, job: EvaluationJob, relay: ProgressRelay):
        super().__init__()
        self.job = job
        self.relay = relay
        self.stop = threading.Event()
        self.outcome: EvaluationFinished | StoppedEvaluation | Failed | None = None

    def work(self) -> None:
        from ...annotations.suspects import HeldOutProbabilities
        from ...backtest.costs import costs_for
        from ...backtest.signals import DEFAULT_THRESHOLD
        from ...backtest.walk_forward import WalkForwardSignals, signal_heads
        from ...backtest.worth import recorded_tick
        from ...ml import job as training
        from ...ml.blind_marks import market_blind_position
        from ...ml.evaluation import evaluate
        from ...ml.folds import EvaluationStopped

        job = self.job
        try:
            plan = training.plan(job.request, None)
            candles = job.candles.candles()
            data, labelled = training.training_data(
                plan, candles, job.series, annotations_db=job.annotations_db,
                reference=training.load_reference(plan.feature_spec, job.series))
            blind = market_blind_position(job.annotations_db, job.series, candles,
                                          plan.target_spec)
            signals = WalkForwardSignals(len(candles), signal_heads(labelled.annotations > 0),
                                         (DEFAULT_THRESHOLD,))
            held = HeldOutProbabilities(len(data))
            with self._cluster(plan):
                self.outcome = evaluate(
                    data, plan.model_config, plan.train_config, folds=job.folds,
                    device=plan.device, provenance=job.series.provenance,
                    on_event=self.relay.put, stop=self.stop, on_ray=bool(job.ray),
                    settings=EvaluationConfig(seeds=job.seeds), blind_position=blind,
                    on_test_predictions=signals,
                    on_held_out=lambda fold, p: held.add(fold.test, p))
            if labelled.annotations:
                marks = training.training_marks(job.annotations_db, job.series.market,
                                                use_annotations=job.request.use_annotations,
                                                marks=job.request.marks)
                self.relay.put(training.label_suspects(marks, data, candles.timeframe.ms, held))
            self.relay.put(signals.backtest(
                candles, job.series, annotations_db=job.annotations_db,
                costs=costs_for(job.series),
                tick=recorded_tick(job.candle_cache, job.series.source, job.series.symbol)))
        except EvaluationStopped as exc:
            self.outcome = StoppedEvaluation(str(exc))
        except Exception as exc:  # noqa: BLE001 - every error ends the evaluation as failed
            tb = "".join(traceback.format_exception(exc))
            message = str(exc) if isinstance(exc, WorkstationError) else \
                f"{type(exc).__name__}: {exc}"
            log.error("walk-forward evaluation failed: %s\n%s", message, tb)
            self.outcome = Failed("evaluation", message, tb, 0, 0, None)

    @contextlib.contextmanager
    def _cluster(self, plan) -> Iterator[None]:
        """Connected to the job's Ray cluster while the block runs (``local``: one of as many
        CPUs as ``workstation evaluate --ray local`` starts); nothing without one."""
        if not self.job.ray:
            yield
            return
        from ...ml.device import resolve_device
        from ...ml.parallel_folds import default_workers
        from ...ml.ray_folds import ray_cluster

        threads = plan.train_config.cpu_threads
        workers = default_workers(resolve_device(plan.device).type, threads)
        with ray_cluster(self.job.ray, num_cpus=workers * threads) as where:
            log.info("walk-forward evaluation: the folds train as tasks on %s", where)
            yield


class LiveWorker(ThreadWorker):
    """Runs a ``LiveSession`` (``ml.live``) on the worker thread; its events go to
    ``relay``. ``session.offer`` is called on the GUI thread."""

    def __init__(self, job: LiveJob, relay: ProgressRelay):
        super().__init__()
        self.session = LiveSession(job, relay.put)
        self.stop = self.session.stop

    @property
    def outcome(self):
        return self.session.outcome

    def work(self) -> None:
        self.session.run()
