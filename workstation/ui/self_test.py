"""``workstation --self-test``: the whole app, offscreen, without network, in a temporary data
dir. It opens the main window on the demo market, trains a tiny model for a few steps on the
worker thread, reloads the checkpoint it saved and predicts with it, then closes the window
cleanly. Exit 0 when every step worked; otherwise 1 with a message naming the step."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time
from typing import cast

TIMEOUT_S = 180.0


class SelfTestFailure(Exception):
    pass


async def _wait_for(condition, what: str, timeout_s: float = TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise SelfTestFailure(f"timed out after {timeout_s:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)


def _say(text: str) -> None:
    print(f"self-test: {text}", flush=True)


async def _exercise(window) -> int:
    from ..ml.checkpoints import CheckpointStore
    from ..ml.online import Predictor

    try:
        live, training = window.live, window.training
        await _wait_for(lambda: live.key is not None and len(live.candles) > 0, "demo candles")
        if not live.key.is_demo or not window.data_bar.demo_shown():
            raise SelfTestFailure("the demo market is not labelled DEMO")
        _say(f"window \"{window.windowTitle()}\" open ({len(live.candles)} candles)")
        _check_resources()
        await _wait_for(lambda: training.state == "idle", "the compute device")
        settings = training.settings
        settings.preset.setCurrentText("tiny")
        settings.device.setCurrentIndex(max(0, settings.device.findData("cpu")))
        settings.epochs.setValue(1)
        settings.seq_len.setValue(64)
        settings.batch_size.setValue(32)
        training.start_training()
        await _wait_for(lambda: training.state == "training", "training to start", 60)
        _say("training a tiny model on the worker thread")
        await _wait_for(lambda: training.state in ("idle", "failed"), "training to finish")
        if training.state == "failed":
            raise SelfTestFailure(f"training failed: {training.detail}")
        run_id = training.current_run_id
        store = CheckpointStore(window.paths.checkpoints_dir)
        checkpoint = store.load(run_id)
        predictor = Predictor.from_checkpoint(checkpoint)
        prediction = predictor.predict(live.candles)
        _say(f"run {run_id}: checkpoint {checkpoint.path} reloaded; next candle up with "
             f"p={prediction.candle_probs[2]:.2f}")
        return 0
    except Exception as exc:  # noqa: BLE001 - every failure becomes exit status 1
        print(f"self-test: FAILED: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return 1


def _check_resources() -> None:
    """The style sheet and the SVG icons load from wherever the package is (source or bundle)."""
    from PySide6.QtWidgets import QApplication

    from .resources import RESOURCES, app_icon, icon

    if not cast(QApplication, QApplication.instance()).styleSheet():
        raise SelfTestFailure(f"no style sheet applied from {RESOURCES}")
    for name, svg in (("app.svg", app_icon()), ("icons/start.svg", icon("start"))):
        if svg.pixmap(32, 32).isNull():
            raise SelfTestFailure(f"{RESOURCES / name} does not render (Qt SVG plugins missing?)")
    _say(f"resources loaded from {RESOURCES}: style sheet and SVG icons")


def run_self_test(args) -> int:
    from ..logs import setup_logging
    from ..paths import app_paths, use_home

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    home = tempfile.mkdtemp(prefix="workstation-self-test-")
    use_home(home)
    setup_logging(app_paths().ensure())
    args.source, args.symbol, args.timeframe = "demo", None, "1m"
    started = time.monotonic()
    try:
        import qasync

        from .app import qt_app, run_window

        qt_app()
        status = qasync.run(run_window(args, on_shown=_exercise))
    finally:
        logging_shutdown()
        shutil.rmtree(home, ignore_errors=True)
    verdict = "passed" if status == 0 else "FAILED"
    _say(f"{verdict} in {time.monotonic() - started:.1f} s")
    return status


def logging_shutdown() -> None:
    """Close the log file in the temporary folder before the folder is removed."""
    import logging

    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_workstation", False):
            root.removeHandler(handler)
            handler.close()
