"""``ml.live.LiveSession`` without Qt: on a plain thread it windows what it is offered,
coalesces offers it could not keep up with, resets on another series, settles predictions
and saves what it learned."""

from __future__ import annotations

import threading
import time

import pytest

from workstation.market.demo import demo_candles
from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.events import Failed, LiveEnded, LiveReady, LiveSaved, LiveStep
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


@pytest.fixture
def started(tmp_path):
    sessions = []

    def start(train: bool = True) -> tuple[LiveSession, Recorder, threading.Thread]:
        job = LiveJob(device="cpu", train=train, checkpoints_root=tmp_path / "ckpt",
                      provenance="DEMO test", model_overrides={"seq_len": 16})
        recorder = Recorder()
        session = LiveSession(job, recorder)
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
    series = demo_candles(1500, "1m", seed=4, end_ts=END_TS)
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
    other = demo_candles(1200, "1m", seed=9, end_ts=END_TS)
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
