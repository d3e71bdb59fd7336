"""``ReplayMode``: blind replay in the window; one replay clock drives every chart.

Starting a replay (at the cursor, at a time, or at a random candle of the replay span, so the
trader cannot remember the chart) stops the feed and shows chart 1's series up to the clock
(``market.replay_clock``); every other chart is resampled from it, so a higher timeframe's
forming candle ends at the clock. Marks the clock has not passed are held back on every chart
and in the list (``annotations.horizon``), the trainer's lanes are hidden, and the Training and
Backtest views are covered (their runs read candles after the clock). Marks made now are
blind (``annotations.editing``). The span the clock passes is written as one blind "reviewed"
region, so its candles without a trade are the trader's "no trade" decisions. The session is
kept (``annotations.replay_sessions``): its clock is saved at every pause, jump and end (and
every few seconds of play), so it resumes after a restart where it stopped.

Live mode runs on the replay clock only with a model that learned nothing after it
(``ml.replay_models``; a fresh model with per-candle training always may): it predicts each
candle the clock passes, and with PAPER trading on, its account is the session's own ("… ·
blind replay 7"), filled at the next open after costs as in live paper trading; the account's
results are kept with the session (``replay_sessions.PaperResult``). Live mode stops when the
replay ends, before the hidden candles are shown.

The status bar says ``REPLAY <clock> · <speed> · blind`` while it runs (with the paper
account's return and trades once it has one). Ending the replay opens the source again as it
was.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import random
import time

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QInputDialog, QLabel, QWidget

from ..annotations.replay_sessions import (
    PaperResult,
    ReplaySession,
    ReplaySessions,
    reviewed_region,
)
from ..errors import WorkstationError
from ..market.replay_clock import (
    DEFAULT_SPEED,
    ReplayClock,
    Speed,
    index_at,
    parse_span,
    random_start,
    stepped_speed,
)
from ..timeparse import format_minute, parse_time_ms
from .live_data import feeds_can_run

log = logging.getLogger(__name__)
TICK_MS = 16  # the play timer's period: candles due are shown at most this often
SAVE_EVERY_S = 5.0  # while playing, the clock is saved this often
COVER_TEXT = ("Hidden during blind replay: what is shown here was computed from candles "
              "after the replay clock. End the replay (Ctrl+Shift+E) to see it.")


class _Cover(QLabel):
    """A panel over a widget whose content the replay hides (it follows the widget's size)."""

    def __init__(self, widget: QWidget):
        super().__init__(COVER_TEXT, widget)
        self.setObjectName("blindCover")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)
        self.setAutoFillBackground(True)
        widget.installEventFilter(self)
        self.setGeometry(widget.rect())
        self.raise_()
        self.show()

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.setGeometry(watched.rect())
            self.raise_()
        return False


class ReplayMode(QObject):
    """See the module docstring; ``window`` is the main window."""

    changed = Signal()  # started, stepped, paused or ended
    reached_stop = Signal()  # the clock reached the stop it was started with (a stretch's end)

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.live = window.live
        self.clock: ReplayClock | None = None
        self.session: ReplaySession | None = None
        self.span: tuple[int, int] | None = None  # where random starts are drawn
        self.step_size = 10  # "N candles forward"
        self.sessions = ReplaySessions(window.paths.replay_db)
        self.rng = random.Random()
        self._covers: list[_Cover] = []
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._played_from = (0.0, 0)  # monotonic time and candles shown when play began
        self._saved_wall = 0.0
        self._paper: PaperResult | None = None  # the session's paper account, last seen
        self.resumable = True  # False: closing the window ends the session (a check's stretch)
        self.live.opening.connect(self._source_opening)
        window.annotations.store.subscribe(self.count_decisions)
        window.training.paper.changed.connect(self._paper_changed)

    @property
    def active(self) -> bool:
        return self.clock is not None

    # -- starting --------------------------------------------------------------------------
    def series(self):
        """The whole series to replay: the hidden one while a replay runs, else the one shown."""
        if self.clock is not None:
            return self.clock.source
        return self.live.candles

    def start(self, shown: int, speed: Speed | str | None = None,
              session: ReplaySession | None = None, *, stop: int | None = None) -> bool:
        """Start a replay with ``shown`` candles on screen (the clock at the last one's close),
        going on to ``stop`` candles shown at most (None: the end of the series). A replay
        that runs ends first (its session kept); returns whether one started."""
        source, key = self.series(), self.live.key
        if key is None or source.n_closed < 2:
            self._say("Open a series with at least 2 closed candles to replay it")
            return False
        speed = speed or (self.clock.speed if self.clock is not None else DEFAULT_SPEED)
        self._finish_session()
        self.window.training.enter_replay(self)  # before its candles show: live mode stops
        self.clock = ReplayClock(source, shown, speed, stop)
        self.session = session or self.sessions.save(ReplaySession(
            source=self.live.spec or key.source, market=key.market.kind.value,
            symbol=key.symbol, timeframe=key.timeframe.name,
            started_clock=self.clock.started_at, clock=self.clock.now,
            speed=str(self.clock.speed),
            span_from=self.span[0] if self.span else None,
            span_to=self.span[1] if self.span else None))
        assert self.session.id is not None  # saved
        kept = self.sessions.paper(self.session.id)  # a resumed replay's account, as it was
        self._paper = kept[0] if len(kept) == 1 else None
        area = self.window.chart_area
        area.follow_all()  # one clock: no chart keeps a live series of its own
        self._set_clocks(self.clock.now)  # before the reset: the views reload behind it
        self.live.show_replay(self.clock.visible(), self._detail())
        self._cover(True)
        self.window.chart.go_live()
        self.window.training_workspace.show_chart()  # the replay plays on the charts: keys too
        self._show()
        self._say(f"Blind replay from {format_minute(self.clock.now)}: Space plays, . steps, "
                  f"Ctrl+Shift+E ends; marks made now are blind")
        return True

    def start_at_cursor(self) -> None:
        chart = self.window.chart
        self.start(chart.cursor_index + 1 if chart.candles is not None else 0)

    def start_at(self, ts: int) -> bool:
        """Start with the candles closed by ``ts`` on screen."""
        return self.start(index_at(self.series(), ts))

    def start_random(self) -> bool:
        """Start at a random candle of the replay span (the whole series when none is set)."""
        try:
            shown = random_start(self.series(), self.span, self.rng)
        except WorkstationError as exc:
            self._say(str(exc))
            return False
        return self.start(shown)

    def resume(self, session: ReplaySession | None = None) -> bool:
        """Go on with the newest unfinished replay (or ``session``) of the series on screen,
        at its clock and speed."""
        session = session or self.sessions.latest(open_only=True)
        key = self.live.key
        if session is None:
            self._say("No unfinished replay to resume")
            return False
        if key is None or (session.symbol, session.timeframe) != (key.symbol,
                                                                   key.timeframe.name):
            self._say(f"The last replay ran on {session.symbol} {session.timeframe} from "
                      f"{session.source}: open that series first (--replay-from resume does)")
            return False
        self.span = session.span
        return self.start(index_at(self.series(), session.clock), session.speed, session)

    def resumed_source(self) -> tuple[str, str, str] | None:
        """Source, symbol and timeframe of the last unfinished replay (``--replay-from
        resume`` opens it), or None."""
        session = self.sessions.latest(open_only=True)
        return None if session is None else (session.source, session.symbol, session.timeframe)

    async def from_command_line(self, start: str, span: str | None, speed: str | None,
                                wait_s: float = 60.0) -> bool:
        """``--replay-from TS|random|resume [--replay-span FROM..TO] [--replay-speed S]``,
        once the source opened has candles (a demo or exchange feed delivers them in its
        task)."""
        deadline = time.monotonic() + wait_s
        while self.live.candles.n_closed < 2 and self.live.state not in ("failed", "offline") \
                and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        self.span = parse_span(span) if span else None
        kind = start.strip().lower()
        if kind == "resume":
            started = self.resume()
        elif kind == "random":
            started = self.start_random()
        else:
            started = self.start_at(parse_time_ms(start))
        if started and speed:
            self.set_speed(speed)
        return started

    # -- playing ---------------------------------------------------------------------------
    def toggle_play(self) -> None:
        clock = self.clock
        if clock is None:
            self._say("No replay runs: Ctrl+R starts one at a random candle")
            return
        clock.playing = not clock.playing and clock.left > 0
        if clock.playing:
            self._played_from = (time.monotonic(), clock.shown)
            self._timer.start()
        else:
            self._timer.stop()
            self._save()
        self._show()

    def step(self, n: int = 1) -> None:
        """Show the next ``n`` candles (fewer at the end of the series)."""
        clock = self.clock
        if clock is None:
            self._say("No replay runs: Ctrl+R starts one at a random candle")
            return
        new = clock.step(n)
        if len(new):
            self._set_clocks(clock.now)
            self.live.reveal(new)
        stopped = clock.left == 0
        if stopped:
            clock.playing = False
            self._timer.stop()
            if not clock.hidden:
                self._say("The replay reached the end of the series: Ctrl+Shift+E ends it")
        if not clock.playing:
            self._save()  # the reviewed region grows to the clock
        self._show()
        if stopped and clock.hidden:
            self.reached_stop.emit()

    def step_many(self) -> None:
        """Ask how many candles to go forward (remembered), then go."""
        if self.clock is None:
            self.step()
            return
        n, ok = QInputDialog.getInt(self.window, "Replay forward", "Candles forward:",
                                    self.step_size, 1, 1_000_000)
        if ok:
            self.step_size = n
            self.step(n)

    def faster(self) -> None:
        self._set_speed(+1)

    def slower(self) -> None:
        self._set_speed(-1)

    def set_speed(self, speed: Speed | str) -> None:
        if self.clock is not None:
            self.clock.speed = Speed.parse(speed) if isinstance(speed, str) else speed
            self._played_from = (time.monotonic(), self.clock.shown)
            self._show()

    def _set_speed(self, step: int) -> None:
        if self.clock is None:
            self._say("No replay runs: Ctrl+R starts one at a random candle")
            return
        self.set_speed(stepped_speed(self.clock.speed, self.clock.timeframe, step))

    def _tick(self) -> None:
        clock = self.clock
        if clock is None or not clock.playing:
            self._timer.stop()
            return
        began, shown = self._played_from
        rate = clock.speed.candles_per_second(clock.timeframe)
        due = shown + math.floor((time.monotonic() - began) * rate) - clock.shown
        if due > 0:
            self.step(due)
        if clock.playing and time.monotonic() - self._saved_wall > SAVE_EVERY_S:
            self._save()

    def ask_span(self) -> None:
        """Ask for the span random starts are drawn from (empty: the whole series)."""
        now = "" if self.span is None else \
            f"{format_minute(self.span[0])[:10]}..{format_minute(self.span[1])[:10]}"
        text, ok = QInputDialog.getText(self.window, "Replay span",
                                        "Random starts from FROM..TO (empty: everything):",
                                        text=now)
        if not ok:
            return
        try:
            self.span = parse_span(text) if text.strip() else None
        except WorkstationError as exc:
            self._say(str(exc))
            return
        self._say("Random starts from the whole series" if self.span is None
                  else f"Random starts from {text.strip()}")

    # -- ending ----------------------------------------------------------------------------
    def end(self) -> None:
        """End the replay: its session is kept, the whole series is shown again, and a
        source that streams (the demo market, an exchange) opens again to go live."""
        if self.clock is None:
            self._say("No replay runs")
            return
        clock = self.clock
        self._finish_session()
        self._stop_showing()
        self.live.end_replay(clock.source)
        self._say(f"Replay ended at {format_minute(clock.now)}")
        window = self.window
        if self.live.streaming and feeds_can_run():
            window._opening = asyncio.ensure_future(window.open_source(*window.data_bar.values()))

    def shutdown(self) -> None:
        """The window closes: the clock is saved (the replay resumes after a restart)."""
        if self.clock is not None:
            self._timer.stop()
            self._save(ended=not self.resumable)
        self.sessions.close()

    def _source_opening(self, *_args) -> None:
        """Another source (or timeframe) opens: the replay stops where it is; it can be
        resumed."""
        if self.clock is not None:
            self._timer.stop()
            self._save()
            self._stop_showing()

    def _stop_showing(self) -> None:
        self._timer.stop()
        self.window.training.leave_replay()  # before the hidden candles are shown
        self.clock = None
        self.session = None
        self._paper = None
        self._set_clocks(None)
        self._cover(False)
        self.window.status.show_replay(None)
        self.changed.emit()

    def _finish_session(self) -> None:
        if self.clock is not None and self.session is not None:
            self.clock.playing = False
            self._save(ended=True)

    # -- the session and its reviewed span -----------------------------------------------------
    def _save(self, *, ended: bool = False) -> None:
        clock, session = self.clock, self.session
        if clock is None or session is None:
            return
        self._saved_wall = time.monotonic()
        try:
            reviewed = self._write_reviewed()
            self.session = self.sessions.save(dataclasses.replace(
                session, clock=max(session.clock, clock.now), speed=str(clock.speed),
                reviewed_id=reviewed or session.reviewed_id,
                ended_at=int(time.time() * 1000) if ended else None))
        except WorkstationError as exc:
            log.error("replay session: %s", exc)
            self._say(f"The replay's progress was not saved: {exc}")

    def _write_reviewed(self) -> str | None:
        """Store the session's reviewed region, grown to where the clock is."""
        clock, session = self.clock, self.session
        assert clock is not None and session is not None
        region = reviewed_region(session, clock.source, clock.shown)
        if region is None:
            return None
        self.window.annotations.store.upsert(region)
        return region.id

    def count_decisions(self, change) -> None:
        """A store's change: the blind marks it adds are the session's decisions."""
        session = self.session
        if session is None or change.action != "added":
            return
        made = sum(len(a.decided_at) for a in change.annotations
                   if a.blind and a.id != session.reviewed_id)
        if made:
            self.session = dataclasses.replace(session, decisions=session.decisions + made)
            self._show()

    # -- live mode and its paper account on the replay clock -------------------------------
    def clock_now(self) -> int:
        """The replay clock (epoch ms) of the replay that runs."""
        assert self.clock is not None
        return self.clock.now

    def paper_account(self, model: str) -> str:
        """The name of the paper account ``model`` trades in this replay: its own, the
        session's (a restart that resumes the replay goes on with it)."""
        assert self.session is not None
        return f"{model} · blind replay {self.session.id}"

    def _paper_changed(self, account) -> None:
        """Keep the session's paper account's results (``backtest.paper.PaperAccount``)."""
        session = self.session
        if session is None or session.id is None \
                or not account.run.endswith(self.paper_account("")):
            return
        trades = account.trades
        result = PaperResult(account.label, len(trades), sum(t.pnl > 0 for t in trades),
                             account.pnl, account.return_pct, account.equity,
                             account.state.held, account.state.closed_ts)
        if result == self._paper:
            return
        self._paper = result
        try:
            self.sessions.record_paper(session.id, result)
        except WorkstationError as exc:
            log.error("replay session: %s", exc)
            self._say(f"The replay's paper results were not saved: {exc}")
        self._show()

    # -- what the window shows -------------------------------------------------------------
    def _set_clocks(self, now: int | None) -> None:
        self.window.annotations.set_clock(now)
        self.window.linked_annotations.set_clock(now)
        self.window.drawings.set_clock(now)

    def _cover(self, on: bool) -> None:
        for cover in self._covers:
            cover.deleteLater()
        self._covers = []
        if on:
            self._covers = [_Cover(self.window.training_workspace.page),
                            _Cover(self.window.backtest.view)]

    def _detail(self) -> str:
        key = self.live.key
        return f"blind replay of {key.provenance if key is not None else '?'}"

    def status_text(self) -> str:
        """``REPLAY <clock> · <speed> · blind`` (and ``paused`` when it is)."""
        clock = self.clock
        if clock is None:
            return ""
        state = "" if clock.playing else " · paused"
        decisions = self.session.decisions if self.session is not None else 0
        paper = self._paper
        traded = "" if paper is None else \
            f" · PAPER {paper.return_pct:+.2f} % · {paper.trades} trades"
        return (f"REPLAY {format_minute(clock.now)} · {clock.speed} · blind{state} · "
                f"{decisions} decisions{traded} · {clock.hidden:,} candles hidden")

    def _show(self) -> None:
        self.window.status.show_replay(self.status_text())
        self.changed.emit()

    def _say(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 10_000)
