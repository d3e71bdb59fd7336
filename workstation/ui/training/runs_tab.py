"""The Runs tab's commands: list, open, overlay, resume, restart, delete and export the runs
of the checkpoint store (``runs.RunList`` shows them and asks). The list follows the panel's
own doings without a Refresh: it is read again when a run starts, after each of its epochs,
when it ends, and after a delete or a clear.

``RunsTab`` is mixed into ``panel.TrainingPanel``, whose commands these are. Reads and
exports run off the GUI thread (``worker.TaskWorker``); their results come back through the
panel's relay, and its event dispatch hands them to ``_task_result`` and ``_run_curves``.
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from ...display import size
from ...errors import WorkstationError
from ...viewmodel.training_session import restart_settings
from .runs import Exported, RunsListed, export_run, list_store_runs
from .worker import RunCurves, TaskFailed, TaskWorker, WorkerThread, read_run_curves

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...ml.checkpoints import CheckpointStore
    from ...paths import AppPaths
    from .confusion import ConfusionMatrices
    from .curves import TrainingCurves
    from .metric_readout import MetricReadout
    from .runs import RunList
    from .settings_form import TrainingSettings
    from .worker import ProgressRelay

log = logging.getLogger(__name__)


class RunsTab:
    """The Runs tab's commands (see the module docstring). Its host, the panel, has the run
    list (``runs``), the curves, readout and confusion views, the paths and the relay,
    ``current_run_id``, ``provenance``, ``busy``, ``_tasks`` (the reads and exports under
    way), ``_wanted_open``, ``_shut_down``, ``_task_finished`` (the slot a task's end goes to)
    and the job commands (``launchers.JobLaunchers``)."""

    if TYPE_CHECKING:  # what the panel provides (``panel.TrainingPanel``)
        paths: AppPaths
        settings: TrainingSettings
        relay: ProgressRelay
        curves: TrainingCurves
        readout: MetricReadout
        confusion: ConfusionMatrices
        runs: RunList
        current_run_id: str | None
        provenance: str | None
        _tasks: list[WorkerThread]
        _listings: int  # the run listings asked for
        _listed: int  # the newest listing shown
        _wanted_open: str | None
        _shut_down: bool

        @property
        def busy(self) -> bool: ...
        def _refuse(self, why: str) -> None: ...
        def _show_run(self) -> None: ...
        def _task_finished(self) -> None: ...
        # launchers.JobLaunchers
        def start_training(self) -> None: ...
        def _can_start(self) -> bool: ...
        def _store(self) -> CheckpointStore: ...
        def _start_training(self, resume_run: str | None) -> None: ...

    @property
    def tasks_running(self) -> bool:
        """A read or export of a run is under way (or its result not yet shown)."""
        return bool(self._tasks)

    def _run_task(self, task: Callable[[], object], what: str) -> None:
        if self._shut_down:
            return
        runner = WorkerThread(TaskWorker(task, what, self.relay), what)
        runner.finished.connect(self._task_finished)
        self._tasks.append(runner)
        runner.start()

    @Slot(str, str)
    def _run_action(self, action: str, run_id: str) -> None:
        match action:
            case "refresh":
                self.refresh_runs()
            case "open":
                self.open_run(run_id)
            case "compare":
                self.compare_run(run_id)
            case "resume":
                self.resume_run(run_id)
            case "restart":
                self.restart_from(run_id)
            case "delete":
                self.delete_run(run_id)
            case "tensorboard" | "csv":
                self.export_run(run_id, action)

    def refresh_runs(self) -> None:
        """List the runs again (read off the GUI thread; the Runs tab fills when done)."""
        self._listings += 1
        self._run_task(partial(list_store_runs, self.paths.checkpoints_dir, self._listings),
                       "listing the runs")

    def open_run(self, run_id: str) -> bool:
        """Show run ``run_id``'s recorded curves (not while a run is active: its own curves
        are shown then; overlay it instead)."""
        if self.busy:
            self._refuse(f"run {run_id} can be opened once this one has stopped; overlay it "
                         f"to see it beside this one")
            return False
        self._wanted_open = run_id
        self._run_task(partial(read_run_curves, self.paths.checkpoints_dir, run_id, "open"),
                       f"reading run {run_id}")
        return True

    def compare_run(self, run_id: str) -> None:
        """Draw run ``run_id`` beside the run shown (again on the same run: take it away)."""
        if self.curves.compare_run == run_id or run_id == self.curves.run_id:
            self.curves.clear_compare()
            self.runs.say("overlay cleared")
            return
        self._run_task(partial(read_run_curves, self.paths.checkpoints_dir, run_id, "compare"),
                       f"reading run {run_id}")

    def resume_run(self, run_id: str) -> None:
        """Continue run ``run_id`` from its checkpoint, up to the panel's Epochs."""
        if not self._can_start():
            self._refuse("a run is active: stop it before resuming another")
            return
        try:
            self._store().check_resumable(run_id, self.settings.epochs.value())
        except WorkstationError as exc:
            self._refuse(str(exc))
            self.runs.say(str(exc))
            return
        self._start_training(resume_run=run_id)

    def restart_from(self, run_id: str) -> None:
        """A new run with run ``run_id``'s recorded settings (read first, off the thread)."""
        if not self._can_start():
            self._refuse("a run is active: stop it before starting another")
            return
        self._run_task(partial(read_run_curves, self.paths.checkpoints_dir, run_id, "restart"),
                       f"reading run {run_id}")

    def delete_run(self, run_id: str) -> bool:
        """Delete run ``run_id``'s checkpoints and history after a confirmation that gives
        their size; the active run cannot be deleted. Returns whether it was deleted."""
        if self.busy and run_id == self.current_run_id:
            self._refuse(f"run {run_id} is active: stop it before deleting it")
            return False
        store = self._store()
        recorded = next((r.size_bytes for r in store.list_runs() if r.run_id == run_id),
                        None)
        if recorded is None:
            self._refuse(f"there is no run {run_id}")
            self.refresh_runs()
            return False
        answer = QMessageBox.question(
            cast(QWidget, self), "Delete run",
            f"Delete run {run_id}: its checkpoints and its history "
            f"({size(recorded)}) in {store.run_dir(run_id)}?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        if answer != QMessageBox.StandardButton.Yes:
            return False
        try:
            freed = store.delete_run(run_id)
        except WorkstationError as exc:
            self._refuse(str(exc))
            self.runs.say(str(exc))
            return False
        log.info("deleted run %s (%s)", run_id, size(freed))
        self.runs.say(f"deleted run {run_id} ({size(freed)})")
        if self.curves.compare_run == run_id:
            self.curves.clear_compare()
        if run_id == self.current_run_id:
            self.current_run_id = None
            self._show_run()
            if not self.busy:
                self.curves.reset()
                self.readout.reset()
        self.refresh_runs()
        return True

    def export_run(self, run_id: str, kind: str, path: str | None = None) -> bool:
        """Export run ``run_id``: ``tensorboard`` (event files into the folder ``path``) or
        ``csv`` (the file ``path``); without ``path`` a dialog asks. The export runs off the
        GUI thread; the Runs tab says where it went."""
        if path is None:
            home = str(Path.home())
            if kind == "csv":
                path, _ = QFileDialog.getSaveFileName(
                    cast(QWidget, self), f"Export run {run_id} as CSV",
                    str(Path(home) / f"{run_id}.csv"), "CSV files (*.csv);;All files (*)")
            else:
                path = QFileDialog.getExistingDirectory(
                    cast(QWidget, self), f"Export run {run_id} for TensorBoard (a folder)", home)
            if not path:
                return False
        self.runs.say(f"exporting run {run_id} to {path}…")
        self._run_task(partial(export_run, self.paths.checkpoints_dir, run_id, kind, path),
                       f"exporting run {run_id}")
        return True

    def _task_result(self, item) -> None:
        match item:
            case RunsListed() if item.asked >= self._listed:  # not after a newer one
                self._listed = item.asked
                self.runs.show_runs(item.runs)
            case Exported():
                log.info("%s", item.message)
                self.runs.say(item.message)
            case TaskFailed():
                self.runs.say(f"{item.what} failed: {item.message}")

    def _run_curves(self, item: RunCurves) -> None:
        """A run's recorded history, read for ``item.purpose``."""
        if item.history is None:
            log.warning("run %s: %s", item.run_id, item.error)
            self.runs.say(f"run {item.run_id}: {item.error}")
            if item.purpose == "restart":
                self._refuse(f"cannot restart run {item.run_id}: {item.error}")
            return
        match item.purpose:
            case "open":
                if self.busy or item.run_id != self._wanted_open:
                    return  # a run started since: its own curves are shown
                self._wanted_open = None
                self.current_run_id = item.run_id
                self.provenance = item.history.provenance
                self._show_run()
                self.curves.show_history(item.run_id, item.history)
                self.readout.show_recorded(item.history)
                self.confusion.reset()
                self.runs.set_shown(item.run_id)
            case "resume":
                if item.run_id == self.current_run_id:
                    self.curves.show_history(item.run_id, item.history)
            case "compare":
                self.curves.compare_with(item.run_id, item.history)
                self.runs.say(f"run {item.run_id} is drawn beside run "
                              f"{self.curves.run_id or '—'} (grey, dashed)")
            case "restart":
                start = restart_settings(item.history.markers)
                if start is None or not self._can_start():
                    self._refuse(f"cannot restart run {item.run_id}: "
                                 + ("no settings recorded" if start is None else "busy"))
                    return
                self.settings.apply_recorded(start.get("preset"),
                                             start.get("model_config") or {},
                                             start.get("train_config") or {},
                                             start.get("features") or {})
                self.start_training()
