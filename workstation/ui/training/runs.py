"""The Runs tab of the training workspace: every training run of the checkpoint store, newest
first, as its history tells it (``ml.history.listing.list_runs``): when it started, its state, data,
preset, steps, best validation loss and evaluation verdict. A run whose checkpoint fails the
store's check reads "damaged" as its state, the reason in its tooltip.

A run can be opened (its recorded curves), overlaid on the run shown, resumed from its
checkpoint, restarted (a new run with its settings), deleted with its checkpoints and
history (after a confirmation naming its size), and exported: TensorBoard event files into a
folder, or one CSV file. This widget shows the list and asks; the training panel does what
is asked, off the GUI thread where it reads or writes files. Each button is a command of the
keymap (``runs.open`` ...), so the ``Ctrl+K`` palette offers what the buttons do.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QLabel,
    QSizePolicy,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...display import NO_DATA, number
from ...timeparse import format_minute
from ..command_registry import create_command_actions
from ..tables import cell_texts, rows_table

COLUMNS = ("Started (UTC)", "Run", "State", "Data", "Preset", "Steps", "Best val loss",
           "Verdict")
# the buttons: the action asked for (command ``runs.<action>``) and the button's short text
ACTIONS = (("open", "Open"), ("compare", "Overlay"), ("resume", "Resume"),
           ("restart", "Restart"), ("delete", "Delete…"),
           ("tensorboard", "Export TensorBoard…"), ("csv", "Export CSV…"),
           ("refresh", "Refresh"))


@dataclass(frozen=True)
class RunsListed:
    """The runs of the store (``ml.history.listing.RunSummary``, newest first); ``asked``
    counts the listings asked for, so one that ends after a newer one is not shown."""

    runs: list
    asked: int = 0


@dataclass(frozen=True)
class Exported:
    """Run ``run_id`` was exported as ``kind`` (``tensorboard`` or ``csv``) to ``path``."""

    run_id: str
    kind: str
    path: str
    message: str


def list_store_runs(checkpoints_root, asked: int = 0) -> RunsListed:
    """Every run of the default model's store (reads each history: off the GUI thread);
    ``asked``: the listing's number (``RunsListed.asked``)."""
    from ...ml.checkpoints import CheckpointStore
    from ...ml.history.listing import list_runs

    return RunsListed(list_runs(CheckpointStore(checkpoints_root)), asked)


def export_run(checkpoints_root, run_id: str, kind: str, path: str) -> Exported:
    """Export run ``run_id`` as ``kind`` to ``path`` (off the GUI thread: TensorBoard's
    writer imports torch)."""
    from ...ml.checkpoints import CheckpointStore
    from ...ml.history.export import export_csv, export_tensorboard
    from ...ml.history.reader import read_history

    history = read_history(CheckpointStore(checkpoints_root).run_dir(run_id))
    if kind == "csv":
        rows = export_csv(history, path)
        return Exported(run_id, kind, path, f"wrote {rows} rows of run {run_id} to {path}")
    if kind == "tensorboard":
        written = export_tensorboard(history, path)
        return Exported(run_id, kind, str(written),
                        f"wrote the TensorBoard events of run {run_id} to {written}")
    raise ValueError(f"unknown export {kind!r}")


def _cells(summary) -> tuple[str, ...]:
    started = format_minute(summary.started) if summary.started is not None else NO_DATA
    loss = number(summary.best_val_loss, ".4f")
    verdict = summary.verdict
    verdict = f"{verdict} ({summary.verdict_source})" if verdict else NO_DATA
    state = "damaged" if summary.damaged else summary.state
    return (started, summary.run_id, state, str(summary.provenance or NO_DATA),
            summary.preset or NO_DATA, number(summary.steps, ","), loss, verdict)


class RunList(QWidget):
    """See the module docstring. ``action_requested(action, run_id)`` for the buttons
    (``ACTIONS``; ``refresh`` with an empty run id), whose commands are ``command_actions``
    (id -> QAction, enabled while a run is selected); ``show_runs`` fills the table;
    ``select``/``selected_run``; ``rows()`` gives the table's texts."""

    action_requested = Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.runs: list = []
        self.shown_run: str | None = None
        self.table = rows_table("runsTable", COLUMNS)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.table.itemDoubleClicked.connect(lambda _item: self._ask("open"))
        self.command_actions = create_command_actions(
            self, {f"runs.{action}": partial(self._ask, action) for action, _ in ACTIONS})
        self.buttons: dict[str, QToolButton] = {}
        row = QGridLayout()
        row.setSpacing(4)
        for i, (action, text) in enumerate(ACTIONS):
            command = self.command_actions[f"runs.{action}"]
            command.setIconText(text)
            button = QToolButton()
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
            button.setDefaultAction(command)  # the button is its command
            self.buttons[action] = button
            row.addWidget(button, i // 4, i % 4)
        self.count = QLabel("Runs appear here once the device is ready")
        self.message = QLabel()  # what the last command did
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(row)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.count)
        layout.addWidget(self.message)
        self._selection_changed()

    def show_runs(self, runs: list) -> None:
        """Fill the table (``RunSummary`` list, newest first), keeping the selection."""
        keep = self.selected_run()
        self.runs = list(runs)
        self.table.setRowCount(len(self.runs))
        for r, summary in enumerate(self.runs):
            why = [f"damaged: {summary.damaged}"] if summary.damaged else []
            why += [summary.problem] if summary.problem else []
            for c, text in enumerate(_cells(summary)):
                item = QTableWidgetItem(text)
                if why:
                    item.setToolTip("\n".join(why))
                elif c == COLUMNS.index("Verdict") and summary.verdicts:
                    item.setToolTip("\n".join(f"{head}: {verdict or NO_DATA}"
                                              for head, verdict in summary.verdicts.items()))
                if summary.run_id == self.shown_run:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, c, item)
        self.count.setText(f"{len(self.runs)} run{'s' if len(self.runs) != 1 else ''}"
                           if self.runs else "no training runs yet: start one (F5)")
        if keep is not None:
            self.select(keep)
        self._selection_changed()

    def rows(self) -> list[tuple[str, ...]]:
        return cell_texts(self.table)

    def select(self, run_id: str) -> bool:
        for r, summary in enumerate(self.runs):
            if summary.run_id == run_id:
                self.table.selectRow(r)
                return True
        return False

    def selected_run(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or rows[0].row() >= len(self.runs):
            return None
        return self.runs[rows[0].row()].run_id

    def set_shown(self, run_id: str | None) -> None:
        """Mark the run whose curves are shown (bold)."""
        if run_id != self.shown_run:
            self.shown_run = run_id
            self.show_runs(self.runs)

    def say(self, text: str) -> None:
        self.message.setText(text)

    def _selection_changed(self) -> None:
        chosen = self.selected_run() is not None
        for command_id, action in self.command_actions.items():
            action.setEnabled(chosen or command_id == "runs.refresh")

    def _ask(self, action: str, *_checked) -> None:
        run_id = self.selected_run()
        if run_id is None and action != "refresh":
            return
        self.action_requested.emit(action, run_id or "")
