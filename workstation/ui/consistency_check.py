"""``ConsistencyCheck``: the trader marks again, blind, stretches already labelled, and sees
how well the fresh marks agree with the old (``ml.consistency``).

Shift+F9 on chart 1's series draws a plan (``annotations.consistency_plan``: stretches
labelled on every candle, at random) or goes on with the one kept, and replays its next stretch
in blind replay from the stretch's start, stopping at its end. While a stretch replays, every
chart and the list show and edit the check's own store (``AppPaths.consistency_db``) in place
of the trader's marks: the old marks are hidden, and the fresh ones (and the replay's
"reviewed" region) are kept apart from them, where neither training nor the teacher reads
them. At a stretch's end Shift+F9 goes on to the next; after the last, the replay ends and the
report opens (also "Consistency report" in the palette). Ending the replay (Ctrl+Shift+E)
pauses the check: the trader's marks are back, and Shift+F9 starts the unfinished stretch
again, its earlier fresh marks dropped (they were made in a replay that stopped midway). A
stretch's replay is never resumed after a restart: it would write to the trader's marks.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QInputDialog, QMessageBox

from ..annotations.consistency_plan import (
    DEFAULT_COUNT,
    ConsistencyPlan,
    ConsistencyPlans,
    make_plan,
    remarked,
    series_name,
)
from ..annotations.store import AnnotationStore
from ..errors import WorkstationError
from ..market.replay_clock import index_at
from ..ml.consistency import ConsistencyReport, consistency

log = logging.getLogger(__name__)


class ConsistencyCheck(QObject):
    """See the module docstring; ``window`` is the main window."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.replay = window.replay
        self.plans = ConsistencyPlans(window.paths.consistency_plan)
        self.store: AnnotationStore | None = None  # the fresh marks (opened at first use)
        self.plan: ConsistencyPlan | None = None
        self.current: int | None = None  # the stretch replaying (an index of plan.stretches)
        self.last_report: ConsistencyReport | None = None
        self._unsubscribe = None
        self.replay.changed.connect(self._replay_changed)
        self.replay.reached_stop.connect(self._stretch_done)

    @property
    def active(self) -> bool:
        return self.current is not None

    def _fresh(self) -> AnnotationStore:
        if self.store is None:
            self.store = AnnotationStore(self.window.paths.consistency_db)
        return self.store

    def _key(self):
        key = self.replay.live.key
        if key is None:
            raise WorkstationError("Open a series to check your marks of it")
        return key

    def _done(self) -> list[bool]:
        assert self.plan is not None
        key = self._key()
        fresh = self._fresh().list(market=key.market, timeframe=key.timeframe.name)
        return [remarked(fresh, s) for s in self.plan.stretches]

    # -- the check -------------------------------------------------------------------------
    def step(self) -> None:
        """Start the check (or go on with it): replay the next stretch to mark again."""
        try:
            if self.active:
                clock = self.replay.clock
                if clock is not None and clock.left > 0:
                    self._say(f"{self._where()}: {clock.left:,} candles to go (Space plays, . "
                              f"steps); Ctrl+Shift+E pauses the check")
                    return
                self._next()
                return
            key = self._key()
            self.plan = self.plans.get(series_name(key.market, key.timeframe.name))
            if (self.plan is None or all(self._done())) and not self._new_plan():
                return
            self._next()
        except WorkstationError as exc:
            self._say(str(exc))

    def _new_plan(self) -> bool:
        count, ok = QInputDialog.getInt(self.window, "Consistency check",
                                        "Stretches to mark again, blind:", DEFAULT_COUNT, 1,
                                        1000)
        if not ok:
            return False
        key, candles = self._key(), self.replay.live.candles
        tf = key.timeframe.name
        own = self.window.annotations.own_store
        self.plan = make_plan(key.market, tf, own.list(market=key.market, timeframe=tf),
                              self._fresh().list(market=key.market, timeframe=tf),
                              candles.ts[:candles.n_closed], key.timeframe, count=count)
        self.plans.put(self.plan)
        return True

    def _where(self) -> str:
        assert self.plan is not None and self.current is not None
        return f"Consistency check: stretch {self.current + 1} of {len(self.plan.stretches)}"

    def _next(self) -> None:
        assert self.plan is not None
        done = self._done()
        if all(done):
            self.finish()
            return
        i = done.index(False)
        stretch, key, store = self.plan.stretches[i], self._key(), self._fresh()
        tf = key.timeframe
        for ann in store.list(market=key.market, timeframe=tf.name, start=stretch.start_ts,
                              end=stretch.end_ts):
            store.delete(ann.id)  # an earlier try that stopped midway
        series = self.replay.series()
        self._use_fresh(True)
        self.replay.resumable = False
        self.current = None  # starting may end the replay that runs: no pause
        if not self.replay.start(index_at(series, stretch.start_ts),
                                 stop=index_at(series, stretch.end_ts + tf.ms)):
            self._leave()
            return
        self.current = i
        self._say(f"{self._where()}: old marks hidden, fresh ones kept apart; Space plays, "
                  f". steps")

    def _stretch_done(self) -> None:
        if self.active:
            assert self.plan is not None
            last = all(self._done())  # the replay saved this stretch's reviewed region
            self._say(f"{self._where()} marked again: Shift+F9 "
                      f"{'shows the report' if last else 'goes on to the next'}")

    def finish(self) -> None:
        """The last stretch is marked again: the replay ends and the report opens."""
        self.current = None  # the replay's end is no pause
        if self.replay.active:
            self.replay.end()  # its reviewed region goes to the check's store, still in use
        self._leave()
        self.report()

    def _replay_changed(self) -> None:
        if self.active and not self.replay.active:  # ended (Ctrl+Shift+E) or another source
            assert self.plan is not None
            self._leave()
            text = (f"Consistency check paused: {sum(self._done())} of "
                    f"{len(self.plan.stretches)} stretches marked again; Shift+F9 goes on")
            QTimer.singleShot(0, lambda: self._say(text))  # after the replay's own line

    # -- what the window shows and edits ---------------------------------------------------
    def _use_fresh(self, on: bool) -> None:
        window = self.window
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        store = self._fresh() if on else window.annotations.own_store
        window.annotations.use_store(store if on else None)
        window.linked_annotations.use_store(store)
        if on:
            self._unsubscribe = store.subscribe(self.replay.count_decisions)

    def _leave(self) -> None:
        self.current = None
        self.replay.resumable = True
        self._use_fresh(False)

    def report(self) -> ConsistencyReport | None:
        """The fresh marks of chart 1's series against the old ones, in a dialog."""
        try:
            key = self._key()
        except WorkstationError as exc:
            self._say(str(exc))
            return None
        candles = self.replay.series()
        report = consistency(key.provenance,
                             self.window.annotations.own_store.list(market=key.market),
                             self._fresh().list(market=key.market),
                             candles.ts[:candles.n_closed], key.timeframe)
        self.last_report = report
        text = "\n".join(report.lines())
        log.info("consistency: %s", text)
        box = QMessageBox(QMessageBox.Icon.Information, "Consistency, blind", text,
                          QMessageBox.StandardButton.Close, self.window)
        box.setObjectName("consistencyReport")
        box.open()
        return report

    def shutdown(self) -> None:
        """The window closes, after the replay saved its clock (a stretch's replay ended
        with it: never resumed) into the check's store."""
        if self.active:
            self._leave()
        if self.store is not None:
            self.store.close()

    def _say(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 15_000)
