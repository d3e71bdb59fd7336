"""The training dock on demo data with the tiny preset: real Qt widgets offscreen, a real
QThread worker, real torch training on the CPU and real checkpoint files."""

from __future__ import annotations

import itertools
import logging
import subprocess
import sys
import threading
import time

from PySide6.QtWidgets import QMessageBox

from workstation.ui.training.panel import TrainingPanel
from workstation.ui.training.worker import ProgressRelay
from workstation.viewmodel.training_session import STATES

from conftest import WAIT_MS, demo_live


def wait_idle(qtbot, dock) -> None:
    qtbot.waitUntil(lambda: dock.state in ("idle", "failed") and not dock.busy,
                    timeout=WAIT_MS)


def store(paths):
    from workstation.ml.checkpoints import CheckpointStore

    return CheckpointStore(paths.checkpoints_dir)


def test_window_side_imports_no_torch():
    """The dock module loads without torch, so the window opens before torch is ready."""
    code = ("import sys, workstation.ui.training.panel, workstation.bench.gui; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "False"


def test_actions_come_from_the_shortcut_registry(make_dock):
    from workstation.ui import command_registry

    dock = make_dock()
    assert set(dock.command_actions) == {"train.start", "train.live", "train.live_train",
                                         "train.stop", "train.restart", "train.resume",
                                         "train.clear", "train.evaluate", "train.paper",
                                         "train.until_cursor"}
    for command_id, action in dock.command_actions.items():
        command = command_registry.command(command_id)
        assert action.text() == command.text
        assert [k.toString() for k in action.shortcuts()] == list(command.keys)
        assert not action.icon().isNull()
    assert dock.command_actions["train.start"].isEnabled()
    assert not dock.command_actions["train.stop"].isEnabled()
    assert dock.state in STATES and dock.state_label.text() == "idle"


def test_every_button_label_fits_its_button_and_the_full_name_is_its_tooltip(qtbot,
                                                                              make_dock):
    from workstation.ui import command_registry

    dock = make_dock()
    dock.resize(1400, 800)  # the controls column at its default width
    dock.show()
    qtbot.waitExposed(dock)
    for command_id, button in dock.buttons.items():
        if button is dock.evaluation.run_button:
            continue  # on the Evaluation tab, not shown here
        assert button.isVisible() and button.sizeHint().width() <= button.width(), command_id
        name = command_registry.command(command_id).text
        if button.text() != name:  # a short label: the tooltip names the command
            assert button.toolTip().startswith(f"{name}: "), (command_id, button.toolTip())
    assert dock.buttons["train.live_train"].text() == "Live + training"


def test_start_training_updates_curves_and_gauges_then_stop(qtbot, make_dock, paths):
    dock = make_dock(epochs=200)
    states = []
    dock.state_changed.connect(states.append)
    dock.start_training()
    assert dock.state == "preparing" and dock.busy
    run_id = dock.current_run_id
    qtbot.waitUntil(lambda: dock.events_seen["EpochEnd"] >= 2, timeout=WAIT_MS)
    assert dock.state == "training"
    assert "epoch" in dock.detail
    curves = dock.curves.series
    assert len(curves["loss_train"]) >= 2 and len(curves["loss_smooth"]) >= 2
    assert len(curves["loss_val"]) >= 2
    assert len(curves["candle_train"]) and len(curves["trend_val"]) and len(curves["lr"])
    assert len(curves["samples_per_s"])
    assert all(y > 0 for y in curves["loss_train"].y)
    for name in ("candle_best", "candle_majority", "trend_best", "trend_majority"):
        baseline = dock.curves.baselines[name]
        assert baseline.value is not None and baseline.visible
    assert dock.curves.baselines["candle_best"].label.startswith("best baseline: ")
    assert len(curves["grad_norm"]) and len(curves["mem_allocated"])
    assert dock.readout.text("loss") != "—" and "majority" in dock.readout.text("candle")
    qtbot.waitUntil(lambda: dock.gauges.samples >= 2, timeout=5000)
    assert dock.gauges.active
    assert "MiB" in dock.gauges.allocated.text.text() or "GiB" in dock.gauges.allocated.text.text()

    dock.stop()
    assert dock.state == "stopping"
    wait_idle(qtbot, dock)
    assert dock.state == "idle" and "stopped" in dock.detail
    assert not dock.gauges.active
    assert states == ["preparing", "training", "stopping", "idle"]
    loaded = store(paths).load(run_id)
    assert loaded.meta["reason"] == "stopped"
    assert dock.events_seen["Finished"] == 1


def test_restart_run_gives_a_new_run_id_and_resets_the_curves(qtbot, make_dock):
    dock = make_dock(epochs=200)
    dock.start_training()
    first = dock.current_run_id
    qtbot.waitUntil(lambda: dock.events_seen["EpochEnd"] >= 2, timeout=WAIT_MS)
    assert len(dock.curves.series["loss_val"]) >= 2
    seen_at_restart = []
    dock.state_changed.connect(
        lambda state: state == "preparing" and seen_at_restart.append(
            (dock.current_run_id, len(dock.curves.series["loss_val"]))))
    dock.restart_run()
    assert dock.state == "stopping"
    qtbot.waitUntil(lambda: dock.state == "training" and dock.current_run_id != first,
                    timeout=WAIT_MS)
    second = dock.current_run_id
    assert second != first and seen_at_restart == [(second, 0)]
    qtbot.waitUntil(lambda: dock.events_seen["BatchEnd"] >= 1, timeout=WAIT_MS)
    dock.stop()
    wait_idle(qtbot, dock)
    assert min(dock.curves.series["loss_train"].steps) <= 3  # from the new run's step 0


def test_clear_checkpoints_asks_with_count_and_size_and_empties_the_folder(
        qtbot, make_dock, paths, monkeypatch):
    dock = make_dock(epochs=1)
    dock.start_training()
    wait_idle(qtbot, dock)
    assert dock.state == "idle"
    assert len(store(paths).run_ids()) == 1
    asked = []

    def answer(parent, title, text, *args):
        asked.append(text)
        return QMessageBox.No if len(asked) == 1 else QMessageBox.Yes

    monkeypatch.setattr(QMessageBox, "question", answer)
    dock.command_actions["train.clear"].trigger()  # the menu's way: it asks; "No" keeps them
    assert len(asked) == 1 and len(store(paths).run_ids()) == 1
    assert dock.clear_checkpoints() is True
    assert "Delete 1 checkpoint run (" in asked[0] and ("kB" in asked[0] or "MB" in asked[0])
    assert [p for p in paths.checkpoints_dir.rglob("*") if p.is_file()] == []
    assert dock.current_run_id is None


def test_clear_checkpoints_stops_a_running_run_first(qtbot, make_dock, paths, monkeypatch):
    dock = make_dock(epochs=200)
    dock.start_training()
    qtbot.waitUntil(lambda: dock.events_seen["CheckpointSaved"] >= 1, timeout=WAIT_MS)
    asked = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda parent, title, text, *a: asked.append(text) or QMessageBox.Yes)
    assert dock.clear_checkpoints()
    assert "stopped first" in asked[0]
    wait_idle(qtbot, dock)
    assert dock.events_seen["Finished"] == 1
    assert [p for p in paths.checkpoints_dir.rglob("*") if p.is_file()] == []


def test_resume_continues_the_run_where_it_stopped(qtbot, make_dock, paths):
    dock = make_dock(epochs=1)
    dock.start_training()
    wait_idle(qtbot, dock)
    run_id = dock.current_run_id
    first_steps = store(paths).load(run_id).step
    dock.resume()  # one epoch was asked for and done: nothing to continue
    assert dock.state == "idle" and not dock.busy
    assert "already trained 1 epoch; raise the total epochs (Epochs, --epochs) above 1" \
        in dock.detail

    dock.settings.epochs.setValue(2)
    started = []
    dock.relay.delivered.connect(
        lambda items: started.extend(e for e in items if type(e).__name__ == "RunStarted"))
    dock.resume()
    wait_idle(qtbot, dock)
    assert dock.state == "idle", dock.detail
    assert dock.current_run_id == run_id
    assert started[0].start_step == first_steps and started[0].resumed_from
    assert store(paths).load(run_id).step == 2 * first_steps
    assert dock.error_box.isHidden()


def test_a_trainer_that_raises_shows_failed_with_the_traceback(qtbot, make_dock, monkeypatch,
                                                               caplog):
    from workstation.ml.model import TradingTransformer

    def broken_forward(self, x):
        raise RuntimeError("simulated autograd failure in forward")

    dock = make_dock()
    monkeypatch.setattr(TradingTransformer, "forward", broken_forward)
    with caplog.at_level(logging.ERROR):
        dock.start_training()
        wait_idle(qtbot, dock)
    assert dock.state == "failed"
    assert dock.state_label.text() == "failed"
    assert "simulated autograd failure" in dock.detail
    text = dock.error_box.toPlainText()
    assert dock.error_box.isVisible() or not dock.isVisible()
    assert not dock.error_box.isHidden()
    assert "Traceback (most recent call last)" in text and "broken_forward" in text
    assert any("simulated autograd failure" in r.getMessage() for r in caplog.records)
    assert dock.readout.text("loss") == "—"  # no data is never shown as 0
    assert dock.command_actions["train.start"].isEnabled()


def test_a_device_that_cannot_start_shows_failed(qtbot, paths, monkeypatch):
    from workstation.ml import warmup as ml_warmup

    def broken_step(device):
        raise RuntimeError("CUDA error: no kernel image is available for execution")

    monkeypatch.setattr(ml_warmup, "training_step", broken_step)
    dock = TrainingPanel(paths, demo_live(paths))
    qtbot.addWidget(dock)
    qtbot.waitUntil(lambda: dock.state == "failed", timeout=WAIT_MS)
    assert "no kernel image" in dock.detail
    assert "Traceback" in dock.error_box.toPlainText()
    assert not dock.command_actions["train.start"].isEnabled()
    assert dock.shutdown(10.0)


def test_bad_data_fails_before_training_with_a_clear_message(qtbot, make_dock, paths):
    dock = make_dock(live=demo_live(paths, n=60))
    dock.start_training()
    wait_idle(qtbot, dock)
    assert dock.state == "failed"
    assert "too few" in dock.detail
    assert "Traceback" in dock.error_box.toPlainText()


def test_shutdown_during_training_leaves_a_loadable_checkpoint(qtbot, make_dock, paths):
    dock = make_dock(epochs=500)
    dock.start_training()
    run_id = dock.current_run_id
    qtbot.waitUntil(lambda: dock.events_seen["BatchEnd"] >= 1, timeout=WAIT_MS)
    assert dock.shutdown(60.0)
    assert not dock.busy and dock.state == "idle"
    loaded = store(paths).load(run_id)
    assert loaded.step >= 1 and loaded.meta["provenance"].startswith("DEMO")
    from workstation.ml.checkpoints import apply_weights
    from workstation.ml.config import TradingTransformerConfig
    from workstation.ml.model import TradingTransformer

    apply_weights(TradingTransformer(TradingTransformerConfig.from_dict(loaded.meta["config"])),
                  loaded)


def test_progress_relay_delivers_everything_at_most_20_times_a_second(qtbot):
    relay = ProgressRelay()
    got, delivered_at = [], []
    first_batch = threading.Event()

    def receive(items):
        got.extend(items)
        delivered_at.append(relay.last_delivery_s)
        first_batch.set()

    relay.delivered.connect(receive)

    def produce():
        for i in range(3000):
            relay.put(i)
            if i == 1500:
                first_batch.wait(10)  # the rest comes after a delivery: at least 2 batches
            elif i % 100 == 0:
                time.sleep(0.01)

    thread = threading.Thread(target=produce)
    thread.start()
    qtbot.waitUntil(lambda: len(got) == 3000, timeout=10_000)
    thread.join()
    assert got == list(range(3000))
    assert len(delivered_at) == relay.deliveries >= 2
    gaps = [b - a for a, b in itertools.pairwise(delivered_at)]
    assert min(gaps) >= relay.interval_s, gaps  # by the relay's own clock


def test_higher_timeframes_and_a_reference_asset_are_set_in_the_panel_and_recorded(
        qtbot, make_dock):
    from workstation.ml.checkpoints import CheckpointStore

    dock = make_dock(epochs=1)
    s = dock.settings
    s.higher_timeframes.setText("15m, 1h")
    s.reference.setText("btc/usdt")
    dock.start_training()
    run = dock.current_run_id
    wait_idle(qtbot, dock)
    assert dock.state == "idle", dock.detail
    _model, features, _targets = CheckpointStore(dock.paths.checkpoints_dir).settings(run)
    assert features.higher_timeframes == ("15m", "1h") and features.reference == "BTC/USDT"

    s.higher_timeframes.clear()
    s.reference.clear()
    dock.restart_from(run)  # takes the run's recorded settings, these included
    qtbot.waitUntil(lambda: dock.current_run_id != run, timeout=WAIT_MS)
    assert s.higher_timeframes.text() == "15m,1h" and s.reference.text() == "BTC/USDT"
    wait_idle(qtbot, dock)

    s.reference.clear()
    s.higher_timeframes.setText("1h,15m")
    dock.start_training()
    wait_idle(qtbot, dock)
    assert dock.state == "failed" and "distinct and rising" in dock.detail
