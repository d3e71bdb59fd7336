"""The Evaluation tab's likely label errors: the marks the walk-forward's held-out models read
as another class with confidence (``annotations.suspects``), ranked, lowest self-confidence
first, beside the verdicts of the heads that read them.

A row is a mark: its label and times, what the model reads instead, on how many of its
held-out candles, the mean probabilities of its label and of the reading, what a fix does, and
what became of it since ("Now": kept, deleted, now long ...). Enter (or a double click) shows
the mark on the chart (``open_requested``); K keeps it, Shift+F fixes it as the model reads
it, Shift+Del deletes it (``review_requested(suspect, action)``, ``ACTIONS``): the window
makes each an undoable annotation change (``ui.annotations.label_review``) and shows what
became of every mark after each change, undo and redo included (``show_states``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QSizePolicy,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...annotations.suspects import Suspect, SuspectReport
from ...ml.scoring import EDGE
from ...timeparse import format_minute
from ..command_registry import create_command_actions
from ..tables import cell_texts, rows_table

TITLE = "Likely label errors"
COLUMNS = ("#", "Now", "Mark", "From", "To", "Model reads", "Off / tested", "p(mark)",
           "p(reading)", "Fix")
ACTIONS = ("keep", "fix", "delete")
NO_EDGE_WORDS = ("the position head shows no edge on the test spans: where it disagrees with a "
                 "trade, that says as much about the model as about the mark")


def suspect_cells(k: int, s: Suspect) -> tuple[str, ...]:
    """The row texts of suspect ``s``, ranked ``k`` (1-based), as flagged ("Now" empty)."""
    mark = f"{s.label} trade" if s.head == "position" else f"{s.label} region"
    return (str(k), "", mark, format_minute(s.start_ts), format_minute(s.end_ts), s.reading,
            f"{s.off} / {s.tested}", f"{s.self_confidence:.2f}", f"{s.reading_confidence:.2f}",
            s.fix_words)


class SuspectList(QWidget):
    """See the module docstring. ``show_report(report, verdicts)`` fills it (None empties and
    hides it); ``current()`` is the selected suspect; ``show_states`` and ``step``;
    ``command_actions`` are its keys' QActions."""

    open_requested = Signal(object)  # Suspect
    review_requested = Signal(object, str)  # Suspect, one of ACTIONS

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.report: SuspectReport | None = None
        self.title = QLabel(f"<b>{TITLE}</b> (the held-out models read these marks otherwise)")
        self.words = QLabel()
        self.words.setWordWrap(True)
        self.words.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = rows_table("evaluationSuspects", COLUMNS)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.table.setMinimumHeight(160)
        self.table.activated.connect(lambda _index: self._ask_open())
        self.table.doubleClicked.connect(lambda _index: self._ask_open())
        handlers: dict[str, Callable[[], None]] = {
            "suspects.open": self._ask_open,
            **{f"suspects.{action}": partial(self._ask, action) for action in ACTIONS}}
        self.command_actions = create_command_actions(self, handlers)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.words)
        layout.addWidget(self.table)
        self.show_report(None)

    def show_report(self, report: SuspectReport | None,
                    verdicts: dict[str, str | None] | None = None) -> None:
        """Fill the table with ``report``'s suspects beside the heads' ``verdicts``."""
        self.report = report
        self.setVisible(report is not None)
        self.table.setRowCount(0)
        if report is None:
            self.words.clear()
            return
        verdicts = verdicts or {}
        lines = ["; ".join(f"{head} head on the test spans: {verdict or 'not scored'}"
                           for head, verdict in verdicts.items()), report.describe()]
        if verdicts.get("position") != EDGE:
            lines.append(NO_EDGE_WORDS)
        if report.suspects:
            lines.append("Enter: show on the chart (F8 comes back) · K: keep (it is right) · "
                         "Shift+F: fix as the model reads it · Shift+Del: delete · Ctrl+Z "
                         "undoes")
        self.words.setText("\n".join(line for line in lines if line))
        self.table.setRowCount(len(report.suspects))
        for row, suspect in enumerate(report.suspects, 1):
            for column, text in enumerate(suspect_cells(row, suspect)):
                item = QTableWidgetItem(text)
                item.setToolTip(suspect.describe())
                self.table.setItem(row - 1, column, item)
        if report.suspects:
            self.table.selectRow(0)

    def current(self) -> Suspect | None:
        row = self.table.currentRow()
        if self.report is None or not 0 <= row < len(self.report.suspects):
            return None
        return self.report.suspects[row]

    def show_states(self, states: dict[str, str]) -> None:
        """Write what became of each mark (annotation id to ``suspects.review_state``) in the
        "Now" column."""
        if self.report is None:
            return
        for row, suspect in enumerate(self.report.suspects):
            if suspect.annotation_id in states:
                self.table.setItem(row, COLUMNS.index("Now"),
                                   QTableWidgetItem(states[suspect.annotation_id]))

    def step(self) -> None:
        """Select the next row (after an action on the current one)."""
        row = self.table.currentRow()
        if 0 <= row < self.table.rowCount() - 1:
            self.table.selectRow(row + 1)

    def rows(self) -> list[tuple[str, ...]]:
        return cell_texts(self.table)

    def _ask_open(self) -> None:
        suspect = self.current()
        if suspect is not None:
            self.open_requested.emit(suspect)

    def _ask(self, action: str) -> None:
        suspect = self.current()
        if suspect is not None:
            self.review_requested.emit(suspect, action)
