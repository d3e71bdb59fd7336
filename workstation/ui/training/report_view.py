"""The Report tab: "did it learn my marks?" for the run shown, as ``workstation report`` says
it (``backtest.teaching_report``), on the candles on screen when the run is of their series:
marks by span, each trader head beside its baselines, the entries and exits, and the held-out
backtest. "Report on the run shown" makes it off the GUI thread (``run_task_view``); the text is
read-only.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QPlainTextEdit

from ...market.series import SeriesKey
from ...ml.live import CandleSnapshot
from ...paths import AppPaths
from .run_task_view import RunTaskView
from .worker import TaskFailed

HINT = "Report on the run shown: its marks, scores beside baselines and held-out backtest"


def report_lines(paths: AppPaths, run_id: str,
                 shown: tuple[CandleSnapshot, SeriesKey] | None = None) -> list[str]:
    """Run ``run_id``'s teaching report as text (reads, predicts: off the GUI thread), on the
    candles ``shown`` in the window when the run is of their series."""
    from ...backtest.teaching_report import find_run, teaching_report

    record = find_run(run_id, paths.checkpoints_dir)
    on_screen = None if shown is None else (shown[0].candles(), shown[1])
    return teaching_report(record, annotations_db=paths.annotations_db,
                           candle_cache=paths.candle_cache, shown=on_screen).lines()


class ReportView(RunTaskView):
    """The Report tab (see the module docstring)."""

    def __init__(self, paths: AppPaths, run_shown: Callable[[], str | None],
                 shown: Callable[[], tuple[CandleSnapshot, SeriesKey] | None] = lambda: None,
                 parent=None):
        super().__init__(paths, run_shown, shown, button="Report on the run shown", hint=HINT,
                         name="report", parent=parent)
        self.button.clicked.connect(self.refresh)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.layout_.addWidget(self.text, 1)
        self._asked: str | None = None  # the run whose report is being made

    def refresh(self) -> bool:
        """Make the report of the run shown, off the GUI thread; False if none can start."""
        asked = self.start(lambda run_id: partial(report_lines, self.paths, run_id,
                                                  self.shown()),
                           "the report on run {run}", "reporting on run {run}…")
        if asked is None:
            return False
        self._asked = asked
        return True

    def show_result(self, result: object) -> None:
        assert isinstance(result, list)  # report_lines's
        self.status.setText(f"run {self._asked}, as `workstation report {self._asked}` "
                            f"prints it")
        self.text.setPlainText("\n".join(result))

    def show_failure(self, failed: TaskFailed) -> None:
        super().show_failure(failed)
        self.text.clear()
