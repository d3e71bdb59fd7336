"""The latest numbers of a training run as text, beside its curves (``MetricReadout``):
epoch, step, losses, each head's accuracy beside its baselines, learning rate, gradient norm,
throughput and live mode's line. Anything without data reads "—"; a trader head with too
few marks on validation reads "too few marks (...)" there (``ml.scoring``).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QWidget

from ...display import NO_DATA, number, percent
from ...ml.events import BatchEnd, EpochEnd, MarkCount, RunStarted
from ...ml.history.reader import history_points
from ...ml.scoring import describe, too_few_text
from ...ml.targets import CLASS_HEADS


def _recorded_marks(score) -> MarkCount | None:
    """The ``marks`` of a recorded head score, when it holds them whole."""
    marks = score.get("marks") if isinstance(score, dict) else None
    try:
        return MarkCount(**marks) if isinstance(marks, dict) else None
    except TypeError:
        return None


class MetricReadout(QWidget):
    """The latest numbers as text: "—" for anything without data. Each head's accuracy
    stands beside its best baseline (on validation: with the margin's interval and whether
    it shows an edge), in the words ``ml.scoring.describe`` gives the CLI too."""

    ROWS = (("epoch", "Epoch"), ("step", "Step"), ("loss", "Train loss"),
            ("val_loss", "Validation loss"), ("candle", "Candle accuracy"),
            ("trend", "Trend accuracy"), ("position", "Position accuracy"),
            ("regime", "Regime accuracy"), ("lr", "Learning rate"),
            ("grad_norm", "Gradient norm"), ("rate", "Samples/s"), ("live", "Live"))

    def __init__(self, parent=None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(1)
        self.values: dict[str, QLabel] = {}
        for row, (key, title) in enumerate(self.ROWS):
            name = QLabel(title)
            name.setStyleSheet("color: palette(mid)")
            name.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            value = QLabel(NO_DATA)
            value.setWordWrap(True)
            value.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(name, row, 0)
            grid.addWidget(value, row, 1)
            self.values[key] = value
        grid.setColumnStretch(1, 1)
        self._epochs: int | None = None
        self._train: dict = {}
        self._val: dict = {}

    def text(self, key: str) -> str:
        return self.values[key].text()

    def reset(self, epochs: int | None = None) -> None:
        for label in self.values.values():
            label.setText(NO_DATA)
        self._epochs = epochs
        self._train = {}
        self._val = {}

    def add_events(self, events) -> None:
        v = self.values
        for event in events:
            if isinstance(event, RunStarted):
                self._epochs = int(event.train_config.get("epochs") or 0) or None
            elif isinstance(event, BatchEnd):
                m = event.metrics
                v["epoch"].setText(self._epoch_text(event.epoch + 1, event.batch,
                                                    event.batches_per_epoch))
                v["step"].setText(str(event.step))
                v["loss"].setText(number(m.loss))
                v["lr"].setText(number(event.lr, ".2e"))
                v["grad_norm"].setText(number(event.grad_norm, ".3g"))
                v["rate"].setText(number(event.samples_per_s, ".0f"))
                self._train = dict(m.heads)
                self._accuracies()
            elif isinstance(event, EpochEnd):
                v["val_loss"].setText(number(event.val.loss))
                self._val = dict(event.val.heads)
                self._accuracies()

    def show_recorded(self, history) -> None:
        """The last recorded numbers of a run opened from its history (``ml.history.reader``)."""
        self.reset()
        batches, epochs, _wall = history_points(history)
        v = self.values
        if history.batches:
            last = history.batches[-1]
            point = batches[-1]
            epochs_total = ((history.markers[0].get("train_config") or {}).get("epochs")
                            if history.markers else None)
            self._epochs = epochs_total if isinstance(epochs_total, int) else None
            v["epoch"].setText(self._epoch_text(int(last.get("epoch", 0)) + 1,
                                                int(last.get("batch") or 0),
                                                int(last.get("batches_per_epoch") or 0)))
            v["step"].setText(str(point.step))
            v["loss"].setText(number(point.loss))
            v["lr"].setText(number(point.lr, ".2e"))
            v["grad_norm"].setText(number(point.grad_norm, ".3g"))
            v["rate"].setText(number(point.samples_per_s, ".0f"))
        if epochs:
            epoch_point = epochs[-1]
            v["val_loss"].setText(number(epoch_point.loss))
            recorded = (history.epochs[-1].get("val") or {}).get("heads") or {}
            for head in CLASS_HEADS:
                accuracy = epoch_point.accuracy.get(head)
                marks = _recorded_marks(recorded.get(head))
                if marks is not None and marks.too_few:
                    v[head].setText(f"val: {too_few_text(marks)} · recorded")
                if accuracy is None:
                    continue
                name, best = epoch_point.best.get(head, (None, None))
                parts = [f"val {percent(accuracy)}"]
                if name is not None:
                    parts.append(f"best baseline {name} {percent(best)}")
                parts.append(f"majority {percent(epoch_point.majority.get(head))}")
                v[head].setText(f"{parts[0]} ({'; '.join(parts[1:])}) · recorded")

    def _epoch_text(self, epoch: int, batch: int, batches: int) -> str:
        total = f"/{self._epochs}" if self._epochs else ""
        return f"{epoch}{total} (batch {batch}/{batches})"

    def _accuracies(self) -> None:
        for head in CLASS_HEADS:
            parts = [describe(split, scores[head]) for split, scores in
                     (("train", self._train), ("val", self._val))
                     if head in scores and (scores[head].accuracy is not None
                                            or scores[head].too_few)]
            self.values[head].setText("; ".join(parts) if parts else NO_DATA)

    def set_live(self, text: str) -> None:
        self.values["live"].setText(text or NO_DATA)
