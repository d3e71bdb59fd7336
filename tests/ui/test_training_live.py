"""Live mode of the training dock: a fast replay of demo candles through a real LiveData,
a real chart, the OnlineLearner on the worker thread (tiny preset, CPU)."""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest

from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.checkpoints import CheckpointStore
from workstation.ui.training.prediction_overlay import CURRENT, MARKS

from conftest import END_TS, WAIT_MS
from live_replay import Replay, wait_live


@pytest.fixture
def replay(paths, qtbot):
    r = Replay(paths)
    qtbot.addWidget(r.chart)
    return r


def test_live_training_on_a_fast_replay_predicts_learns_and_marks(qtbot, replay, make_dock,
                                                                   paths, monkeypatch,
                                                                   caplog):
    from workstation.ml.online import OnlineLearner

    threads = []
    step = OnlineLearner.on_closed_candle

    def recording_step(self, candles, reference=None, levels=None):
        threads.append(threading.current_thread())
        return step(self, candles, reference, levels)

    monkeypatch.setattr(OnlineLearner, "on_closed_candle", recording_step)
    dock = make_dock(replay.live, replay.chart, epochs=1)
    assert dock.current_run_id is None
    dock.start_live_training()
    wait_live(qtbot, dock)
    overlays = replay.chart.overlays
    qtbot.waitUntil(lambda: dock.events_seen["LiveStep"] >= 1, timeout=WAIT_MS)
    # One mark for the predicted candle (no ghost candle, arrow or label), and the badge.
    assert overlays.ghost is None and overlays.count(MARKS) == 1
    assert int(overlays.lanes[MARKS].ts[-1]) == int(replay.live.candles.ts[-1]) + 60_000
    assert overlays.count(CURRENT) == 0 and overlays.badge.group == CURRENT

    replay.feed(30, qtbot, dock=dock)
    qtbot.waitUntil(lambda: dock.overlay.right + dock.overlay.wrong >= 12, timeout=WAIT_MS)
    # Each settled next-candle call marks its own candle's mark: still one per candle.
    assert overlays.count(MARKS) == dock.overlay.marks > dock.overlay.right + dock.overlay.wrong
    curves = dock.curves.series
    assert len(curves["live_loss"]) >= 2 and all(y > 0 for y in curves["live_loss"].y)
    qtbot.waitUntil(lambda: len(curves["live_trend_acc"]) >= 1, timeout=WAIT_MS)
    assert len(curves["live_candle_acc"]) >= 1
    assert dock.curves.baselines["live_candle"].value is not None
    assert "predictions" in dock.readout.text("live") and "majority" in dock.readout.text("live")
    assert "next" in dock.detail
    assert threads and all(t is not threading.main_thread() for t in threads)

    with caplog.at_level(logging.WARNING):
        replay.feed(25)  # one burst: the learner falls behind and must coalesce
        qtbot.waitUntil(lambda: "coalesced" in dock.readout.text("live"), timeout=WAIT_MS)
    assert any("coalesced" in r.getMessage() for r in caplog.records)
    assert "fell behind" in dock.detail or "fell behind" in dock.readout.text("live")

    dock.stop()
    qtbot.waitUntil(lambda: dock.state == "idle" and not dock.busy, timeout=WAIT_MS)
    assert dock.events_seen["LiveSaved"] == 1
    saved = CheckpointStore(paths.checkpoints_dir).load(dock.current_run_id)
    assert saved.meta["reason"] == "online" and saved.step >= 2
    # Live mode ended: the suggestion goes, the marks stay until the trader clears them.
    assert overlays.badge is None and overlays.count(MARKS) == dock.overlay.marks > 12


def test_live_inference_uses_the_trained_run_and_trains_nothing(qtbot, replay, make_dock):
    dock = make_dock(replay.live, replay.chart, epochs=1)
    dock.start_live()  # nothing trained yet: refused, not failed
    assert dock.state == "idle" and not dock.busy
    assert "needs a trained model" in dock.detail

    dock.start_training()
    qtbot.waitUntil(lambda: dock.state == "idle" and not dock.busy, timeout=WAIT_MS)
    trained = dock.current_run_id
    assert dock.events_seen["Finished"] == 1
    dock.start_live()
    wait_live(qtbot, dock)
    assert f"run {trained}" in dock.detail
    replay.feed(14, qtbot, dock=dock)
    qtbot.waitUntil(lambda: len(dock.curves.series["live_trend_acc"]) >= 1, timeout=WAIT_MS)
    assert len(dock.curves.series["live_loss"]) == 0  # no training: no loss, never a 0
    assert "step loss" not in dock.readout.text("live")
    dock.stop()
    qtbot.waitUntil(lambda: dock.state == "idle" and not dock.busy, timeout=WAIT_MS)
    assert dock.events_seen["LiveSaved"] == 0 and dock.current_run_id == trained


def test_shift_f6_in_live_inference_switches_to_per_candle_training_or_says_it_runs(
        qtbot, replay, make_dock):
    dock = make_dock(replay.live, replay.chart, epochs=1)
    dock.start_training()
    qtbot.waitUntil(lambda: dock.state == "idle" and not dock.busy, timeout=WAIT_MS)
    trained = dock.current_run_id
    dock.start_live()  # F6
    wait_live(qtbot, dock)
    live_train = dock.command_actions["train.live_train"]
    assert live_train.isEnabled()  # Shift+F6 is heard in live mode
    live_train.trigger()
    assert dock.state == "stopping"
    assert "switching to live inference with per-candle training" in dock.detail
    qtbot.waitUntil(lambda: dock.state == "live" and dock.session.live_train
                    and dock.events_seen["LiveReady"] == 1, timeout=WAIT_MS)
    assert f"predicting with per-candle training · run {trained}" in dock.detail
    live_train.trigger()  # again: it runs already, and says so
    assert dock.state == "live" and dock.busy
    assert "live inference with per-candle training is running already" in dock.detail
    dock.stop()
    qtbot.waitUntil(lambda: dock.state == "idle" and not dock.busy, timeout=WAIT_MS)


def test_live_mode_follows_a_switch_of_series(qtbot, replay, make_dock):
    dock = make_dock(replay.live, replay.chart, epochs=1)
    dock.start_live_training()
    wait_live(qtbot, dock)
    replay.feed(3, qtbot, dock=dock)
    qtbot.waitUntil(lambda: dock.events_seen["LiveStep"] >= 2, timeout=WAIT_MS)
    other = demo_candles(800, seed=9, end_ts=END_TS + 86_400_000)
    replay.show(other.slice(0, 760), SeriesKey("demo", "OTHER/USDT", ONE_MINUTE))
    replay.rest = [other.row(i) for i in range(760, 800)]
    replay.feed(3, qtbot, dock=dock)
    overlays = replay.chart.overlays
    qtbot.waitUntil(lambda: MARKS in overlays.lanes
                    and int(overlays.lanes[MARKS].ts[-1]) == int(other.ts[762]) + 60_000,
                    timeout=WAIT_MS)
    assert int(overlays.lanes[MARKS].ts[0]) >= int(other.ts[760])  # none of the old series
    assert dock.state == "live", dock.detail


def test_shutdown_in_live_mode_saves_the_online_model(qtbot, replay, make_dock, paths):
    dock = make_dock(replay.live, replay.chart, epochs=1)
    dock.start_live_training()
    wait_live(qtbot, dock)
    replay.feed(4, qtbot, dock=dock)
    qtbot.waitUntil(lambda: dock.events_seen["LiveStep"] >= 3, timeout=WAIT_MS)
    assert dock.shutdown(60.0)
    assert not dock.busy and dock.state == "idle"
    assert CheckpointStore(paths.checkpoints_dir).load(dock.current_run_id).step >= 1


def test_live_mode_reads_the_demo_reference_asset_at_the_charts_times(qtbot, replay, make_dock,
                                                                      paths, monkeypatch):
    """A model that reads BTC/USDT, live on the demo market: the session is offered the demo
    market's BTC/USDT at exactly the chart's closed candles' times, and nothing is masked."""
    from workstation.market.demo import demo_anchor
    from workstation.market.sources import demo_market
    from workstation.ml.online import OnlineLearner

    demo_anchor(paths.demo_anchor, now_ms=END_TS)  # its BTC/USDT covers the replay's times
    offered = []
    step = OnlineLearner.on_closed_candle

    def recording_step(self, candles, reference=None, levels=None):
        offered.append((candles, reference))
        return step(self, candles, reference, levels)

    monkeypatch.setattr(OnlineLearner, "on_closed_candle", recording_step)
    dock = make_dock(replay.live, replay.chart, epochs=1)
    dock.settings.reference.setText("BTC/USDT")
    dock.start_live_training()
    wait_live(qtbot, dock)
    assert "reads BTC/USDT" in dock.detail
    replay.feed(3, qtbot, dock=dock)
    qtbot.waitUntil(lambda: dock.events_seen["LiveStep"] >= 3, timeout=WAIT_MS)
    candles, reference = offered[-1]
    assert int(reference.ts[-1]) == int(candles.ts[-1])  # up to the newest closed one only
    btc = demo_market("BTC/USDT", ONE_MINUTE).candles(int(reference.ts[0]),
                                               int(reference.ts[-1]) + 60_000)
    for got, want in zip(reference.columns(), btc.columns()):
        assert np.array_equal(got, want)
    assert "masked" not in dock.readout.text("live")
    dock.stop()
    qtbot.waitUntil(lambda: dock.state == "idle" and not dock.busy, timeout=WAIT_MS)
    saved = CheckpointStore(paths.checkpoints_dir).load(dock.current_run_id)
    assert saved.meta["features"]["reference"] == "BTC/USDT"


def test_a_reference_that_cannot_be_followed_stops_live_mode_and_says_why(qtbot, replay,
                                                                            make_dock):
    dock = make_dock(replay.live, replay.chart, epochs=1)
    dock.settings.reference.setText("BTC/USDT")
    dock.start_live_training()
    wait_live(qtbot, dock)
    dock.reference_feed.failed.emit("the reference asset BTC/USDT could not be followed: "
                                    "binance does not list it")
    qtbot.waitUntil(lambda: not dock.busy, timeout=WAIT_MS)
    assert dock.state == "failed"
    assert "live mode stopped: the reference asset BTC/USDT" in dock.last_error
