"""A tab that works on the run shown off the GUI thread: the Report and Review tabs. A button
starts the task for the run shown (``start``), a status line says what it does, one task runs
at a time (``worker.OneTask``) and the result reaches the subclass's ``show_result``."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from ...market.series import SeriesKey
from ...ml.live import CandleSnapshot
from ...paths import AppPaths
from .worker import OneTask, TaskFailed

NO_RUN = "no run shown: train one (F5), or open one in the Runs tab"


class RunTaskView(QWidget):
    """See the module docstring: ``run_shown()`` names the run shown (None: none), ``shown()``
    the closed candles on screen and their series; ``button``, ``status``, ``layout`` (the
    subclass adds what shows the result), ``busy`` and ``join``."""

    def __init__(self, paths: AppPaths, run_shown: Callable[[], str | None],
                 shown: Callable[[], tuple[CandleSnapshot, SeriesKey] | None], *,
                 button: str, hint: str, name: str, parent=None):
        super().__init__(parent)
        self.paths = paths
        self.run_shown = run_shown
        self.shown = shown
        self.button = QPushButton(button)
        self.status = QLabel(hint)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.layout_ = QVBoxLayout(self)
        self.layout_.addWidget(self.button)
        self.layout_.addWidget(self.status)
        self.task = OneTask(name, self)
        self.task.done.connect(self._delivered)

    @property
    def busy(self) -> bool:
        """A task runs (or its result is not yet shown)."""
        return self.task.busy

    def start(self, make: Callable[[str], Callable[[], object]], what: str,
              doing: str) -> str | None:
        """Start ``make(run_id)`` for the run shown, off the GUI thread, named ``what`` and
        said as ``doing`` (both with ``{run}``); the run, or None if none started."""
        run_id = self.run_shown()
        if run_id is None:
            self.status.setText(NO_RUN)
            return None
        if not self.task.start(make(run_id), what.format(run=run_id)):
            return None
        self.button.setEnabled(False)
        self.status.setText(doing.format(run=run_id))
        return run_id

    def join(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for a task under way; True if none runs."""
        return self.task.join(timeout_s)

    def show_result(self, result: object) -> None:
        raise NotImplementedError

    def show_failure(self, failed: TaskFailed) -> None:
        self.status.setText(f"{failed.what} failed: {failed.message}")

    @Slot(object)
    def _delivered(self, item: object) -> None:
        if isinstance(item, TaskFailed):
            self.show_failure(item)
        else:
            self.show_result(item)
        self.button.setEnabled(True)
