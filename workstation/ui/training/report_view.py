"""The Report tab: "did it learn my marks?" for the run shown, as ``workstation report`` says
it (``backtest.teaching_report``), on the candles on screen when the run is of their series:
marks by span, each trader head beside its baselines, the entries and exits, and the held-out
backtest. "Report on the run shown" makes it off the GUI thread (``worker.TaskWorker``, its
result through the view's own relay); the text is read-only.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from ...market.series import SeriesKey
from ...ml.live import CandleSnapshot
from ...paths import AppPaths
from .worker import ProgressRelay, TaskFailed, TaskWorker, WorkerThread

NO_RUN = "no run shown: train one, or open one in the Runs tab"
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


class ReportView(QWidget):
    """The Report tab (see the module docstring); ``run_shown()`` names the run shown (None:
    none)."""

    def __init__(self, paths: AppPaths, run_shown: Callable[[], str | None],
                 shown: Callable[[], tuple[CandleSnapshot, SeriesKey] | None] = lambda: None,
                 parent=None):
        super().__init__(parent)
        self.paths = paths
        self.run_shown = run_shown
        self.shown = shown  # the closed candles on screen and their series (None: none)
        self.button = QPushButton("Report on the run shown")
        self.button.clicked.connect(self.refresh)
        self.status = QLabel(HINT)
        self.status.setWordWrap(True)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout = QVBoxLayout(self)
        layout.addWidget(self.button)
        layout.addWidget(self.status)
        layout.addWidget(self.text, 1)
        self.relay = ProgressRelay(self)
        self.relay.delivered.connect(self._delivered)
        self._task: WorkerThread | None = None
        self._asked: str | None = None  # the run whose report is being made

    @property
    def busy(self) -> bool:
        """A report is being made (or its result not yet shown)."""
        return self._asked is not None

    def refresh(self) -> bool:
        """Make the report of the run shown, off the GUI thread; False if none can start."""
        run_id = self.run_shown()
        if run_id is None:
            self.status.setText(NO_RUN)
            return False
        if self.busy:
            return False
        self._asked = run_id
        self.button.setEnabled(False)
        self.status.setText(f"reporting on run {run_id}…")
        task = partial(report_lines, self.paths, run_id, self.shown())
        self._task = WorkerThread(TaskWorker(task, f"the report on run {run_id}", self.relay),
                                  "report")
        self._task.start()
        return True

    def join(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for a report under way; True if none runs."""
        return self._task is None or self._task.join(timeout_s)

    @Slot(list)
    def _delivered(self, items: list) -> None:
        for item in items:
            if isinstance(item, TaskFailed):
                self.status.setText(f"{item.what} failed: {item.message}")
                self.text.clear()
            else:
                self.status.setText(f"run {self._asked}, as `workstation report "
                                    f"{self._asked}` prints it")
                self.text.setPlainText("\n".join(item))
        self._asked = None
        self.button.setEnabled(True)
