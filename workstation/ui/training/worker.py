"""Work off the GUI thread: a QObject worker on its own QThread, and the relay that brings its
progress back.

- ``ThreadWorker``/``WorkerThread``: ``work()`` of a QObject runs on a dedicated QThread; the
  thread ends by itself when ``work()`` returns, and the worker moves back to the GUI thread
  so that it can be dropped there safely.
- ``ProgressRelay``: a worker thread ``put``s items (training events, live predictions); the
  GUI thread receives them in batches through ``delivered(list)``, at most
  ``MAX_DELIVERIES_PER_S`` times a second and never later than one interval after they were
  put. The worker wakes the relay with one queued signal per batch, so the signal rate is
  bounded too.
- ``TrainingWorker``: prepares data and model settings from a ``TrainingJob`` and runs one
  ``Trainer`` (which owns its model); stop with ``stop`` (a ``threading.Event``, checked
  within one batch). An error before the trainer starts ends as a ``Failed`` event as well.

Slots that receive signals from a worker thread are QObject methods: PySide6 runs a lambda or
plain function slot in the emitting thread.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, QThread, QTimer, Signal, Slot

from ...errors import WorkstationError
from ...market.candles import Candles

log = logging.getLogger(__name__)
MAX_DELIVERIES_PER_S = 20


class ThreadWorker(QObject):
    """A QObject whose ``work()`` runs on a ``WorkerThread``; subclasses implement ``work``."""

    def work(self) -> None:
        raise NotImplementedError

    @Slot()
    def run(self) -> None:
        try:
            self.work()
        finally:
            app = QCoreApplication.instance()
            if app is not None:
                self.moveToThread(app.thread())
            QThread.currentThread().quit()


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
        self.thread.start()

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
class TrainingJob:
    """What to train: the panel's settings as plain values (the worker builds and checks the
    configurations, so the GUI thread never imports torch) and a copy of the closed candles.

    ``resume``: continue ``run_id`` from its latest checkpoint (model, feature and target
    settings come from the checkpoint; ``epochs`` is the new total)."""

    run_id: str
    candles: Candles
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
        actions = annotation_actions(job.annotations_db, job.symbol, job.candles)
        data = TrainingData.from_candles(job.candles, actions=actions,
                                         feature_spec=feature_spec, target_spec=target_spec)
        return Trainer(model_config, train_config, data, device, on_event=self.relay.put,
                       stop=self.stop, checkpoints=store, run_id=job.run_id,
                       provenance=job.provenance, resume_from=loaded)


def _only(values: dict, *names: str) -> dict:
    return {k: v for k, v in values.items() if k in names and v is not None}
