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
- ``TrainingWorker``: prepares data and model settings from a ``TrainingJob`` and runs one
  ``Trainer`` (which owns its model); stop with ``stop`` (a ``threading.Event``, checked
  within one batch). An error before the trainer starts ends as a ``Failed`` event as well.
- ``LiveWorker``: builds an ``OnlineLearner`` on its thread (which then owns its models) and
  hands it each newest closed-candle snapshot the GUI submits. Snapshots that arrive while a
  step runs replace each other: the learner coalesces the candles it missed and says so. A
  snapshot of a new series (a new ``generation``) resets the learner's position first; its
  results carry their generation, so the GUI can drop those of a series it no longer shows.

Slots that receive signals from a worker thread are QObject methods: PySide6 runs a lambda or
plain function slot in the emitting thread.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from PySide6.QtCore import QCoreApplication, QObject, QThread, QTimer, Signal, Slot

from ...errors import WorkstationError
from ...market.candles import Candles
from ...market.timeframes import Timeframe

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


_started: list["WorkerThread"] = []  # kept alive until seen finished (see WorkerThread.start)


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
        self.thread.start(QThread.LowPriority)

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
        self._last = -1e9
        self.deliveries = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.flush)
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
        wait = self._last + self.interval_s - time.monotonic()
        if wait > 0:
            if not self._timer.isActive():
                self._timer.start(max(1, int(wait * 1000 + 0.5)))
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
            self._last = time.monotonic()
            self.deliveries += 1
            self.delivered.emit(items)


@dataclass(frozen=True)
class CandleSnapshot:
    """Closed candles of a live series, as column views taken on the GUI thread and copied on
    the worker. ``LiveData`` never writes those rows again (an update changes the forming
    candle after them, an append writes after them, growing copies into new buffers), so the
    views stay valid and unchanged without copying on the GUI thread."""

    columns: tuple[np.ndarray, ...]
    timeframe: Timeframe

    @classmethod
    def of(cls, candles: Candles, start: int = 0) -> "CandleSnapshot":
        n = len(candles) if candles.last_closed else len(candles) - 1
        start = min(max(0, int(start)), max(n, 0))
        return cls(tuple(col[start:n] for col in candles.columns()), candles.timeframe)

    def __len__(self) -> int:
        return len(self.columns[0])

    def candles(self) -> Candles:
        return Candles.from_arrays(*self.columns, timeframe=self.timeframe, validate=False)


@dataclass(frozen=True)
class TrainingJob:
    """What to train: the panel's settings as plain values (the worker builds and checks the
    configurations, so the GUI thread never imports torch) and the closed candles.

    ``resume``: continue ``run_id`` from its latest checkpoint (model, feature and target
    settings come from the checkpoint; ``epochs`` is the new total)."""

    run_id: str
    candles: CandleSnapshot
    provenance: str
    symbol: str | None
    device: str
    checkpoints_root: Path
    preset: str = "tiny"
    model_overrides: dict = field(default_factory=dict)
    train_overrides: dict = field(default_factory=dict)
    annotations_db: Path | None = None
    resume: bool = False


def annotation_actions(db: Path | None, symbol: str | None, candles: Candles):
    """Per-candle action codes from the trader's annotations of ``symbol``, or None."""
    if db is None or symbol is None or not Path(db).is_file():
        return None
    from ...annotations.store import AnnotationStore
    from ...annotations.targets import action_targets

    with AnnotationStore(db) as store:
        annotations = store.list(symbol=symbol)
    if not annotations:
        return None
    return action_targets(annotations, candles.ts, candles.timeframe).actions.astype("int64")


class TrainingWorker(ThreadWorker):
    """Runs ``job`` with a ``Trainer`` on the worker thread; every event goes to ``relay``.
    ``outcome`` is the final ``Finished`` or ``Failed`` event once ``work()`` has returned."""

    def __init__(self, job: TrainingJob, relay: ProgressRelay):
        super().__init__()
        self.job = job
        self.relay = relay
        self.stop = threading.Event()
        self.outcome = None

    def work(self) -> None:
        from ...ml.events import Failed

        try:
            trainer = self._build()
            self.outcome = trainer.run()
        except Exception as exc:  # noqa: BLE001 - every error ends the run as failed
            tb = "".join(traceback.format_exception(exc))
            message = str(exc) if isinstance(exc, WorkstationError) else \
                f"{type(exc).__name__}: {exc}"
            log.error("training run %s failed before it started: %s\n%s", self.job.run_id,
                      message, tb)
            self.outcome = Failed(self.job.run_id, message, tb, 0, 0, None)
            self.relay.put(self.outcome)

    def _build(self):
        from ...ml.checkpoints import CheckpointStore
        from ...ml.dataset import TrainingData
        from ...ml.device import resolve_device
        from ...ml.features import FeatureSpec
        from ...ml.model import TradingTransformerConfig, preset_config
        from ...ml.targets import TargetSpec
        from ...ml.trainer import Trainer, TrainConfig

        job = self.job
        store = CheckpointStore(job.checkpoints_root)
        loaded = None
        if job.resume:
            loaded = store.load(job.run_id)
            meta = loaded.meta
            model_config = TradingTransformerConfig.from_dict(meta["config"])
            train_config = TrainConfig.from_dict(dict(meta["train_config"],
                                                      **_only(job.train_overrides, "epochs")))
            feature_spec = FeatureSpec.from_dict(meta["features"])
            target_spec = TargetSpec.from_dict(meta["targets"])
            done = int(meta["resume"]["epoch"]) if "resume" in meta else 0
            if done >= train_config.epochs:
                raise WorkstationError(f"run {job.run_id} has already trained {done} epochs; "
                                       f"raise Epochs above {done} to continue it")
        else:
            model_config = preset_config(job.preset, **job.model_overrides)
            train_config = TrainConfig(**job.train_overrides)
            feature_spec, target_spec = FeatureSpec(), TargetSpec()
        device = resolve_device(job.device)
        candles = job.candles.candles()
        actions = annotation_actions(job.annotations_db, job.symbol, candles)
        data = TrainingData.from_candles(candles, actions=actions,
                                         feature_spec=feature_spec, target_spec=target_spec)
        return Trainer(model_config, train_config, data, device, on_event=self.relay.put,
                       stop=self.stop, checkpoints=store, run_id=job.run_id,
                       provenance=job.provenance, resume_from=loaded)


def _only(values: dict, *names: str) -> dict:
    return {k: v for k, v in values.items() if k in names and v is not None}


# -- live mode -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class LiveJob:
    """Live inference, with per-candle training when ``train``. The model starts from the
    latest checkpoint of ``source_run`` (its settings apply), or fresh from ``preset`` and
    ``model_overrides`` when ``source_run`` is None (only with training). With training, the
    learned model is saved as a new run of ``checkpoints_root`` when live mode ends."""

    device: str
    train: bool
    checkpoints_root: Path
    provenance: str
    source_run: str | None = None
    preset: str = "tiny"
    model_overrides: dict = field(default_factory=dict)
    lr: float = 1e-4


@dataclass(frozen=True)
class LiveReady:
    """The learner is built: ``history`` closed candles before the newest unprocessed one
    are all it needs to see."""

    source_run: str | None
    device: str
    train: bool
    history: int
    seq_len: int
    trend_horizon: int


@dataclass(frozen=True)
class LiveSaved:
    """The per-candle-trained model was saved as run ``run_id``."""

    run_id: str
    path: str
    steps: int


@dataclass(frozen=True)
class LiveEnded:
    steps: int
    predictions: int


@dataclass(frozen=True)
class LiveStep:
    """One ``OnlineStep`` of the learner, on the series of ``generation``."""

    generation: int
    step: object


class LiveWorker(ThreadWorker):
    """See the module docstring. ``submit`` is called on the GUI thread; ``processed`` is
    ``(generation, ts)`` of the newest candle the learner has seen (None before the first)."""

    def __init__(self, job: LiveJob, relay: ProgressRelay):
        super().__init__()
        self.job = job
        self.relay = relay
        self.stop = threading.Event()
        self.processed: tuple[int, int] | None = None
        self.outcome = None
        self.run_id: str | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pending: tuple[int, CandleSnapshot] | None = None

    def submit(self, snapshot: CandleSnapshot, generation: int) -> None:
        """The newest closed candles of series ``generation``; replaces a snapshot the worker
        has not taken yet."""
        with self._lock:
            self._pending = (generation, snapshot)
        self._wake.set()

    def work(self) -> None:
        from ...ml.events import Failed

        learner, steps, predictions, generation = None, 0, 0, None
        try:
            learner = self._build()
            while not self.stop.is_set():
                self._wake.wait(0.1)
                with self._lock:
                    self._wake.clear()
                    pending, self._pending = self._pending, None
                if pending is None or not len(pending[1]) or self.stop.is_set():
                    continue
                if pending[0] != generation:
                    if generation is not None:
                        learner.reset()
                    generation = pending[0]
                step = learner.on_closed_candle(pending[1].candles())
                if step.new_candles:
                    self.processed = (generation, step.ts)
                    steps += step.train is not None
                    predictions += 1
                    self.relay.put(LiveStep(generation, step))
            self._save(learner)
            self.outcome = LiveEnded(steps, predictions)
        except Exception as exc:  # noqa: BLE001 - every error ends live mode as failed
            tb = "".join(traceback.format_exception(exc))
            message = str(exc) if isinstance(exc, WorkstationError) else \
                f"{type(exc).__name__}: {exc}"
            log.error("live mode failed: %s\n%s", message, tb)
            self.outcome = Failed(self.job.source_run or "live", message, tb,
                                  learner.steps if learner is not None else 0, 0, None)
        self.relay.put(self.outcome)

    def _build(self):
        from ...ml.checkpoints import CheckpointStore
        from ...ml.device import describe, prepare_thread, resolve_device
        from ...ml.model import preset_config
        from ...ml.online import OnlineLearner

        job = self.job
        device = resolve_device(job.device)
        prepare_thread(device)
        if job.source_run is not None:
            loaded = CheckpointStore(job.checkpoints_root).load(job.source_run)
            learner = OnlineLearner(weights=loaded, device=device, train=job.train, lr=job.lr)
        elif job.train:
            learner = OnlineLearner(preset_config(job.preset, **job.model_overrides),
                                    device=device, train=True, lr=job.lr)
        else:
            raise WorkstationError("live inference needs a trained model: train one first, "
                                   "or use live inference with per-candle training")
        history = (learner.config.seq_len + learner.feature_spec.warmup + learner.replay_window
                   + learner.target_spec.horizon + 1)
        self.relay.put(LiveReady(job.source_run, describe(device), job.train, history,
                                 learner.config.seq_len, learner.target_spec.horizon))
        return learner

    def _save(self, learner) -> None:
        if not self.job.train or not learner.steps:
            return
        from ...ml.checkpoints import CheckpointStore

        store = CheckpointStore(self.job.checkpoints_root)
        self.run_id = store.new_run_id()
        path = learner.save(store, self.job.provenance, self.run_id)
        log.info("per-candle trained model saved as run %s (%d steps)", self.run_id,
                 learner.steps)
        self.relay.put(LiveSaved(self.run_id, str(path), learner.steps))
