"""The tables a backtest's results fill, shared by the Backtest view and the Evaluation view.

``metrics_table``: one column per signal (buy & hold last), one row per metric with
backtesting.py's names (``report.SHOWN``) and per figure of what the edge is worth
(``report.WORTH_SHOWN``; the placebo's rank in words as its tooltip), the sample first.
``gap_table``: the hindsight gap, a row a span (``report.GAP_COLUMNS``: hindsight minus blind
marks, "—" where either has no trade; its words as each row's tooltip).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from ...backtest.report import (
    GAP_COLUMNS,
    IN_SAMPLE,
    SHOWN,
    WORTH_SHOWN,
    BacktestResult,
    HindsightGap,
    gap_cells,
    gap_line,
    metric_text,
    short_sample,
    worth_line,
    worth_text,
)

IN_SAMPLE_COLOR = "#ef5350"
GAP_TITLE = ("Hindsight gap: the hindsight marks minus the blind marks (return and win rate "
             "in pp, mean trade in bps)")
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def metrics_table(name: str) -> QTableWidget:
    """An empty metrics table, a row a line (its 24 rows fit a 900 px window)."""
    table = QTableWidget(0, 0)
    table.setObjectName(name)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
    table.horizontalHeader().setTextElideMode(Qt.TextElideMode.ElideMiddle)
    rows = table.verticalHeader()
    rows.setMinimumSectionSize(rows.fontMetrics().lineSpacing() + 4)
    rows.setDefaultSectionSize(rows.minimumSectionSize())
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    table.setWordWrap(False)
    return table


def fill_metrics(table: QTableWidget, results: list[BacktestResult]) -> None:
    """``results`` in ``table``, a column each (IN-SAMPLE in the title and in red)."""
    table.clear()
    table.setColumnCount(len(results))
    table.setRowCount(1 + len(SHOWN) + len(WORTH_SHOWN))
    titles = [f"{'IN-SAMPLE · ' if r.assumptions.sample == IN_SAMPLE else ''}{r.name}"
              for r in results]
    table.setHorizontalHeaderLabels(titles)
    table.setVerticalHeaderLabels(["sample"] + [label for label, _ in SHOWN]
                                  + list(WORTH_SHOWN))
    for col, title in enumerate(titles):  # elided in the middle when narrower than this
        header_item = table.horizontalHeaderItem(col)
        assert header_item is not None  # setHorizontalHeaderLabels made it
        header_item.setToolTip(title)
    for col, result in enumerate(results):
        sample = QTableWidgetItem(short_sample(result.assumptions.sample))
        if result.assumptions.sample == IN_SAMPLE:
            sample.setForeground(QColor(IN_SAMPLE_COLOR))
        table.setItem(0, col, sample)
        texts = [metric_text(result, label, unit) for label, unit in SHOWN]
        texts += [worth_text(result, label) for label in WORTH_SHOWN]
        for row, text in enumerate(texts, start=1):
            item = QTableWidgetItem(text)
            item.setTextAlignment(_RIGHT)
            table.setItem(row, col, item)
        words = table.item(1 + len(SHOWN) + WORTH_SHOWN.index("Placebo Rank"), col)
        assert words is not None  # set above
        words.setToolTip(worth_line(result))
    _fit_metrics(table)


def _fit_metrics(table: QTableWidget) -> None:
    """Every value in sight: the columns share the table's width, none narrower than the
    widest value (a title that does not fit is elided; its tooltip has it whole), and the
    table is as wide and as tall as its values need."""
    header = table.horizontalHeader()
    widest = max((table.sizeHintForColumn(c) for c in range(table.columnCount())), default=0)
    header.setMinimumSectionSize(max(widest, header.fontMetrics().horizontalAdvance("—")))
    frame = 2 * table.frameWidth()
    rows = table.verticalHeader()
    table.setMinimumWidth(rows.sizeHint().width() + table.columnCount()
                          * header.minimumSectionSize() + frame)
    table.setMinimumHeight(header.sizeHint().height() + rows.length() + frame)


def metric_cell(table: QTableWidget, results: list[BacktestResult], label: str,
                name: str) -> str:
    """The text ``fill_metrics`` put for metric (or ``WORTH_SHOWN`` figure) ``label`` of
    signal ``name``."""
    row = 1 + ([m for m, _ in SHOWN] + list(WORTH_SHOWN)).index(label)
    col = [r.name for r in results].index(name)
    item = table.item(row, col)
    assert item is not None  # fill_metrics filled every cell
    return item.text()


def gap_table(name: str) -> QTableWidget:
    """An empty hindsight gap table."""
    table = QTableWidget(0, len(GAP_COLUMNS))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(GAP_COLUMNS))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
    table.verticalHeader().setVisible(False)
    table.setWordWrap(False)
    table.setToolTip("The trader's hindsight marks minus their blind marks, on the same span "
                     "and costs; — where either has no trade")
    return table


def fill_gaps(table: QTableWidget, gaps: list[HindsightGap]) -> None:
    """``gaps`` in ``table``, a row each, the table as tall as its rows."""
    table.setRowCount(len(gaps))
    for row, gap in enumerate(gaps):
        tip = gap_line(gap)
        for col, text in enumerate(gap_cells(gap)):
            item = QTableWidgetItem(text)
            if col:
                item.setTextAlignment(_RIGHT)
            item.setToolTip(tip)
            table.setItem(row, col, item)
    frame = 2 * table.frameWidth()
    table.setFixedHeight(table.horizontalHeader().sizeHint().height()
                         + table.verticalHeader().length() + frame)
