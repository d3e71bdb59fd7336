"""The annotation list: a table model of one series' annotations, its filter, and totals.

``AnnotationTableModel`` keeps its rows sorted itself (``sort``: Python's sort on one key per
row) and inserts a new annotation at its sorted place, so the view never asks Qt to sort
thousands of rows through ``data()`` calls. ``AnnotationFilter`` narrows the rows by kind
(trades, longs, shorts, regions, points) and by words found in the type, notes and tags; an
empty filter costs nothing per row; ``annotations.totals.Totals`` sums up the rows that pass.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from typing import cast

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QRegularExpression,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor

from ...annotations.model import Annotation, Point, Region, Trade
from ...annotations.overlap import describe_trade
from ...annotations.totals import Totals, trade_pnl
from ...timeparse import format_minute

COLUMNS = ("Time (UTC)", "Type", "P&L %", "Holding", "Notes")
TIME, TYPE, PNL, HOLDING, NOTES = range(len(COLUMNS))
ANNOTATION_ROLE = Qt.ItemDataRole.UserRole + 1
FILTER_ROLE = Qt.ItemDataRole.UserRole + 2
KINDS = ("All", "Trades", "Long", "Short", "Regions", "Points")
_KIND_TOKENS = {"Trades": "#trade", "Long": "#long", "Short": "#short",
                "Regions": "#region", "Points": "#point"}
OVERLAP_MARK = "⚠ overlaps"
PROFIT_COLOR = "#26a69a"
LOSS_COLOR = "#ef5350"


def format_duration(ms: int) -> str:
    """``"45s"``, ``"12m"``, ``"3h 05m"``, ``"2d 04h"``."""
    seconds = ms // 1000
    if seconds < 60:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h {minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours:02d}h"


def type_text(ann: Annotation) -> str:
    if isinstance(ann, Trade):
        return ann.direction.value
    if isinstance(ann, Region):
        return ann.label
    return "point"


_SORT_KEYS = {  # column -> key of an annotation (ties: by start time, then id)
    TIME: lambda a: (a.span[0], a.id),
    TYPE: lambda a: (type_text(a), a.span[0], a.id),
    PNL: lambda a: (a.pnl_pct if isinstance(a, Trade) else -math.inf, a.span[0], a.id),
    HOLDING: lambda a: (-1 if isinstance(a, Point) else a.span[1] - a.span[0], a.span[0], a.id),
    NOTES: lambda a: (a.notes.lower(), a.span[0], a.id),
}


def _filter_text(ann: Annotation) -> str:
    if isinstance(ann, Trade):
        tokens = f"#trade #{ann.direction.value}"
    elif isinstance(ann, Region):
        tokens = f"#region {ann.label}"
    else:
        tokens = "#point"
    return f"{tokens} {ann.notes} {' '.join(ann.tags)}".lower()


class AnnotationTableModel(QAbstractTableModel):
    """One row per annotation, kept in the order of the column last sorted by."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._rows: list[Annotation] = []
        self._keys: list[tuple] = []  # sort keys of the rows, in row order
        self.pnls: list[float | None] = []  # P&L % of the rows (None: not a trade)
        self.overlaps: dict[str, list[Trade]] = {}  # trade id -> trades held at the same time
        self._sort_column = TIME
        self._descending = False

    # -- Qt's model interface ------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        ann = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(ann, column)
        if role == ANNOTATION_ROLE:
            return ann
        if role == FILTER_ROLE:
            return _filter_text(ann)
        if role == Qt.ItemDataRole.ForegroundRole and column == PNL and isinstance(ann, Trade):
            return QColor(PROFIT_COLOR if ann.pnl_pct > 0 else LOSS_COLOR)
        if ann.id in self.overlaps and column == TYPE:
            if role == Qt.ItemDataRole.ForegroundRole:
                return QColor(LOSS_COLOR)
            if role == Qt.ItemDataRole.ToolTipRole:
                others = "; ".join(describe_trade(t) for t in self.overlaps[ann.id])
                return f"Held at the same time as the {others}: training refuses this market " \
                       "until one of each pair is edited or deleted"
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (PNL, HOLDING):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:  # the whole text, where the view elides it
            return (ann.notes if column == NOTES else self._display(ann, column)) or None
        return None

    def _display(self, ann: Annotation, column: int) -> str:
        if column == TIME:
            return format_minute(ann.span[0])
        if column == TYPE:
            return type_text(ann) + (f" {OVERLAP_MARK}" if ann.id in self.overlaps else "")
        if column == PNL:
            return f"{ann.pnl_pct:+.2f}" if isinstance(ann, Trade) else ""
        if column == HOLDING:
            return "" if isinstance(ann, Point) else format_duration(ann.span[1] - ann.span[0])
        return ann.notes.replace("\n", " ")

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        """Order the rows by ``column`` (ties by start time), keeping selections."""
        self.layoutAboutToBeChanged.emit()
        old = list(self._rows)
        self._sort_column = column
        self._descending = order == Qt.SortOrder.DescendingOrder
        self._set_rows(self._rows)
        new_row = {ann.id: i for i, ann in enumerate(self._rows)}
        moved_from, moved_to = [], []
        for index in self.persistentIndexList():
            moved_from.append(index)
            moved_to.append(self.index(new_row[old[index.row()].id], index.column()))
        self.changePersistentIndexList(moved_from, moved_to)
        self.layoutChanged.emit()

    # -- content ---------------------------------------------------------------------------
    def _set_rows(self, annotations: Iterable[Annotation]) -> None:
        anns = list(annotations)
        keys = list(map(_SORT_KEYS[self._sort_column], anns))
        order = sorted(range(len(anns)), key=keys.__getitem__, reverse=self._descending)
        self._keys = [keys[i] for i in order]
        self._rows = [anns[i] for i in order]
        self.pnls = [trade_pnl(a) for a in self._rows]

    def set_annotations(self, annotations: Iterable[Annotation]) -> None:
        self.beginResetModel()
        self._set_rows(annotations)
        self.endResetModel()

    def set_overlaps(self, pairs: Iterable[tuple[Trade, Trade]]) -> None:
        """Mark the trades of ``pairs`` (``annotations.overlap.overlapping_pairs``)."""
        overlaps: dict[str, list[Trade]] = {}
        for a, b in pairs:
            overlaps.setdefault(a.id, []).append(b)
            overlaps.setdefault(b.id, []).append(a)
        changed = set(overlaps) ^ set(self.overlaps) | {
            i for i in overlaps if overlaps[i] != self.overlaps.get(i)}
        self.overlaps = overlaps
        for i, ann in enumerate(self._rows):
            if ann.id in changed:
                self.dataChanged.emit(self.index(i, TYPE), self.index(i, TYPE))

    def annotations(self) -> list[Annotation]:
        return list(self._rows)

    def row_of(self, ann_id: str) -> int:
        """The row of an annotation, or -1."""
        for i, ann in enumerate(self._rows):
            if ann.id == ann_id:
                return i
        return -1

    def put(self, ann: Annotation) -> None:
        """Add an annotation, or replace the one with its id, at its sorted place."""
        key = _SORT_KEYS[self._sort_column](ann)
        old = self.row_of(ann.id)
        if old >= 0 and self._keys[old] == key:  # same place: the row changes in place
            self._rows[old] = ann
            self.pnls[old] = trade_pnl(ann)
            self.dataChanged.emit(self.index(old, 0), self.index(old, len(COLUMNS) - 1))
            return
        if old >= 0:
            self.remove(ann.id)
        if self._descending:
            row = len(self._keys) - bisect.bisect_left(_Backwards(self._keys), key)
        else:
            row = bisect.bisect(self._keys, key)
        self.beginInsertRows(QModelIndex(), row, row)
        self._keys.insert(row, key)
        self._rows.insert(row, ann)
        self.pnls.insert(row, trade_pnl(ann))
        self.endInsertRows()

    def remove(self, ann_id: str) -> bool:
        row = self.row_of(ann_id)
        if row < 0:
            return False
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._keys[row]
        del self._rows[row]
        del self.pnls[row]
        self.endRemoveRows()
        return True


class _Backwards:
    """A list seen from its end (ascending, for ``bisect``, when the list is descending)."""

    def __init__(self, items: list):
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: int):
        return self._items[len(self._items) - 1 - i]


class AnnotationFilter(QSortFilterProxyModel):
    """Rows of one kind (``KINDS``) whose type, notes or tags contain every word typed."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFilterRole(FILTER_ROLE)
        self.setFilterKeyColumn(TIME)
        self._kind = "All"
        self._words: list[str] = []

    def set_kind(self, kind: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
        self._kind = kind
        self._apply()

    def set_text(self, text: str) -> None:
        self._words = text.lower().split()
        self._apply()

    def _apply(self) -> None:
        """One regular expression of lookaheads, matched in C++ against each row's filter
        text: the kind token and every word, in any order."""
        parts = [_KIND_TOKENS[self._kind]] if self._kind != "All" else []
        parts += self._words
        if not parts:
            self.setFilterRegularExpression(QRegularExpression())
            return
        pattern = "".join(f"(?=.*{QRegularExpression.escape(p)}(?![a-z]))"
                          if p.startswith("#") else f"(?=.*{QRegularExpression.escape(p)})"
                          for p in parts)
        self.setFilterRegularExpression(QRegularExpression(
            "^" + pattern, QRegularExpression.PatternOption.DotMatchesEverythingOption))

    def is_filtering(self) -> bool:
        return bool(self._words) or self._kind != "All"

    def source_rows(self) -> list[int]:
        """The source model's rows shown, in view order."""
        return [self.mapToSource(self.index(r, 0)).row() for r in range(self.rowCount())]

    def totals(self) -> Totals:
        """Totals of the rows shown."""
        source = cast(AnnotationTableModel, self.sourceModel())  # the only source it is given
        if not self.is_filtering():
            return Totals.of_pnls(len(source.pnls), source.pnls)
        rows = self.source_rows()
        return Totals.of_pnls(len(rows), [source.pnls[r] for r in rows])
