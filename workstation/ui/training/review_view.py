"""The Review tab: what to review next, as ``workstation annotations review-next`` ranks it
(``ml.review_next``: its rule and why): the stretches of candles not yet reviewed where the
model of the run shown would learn most, on the candles on screen when the run is of their
series. "Rank what to review next" (Shift+F8) ranks off the GUI thread (``run_task_view``);
Enter on a stretch opens it in blind replay at its start
(``open_requested``), so it is marked with the future hidden, and "Now" says which stretches
were opened.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QAbstractItemView, QTableWidgetItem

from ...market.series import SeriesKey
from ...ml.live import CandleSnapshot
from ...ml.review_next import RULE, ReviewQueue, ReviewStretch
from ...paths import AppPaths
from ...timeparse import format_minute
from ..command_registry import create_command_actions
from ..tables import cell_texts, rows_table
from .run_task_view import RunTaskView

COLUMNS = ("#", "Now", "From", "To", "Uncertainty", "Model reads", "Coverage gap", "Score")
HINT = (f"Rank the stretches you have not reviewed by what the run shown would learn most from: "
        f"{RULE}. Enter opens one in blind replay at its start.")


def rank_on_screen(paths: AppPaths, run_id: str,
                   shown: tuple[CandleSnapshot, SeriesKey] | None) -> ReviewQueue:
    """Run ``run_id``'s ranking (reads, predicts: off the GUI thread), on the candles ``shown``
    in the window when the run is of their series, else where the run had them."""
    from ...backtest.teaching_report import find_run
    from ...market.sources import load_series
    from ...ml.manifest import series_of
    from ...ml.review_next import rank_review_next

    record = find_run(run_id, paths.checkpoints_dir)
    series = series_of(record.manifest)
    if shown is not None and shown[1] == series:
        candles, key = shown[0].candles(), shown[1]
    else:
        candles, key = load_series(series.source, series.symbol, series.timeframe)
    return rank_review_next(record.run_id, record.store, record.checkpoint, record.manifest,
                            candles, key, annotations_db=paths.annotations_db)


def stretch_cells(k: int, s: ReviewStretch) -> tuple[str, ...]:
    return (str(k), "", format_minute(s.start_ts), format_minute(s.last_ts),
            f"{s.uncertainty:.2f}", s.regime, f"{s.coverage_gap:.2f}", f"{s.score:.2f}")


class ReviewView(RunTaskView):
    """The Review tab (see the module docstring). ``rank()`` ranks for the run shown;
    ``queue`` is the ranking shown (None: none); ``command_actions``: opening the selected
    stretch (Enter)."""

    open_requested = Signal(object)  # ReviewStretch

    def __init__(self, paths: AppPaths, run_shown: Callable[[], str | None],
                 shown: Callable[[], tuple[CandleSnapshot, SeriesKey] | None] = lambda: None,
                 parent=None):
        super().__init__(paths, run_shown, shown, button="Rank what to review next (the run "
                         "shown)", hint=HINT, name="review-next", parent=parent)
        self.button.clicked.connect(self.rank)
        self.queue: ReviewQueue | None = None
        self.table = rows_table("reviewQueue", COLUMNS)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.activated.connect(lambda _index: self._ask_open())
        self.table.doubleClicked.connect(lambda _index: self._ask_open())
        self.command_actions = create_command_actions(self, {"review.open": self._ask_open})
        self.layout_.addWidget(self.table, 1)

    def rank(self) -> bool:
        """Rank for the run shown, off the GUI thread; False if none can start."""
        return self.start(lambda run_id: partial(rank_on_screen, self.paths, run_id,
                                                 self.shown()),
                          "ranking with run {run}", "ranking with run {run}…") is not None

    def rows(self) -> list[tuple[str, ...]]:
        return cell_texts(self.table)

    def current(self) -> ReviewStretch | None:
        row = self.table.currentRow()
        if self.queue is None or not 0 <= row < len(self.queue.stretches):
            return None
        return self.queue.stretches[row]

    def _ask_open(self) -> None:
        stretch = self.current()
        if stretch is None:
            return
        self.table.setItem(self.table.currentRow(), COLUMNS.index("Now"),
                           QTableWidgetItem("opened"))
        self.open_requested.emit(stretch)

    def show_result(self, result: object) -> None:
        assert isinstance(result, ReviewQueue)  # rank_on_screen's
        self.queue = queue = result
        self.table.setRowCount(len(queue.stretches))
        for row, stretch in enumerate(queue.stretches):
            for column, text in enumerate(stretch_cells(row + 1, stretch)):
                item = QTableWidgetItem(text)
                item.setToolTip(queue.replay_command(stretch))
                self.table.setItem(row, column, item)
        none = "" if queue.stretches else (f"; no unreviewed stretch of {queue.length} candles "
                                          f"is left")
        self.status.setText(f"{queue.heading()}{none}. Enter opens a stretch in blind replay "
                            f"at its start.")
        if queue.stretches:
            self.table.selectRow(0)
            if self.isVisible():  # asked for just now: the keys go to the list
                self.table.setFocus()
