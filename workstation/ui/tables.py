"""What a table widget shows, as text: the rows its tests and copies read."""

from __future__ import annotations

from PySide6.QtWidgets import QTableWidget


def cell_texts(table: QTableWidget) -> list[tuple[str, ...]]:
    """Every row's cell texts, left to right ("" for a cell without an item)."""
    return [tuple(item.text() if (item := table.item(r, c)) is not None else ""
                  for c in range(table.columnCount())) for r in range(table.rowCount())]
