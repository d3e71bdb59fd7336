"""The window's side of the likely label errors (``training.suspect_list``): a suspect shown on
the chart (never one after a blind replay's clock), and keep / fix / delete made undoable
annotation changes of the mark as the store holds it now (``annotations.suspects.kept`` and
``fixed``), each logged."""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject

from ...annotations.horizon import seen_by
from ...annotations.model import Annotation
from ...annotations.store import AnnotationNotFound
from ...annotations.suspects import Suspect, fixed, kept, review_state
from ..chart.chart_widget import ChartWidget
from ..training.suspect_list import SuspectList
from .dock import AnnotationLayer
from .undoable_changes import describe

log = logging.getLogger(__name__)


class LabelReview(QObject):
    """Connects ``suspects`` (the Evaluation tab's list) to ``layer`` and ``chart`` (chart 1,
    whose series the evaluation read)."""

    def __init__(self, suspects: SuspectList, layer: AnnotationLayer, chart: ChartWidget):
        super().__init__(layer)
        self.suspects = suspects
        self.layer = layer
        self.chart = chart
        suspects.open_requested.connect(self.open)
        suspects.review_requested.connect(self.review)
        layer.undo_stack.indexChanged.connect(self.refresh)

    def _stored(self, annotation_id: str) -> Annotation | None:
        try:
            return self.layer.store.get(annotation_id)
        except AnnotationNotFound:
            return None

    def _mark(self, suspect: Suspect) -> Annotation | None:
        ann = self._stored(suspect.annotation_id)
        if ann is None:
            self.refresh()
            self.layer.message.emit("That mark is gone (deleted, or its change undone)")
        return ann

    def refresh(self, *_index) -> None:
        """Show what became of every suspect's mark (after a change, an undo or a redo)."""
        report = self.suspects.report
        if report is not None:
            self.suspects.show_states({s.annotation_id: review_state(
                s, self._stored(s.annotation_id)) for s in report.suspects})

    def open(self, suspect: Suspect) -> None:
        """Bring the chart forward on the mark, with a margin around it, its first candle under
        the cursor and the mark selected."""
        ann = self._mark(suspect)
        if ann is None:
            return
        if not seen_by(ann, self.layer.horizon.clock):
            self.layer.message.emit("In blind replay: that mark lies after the replay clock; "
                                    "end the replay to see it")
            return
        start, end = ann.span
        margin = max(end - start, 20 * ann.timeframe_ms)
        self.chart.take_focus()
        self.chart.show_time_range(start - margin, end + margin)
        self.layer.go_to(ann)

    def review(self, suspect: Suspect, action: str) -> None:
        """Keep, fix or delete the mark as one undoable change; the list says what was done."""
        ann = self._mark(suspect)
        if ann is None:
            return
        what = describe(ann)
        new: Annotation | None
        if action == "keep":
            new, text = kept(ann), f"keep the {what} (checked)"
        elif action == "fix":
            new = fixed(ann, suspect)
            text = f"fix the {what}: {suspect.fix_words}"
        else:
            new, text = None, f"delete the {what}"
        self.layer.replace(ann, new, text)
        log.info("likely label error %s: %s (mark %s; model reads %s on %d of %d held-out "
                 "candles)", action, text, ann.id, suspect.reading, suspect.off, suspect.tested)
        self.suspects.step()
