"""Tables of rows: how one is made (``rows_table``) and what it shows, as text (``cell_texts``:
the rows its tests and copies read)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget


def rows_table(name: str, columns: Sequence[str]) -> QTableWidget:
    """An empty read-only table named ``name`` with ``columns``: a click or the arrows select
    whole rows, the columns fit their contents, no row numbers, and Tab leaves it."""
    table = QTableWidget(0, len(columns))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(columns))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setTabKeyNavigation(False)
    table.verticalHeader().hide()
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    return table


def cell_texts(table: QTableWidget) -> list[tuple[str, ...]]:
    """Every row's cell texts, left to right ("" for a cell without an item)."""
    return [tuple(item.text() if (item := table.item(r, c)) is not None else ""
                  for c in range(table.columnCount())) for r in range(table.rowCount())]
