"""The validation confusion matrices of the class heads, updated at each validation.

One table per head of ``ml.targets.CLASS_HEADS``: a row per true class, a column per predicted
class (names from ``ml.targets.CLASSES``), each cell the count of validation candles and its
share of the row; the right answers (the diagonal) are tinted green, the wrong ones red, as
strongly as their share. A head with no validation targets (the trader's heads without
annotations) says so instead; a trader head with too few marks to score
(``ml.scoring.MIN_MARKS``) shows its counts alone, untinted, and says "too few marks (...)".
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...display import NO_DATA, percent
from ...ml.events import EpochEnd
from ...ml.scoring import describe
from ...ml.targets import CLASS_HEADS, CLASSES

NO_TARGETS = "no validation targets"
_RIGHT, _WRONG = QColor("#26a69a"), QColor("#ef5350")
MAX_TINT = 150  # alpha of a cell holding its whole row


class HeadMatrix(QGroupBox):
    """One head's matrix and a caption (the epoch and the head's score in words)."""

    def __init__(self, head: str, parent=None):
        super().__init__(head.title(), parent)
        self.head = head
        names = CLASSES[head]
        self.caption = QLabel(NO_TARGETS)
        self.caption.setWordWrap(True)
        self.caption.setStyleSheet("color: palette(mid)")
        self.table = QTableWidget(len(names), len(names))
        self.table.setObjectName(f"confusion_{head}")
        self.table.setHorizontalHeaderLabels([f"→ {n}" for n in names])
        self.table.setVerticalHeaderLabels(list(names))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setToolTip("rows: the true class · columns: the predicted class")
        for header in (self.table.horizontalHeader(), self.table.verticalHeader()):
            header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        rows = self.table.verticalHeader().defaultSectionSize()
        self.table.setFixedHeight(self.table.horizontalHeader().sizeHint().height()
                                  + len(names) * rows + 4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.table)
        layout.addWidget(self.caption)
        self.counts: tuple[tuple[int, ...], ...] | None = None
        self.clear()

    def clear(self) -> None:
        self.counts = None
        for r in range(self.table.rowCount()):
            for c in range(self.table.columnCount()):
                self.table.setItem(r, c, QTableWidgetItem(NO_DATA))
        self.caption.setText(NO_TARGETS)

    def show_counts(self, counts: tuple[tuple[int, ...], ...] | None, caption: str,
                    shares: bool = True) -> None:
        """``counts[truth][prediction]`` with ``caption``; without ``shares``: counts alone."""
        if counts is None:
            self.clear()
            return
        self.counts = counts
        names = CLASSES[self.head]
        for r, row in enumerate(counts):
            total = sum(row)
            for c, count in enumerate(row):
                share = count / total if total else 0.0
                item = QTableWidgetItem(f"{count:,}  ({percent(share, 0)})" if total and shares
                                        else f"{count:,}")
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                tip = f"true {names[r]}, predicted {names[c]}: {count:,} of {total:,}"
                if shares:
                    tint = QColor(_RIGHT if r == c else _WRONG)
                    tint.setAlpha(int(MAX_TINT * share))
                    item.setBackground(tint)
                    tip += f" ({percent(share, 0)})"
                item.setToolTip(tip)
                self.table.setItem(r, c, item)
        self.caption.setText(caption)


class ConfusionMatrices(QWidget):
    """The four heads' matrices of the latest validation; ``reset()`` for a new run."""

    def __init__(self, parent=None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(2, 2, 2, 2)
        self.heads = {head: HeadMatrix(head) for head in CLASS_HEADS}
        for i, matrix in enumerate(self.heads.values()):
            grid.addWidget(matrix, i // 2, i % 2)
        grid.setRowStretch(2, 1)

    def reset(self) -> None:
        for matrix in self.heads.values():
            matrix.clear()

    def show_epoch(self, event: EpochEnd) -> None:
        """The confusion matrices of ``event``'s validation."""
        for head, matrix in self.heads.items():
            score = event.val.heads.get(head)
            counts = score.confusion if score is not None else None
            matrix.show_counts(counts, f"validation, epoch {event.epoch + 1}: "
                                       f"{describe(head, score)}",
                               shares=score is None or not score.too_few)
