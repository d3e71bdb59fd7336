"""Live mode without Qt: ``LiveSession`` runs an ``OnlineLearner`` over a series that grows.

The session owns everything live mode decides: which candles the learner sees (the window of
history it needs before the newest candle it has not processed, plus a margin), coalescing
(snapshots offered while a step runs replace each other; the learner then processes the
candles it missed as one step and says so), resetting the learner when another series is
shown (a new ``generation``; results carry their generation, so the window drops those of a
series it no longer shows), maturing predictions (the learner settles each one once its
outcome candle has closed) and scoring them: ``RollingAccuracy``, each market head's last 100
matured predictions beside the majority and persistence baselines of the same outcomes, in
both live modes.

A model that reads a reference asset (``FeatureSpec.reference``, e.g. BTC/USDT) needs that
asset's candles at each candle's time, offered beside the series' (``LiveReady.reference``
names it). Both close at the same moment, but the reference's may arrive later: the step for
candle t waits (``LiveWaiting``) until the reference's candle at t is settled, there or
missing for good (a later one has closed, or the offered reference is ``final``: it will not
grow), or ``reference_wait_s`` (at most half a candle) has passed since t was first offered
with a reference; then
a missing candle is masked, never forward-filled, and the step says so
(``OnlineStep.reference_present``). Until a reference is offered at all, it waits.

The window only runs ``run()`` on a worker thread, hands it each newest candles with
``offer`` and shows the events it reports (``events.LiveReady``, ``LiveWaiting``,
``LiveStep``, ``LiveSaved``, then ``LiveEnded`` or ``Failed``). Stop it with ``stop`` (a
``threading.Event``); a session that trained saves its model as a new run when it ends.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import WorkstationError
from ..market.candles import Candles
from ..market.timeframes import Timeframe
from .events import Failed, LiveAccuracy, LiveEnded, LiveReady, LiveSaved, LiveStep, LiveWaiting
from .head_verdicts import trader_verdicts, verdict_source

log = logging.getLogger(__name__)
TAIL_MARGIN = 64  # candles offered beyond what the learner needs, so its windows start inside
ACCURACY_WINDOW = 100  # matured predictions per head in the rolling accuracy
_CLASSES = ("down", "flat", "up")  # targets.CANDLE_CLASSES and TREND_CLASSES (no torch here)
_MOVES_KEPT = 4096  # settled moves remembered for the persistence calls (> window + horizon)
REFERENCE_WAIT_S = 10.0  # how long a step waits for the reference asset's candle


@dataclass(frozen=True)
class LiveJob:
    """Live inference, with per-candle training when ``train``. The model starts from the
    latest checkpoint of ``source_run`` (its settings apply), or fresh from ``preset``,
    ``model_overrides`` and ``feature_overrides`` (``FeatureSpec`` fields: higher timeframes,
    a reference asset) when ``source_run`` is None (only with training). With training, the
    learned model is saved as a new run of ``checkpoints_root`` when live mode ends."""

    device: str
    train: bool
    checkpoints_root: Path
    provenance: str
    source_run: str | None = None
    preset: str = "tiny"
    model_overrides: dict = field(default_factory=dict)
    feature_overrides: dict = field(default_factory=dict)
    lr: float = 1e-4
    reference_wait_s: float = REFERENCE_WAIT_S


@dataclass(frozen=True)
class CandleSnapshot:
    """Closed candles of a live series, as column views taken on the offering thread and
    copied on the session's. The live series never writes those rows again (an update changes
    the forming candle after them, an append writes after them, growing copies into new
    buffers), so the views stay valid and unchanged without copying where they are taken."""

    columns: tuple[np.ndarray, ...]
    timeframe: Timeframe

    @classmethod
    def of(cls, candles: Candles, start: int = 0) -> CandleSnapshot:
        n = candles.n_closed
        start = min(max(0, int(start)), max(n, 0))
        return cls(tuple(col[start:n] for col in candles.columns()), candles.timeframe)

    def __len__(self) -> int:
        return len(self.columns[0])

    def candles(self) -> Candles:
        return Candles.from_columns(self.columns, self.timeframe, validate=False)


class RollingAccuracy:
    """The live score of the market heads (``events.LiveAccuracy``): each head's last
    ``window`` matured predictions, right or wrong, beside the majority and persistence
    baselines of the same outcomes. ``add`` takes the outcomes of each step in the order they
    come (an ``online.Outcome`` has ``head``, ``ts``, ``matured_ts``, ``predicted``,
    ``actual``); the persistence call of the prediction made at candle t is the move settled
    at t, the outcome of the same head that matured at t. ``reset`` starts over (another
    series). Plain Python: the window scores steps with it as the session does."""

    def __init__(self, window: int = ACCURACY_WINDOW, heads: tuple[str, ...] = ("candle",
                                                                                 "trend")):
        if window < 1:
            raise WorkstationError(f"the rolling accuracy needs a window of at least 1, not "
                                   f"{window!r}")
        self.window = int(window)
        self.heads = tuple(heads)
        self.reset()

    def reset(self) -> None:
        # per head: (correct, actual class, persistence correct or None) of the newest outcomes
        self._recent: dict[str, deque] = {h: deque(maxlen=self.window) for h in self.heads}
        self._moves: dict[str, OrderedDict[int, int]] = {h: OrderedDict() for h in self.heads}

    def add(self, outcomes) -> None:
        for o in outcomes:
            if o.head not in self._recent:
                continue
            moves = self._moves[o.head]
            moves[int(o.matured_ts)] = int(o.actual)
            while len(moves) > _MOVES_KEPT:
                moves.popitem(last=False)
            before = moves.get(int(o.ts))  # the move that had just completed at o.ts
            self._recent[o.head].append((o.predicted == o.actual, int(o.actual),
                                         None if before is None else before == o.actual))

    def score(self, head: str) -> LiveAccuracy:
        recent = self._recent[head]
        if not recent:
            return LiveAccuracy(head, self.window, 0)
        n = len(recent)
        counts = np.bincount([a for _, a, _ in recent], minlength=len(_CLASSES))
        majority = int(np.argmax(counts))
        persistence = [p for _, _, p in recent if p is not None]
        return LiveAccuracy(
            head, self.window, n, accuracy=sum(c for c, _, _ in recent) / n,
            majority=float(counts[majority]) / n,
            majority_class=_CLASSES[majority] if majority < len(_CLASSES) else str(majority),
            persistence=sum(persistence) / len(persistence) if persistence else None,
            persistence_n=len(persistence))

    def scores(self) -> dict[str, LiveAccuracy]:
        return {head: self.score(head) for head in self.heads}


@dataclass(frozen=True)
class _Offer:
    """What ``offer`` hands the session's thread."""

    generation: int
    candles: CandleSnapshot
    reference: CandleSnapshot | None
    final: bool
    levels: Any = None  # ``level_columns.Levels`` when the model reads them


def _failure_message(exc: Exception) -> str:
    return str(exc) if isinstance(exc, WorkstationError) else f"{type(exc).__name__}: {exc}"


class LiveSession:
    """See the module docstring. ``offer`` may be called from any thread; ``processed`` is
    ``(generation, ts)`` of the newest candle the learner has seen (None before the first);
    ``accuracy`` the rolling accuracy of the series it works on (a ``RollingAccuracy``, read
    it on the session's thread or once ``run`` has returned); ``outcome`` is the final event
    once ``run`` has returned; ``run_id`` the run it saved."""

    def __init__(self, job: LiveJob, on_event: Callable[[object], None],
                 stop: threading.Event | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.job = job
        self.on_event = on_event
        self.stop = stop or threading.Event()
        self.clock = clock
        self.processed: tuple[int, int] | None = None
        self.history: int | None = None  # known once the learner is built
        self.reference: str | None = None  # the reference asset the model reads, once built
        self._warmup = 0
        self._tail: Callable[[Timeframe], int] | None = None  # candles offered, by timeframe
        self._waiting: tuple[int, int, float | None] | None = None  # generation, ts, since
        self.outcome: LiveEnded | Failed | None = None
        self.run_id: str | None = None
        self.accuracy = RollingAccuracy()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pending: _Offer | None = None

    # -- the offering side ----------------------------------------------------------------------
    def window_start(self, candles: Candles, generation: int) -> int:
        """The first candle to offer: ``history`` (plus a margin) before the newest candle of
        this generation the learner has seen, or before the newest closed one."""
        n = candles.n_closed
        at = n - 1
        seen = self.processed
        if seen is not None and seen[0] == generation:
            at = min(max(candles.index_of(seen[1]), 0), n - 1)
        need = self._tail(candles.timeframe) if self._tail is not None else 0
        return max(0, at - need - TAIL_MARGIN)

    def offer(self, candles: Candles, generation: int, reference: Candles | None = None,
              final: bool = False, levels=None) -> bool:
        """Hand the session the newest closed candles of series ``generation`` (views, no
        copy), with the reference asset's when the model reads one (``final``: they will not
        grow) and the market's drawn levels when it reads them (``LiveReady.levels``);
        replaces an offer it has not taken yet. False (nothing offered) until the learner is
        ready or when no candle is closed."""
        if self.history is None:
            return False
        snapshot = CandleSnapshot.of(candles, self.window_start(candles, generation))
        if not len(snapshot):
            return False
        ref = None
        if self.reference is not None and reference is not None:
            first = int(np.searchsorted(reference.ts, snapshot.columns[0][0]))
            ref = CandleSnapshot.of(reference, first - self._warmup)
        with self._lock:
            self._pending = _Offer(generation, snapshot, ref, bool(final), levels)
        self._wake.set()
        return True

    def _ready(self, offer: _Offer) -> bool:
        """Whether the offer can be stepped on now (see the module docstring on waiting for
        the reference asset); the first time it cannot, says so (``LiveWaiting``)."""
        if self.reference is None:
            return True
        ts = int(offer.candles.columns[0][-1])
        ref = offer.reference
        if ref is not None and (offer.final or (len(ref) and int(ref.columns[0][-1]) >= ts)):
            self._waiting = None
            return True
        now = self.clock()
        since = now if ref is not None else None
        if self._waiting is None or self._waiting[:2] != (offer.generation, ts):
            self._waiting = (offer.generation, ts, since)
            self.on_event(LiveWaiting(offer.generation, ts, self.reference,
                                      self._wait_s(offer), ref is not None))
        elif self._waiting[2] is None and since is not None:
            self._waiting = (offer.generation, ts, since)  # the reference is offered now
        started = self._waiting[2]
        return started is not None and now - started >= self._wait_s(offer)

    def _wait_s(self, offer: _Offer) -> float:
        """How long a step waits for the reference: ``reference_wait_s``, at most half a
        candle (so waiting never makes the session fall behind)."""
        return min(self.job.reference_wait_s, offer.candles.timeframe.seconds / 2)

    # -- the session's thread ---------------------------------------------------------------------
    def run(self) -> None:
        """Build the learner, process offers until ``stop``, save, report the outcome."""
        learner, steps, predictions, generation = None, 0, 0, None
        try:
            learner = self._build()
            while not self.stop.is_set():
                self._wake.wait(0.1)
                with self._lock:
                    self._wake.clear()
                    pending, self._pending = self._pending, None
                if pending is None or self.stop.is_set():
                    continue
                if not self._ready(pending):
                    with self._lock:  # looked at again, unless a newer offer replaced it
                        if self._pending is None:
                            self._pending = pending
                    continue
                if pending.generation != generation:
                    if generation is not None:
                        learner.reset()
                    self.accuracy.reset()  # the score is of the series shown
                    generation = pending.generation
                reference = pending.reference.candles() if pending.reference is not None \
                    else None
                step = learner.on_closed_candle(pending.candles.candles(), reference,
                                                pending.levels)
                if step.new_candles:
                    self.processed = (generation, step.ts)
                    steps += step.train is not None
                    predictions += 1
                    self.accuracy.add(step.outcomes)
                    self.on_event(LiveStep(generation, step, self.accuracy.scores()))
            self._save(learner)
            self.outcome = LiveEnded(steps, predictions,
                                     self.accuracy.scores() if predictions else {})
        except Exception as exc:  # noqa: BLE001 - every error ends live mode as failed
            tb = "".join(traceback.format_exception(exc))
            log.error("live mode failed: %s\n%s", _failure_message(exc), tb)
            self.outcome = Failed(self.job.source_run or "live", _failure_message(exc), tb,
                                  learner.steps if learner is not None else 0, 0, None)
        self.on_event(self.outcome)

    def _build(self):
        from .checkpoints import CheckpointStore
        from .config import preset_config
        from .device import describe, prepare_thread, resolve_device
        from .features import FeatureSpec
        from .online import OnlineLearner

        job = self.job
        device = resolve_device(job.device)
        prepare_thread(device)
        meta: dict = {}  # of the checkpoint loaded: its validation's verdicts
        if job.source_run is not None:
            loaded = CheckpointStore(job.checkpoints_root).load(job.source_run)
            meta = loaded.meta
            learner = OnlineLearner(weights=loaded, device=device, train=job.train, lr=job.lr)
        elif job.train:
            features = FeatureSpec(**{k: v for k, v in job.feature_overrides.items()
                                      if v is not None})
            config = preset_config(job.preset, **job.model_overrides,
                                   n_features=features.n_features)
            learner = OnlineLearner(config, feature_spec=features, device=device, train=True,
                                    lr=job.lr)
        else:
            raise WorkstationError("live inference needs a trained model: train one first, "
                                   "or use live inference with per-candle training")
        from .context import window_candles

        rows = (learner.config.seq_len + learner.replay_window + learner.target_spec.horizon
                + 1)
        spec = learner.feature_spec
        self._tail = lambda timeframe: window_candles(spec, timeframe, rows)  # higher frames
        self.reference, self._warmup = spec.reference or None, spec.warmup
        self.history = rows + spec.warmup  # set last: offers start once it is
        self.on_event(LiveReady(job.source_run, describe(device), job.train, self.history,
                                learner.config.seq_len, learner.target_spec.horizon,
                                self.reference, trader_verdicts(meta), verdict_source(meta),
                                spec.levels))
        return learner

    def _save(self, learner) -> None:
        if not self.job.train or not learner.steps:
            return
        from .checkpoints import CheckpointStore

        store = CheckpointStore(self.job.checkpoints_root)
        self.run_id = store.new_run_id()
        with store.lock(self.run_id):
            path = learner.save(store, self.job.provenance, self.run_id)
        log.info("per-candle trained model saved as run %s (%d steps)", self.run_id,
                 learner.steps)
        self.on_event(LiveSaved(self.run_id, str(path), learner.steps))
