"""What the trainer learns on the series on screen, for the annotation lanes.

``TrainerLabels`` asks the core, off the GUI thread, which candles the trainer counts as
reviewed (``ml.job.trader_labels``: ``annotations.targets.trader_targets`` on the market's
annotations of every timeframe, with the default review margin) and, while the training
labels are shown (``T``), the per-candle targets the trainer learns there
(``ml.job.label_series``: position and regime). It asks again ``DEBOUNCE_MS`` after the market's
annotations or the series change (once for a burst of changes; while changes keep coming,
no later than ``MAX_DELAY_S`` after the first), never on a repaint; the answer reaches the
chart as runs of equal labels (``LabelRuns``), which the lanes paint.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal, Slot

from ...errors import WorkstationError
from ...market.series import SeriesKey
from ...ml.job import label_series, market_annotations, trader_labels
from ...ml.live import CandleSnapshot
from ...ml.targets import MASKED, TargetSpec
from ..live_data import LiveData
from ..training.worker import ThreadWorker, WorkerThread, collect_garbage_on_gui_thread

log = logging.getLogger(__name__)
DEBOUNCE_MS = 300
MAX_DELAY_S = 2.0  # changes that keep coming (a fast replay) still get answers this often
JOIN_S = 10.0  # the longest a close waits for a computation under way


@dataclass(frozen=True)
class Runs:
    """Stretches of consecutive candles with one label: candles ``start[k]`` to ``stop[k]``
    (inclusive) hold ``code[k]``; sorted and disjoint."""

    start: np.ndarray
    stop: np.ndarray
    code: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray, none: int = MASKED) -> Runs:
        """The runs of per-candle ``values``, leaving out those of ``none``."""
        v = np.asarray(values)
        change = np.flatnonzero(v[1:] != v[:-1]) + 1
        start = np.concatenate(([0], change)) if v.size else np.empty(0, dtype=np.int64)
        stop = np.concatenate((change - 1, [v.size - 1])) if v.size else start
        keep = v[start] != none
        return cls(start[keep].astype(np.int64), stop[keep].astype(np.int64),
                   v[start][keep].astype(np.int8))

    def __len__(self) -> int:
        return len(self.start)

    def between(self, first: int, last: int) -> Runs:
        """The runs that hold a candle from ``first`` to ``last``."""
        lo = int(np.searchsorted(self.stop, first, side="left"))
        hi = int(np.searchsorted(self.start, last, side="right"))
        return Runs(self.start[lo:hi], self.stop[lo:hi], self.code[lo:hi])


@dataclass(frozen=True)
class LabelRuns:
    """The trainer's labels of the first ``candles`` candles of a series opening at
    ``first_ts``: ``reviewed`` (code 0), and while shown ``position`` and ``regime`` (class
    indices of ``ml.targets.CLASSES``); ``problem`` says why the trainer would refuse the
    market (then nothing is labelled)."""

    generation: int
    candles: int
    first_ts: int
    reviewed: Runs
    position: Runs | None = None
    regime: Runs | None = None
    problem: str | None = None

    def fits(self, ts: np.ndarray) -> bool:
        """Whether these labels belong to a series whose candles open at ``ts``."""
        return len(ts) >= self.candles > 0 and int(ts[0]) == self.first_ts


@dataclass(frozen=True)
class LabelRequest:
    candles: CandleSnapshot
    series: SeriesKey
    annotations_db: Path
    targets: bool  # also position and regime (``label_series``), not only reviewed
    generation: int


def compute_labels(request: LabelRequest, stop: threading.Event) -> LabelRuns | None:
    """The labels ``request`` asks for, by the core's rules (None once ``stop`` is set)."""
    candles = request.candles.candles()
    n, first_ts = len(candles), int(candles.ts[0])
    spec = TargetSpec()
    try:
        if request.targets:
            labelled = label_series(candles, request.series, spec,
                                    annotations_db=request.annotations_db)
            reviewed = labelled.reviewed
            position: Runs | None = Runs.of(labelled.targets.position)
            regime: Runs | None = Runs.of(labelled.targets.regime)
        else:
            annotations = market_annotations(request.annotations_db, request.series.market)
            if stop.is_set():
                return None
            trader = trader_labels(annotations, candles, spec)
            reviewed = trader.reviewed if trader is not None else np.zeros(n, dtype=bool)
            position = regime = None
    except WorkstationError as exc:
        return LabelRuns(request.generation, n, first_ts, Runs.of(np.zeros(0, dtype=np.int8)),
                         problem=str(exc))
    if stop.is_set():
        return None
    return LabelRuns(request.generation, n, first_ts, Runs.of(np.where(reviewed, 0, MASKED)),
                     position, regime)


class LabelsWorker(ThreadWorker):
    """Computes one ``LabelRequest`` on its thread; ``result`` once ``work()`` has returned
    (None if stopped through ``stop`` or failed, which is logged)."""

    def __init__(self, request: LabelRequest):
        super().__init__()
        self.request = request
        self.stop = threading.Event()
        self.result: LabelRuns | None = None

    def work(self) -> None:
        try:
            self.result = compute_labels(self.request, self.stop)
        except Exception:  # a broken store file must not end the lanes: logged, no answer
            log.exception("the trainer's labels of %s could not be computed",
                          self.request.series.provenance)


class TrainerLabels(QObject):
    """See the module docstring. ``changed(LabelRuns | None)`` hands each answer to the
    chart; ``current`` is the latest; ``settled`` is true when nothing is pending or under
    way; ``close()`` at shutdown."""

    changed = Signal(object)

    def __init__(self, annotations_db: Path, live: LiveData, parent: QObject | None = None):
        super().__init__(parent)
        self.annotations_db = annotations_db
        self.live = live
        self.show_targets = False
        self.current: LabelRuns | None = None
        self._generation = 0
        self._runner: WorkerThread | None = None
        self._worker: LabelsWorker | None = None  # the runner's
        self._again = False
        self._closed = False
        self._asked_at = 0.0  # when the change the timer waits to answer came
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._start)

    @property
    def settled(self) -> bool:
        return not self._timer.isActive() and self._runner is None

    def reset(self) -> None:
        """Another series is on screen: forget the labels shown, ask for its own."""
        self._generation += 1
        self._show(None)
        self.schedule()

    def schedule(self) -> None:
        """Ask again soon (once for many calls in a row)."""
        if self._closed:
            return
        now = time.monotonic()
        if not self._timer.isActive():
            self._asked_at = now
        elif now - self._asked_at > MAX_DELAY_S:
            return  # the timer runs out and answers the changes so far
        self._timer.start()

    def set_targets_shown(self, shown: bool) -> None:
        """Show (or hide) position and regime beside the reviewed candles, asked at once."""
        self.show_targets = bool(shown)
        if self.current is not None and not shown:
            self._show(LabelRuns(self.current.generation, self.current.candles,
                                 self.current.first_ts, self.current.reviewed,
                                 problem=self.current.problem))
        self._timer.stop()
        self._start()

    def close(self) -> None:
        """Stop asking and wait for a computation under way (its answer is dropped)."""
        self._closed = True
        self._timer.stop()
        runner, worker, self._runner, self._worker = self._runner, self._worker, None, None
        if runner is not None and worker is not None:
            worker.stop.set()
            if not runner.join(JOIN_S):
                log.error("the trainer's labels did not finish within %.0f s", JOIN_S)

    def _show(self, labels: LabelRuns | None) -> None:
        self.current = labels
        self.changed.emit(labels)

    @Slot()
    def _start(self) -> None:
        if self._closed:
            return
        if self._runner is not None:
            self._again = True
            return
        key, candles = self.live.key, self.live.candles
        if key is None or not len(candles):
            return
        snapshot = CandleSnapshot.of(candles)
        if not len(snapshot):
            return
        request = LabelRequest(snapshot, key, self.annotations_db, self.show_targets,
                               self._generation)
        collect_garbage_on_gui_thread()  # before a worker thread starts
        self._worker = LabelsWorker(request)
        self._runner = WorkerThread(self._worker, "trainer labels")
        self._runner.finished.connect(self._finished)
        self._runner.start()

    @Slot()
    def _finished(self) -> None:
        runner, worker = self._runner, self._worker
        if runner is None or worker is None or runner.is_running():
            return
        runner.join(0)
        self._runner = self._worker = None
        result = worker.result
        if result is not None and result.generation == self._generation \
                and worker.request.targets == self.show_targets:
            self._show(result)
        if self._again:
            self._again = False
            self._start()
