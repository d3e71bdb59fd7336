"""Live mode's side of the training panel: each closed candle (and the reference asset's,
when the model reads one) goes to the live session on the worker thread, and each of its
steps comes back to the chart's prediction overlay, the paper account, the live curves and
the readout.

``LiveMode`` is mixed into ``panel.TrainingPanel``; ``launchers.JobLaunchers`` starts the
live job, the panel's slots hear the live data's candles (``_submit_live``) and its event
dispatch hands the job's events to ``_live_started``, ``_live_waiting`` and ``_live_step``.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import SignalInstance, Slot

from ...display import number, percent
from ...ml.level_columns import load_levels
from ...timeparse import format_minute
from .prediction_overlay import badge_text
from .reference_feed import ReferenceFeed
from .worker import LiveWorker

if TYPE_CHECKING:
    from ...paths import AppPaths
    from ...viewmodel.training_session import TrainingSession
    from ..live_data import LiveData
    from ..replay_mode import ReplayMode
    from .curves import TrainingCurves
    from .metric_readout import MetricReadout
    from .paper_view import PaperTrading
    from .prediction_overlay import PredictionOverlay
    from .worker import WorkerThread

log = logging.getLogger(__name__)


class LiveMode:
    """Live mode's handlers (see the module docstring). Its host, the panel, has the session,
    the live data, the overlay, the paper account, the curves and readout, ``_runner``,
    ``_set_state`` and ``stop``."""

    if TYPE_CHECKING:  # what the panel provides (``panel.TrainingPanel``)
        session: TrainingSession
        paths: AppPaths
        live_data: LiveData
        overlay: PredictionOverlay | None
        paper: PaperTrading
        curves: TrainingCurves
        readout: MetricReadout
        _runner: WorkerThread | None
        blind_replay: ReplayMode | None
        live_stepped: SignalInstance

        @property
        def state(self) -> str: ...
        def _set_state(self, state: str, detail: str = "") -> None: ...
        def stop(self) -> None: ...  # launchers.JobLaunchers

    def _init_live_mode(self, candle_cache) -> None:
        self._live_ready = False
        self._live_mode = ""
        self._live_account = ""  # the model live mode runs, as its paper account names it
        self._live_steps = 0
        self._coalesced = 0
        self._live_reference: str | None = None  # the reference asset live mode follows
        self._live_levels = False  # its model reads the drawn levels: they go with each offer
        self._live_verdict: str | None = None  # the position head's, as the badge shows it
        self._reference_problem: str | None = None  # why live mode stopped for it
        self.reference_feed = ReferenceFeed(candle_cache, self)
        self.reference_feed.changed.connect(self._reference_changed)
        self.reference_feed.failed.connect(self._reference_failed)
        self._generation = 0  # counts series shown; live results carry the one they are of

    def _reset_live(self) -> None:
        """Before a live job starts: nothing of the last one carries over."""
        self._live_ready = False
        self._live_reference = None
        self._reference_problem = None
        self._live_steps = 0
        self._coalesced = 0

    def enter_replay(self, replay: ReplayMode) -> None:
        """A blind replay starts: live mode stops first, before the replay's candles are
        shown (its model may have learned what the clock hides); in the replay it starts
        again only on a model that learned nothing after the clock
        (``launchers.JobLaunchers._live_source_run``)."""
        self._leave_live()
        self.blind_replay = replay

    def leave_replay(self) -> None:
        """The blind replay ends: live mode on its clock stops now, before the candles the
        replay hid are shown, its paper account saved as it stands."""
        self._leave_live()
        self.blind_replay = None

    def _leave_live(self) -> None:
        self._live_ready = False  # nothing more is offered to it or traded
        self.paper.stop()
        if self._runner is not None and isinstance(self._runner.worker, LiveWorker):
            self.stop()

    def _live_started(self, ready) -> None:
        if not self.session.takes_progress:
            return  # stopped before it was ready (a replay began or ended meanwhile)
        self._live_ready = True
        model = f"run {ready.source_run}" if ready.source_run else "a fresh model"
        mode = "predicting with per-candle training" if ready.train else "predicting"
        self._live_mode = f"{mode} · {model} on {ready.device}"
        self._live_reference = ready.reference
        self._live_levels = ready.levels
        self._live_verdict = ready.verdicts.get("position")
        if self.overlay is not None:
            self.overlay.show_ready(ready)
        if ready.reference:
            self._live_mode += f" · reads {ready.reference}"
        if ready.source_run is None:  # a fresh model is this session's only
            model = f"{model} started {format_minute(int(time.time() * 1000))} UTC"
        self._live_account = model + (" + per-candle training" if ready.train else "")
        if self.blind_replay is not None:  # its paper account is the replay session's
            self._live_account = self.blind_replay.paper_account(self._live_account)
        self._set_state("live", self._live_mode)
        key = self.live_data.key
        assert key is not None  # a live job starts on an open series only
        self.paper.start(key, self._live_account)
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
        self.live_stepped.emit(step)
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
        loss = f" · step loss {number(step.train.loss)}" if step.train else ""
        if step.reference_present is False:
            behind += f" · no {self._live_reference} candle at this one's time: masked"
        p = step.prediction
        badge = badge_text(p, self._live_verdict)
        self.readout.set_live(
            f"{self._live_steps} predictions · candle {percent(a.live_candle_acc)} (majority "
            f"{percent(a.live_candle_baseline)}, n={a.live_candle_n}) · trend "
            f"{percent(a.live_trend_acc)} (majority {percent(a.live_trend_baseline)}, "
            f"n={a.live_trend_n}) · the chart's badge: {badge}, the position "
            f"the trader's head would hold after this candle (regime {p.regime_label})"
            f"{loss}{behind}")
        if self.state == "live":
            self._set_state("live", f"{self._live_mode} · next {p.candle_label} "
                                    f"{p.confidence:.0%}, trend {p.trend_label} · "
                                    f"{badge}{behind}")

    def _submit_live(self) -> None:
        """Offer the live session the newest closed candles (it picks the window it needs),
        and the reference asset's when its model reads one."""
        reference, final = (self.reference_feed.candles(self.live_data.candles)
                            if self._live_reference else (None, False))
        assert self._runner is not None  # live mode is ready: its worker runs
        worker = cast("LiveWorker", self._runner.worker)
        key = self.live_data.key
        levels = (load_levels(self.paths.annotations_db, key.market)
                  if self._live_levels and key is not None else None)
        worker.session.offer(self.live_data.candles, self._generation, reference, final,
                             levels)
