"""The "Marks by span" box: where a new run's training, validation and held-out spans would lie
and what each holds of the marks (``ml.job.preview_spans``: the trainer's own rule), before any
run starts, and a started run's own spans once it has begun.

The preview is made off the GUI thread (``worker.TaskWorker``, its result through the box's own
relay) ``DEBOUNCE_MS`` after it is asked for (the workspace shown, a setting changed, new
candles), once for a burst of asks; a run that would be refused says why in the box.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import QGroupBox, QLabel, QVBoxLayout

from ...errors import WorkstationError
from ...market.series import SeriesKey
from ...ml.events import RunStarted
from ...ml.job import SpansPreview, TrainingRequest, preview_spans
from ...ml.live import CandleSnapshot
from ...ml.split import describe_spans
from .worker import ProgressRelay, TaskFailed, TaskWorker, WorkerThread

DEBOUNCE_MS = 300
WAITING = "Where the marks fall shows once candles are open"
WARNING_STYLE = "color: #ffa726"


def preview(request: TrainingRequest, shown: tuple[CandleSnapshot, SeriesKey],
            annotations_db: Path) -> SpansPreview:
    """``preview_spans`` of the candles on screen (off the GUI thread)."""
    snapshot, key = shown
    return preview_spans(request, snapshot.candles(), key, annotations_db=annotations_db)


class MarksBox(QGroupBox):
    """See the module docstring. ``request()`` is the settings' ``TrainingRequest`` (it may
    refuse with ``WorkstationError``), ``shown()`` the closed candles on screen and their series
    (None: none)."""

    def __init__(self, request: Callable[[], TrainingRequest],
                 shown: Callable[[], tuple[CandleSnapshot, SeriesKey] | None],
                 annotations_db: Path, parent=None):
        super().__init__("Marks by span", parent)
        self.request, self.shown, self.annotations_db = request, shown, annotations_db
        self.label = QLabel(WAITING)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warning = QLabel()
        self.warning.setObjectName("marksPreviewWarning")
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet(WARNING_STYLE)
        self.warning.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addWidget(self.warning)
        self.relay = ProgressRelay(self)
        self.relay.delivered.connect(self._delivered)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self._start)
        self._task: WorkerThread | None = None
        self._again = False  # asked again while a preview was being made
        self.previews = 0  # previews shown (tests wait on it)

    def refresh(self) -> None:
        """Preview the spans of a new run soon (once for a burst of asks)."""
        self._debounce.start()

    def show_run(self, event: RunStarted) -> None:
        """A started run's own spans (what it trains on, not a preview)."""
        self._debounce.stop()
        lines = [f"run {event.run_id}:", *describe_spans(event.spans)]
        if event.split_rule:
            lines.append(f"({event.split_rule})")
        self._show(lines, ())

    def join(self, timeout_s: float) -> bool:
        """Stop asking and wait up to ``timeout_s`` for a preview under way; True if none
        runs."""
        self._debounce.stop()
        self._again = False
        return self._task is None or self._task.join(timeout_s)

    def _start(self) -> None:
        if self._task is not None:
            self._again = True
            return
        shown = self.shown()
        if shown is None or not len(shown[0]):
            self._show([WAITING], ())
            return
        try:
            request = self.request()
        except WorkstationError as exc:
            self._show(["A new run would be refused:"], (str(exc),))
            return
        task = partial(preview, request, shown, self.annotations_db)
        self._task = WorkerThread(TaskWorker(task, "the marks-by-span preview", self.relay),
                                  "marks preview")
        self._task.start()

    @Slot(list)
    def _delivered(self, items: list) -> None:
        for item in items:
            if isinstance(item, TaskFailed):
                self._show(["Where the marks fall could not be worked out:"], (item.message,))
            elif isinstance(item, SpansPreview):
                if item.refused is not None:
                    self._show(["A new run would be refused:"], (item.refused,))
                else:
                    self._show(["A new run would have:", *item.lines], item.warnings)
        self._task = None
        self.previews += 1
        if self._again:
            self._again = False
            self._debounce.start()

    def _show(self, lines: list[str], warnings: tuple[str, ...]) -> None:
        self.label.setText("\n".join(lines))
        self.warning.setText("\n".join(f"⚠ {w}" for w in warnings))
        self.warning.setVisible(bool(warnings))
