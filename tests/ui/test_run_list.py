"""The Runs tab of the training workspace: every run as its history tells it, opened (its
recorded curves), overlaid on the run shown, resumed, restarted with its settings, deleted
with its checkpoints after a confirmation, and exported to TensorBoard and CSV; the list is
current on a run's start and end, a delete and a clear without a Refresh, and every button is a
command of the palette (tiny preset, CPU, real training, real files)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.history.listing import list_runs
from workstation.ml.history.reader import read_history
from workstation.ml.targets import CLASS_HEADS
from workstation.ui.command_registry import command
from workstation.ui.help import palette_entries
from workstation.ui.training.runs import ACTIONS, COLUMNS

from conftest import WAIT_MS
from saved_runs import save_run


def quiet(qtbot, dock) -> None:
    qtbot.waitUntil(lambda: dock.state in ("idle", "failed") and not dock.busy
                    and not dock.tasks_running, timeout=WAIT_MS)
    assert dock.state == "idle", dock.detail


def train(qtbot, dock, epochs: int) -> str:
    dock.settings.epochs.setValue(epochs)
    dock.start_training()
    quiet(qtbot, dock)
    return dock.current_run_id


def history(paths, run_id):
    return read_history(CheckpointStore(paths.checkpoints_dir).run_dir(run_id))


@pytest.fixture
def two_runs(qtbot, make_dock, paths):
    """A panel that trained run A (1 epoch), then run B (2 epochs)."""
    dock = make_dock()
    quiet(qtbot, dock)
    first = train(qtbot, dock, 1)
    second = train(qtbot, dock, 2)
    qtbot.waitUntil(lambda: len(dock.runs.rows()) == 2, timeout=WAIT_MS)
    return dock, first, second


def test_each_run_is_listed_as_its_history_tells_it_and_opens(qtbot, two_runs, paths):
    dock, first, second = two_runs
    rows = dock.runs.rows()
    assert [row[1] for row in rows] == [second, first]  # newest first
    summaries = list_runs(CheckpointStore(paths.checkpoints_dir))
    for row, run_id, summary in zip(rows, (second, first), summaries, strict=True):
        h = history(paths, run_id)
        cells = dict(zip(COLUMNS, row, strict=True))
        assert summary.run_id == run_id and cells["Started (UTC)"] != "—"
        assert cells["State"] == "completed" and cells["Preset"] == "tiny"
        assert cells["Steps"] == f"{h.steps:,}" and cells["Data"].startswith("DEMO")
        assert cells["Best val loss"] == f"{h.best_val_loss:.4f}"
        # a day of candles has no 95 % interval, so no verdict yet: said as "—", never a guess
        assert cells["Verdict"] == (f"{summary.verdict} (validation)" if summary.verdict
                                    else "—")
    assert dock.curves.run_id == second  # the run just trained is the one shown

    dock.runs.select(first)
    dock.runs.buttons["open"].click()
    qtbot.waitUntil(lambda: dock.curves.run_id == first, timeout=WAIT_MS)
    h = history(paths, first)
    assert list(dock.curves.series["loss_train"].steps) == [b["step"] for b in h.batches]
    assert len(dock.curves.series["loss_val"]) == len(h.epochs) == 1
    assert dock.current_run_id == first and first in dock.run_label.text()
    assert dock.runs.table.item(1, 1).font().bold()  # the run shown stands out
    assert dock.readout.text("val_loss") == f"{h.epochs[-1]['val']['loss']:.4f}"

    dock.settings.epochs.setValue(500)
    dock.start_training()
    assert dock.open_run(second) is False and "once this one has stopped" in dock.detail
    dock.stop()
    quiet(qtbot, dock)


def test_overlay_draws_another_run_beside_the_one_shown(qtbot, two_runs, paths):
    dock, first, second = two_runs
    curves = dock.curves
    dock.runs.select(first)
    dock.runs.buttons["compare"].click()
    qtbot.waitUntil(lambda: curves.compare_run == first, timeout=WAIT_MS)
    label = f"run {first[-4:]}"
    assert curves.run_id == second  # the shown run stays
    assert f"{label} train (smoothed)" in curves.plots["loss"].legend_names()
    assert f"{label} validation" in curves.plots["loss"].legend_names()
    for head in CLASS_HEADS:
        assert f"{label} validation" in curves.plots[head].legend_names()
    dock.resize(1160, 640)  # its room as a tab of a 1500 x 900 window
    dock.show()
    qtbot.waitExposed(dock)
    curves.tabs.setCurrentWidget(curves.curves_page)
    qtbot.wait(50)
    for plot in curves.plots_on(curves.curves_page):  # the longer legends still fit whole
        assert plot.legend.width() > 100, plot.key
        assert plot.legend.heightForWidth(plot.legend.width()) <= plot.legend.height(), plot.key
    h = history(paths, first)
    smoothed = next(s for s in curves.compare_series if s.label.endswith("(smoothed)"))
    assert list(smoothed.steps) == [b["step"] for b in h.batches]
    before = smoothed.y.copy()
    curves.set_smoothing(0.95)  # the overlay is smoothed like the shown run
    assert not np.allclose(smoothed.y, before) or len(before) == 1
    dock.runs.buttons["compare"].click()  # again: taken away
    assert curves.compare_run is None and curves.compare_series == []
    assert not any(label in name for name in curves.plots["loss"].legend_names())


def test_delete_asks_then_removes_the_run_with_its_checkpoints(qtbot, two_runs, paths,
                                                               monkeypatch):
    dock, first, second = two_runs
    store = CheckpointStore(paths.checkpoints_dir)
    folder = store.run_dir(first)
    assert any(folder.rglob("*.safetensors")) and (folder / "history.jsonl").is_file()
    asked = []

    def answer(parent, title, text, *args):
        asked.append(text)
        return QMessageBox.No if len(asked) == 1 else QMessageBox.Yes

    monkeypatch.setattr(QMessageBox, "question", answer)
    dock.runs.select(first)
    dock.runs.buttons["delete"].click()  # "No": nothing is deleted
    assert folder.is_dir() and first in store.run_ids()
    dock.runs.buttons["delete"].click()
    assert f"Delete run {first}: its checkpoints and its history (" in asked[0]
    assert not folder.exists() and store.run_ids() == [second]
    qtbot.waitUntil(lambda: [row[1] for row in dock.runs.rows()] == [second],
                    timeout=WAIT_MS)
    assert f"deleted run {first}" in dock.runs.message.text()
    quiet(qtbot, dock)

    dock.settings.epochs.setValue(500)
    dock.start_training()  # the active run cannot be deleted
    assert dock.delete_run(dock.current_run_id) is False and "stop it" in dock.detail
    assert len(asked) == 2
    dock.stop()
    quiet(qtbot, dock)


def test_export_writes_tensorboard_files_and_a_csv(qtbot, two_runs, paths, tmp_path,
                                                   monkeypatch):
    dock, first, _second = two_runs
    h = history(paths, first)
    target = tmp_path / "first.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *a, **k: (str(target), "CSV files (*.csv)"))
    dock.runs.select(first)
    dock.runs.buttons["csv"].click()  # the button asks where, then writes off the thread
    quiet(qtbot, dock)
    with open(target, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(h.batches) + len(h.epochs)
    assert [int(r["step"]) for r in rows if r["kind"] == "batch"] == \
        [b["step"] for b in h.batches]
    assert f"to {target}" in dock.runs.message.text()

    board = tmp_path / "board"
    assert dock.export_run(first, "tensorboard", str(board))
    quiet(qtbot, dock)
    files = list((board / first).glob("events.out.tfevents.*"))
    assert len(files) == 1 and files[0].stat().st_size > 0
    assert str(files[0]) in dock.runs.message.text()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: "")
    assert dock.export_run(first, "tensorboard") is False  # the dialog cancelled


def test_resume_and_restart_from_the_list(qtbot, make_dock, paths):
    dock = make_dock()
    quiet(qtbot, dock)
    dock.settings.batch_size.setValue(4)  # several points an epoch
    first = train(qtbot, dock, 2)
    qtbot.waitUntil(lambda: len(dock.runs.rows()) == 1, timeout=WAIT_MS)
    recorded = [b["step"] for b in history(paths, first).batches]

    dock.settings.epochs.setValue(3)
    dock.runs.select(first)
    dock.runs.buttons["resume"].click()
    quiet(qtbot, dock)
    assert dock.current_run_id == first and dock.curves.run_id == first
    steps = list(dock.curves.series["loss_train"].steps)
    assert steps[:len(recorded)] == recorded and len(steps) > len(recorded)
    assert [b["step"] for b in history(paths, first).batches] == steps
    qtbot.waitUntil(lambda: dock.runs.rows()
                    and dock.runs.rows()[0][5] == f"{int(steps[-1]):,}", timeout=WAIT_MS)

    dock.settings.seq_len.setValue(16)  # the restart takes the run's settings, not these
    dock.settings.epochs.setValue(1)
    dock.runs.select(first)
    dock.runs.buttons["restart"].click()
    qtbot.waitUntil(lambda: dock.current_run_id != first, timeout=WAIT_MS)
    quiet(qtbot, dock)
    second = dock.current_run_id
    start = history(paths, second).markers[0]
    assert start["type"] == "start" and start["model_config"]["seq_len"] == 32
    assert start["train_config"]["epochs"] == 3 and dock.settings.seq_len.value() == 32
    assert [row[1] for row in dock.runs.rows()] == [second, first]


def listed(dock) -> list[tuple[str, str]]:
    """The Runs tab's (run id, state) rows."""
    return [(row[COLUMNS.index("Run")], row[COLUMNS.index("State")]) for row in dock.runs.rows()]


def test_the_runs_tab_is_current_on_start_finish_delete_and_clear_without_refresh(
        qtbot, make_dock, monkeypatch):
    dock = make_dock()
    quiet(qtbot, dock)
    assert listed(dock) == [] and dock.runs.count.text().startswith("no training runs yet")
    dock.settings.epochs.setValue(500)
    dock.start_training()  # listed while it runs
    first = dock.current_run_id
    qtbot.waitUntil(lambda: listed(dock) == [(first, "running")], timeout=WAIT_MS)
    assert dock.runs.count.text() == "1 run"
    dock.stop()  # and as it ended
    quiet(qtbot, dock)
    qtbot.waitUntil(lambda: listed(dock) == [(first, "stopped")], timeout=WAIT_MS)
    second = train(qtbot, dock, 1)
    qtbot.waitUntil(lambda: listed(dock) == [(second, "completed"), (first, "stopped")],
                    timeout=WAIT_MS)
    monkeypatch.setattr(QMessageBox, "question", lambda *args: QMessageBox.Yes)
    entries = dict(palette_entries(dock))
    dock.runs.select(first)
    entries["Training: Delete the selected run…"].trigger()  # from the palette, as Delete…
    qtbot.waitUntil(lambda: listed(dock) == [(second, "completed")], timeout=WAIT_MS)
    dock.command_actions["train.clear"].trigger()
    qtbot.waitUntil(lambda: listed(dock) == [], timeout=WAIT_MS)
    assert dock.runs.count.text().startswith("no training runs yet")
    quiet(qtbot, dock)


def test_every_runs_button_is_a_command_of_the_palette_and_does_what_it_does(qtbot, make_dock,
                                                                           paths):
    dock = make_dock()
    quiet(qtbot, dock)
    run_id = train(qtbot, dock, 1)
    qtbot.waitUntil(lambda: len(dock.runs.rows()) == 1, timeout=WAIT_MS)
    entries = dict(palette_entries(dock))
    for action, _text in ACTIONS:
        label = f"Training: {command(f'runs.{action}').text}"
        assert entries[label] is dock.runs.buttons[action].defaultAction(), label
    dock.runs.table.clearSelection()  # the run's commands wait for a selected run
    assert not entries["Training: Open the selected run"].isEnabled()
    assert entries["Training: Refresh the run list"].isEnabled()
    dock.runs.select(run_id)
    assert all(entries[f"Training: {command(f'runs.{a}').text}"].isEnabled() for a, _ in ACTIONS)
    dock.curves.reset()
    entries["Training: Open the selected run"].trigger()  # as Open: its recorded curves
    qtbot.waitUntil(lambda: dock.curves.run_id == run_id, timeout=WAIT_MS)
    assert list(dock.curves.series["loss_train"].steps) == \
        [b["step"] for b in history(paths, run_id).batches]
    quiet(qtbot, dock)


def test_a_damaged_checkpoint_reads_damaged_with_its_reason_and_is_not_resumed(qtbot, make_dock,
                                                                               paths):
    store = CheckpointStore(paths.checkpoints_dir)
    good, bad = save_run(store, 1), save_run(store, 2)
    meta_path = store.snapshot_dir(bad) / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["config"]["d_ff"] = 128  # settings its weights do not have
    meta.update(resume={"epoch": 1, "batch": 0}, train_config={"epochs": 4})
    meta_path.write_text(json.dumps(meta))
    dock = make_dock()
    quiet(qtbot, dock)
    dock.refresh_runs()
    qtbot.waitUntil(lambda: len(dock.runs.rows()) == 2, timeout=WAIT_MS)
    cells = {row[1]: dict(zip(COLUMNS, row, strict=True)) for row in dock.runs.rows()}
    assert cells[bad]["State"] == "damaged" and cells[good]["State"] == "unknown"
    row = [s.run_id for s in dock.runs.runs].index(bad)
    tip = dock.runs.table.item(row, COLUMNS.index("State")).toolTip()
    assert tip.startswith("damaged: ") and "does not fit the model settings in meta.json" in tip
    assert "no history" in tip  # what the history says stays too
    dock.runs.select(bad)
    dock.runs.buttons["resume"].click()
    assert "does not fit the model settings in meta.json" in dock.runs.message.text()
    assert dock.state == "idle" and not dock.busy
