"""The whole window on asyncio (qasync), as the app runs it: open a source, persist the layout
and the last source, and close during training (stopped at a safe point, saved, clean exit)."""

import argparse

import qasync
from PySide6.QtGui import QAction, QPalette

from workstation.ml.checkpoints import CheckpointStore
from workstation.paths import app_paths
from workstation.ui.app import run_window

from conftest import wait_for

WAIT_S = 120.0  # the window loads torch and trains on a loaded 2-core machine


def args(**kw):
    base = dict(source=None, symbol=None, timeframe=None, speed=1.0)
    base.update(kw)
    return argparse.Namespace(**base)


def test_window_opens_demo_and_remembers_source_and_layout(qapp):
    seen = {}

    async def first(window):
        await wait_for(lambda: len(window.live.candles) > 0, WAIT_S)
        seen["demo"] = window.live.key.is_demo and window.data_bar.demo_shown()
        # Qt's own palette() and actions() are not shadowed by attributes of ours
        seen["qt"] = (isinstance(window.palette(), QPalette),
                      all(isinstance(a, QAction) for a in window.training.actions()),
                      set(window.training.command_actions) >= {"train.start", "train.stop"})
        seen["title"] = window.windowTitle()
        window.log_dock.hide()
        await window.open_source("demo", "BTC/DEMO", "5m")
        await wait_for(lambda: window.live.key.symbol == "BTC/DEMO" and len(window.live.candles),
                       WAIT_S)
        seen["chart"] = len(window.chart.candles)
        return 0

    assert qasync.run(run_window(args(source="demo"), on_shown=first)) == 0
    assert seen["demo"] and "DEMO" in seen["title"] and seen["chart"] > 0
    assert seen["qt"] == (True, True, True)

    async def second(window):
        await wait_for(lambda: len(window.live.candles) > 0, WAIT_S)
        seen["again"] = (window.live.key.source, window.live.key.symbol,
                         window.live.key.timeframe.name)
        seen["log_visible"] = window.log_dock.isVisible()
        return 0

    assert qasync.run(run_window(args(), on_shown=second)) == 0
    assert seen["again"] == ("demo", "BTC/DEMO", "5m")
    assert seen["log_visible"] is False


def test_closing_during_training_stops_saves_and_exits(qapp):
    seen = {}

    async def train_then_close(window):
        training = window.training
        await wait_for(lambda: training.state == "idle" and len(window.live.candles) > 0, WAIT_S)
        training.settings.preset.setCurrentText("tiny")
        training.settings.epochs.setValue(500)
        training.settings.seq_len.setValue(32)
        training.settings.stride.setValue(32)
        training.settings.batch_size.setValue(8)
        training.start_training()
        await wait_for(lambda: training.state == "training", WAIT_S)
        await wait_for(lambda: training.current_run_id is not None, WAIT_S)
        # a step done first: a run stopped before its first step has nothing to save
        await wait_for(lambda: training.events_seen["BatchEnd"] >= 1, WAIT_S)
        seen["run"] = training.current_run_id
        window.close()  # the user closes: refused until the run has stopped and saved
        seen["still_open"] = window.isVisible()
        return 0

    assert qasync.run(run_window(args(source="demo"), on_shown=train_then_close)) == 0
    assert seen["still_open"]
    loaded = CheckpointStore(app_paths().checkpoints_dir).load(seen["run"])
    assert loaded.meta["step"] > 0 and "DEMO" in loaded.meta["provenance"]
