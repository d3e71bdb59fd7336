"""A real live session's ``LiveReady`` carries the trader heads' verdicts of the checkpoint it
loaded and which validation gave them; a fresh model, or one saved by per-candle training,
was never evaluated (tiny model, CPU, a plain thread)."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict

from workstation.market.demo import demo_candles
from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.events import HeadScore, LiveReady, LiveSaved, SplitMetrics
from workstation.ml.head_verdicts import trader_verdicts
from workstation.ml.live import LiveJob, LiveSession
from workstation.ml.online import Predictor
from workstation.ml.scoring import EDGE, SMALL_EDGE

END_TS = 1_700_000_000_000


def wait(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def session_events(job: LiveJob, series=None, first: int = 0, last: int = -1) -> list:
    """The events of a session that predicts candles ``first`` .. ``last`` of ``series``, one
    at a time (none without ``series``), then stops."""
    events: list = []
    session = LiveSession(job, events.append)
    thread = threading.Thread(target=session.run, name="live session")
    thread.start()
    try:
        wait(lambda: any(isinstance(e, LiveReady) for e in events))
        for n in range(first, last + 1):
            assert session.offer(series.slice(0, n), 0)
            wait(lambda n=n: session.processed == (0, int(series.ts[n - 1])))
    finally:
        session.stop.set()
        thread.join(60)
    assert not thread.is_alive()
    return events


def validated_copy(store: CheckpointStore, run_id: str) -> str:
    """A new run with ``run_id``'s weights, saved as an epoch of training saves it: with its
    validation's scores per head (``Trainer._save``)."""
    loaded = store.load(run_id)
    heads = {"position": HeadScore(0.61, 900, {"majority": 0.55}, "majority", 0.06,
                                   (0.02, 0.1), EDGE),
             "regime": HeadScore(0.5, 900, {"majority": 0.498}, "majority", 0.002,
                                 (0.001, 0.004), SMALL_EDGE)}
    val = SplitMetrics(1.1, {"position": 0.7}, heads, 900, 4)
    meta = {key: loaded.meta[key] for key in ("config", "features", "targets", "provenance")}
    meta.update(metrics={"val": asdict(val), "best_val_loss": 1.1}, step=40, epoch=2,
                reason="epoch")
    copy = store.new_run_id()
    store.save(copy, Predictor.from_checkpoint(loaded).model, meta=meta)
    return copy


def test_live_ready_carries_the_verdicts_of_the_checkpoint_it_loaded(tmp_path):
    series = demo_candles(600, seed=4, end_ts=END_TS)
    root = tmp_path / "ckpt"
    fresh = LiveJob(device="cpu", train=True, checkpoints_root=root, provenance="DEMO test",
                    model_overrides={"seq_len": 16})
    events = session_events(fresh, series, 590, 592)
    (ready,) = [e for e in events if isinstance(e, LiveReady)]
    assert ready.verdicts == {"position": None, "regime": None}
    assert ready.verdict_source is None
    (saved,) = [e for e in events if isinstance(e, LiveSaved)]

    store = CheckpointStore(root)
    online = LiveJob(device="cpu", train=False, checkpoints_root=root, provenance="DEMO test",
                     source_run=saved.run_id)
    (ready,) = [e for e in session_events(online) if isinstance(e, LiveReady)]
    assert ready.verdicts == {"position": None, "regime": None}  # per-candle training only
    assert ready.verdict_source is None

    run = validated_copy(store, saved.run_id)
    validated = LiveJob(device="cpu", train=True, checkpoints_root=root,
                        provenance="DEMO test", source_run=run)
    (ready,) = [e for e in session_events(validated) if isinstance(e, LiveReady)]
    assert ready.source_run == run and ready.train
    assert ready.verdicts == {"position": EDGE, "regime": SMALL_EDGE}
    assert ready.verdicts == trader_verdicts(store.load(run).meta)
    assert ready.verdict_source == f"validation of run {run}, epoch 2"
