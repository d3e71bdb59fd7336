"""``ml.live.LiveSession`` without Qt: on a plain thread it windows what it is offered,
coalesces offers it could not keep up with, resets on another series, settles predictions
and saves what it learned."""

from __future__ import annotations

import threading
import time

import pytest

from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.events import Failed, LiveEnded, LiveReady, LiveSaved, LiveStep, LiveWaiting
from workstation.ml.live import TAIL_MARGIN, LiveJob, LiveSession

END_TS = 1_700_000_000_000


class Recorder:
    def __init__(self):
        self.events = []
        self.lock = threading.Lock()

    def __call__(self, event) -> None:
        with self.lock:
            self.events.append(event)

    def of(self, kind) -> list:
        with self.lock:
            return [e for e in self.events if isinstance(e, kind)]


def wait(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


class Clock:
    """A clock the test moves; ``calls`` counts how often the session read it."""

    def __init__(self):
        self.now = 0.0
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        return self.now

    def seen(self, times: int = 3) -> None:
        """Wait until the session has read the clock ``times`` more times."""
        calls = self.calls
        wait(lambda: self.calls >= calls + times)


@pytest.fixture
def started(tmp_path):
    sessions = []

    def start(train: bool = True, clock=time.monotonic, **job_fields
              ) -> tuple[LiveSession, Recorder, threading.Thread]:
        job = LiveJob(device="cpu", train=train, checkpoints_root=tmp_path / "ckpt",
                      provenance="DEMO test", model_overrides={"seq_len": 16}, **job_fields)
        recorder = Recorder()
        session = LiveSession(job, recorder, clock=clock)
        thread = threading.Thread(target=session.run, name="live session")
        thread.start()
        sessions.append((session, thread))
        return session, recorder, thread

    yield start
    for session, thread in sessions:
        session.stop.set()
        thread.join(60)
        assert not thread.is_alive()


def test_offers_are_windowed_coalesced_and_reset_per_series(started):
    series = demo_candles(1500, ONE_MINUTE, seed=4, end_ts=END_TS)
    session, recorder, thread = started(train=True)
    assert not session.offer(series.slice(0, 1000), 0)  # not ready yet: nothing taken
    wait(lambda: recorder.of(LiveReady))
    (ready,) = recorder.of(LiveReady)
    assert ready.history == session.history and ready.seq_len == 16 and ready.train
    assert session.window_start(series.slice(0, 1000), 0) == 999 - ready.history - TAIL_MARGIN

    assert session.offer(series.slice(0, 1000), 0)
    wait(lambda: len(recorder.of(LiveStep)) == 1)
    assert session.processed == (0, int(series.ts[999]))
    # Five candles closed while nothing was taken: one step for all of them.
    for n in range(1001, 1006):
        session.offer(series.slice(0, n), 0)
    wait(lambda: session.processed == (0, int(series.ts[1004])))
    last = recorder.of(LiveStep)[-1]
    assert last.generation == 0 and last.step.new_candles >= 1
    assert sum(s.step.new_candles for s in recorder.of(LiveStep)) == 6
    # The next window starts history + margin before the newest candle the learner has seen.
    assert session.window_start(series.slice(0, 1010), 0) == 1004 - ready.history - TAIL_MARGIN

    # Another series (generation 1): the learner starts over on it, no error about continuity.
    other = demo_candles(1200, ONE_MINUTE, seed=9, end_ts=END_TS)
    session.offer(other, 1)
    wait(lambda: session.processed == (1, int(other.ts[-1])))
    # Predictions mature: after the horizon, outcomes were settled on generation 0.
    for n in range(1006, 1030):
        session.offer(series.slice(0, n), 2)
        wait(lambda n=n: session.processed == (2, int(series.ts[n - 1])))
    outcomes = [o for s in recorder.of(LiveStep) for o in s.step.outcomes]
    assert {o.head for o in outcomes} == {"candle", "trend"}

    session.stop.set()
    thread.join(60)
    (saved,) = recorder.of(LiveSaved)
    (ended,) = recorder.of(LiveEnded)
    assert recorder.events[-1] is ended is session.outcome
    assert ended.predictions == len(recorder.of(LiveStep)) and ended.steps >= 1
    assert session.run_id == saved.run_id
    assert CheckpointStore(session.job.checkpoints_root).has_checkpoint(saved.run_id)


def test_live_inference_without_a_model_fails_with_its_reason(started):
    session, recorder, thread = started(train=False)
    thread.join(60)
    (failed,) = recorder.of(Failed)
    assert "live inference needs a trained model" in failed.message
    assert session.outcome is failed and not recorder.of(LiveReady)


def test_a_step_waits_for_the_reference_candle_then_masks_it(started):
    series = demo_candles(1200, ONE_MINUTE, seed=4, end_ts=END_TS)
    btc = demo_candles(1200, ONE_MINUTE, seed=11, end_ts=END_TS)
    clock = Clock()
    session, recorder, _thread = started(clock=clock, reference_wait_s=5.0,
                                         feature_overrides={"reference": "BTC/USDT"})
    wait(lambda: recorder.of(LiveReady))
    assert recorder.of(LiveReady)[0].reference == "BTC/USDT"

    # Candle 999 closed, no BTC/USDT offered yet: it waits, however long that takes.
    assert session.offer(series.slice(0, 1000), 0)
    wait(lambda: recorder.of(LiveWaiting))
    (waiting,) = recorder.of(LiveWaiting)
    assert (waiting.ts, waiting.reference, waiting.wait_s, waiting.offered) == (
        int(series.ts[999]), "BTC/USDT", 5.0, False)
    clock.now = 1000.0
    clock.seen()
    assert not recorder.of(LiveStep)
    # BTC/USDT up to candle 998: the wait starts now, and ends 5 s later with 999 masked.
    session.offer(series.slice(0, 1000), 0, btc.slice(0, 999))
    clock.seen()
    clock.now = 1004.0
    clock.seen()
    assert not recorder.of(LiveStep) and len(recorder.of(LiveWaiting)) == 1
    clock.now = 1005.0
    wait(lambda: recorder.of(LiveStep))
    assert recorder.of(LiveStep)[0].step.reference_present is False

    # Its candle there at once: no wait, read.
    session.offer(series.slice(0, 1001), 0, btc.slice(0, 1001))
    wait(lambda: len(recorder.of(LiveStep)) == 2)
    assert recorder.of(LiveStep)[1].step.reference_present is True
    # Missing for good (a later one has closed), or from a reference that will not grow: no
    # wait, masked.
    session.offer(series.slice(0, 1002), 0, btc.slice(0, 1003).without([1001]))
    wait(lambda: len(recorder.of(LiveStep)) == 3)
    session.offer(series.slice(0, 1003), 0, btc.slice(0, 1002), final=True)
    wait(lambda: len(recorder.of(LiveStep)) == 4)
    assert [s.step.reference_present for s in recorder.of(LiveStep)[2:]] == [False, False]
    assert len(recorder.of(LiveWaiting)) == 1
