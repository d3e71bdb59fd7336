"""``AnnotationLayer``: the trader's annotations in the window, and the dock that lists them.

It joins the store (``paths.annotations_db``), the chart and the tools: the keys of the
keymap's ``annotate.*`` commands (actions on the chart, so they fire while the chart has focus;
undo and redo on the whole window) call ``annotations.editing.AnnotationTools``, which turns
the cursor candle into trades and regions by the core's rules; every change goes into the
store as an undoable change (``undoable_changes``), and the store's change notice updates the
chart and the list one
annotation at a time. It shows the annotations of the target series and reloads them when the
series is reset; trades of the market held at the same time (``annotations.overlap``, e.g.
from an old file) are marked in the list.

The keys act on the *target* chart, the chart area's active one (``set_target``; chart 1,
whose series is ``live.key``'s market, real or demo, and timeframe, until another is made
active): the tool's pending entry and mark belong to the chart they were made on, a trade or
region made there has that chart's timeframe, and the list, Del, N / P and E are about that
chart's series. Chart 1 (``chart``) keeps drawing its own timeframe's annotations and the
trainer's lanes whichever chart is the target (``linked_annotations`` draws the rest). What
the trainer learns from the market's annotations of every timeframe (the candles it counts as
reviewed and, with "Show training labels", each candle's position and regime) is asked of the
core by ``labels.TrainerLabels`` after they or the series change, and drawn in the lanes along
the top of chart 1.

Clicks: with "Click to annotate" on, a click opens an entry and the next click closes it
(``tools``). It is off by default: a click on the chart also moves the cursor, which is how a
trader inspects a candle, and a trade made by accident becomes a training label. Turning it
on is remembered.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ...annotations import io as annotation_io
from ...annotations.editing import AnnotationTools, ToolRefused, step_annotation
from ...annotations.horizon import Horizon, seen_by
from ...annotations.model import Annotation, AnnotationError, Direction, RegionLabel, Trade
from ...annotations.overlap import overlapping_pairs
from ...annotations.store import AnnotationStore
from ...annotations.without_candles import no_candles_note
from ...market.series import MarketKey, SeriesKey
from ...paths import AppPaths
from ...timeparse import format_minute
from ..chart.chart_widget import ChartWidget
from ..command_registry import create_command_actions
from ..elided import ElidedLabel
from ..live_data import LiveData
from ..resources import icon
from .drawing import AnnotationGraphics, PreviewOverlays
from .labels import TrainerLabels
from .list_model import (
    ANNOTATION_ROLE,
    HOLDING,
    KINDS,
    PNL,
    TIME,
    TYPE,
    AnnotationFilter,
    AnnotationTableModel,
)
from .notes import NotesEditor
from .tools import REGION_LABELS
from .undoable_changes import AddAnnotation, DeleteAnnotation, EditAnnotation, describe

if TYPE_CHECKING:
    from ..drawings.layer import DrawingLayer

log = logging.getLogger(__name__)
EXPORT_FILTERS = ("JSON, every kind and the drawings (*.json)", "CSV, trades only (*.csv)",
                  "CSV, drawings only (*.csv)")
BULK_CHANGE = 200  # a store change with more annotations than this reloads the list at once
MESSAGE_MS = 8000
_ICONS = {"annotate.long": "long", "annotate.short": "short", "annotate.close": "close_trade",
          "annotate.mark": "mark", "annotate.delete": "delete", "annotate.notes": "notes",
          "annotate.undo": "undo", "annotate.redo": "redo", "annotate.export": "export",
          "annotate.import": "import"}


def _series_of(key: SeriesKey | None) -> tuple[MarketKey, str] | None:
    """A series' market and timeframe name, as annotations record them."""
    return (key.market, key.timeframe.name) if key is not None else None


class AnnotationDock(QDockWidget):
    """The list: filter box, kind menu, sortable table and totals of the rows shown."""

    activated = Signal(object)  # Annotation: Enter or double-click on its row
    selected = Signal(object)  # Annotation | None

    def __init__(self, model: AnnotationTableModel, parent: QWidget | None = None):
        super().__init__("Annotations", parent)
        self.setObjectName("annotationsDock")
        self.model = model
        self.proxy = AnnotationFilter(self)
        self.proxy.setSourceModel(model)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter: words in type, notes, tags")
        self.filter.setClearButtonEnabled(True)
        self.kind = QComboBox()
        self.kind.addItems(KINDS)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # whole in the tooltips
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(True)
        header.setSortIndicator(TIME, Qt.SortOrder.AscendingOrder)
        header.sortIndicatorChanged.connect(model.sort)
        metrics = self.table.fontMetrics()
        for column, sample in ((TIME, "2026-12-31 23:59"), (TYPE, "downtrend"),
                               (PNL, "+100.00"), (HOLDING, "10d 23h")):
            header.resizeSection(column, metrics.horizontalAdvance(sample) + 24)
        self.totals = QLabel()
        self.totals.setWordWrap(True)
        self.totals.setObjectName("annotationTotals")
        self.series_label = ElidedLabel(description="Whose annotations the list holds")
        self.series_label.setObjectName("annotationSeries")
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.kind)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.series_label)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.totals)
        self.setWidget(body)
        self._totals_timer = QTimer(self)
        self._totals_timer.setSingleShot(True)
        self._totals_timer.setInterval(0)
        self._totals_timer.timeout.connect(self.update_totals)
        self.filter.textChanged.connect(self.proxy.set_text)
        self.kind.currentTextChanged.connect(self.proxy.set_kind)
        for signal in (self.proxy.modelReset, self.proxy.rowsInserted, self.proxy.rowsRemoved,
                       self.proxy.layoutChanged, self.proxy.dataChanged):
            signal.connect(self._totals_timer.start)
        self.table.activated.connect(self._activated)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.update_totals()

    def show_series(self, series: tuple[MarketKey, str] | None, chart: str = "") -> None:
        """Say whose annotations the list holds: the series of the chart the keys act on."""
        if series is None:
            text = f"{chart}: not a live series" if chart else "No series on the chart"
        else:
            demo = " (demo)" if series[0].kind == "demo" else ""
            text = f"{series[0].symbol}{demo} {series[1]}" + (f" · {chart}" if chart else "")
        self.series_label.setText(text)

    def update_totals(self) -> None:
        self.totals.setText(self.proxy.totals().text())

    def select(self, ann: Annotation | None) -> None:
        """Make ``ann``'s row current (scrolled into view), or clear the selection."""
        row = -1 if ann is None else self.model.row_of(ann.id)
        index = self.proxy.mapFromSource(self.model.index(row, 0)) if row >= 0 else None
        if index is None or not index.isValid():
            self.table.clearSelection()
            return
        self.table.setCurrentIndex(index)
        self.table.scrollTo(index)

    def current(self) -> Annotation | None:
        index = self.table.currentIndex()
        return index.data(ANNOTATION_ROLE) if index.isValid() else None

    def _activated(self, index) -> None:
        self.activated.emit(index.data(ANNOTATION_ROLE))

    def _current_changed(self, current, _previous) -> None:
        self.selected.emit(current.data(ANNOTATION_ROLE) if current.isValid() else None)


class AnnotationLayer(QObject):
    """See the module docstring. ``actions``: the Annotate menu's actions by command id;
    ``file_actions()``: export and import; ``close()`` at shutdown."""

    message = Signal(str)
    selected_changed = Signal(object)  # Annotation | None: selected on the target chart

    def __init__(self, paths: AppPaths, live: LiveData, chart: ChartWidget,
                 parent: QMainWindow):
        super().__init__(parent)
        self.paths = paths
        self.live = live
        self.chart = chart
        self.target = chart  # the chart the keys act on
        self.target_name = ""  # how the status line names it ("" for chart 1)
        self._target_key: SeriesKey | None = None  # its series, when it is not chart 1
        self.charts: list[ChartWidget] = []  # every chart the keys act on (``attach``)
        self.window = parent
        self.own_store = AnnotationStore(paths.annotations_db)  # the trader's marks
        self.store = self.own_store  # the one shown and edited (a consistency check's: its own)
        self.settings = QSettings(str(paths.config_dir / "workstation.ini"),
                                  QSettings.Format.IniFormat)
        self.undo_stack = QUndoStack(self)
        self._tools: dict[int, tuple[tuple[MarketKey, str] | None, AnnotationTools]] = {}
        self._previews: dict[int, PreviewOverlays] = {}
        self.graphics = AnnotationGraphics(chart)
        self.labels = TrainerLabels(paths.annotations_db, live, self)
        self.labels.changed.connect(self.graphics.set_labels)
        self.model = AnnotationTableModel(self)
        self.dock = AnnotationDock(self.model, parent)
        self.base_series: tuple[MarketKey, str] | None = None  # chart 1's market, timeframe
        self.series: tuple[MarketKey, str] | None = None  # the target's market and timeframe
        self.annotations: dict[str, Annotation] = {}  # the target series' (the clock passed)
        self.horizon = Horizon()  # the replay clock's: the list holds back what it hides
        self.selected: Annotation | None = None
        self.last_message = ""
        self.closed = False
        self.notes_editor = NotesEditor(parent)
        self.drawings: DrawingLayer | None = None  # its drawing tools (it sets itself here)
        self.command_actions = self._create_command_actions()
        self._unsubscribe = self.store.subscribe(self._store_changed)
        live.candles_changed.connect(self._candles_changed, Qt.ConnectionType.QueuedConnection)
        self.attach(chart)
        self.dock.activated.connect(self.go_to)
        self.dock.selected.connect(self._select)
        if live.key is not None and chart.candles is not None:
            self.reload()

    # -- actions ---------------------------------------------------------------------------
    def _create_command_actions(self) -> dict[str, QAction]:
        on_chart = create_command_actions(self.chart, {
            "annotate.long": lambda: self.open_entry(Direction.LONG),
            "annotate.short": lambda: self.open_entry(Direction.SHORT),
            "annotate.close": self.close_entry,
            "annotate.cancel": self.cancel,
            "annotate.mark": self.set_mark,
            **{command_id: self._labeller(label) for command_id, label in REGION_LABELS.items()},
            "annotate.delete": self.delete_at_cursor,
            "annotate.next": lambda: self.jump(1),
            "annotate.previous": lambda: self.jump(-1),
            "annotate.notes": self.edit_notes,
            "annotate.show_labels": self._show_labels_toggled,
        })
        on_window = create_command_actions(self.window, {
            "annotate.undo": self.undo_stack.undo,
            "annotate.redo": self.undo_stack.redo,
            "annotate.click_mode": self._click_mode_toggled,
            "annotate.export": self.choose_export,
            "annotate.import": self.choose_import,
        }, Qt.ShortcutContext.WindowShortcut)
        undo, redo = on_window["annotate.undo"], on_window["annotate.redo"]
        undo.setEnabled(False)
        redo.setEnabled(False)
        self.undo_stack.canUndoChanged.connect(undo.setEnabled)
        self.undo_stack.canRedoChanged.connect(redo.setEnabled)
        self.undo_stack.undoTextChanged.connect(
            lambda text: undo.setText(f"Undo {text}" if text else "Undo"))
        self.undo_stack.redoTextChanged.connect(
            lambda text: redo.setText(f"Redo {text}" if text else "Redo"))
        click = on_window["annotate.click_mode"]
        click.setCheckable(True)
        click.setChecked(cast(bool, self.settings.value("annotate/click_mode", False, type=bool)))
        show = on_chart["annotate.show_labels"]
        show.setCheckable(True)
        show.setChecked(cast(bool, self.settings.value("annotate/show_labels", False, type=bool)))
        self.labels.show_targets = show.isChecked()
        actions = {**on_chart, **on_window}
        for command_id, name in _ICONS.items():
            actions[command_id].setIcon(icon(name))
        self._file_actions = [actions.pop("annotate.export"), actions.pop("annotate.import")]
        return actions

    def _labeller(self, label: RegionLabel):
        return lambda: self.label_range(label)

    def attach(self, chart: ChartWidget) -> None:
        """Let the chart keys act while ``chart`` has the keyboard (on the target chart: the
        chart area makes the focused chart the target), and follow its cursor and clicks."""
        if chart in self.charts:
            return
        self.charts.append(chart)
        if chart is not self.chart:
            for action in self.command_actions.values():
                if action.parent() is self.chart:  # a chart key: one action, one more place
                    chart.addAction(action)
        chart.cursor_moved.connect(self._cursor_moved)
        chart.candle_clicked.connect(self._candle_clicked)

    def set_target(self, chart: ChartWidget, key: SeriesKey | None, name: str = "") -> None:
        """Make ``chart`` (attached) the one the keys act on, showing ``key``'s series (None:
        it shows no live series of its own, and marks there are refused); ``name`` says which
        chart it is in messages. Chart 1's series is always the live one."""
        key = None if chart is self.chart else key
        if (chart, key, name) == (self.target, self._target_key, self.target_name):
            return
        if chart is not self.target:
            self._select(None)
        self.target, self._target_key, self.target_name = chart, key, name
        self.reload()

    @property
    def target_key(self) -> SeriesKey | None:
        return self.live.key if self.target is self.chart else self._target_key

    @property
    def tools(self) -> AnnotationTools:
        """The target chart's tool: its pending entry and mark, for its series (a new series
        starts a new tool)."""
        series, tools = self._tools.get(id(self.target), (None, None))
        if tools is None or series != self.series:
            tools = AnnotationTools()
            self._tools[id(self.target)] = (self.series, tools)
        return tools

    @property
    def preview(self) -> PreviewOverlays:
        preview = self._previews.get(id(self.target))
        if preview is None:
            preview = self._previews[id(self.target)] = PreviewOverlays(self.target)
        return preview

    def file_actions(self) -> list[QAction]:
        """Export annotations… and Import annotations…, for the File menu."""
        return list(self._file_actions)

    @property
    def click_mode(self) -> bool:
        return self.command_actions["annotate.click_mode"].isChecked()

    @property
    def labels_shown(self) -> bool:
        return self.command_actions["annotate.show_labels"].isChecked()

    def _show_labels_toggled(self, on: bool) -> None:
        self.settings.setValue("annotate/show_labels", bool(on))
        self.labels.set_targets_shown(on)
        self.say("Training labels shown in the lanes: each candle's position (flat / long / "
                 "short) and regime, as the trainer learns them" if on
                 else "Training labels hidden (the reviewed band stays)")

    def _click_mode_toggled(self, on: bool) -> None:
        self.settings.setValue("annotate/click_mode", bool(on))
        self.say("Click to annotate: a click opens an entry, the next one closes it"
                 if on else "Click to annotate is off: clicks only move the cursor")

    # -- series ----------------------------------------------------------------------------
    def _candles_changed(self, kind: str) -> None:
        if self.closed:  # a queued change that arrived after close() (the window shut down)
            return
        if kind == "reset":
            self.labels.reset()
            self.reload()
            return
        if kind == "append":  # a candle closed: the trainer labels it too
            self.labels.schedule()
        if self.tools.pending is not None or self.tools.mark is not None:
            self._show_preview()

    def reload(self) -> None:
        """Load the annotations of chart 1's series (after a reset of the series) and of the
        target's."""
        base = _series_of(self.live.key)
        if base != self.base_series:  # another market or timeframe: its own undo history
            self.undo_stack.clear()
            for _series, tools in self._tools.values():
                tools.reset()
            for preview in self._previews.values():  # what they drew is gone with them
                preview.clear()
            self.base_series = base
        self.series = _series_of(self.target_key)
        found = self.horizon.split(self.store.list(market=self.series[0],
                                                   timeframe=self.series[1])
                                   if self.series else [])
        self.annotations = {a.id: a for a in found}
        if self.selected is not None and self.selected.id not in self.annotations:
            self.selected = None
        self.model.set_annotations(found)
        self.dock.show_series(self.series, self.target_name)
        self._show_overlaps()
        if self.target is self.chart:
            on_chart_1 = found
        else:
            on_chart_1 = self.store.list(market=base[0], timeframe=base[1]) if base else []
        self.graphics.set_annotations(on_chart_1)
        self._select(self.selected)
        self._show_preview()
        self.labels.schedule()

    @property
    def market(self) -> MarketKey | None:
        return self.series[0] if self.series is not None else None

    def _show_overlaps(self) -> None:
        """Mark the listed trades held at the same time as another trade of the market."""
        pairs = overlapping_pairs(self._trades()) if self.series is not None else []
        self.model.set_overlaps(pairs)

    def _store_changed(self, change) -> None:
        if self.series is not None and any(isinstance(a, Trade) and a.market_key == self.market
                                           for a in change.annotations):
            self._show_overlaps()
        if self.series is not None and any(a.market_key == self.market
                                           for a in change.annotations):
            self.labels.schedule()  # every timeframe of the market counts for the trainer
        mine = [a for a in change.annotations if (a.market_key, a.timeframe) == self.series]
        on_chart_1 = [a for a in change.annotations
                      if (a.market_key, a.timeframe) == self.base_series]
        if len(mine) > BULK_CHANGE or len(on_chart_1) > BULK_CHANGE:
            self.reload()
            return
        for ann in on_chart_1:
            if change.action == "deleted":
                self.graphics.remove(ann.id)
            else:
                self.graphics.put(ann)
        for ann in mine:
            deleted = change.action == "deleted"
            if deleted:
                self.horizon.forget(ann.id)
            if deleted or not self.horizon.admit(ann):
                self.annotations.pop(ann.id, None)
                self.model.remove(ann.id)
                if self.selected is not None and self.selected.id == ann.id:
                    self.selected = None
            else:
                self.annotations[ann.id] = ann
                self.model.put(ann)
                if self.selected is not None and self.selected.id == ann.id:
                    self.selected = ann

    def use_store(self, store: AnnotationStore | None) -> None:
        """Show and edit the marks of ``store`` (a consistency check's own) in place of the
        trader's (None: the trader's again); the undo history starts over."""
        self._unsubscribe()
        self.store = self.own_store if store is None else store
        self._unsubscribe = self.store.subscribe(self._store_changed)
        self.undo_stack.clear()
        self.reload()

    def set_clock(self, clock: int | None) -> None:
        """Follow the replay clock (None: no replay): marks are made blind at it, and the
        list and chart 1 show the marks it has passed."""
        for ann in self.horizon.set_clock(clock):
            self.annotations[ann.id] = ann
            self.model.put(ann)
        self.graphics.set_clock(clock)

    def close(self) -> None:
        """Stop listening and close the store (at shutdown); closing again does nothing."""
        if self.closed:
            return
        self.closed = True
        self.live.candles_changed.disconnect(self._candles_changed)
        for chart in self.charts:
            chart.cursor_moved.disconnect(self._cursor_moved)
            chart.candle_clicked.disconnect(self._candle_clicked)
        self.undo_stack.clear()
        for action in (*self.command_actions.values(), *self._file_actions):
            action.setEnabled(False)
        self._unsubscribe()
        self.labels.close()
        self.own_store.close()

    # -- the tool ----------------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.last_message = text
        log.info("annotate: %s", text)
        status = getattr(self.window, "statusBar", None)
        if status is not None:
            status().showMessage(text, MESSAGE_MS)
        self.message.emit(text)

    def _trades(self) -> list[Trade]:
        """The market's trades on every timeframe (the scope of the overlap rule)."""
        return self.store.trades(self.market) if self.market is not None else []

    def ready(self) -> bool:
        candles = self.target.candles
        if self.series is None and self.target is not self.chart and candles is not None:
            self.say(f"{self.target_name or 'This chart'} shows another symbol's candles, "
                     "not live: marks are made on a chart of the live symbol")
            return False
        if self.series is None or candles is None or not len(candles):
            self.say("No candles on the chart: open a data source first")
            return False
        return True

    def _show_preview(self) -> None:
        self.preview.show(self.tools, self.target.candles, self.target.cursor_index)

    def _cursor_moved(self, _ts) -> None:
        if self.tools.pending is not None or self.tools.mark is not None:
            self._show_preview()

    def _push(self, command) -> None:
        self.undo_stack.push(command)

    def _command_failed(self, text: str) -> None:
        """A change the store refused (the file changed under us): say so, and show what
        the store holds now."""
        log.error("annotation change failed: %s", text)
        self.reload()
        self.say(text)
        box = QMessageBox(QMessageBox.Icon.Warning, "Annotations", text,
                          QMessageBox.StandardButton.Ok, self.window)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def open_entry(self, direction: Direction) -> None:
        if not self.ready():
            return
        try:
            entry = self.tools.open(direction, self.target.candles, self.target.cursor_index,
                                    self._trades(), self.horizon.clock)
        except ToolRefused as exc:
            self.say(str(exc))
            return
        self._show_preview()
        self.say(f"{entry.direction.value.title()} entry at {entry.price:g}: move the cursor "
                 "and press X (or Enter) to close, Esc to cancel")

    def close_entry(self) -> None:
        if self.drawings is not None and self.drawings.place():
            return
        if not self.ready():
            return
        assert self.series is not None  # _ready checked
        try:
            trade = self.tools.close(self.target.candles, self.target.cursor_index,
                                     *self.series, self._trades(), self.horizon.clock)
        except ToolRefused as exc:
            self.say(str(exc))
            return
        self._push(AddAnnotation(self.store, trade, self._command_failed))
        self._show_preview()
        self.say(f"{trade.direction.value.title()} trade closed at {trade.exit_price:g}: "
                 f"{trade.pnl_pct:+.2f}%")

    def cancel(self) -> None:
        if self.drawings is not None and self.drawings.cancel():
            return
        what = self.tools.cancel()
        self._show_preview()
        said: dict[str | None, str] = {"entry": "Entry cancelled", "mark": "Mark removed"}
        self.say(said.get(what, "Nothing to cancel"))

    def set_mark(self) -> None:
        if not self.ready():
            return
        try:
            self.tools.set_mark(self.target.candles, self.target.cursor_index,
                                self.horizon.clock)
        except ToolRefused as exc:
            self.say(str(exc))
            return
        self._show_preview()
        self.say("Mark set: move the cursor to the range's other end and press "
                 "1 (uptrend), 2 (downtrend), 3 (range) or 4 (reviewed)")

    def label_range(self, label: RegionLabel) -> None:
        if not self.ready():
            return
        assert self.series is not None  # _ready checked
        try:
            region = self.tools.label(label, self.target.candles, self.target.cursor_index,
                                      *self.series, self.horizon.clock)
        except ToolRefused as exc:
            self.say(str(exc))
            return
        self._push(AddAnnotation(self.store, region, self._command_failed))
        self._show_preview()
        self.say(f"Labelled {format_minute(region.start_ts)} – {format_minute(region.end_ts)} "
                 f"as {region.label}")

    def _candle_clicked(self, index: int, price: float) -> None:
        if self.sender() is not self.target:  # a click that made another chart active first
            return
        if self.drawings is not None and self.drawings.click(index, price):
            return
        if not self.click_mode or not self.ready():
            return
        assert self.series is not None  # _ready checked
        try:
            result = self.tools.click(self.target.candles, index, *self.series, self._trades(),
                                      self.horizon.clock)
        except ToolRefused as exc:
            self.say(str(exc))
            return
        if isinstance(result, Trade):
            self._push(AddAnnotation(self.store, result, self._command_failed))
            self.say(f"{result.direction.value.title()} trade: {result.pnl_pct:+.2f}%")
        else:
            self.say(f"{result.direction.value.title()} entry at {result.price:g}: click the "
                     "exit candle (Esc cancels; L / S choose the direction)")
        self._show_preview()

    # -- finding annotations -------------------------------------------------------------------
    def annotation_at(self, index: int) -> Annotation | None:
        """The annotation on candle ``index``: the one selected in the list if it is there,
        else the shortest one covering the candle (the newest of equals)."""
        c = self.target.candles
        if c is None or not 0 <= index < len(c):
            return None
        t0 = int(c.ts[index])
        t1 = t0 + c.timeframe.ms
        hits = [a for a in self.annotations.values() if a.span[0] < t1 and a.span[1] >= t0]
        if not hits:
            return None
        if self.selected is not None and any(a.id == self.selected.id for a in hits):
            return self.annotations[self.selected.id]
        # (an annotation's updated_at is always set once it is made)
        return min(hits, key=lambda a: (a.span[1] - a.span[0], -cast(int, a.updated_at)))

    def _none_at_cursor(self, what: str) -> None:
        """Say that the cursor candle has no annotation of this chart's timeframe ``what`` could
        act on, naming the other timeframes' drawn there (edited on their own charts)."""
        c, index = self.target.candles, self.target.cursor_index
        others: list[str] = []
        if c is not None and 0 <= index < len(c) and self.market is not None:
            assert self.series is not None  # the market is the series'
            t0 = int(c.ts[index])
            t1 = t0 + c.timeframe.ms
            others = sorted({a.timeframe for a in self.store.list(market=self.market)
                             if a.span[0] < t1 and a.span[1] >= t0
                             and a.timeframe != self.series[1]
                             and seen_by(a, self.horizon.clock)})
        here = (f"No {self.series[1]} annotation" if self.series else "No annotation") \
            + " on the cursor candle" + (f" {what}" if what else "")
        if others:
            here += (f"; the {', '.join(others)} ones drawn there are edited on a chart of "
                     f"their timeframe")
        self.say(here)

    def delete_at_cursor(self) -> None:
        if self.drawings is not None and self.drawings.delete_selected():
            return
        ann = self.annotation_at(self.target.cursor_index)
        if ann is None:
            self._none_at_cursor("")
            return
        self._push(DeleteAnnotation(self.store, ann, self._command_failed))
        self.say(f"Deleted the {describe(ann)} (Ctrl+Z brings it back)")

    def jump(self, step: int) -> None:
        """Move the cursor to the start of the next (``step`` > 0) or previous annotation and
        select it (``editing.step_annotation``: every one in turn, two on one candle too)."""
        c = self.target.candles
        if c is None or not len(c) or not self.annotations:
            self.say("No annotations on this chart")
            return
        ann = step_annotation(self.annotations.values(), c, self.target.cursor_index,
                              self.selected, step)
        if ann is None:
            self.say("No annotation after the cursor" if step > 0
                     else "No annotation before the cursor")
            return
        self.target.set_cursor(min(max(c.index_of(ann.span[0]), 0), len(c) - 1))
        self._select(ann)
        self.dock.select(ann)
        self.say(f"{describe(ann).capitalize()} at {format_minute(ann.span[0])}")

    def go_to(self, ann: Annotation) -> None:
        """Put the chart's cursor on ``ann``'s first candle and give the chart the keys."""
        c = self.target.candles
        if ann is None or c is None or not len(c):
            return
        index = min(max(c.index_of(ann.span[0]), 0), len(c) - 1)
        self.target.set_cursor(index)
        self._select(ann)
        self.target.view.setFocus()

    def replace(self, ann: Annotation, new: Annotation | None, text: str) -> None:
        """Replace ``ann`` by ``new`` (None: delete it) as one undoable change named ``text``,
        and say so on the status line."""
        self._push(DeleteAnnotation(self.store, ann, self._command_failed) if new is None
                   else EditAnnotation(self.store, new, text, self._command_failed))
        self.say(f"{text[:1].upper()}{text[1:]} (Ctrl+Z undoes)")

    def _select(self, ann: Annotation | None) -> None:
        self.selected = ann
        self.graphics.set_selected(ann if self.target is self.chart else None)
        self.selected_changed.emit(ann)

    def edit_notes(self) -> None:
        ann = self.annotation_at(self.target.cursor_index)
        if ann is None:
            self._none_at_cursor("to write notes for")
            return
        self.target.view.setFocus()  # where the keyboard goes back when the editor closes
        self.notes_editor.edit(
            f"Notes for the {describe(ann)} at {format_minute(ann.span[0])}:", ann.notes,
            lambda text: self._save_notes(ann.id, text))

    def _save_notes(self, annotation_id: str, text: str) -> None:
        ann = self.annotations.get(annotation_id)  # its version now (it may have changed)
        if ann is None:
            self.say("The annotation is gone (deleted or undone): its notes were not saved")
            return
        if text == ann.notes:
            return
        self._push(EditAnnotation(self.store, ann.edited(notes=text),
                                  f"edit notes of {describe(ann)}", self._command_failed))
        self.say(f"Notes of the {describe(ann)} saved")

    # -- files ---------------------------------------------------------------------------------
    def choose_export(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(
            self.window, "Export annotations", str(Path.home() / "annotations.json"),
            ";;".join(EXPORT_FILTERS))
        if path:
            self.export_file(path, "drawings-csv" if chosen == EXPORT_FILTERS[2] else None)

    def choose_import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Import annotations", str(Path.home()),
            "Annotations (*.json *.csv);;All files (*)")
        if path:
            self.import_file(path)

    def export_file(self, path, format: str | None = None) -> None:
        """Write every annotation (all series) to ``path``: JSON (with the drawings), CSV for
        the trades, or (``format`` "drawings-csv") CSV for the drawings."""
        try:
            result = annotation_io.export_annotations(self.store, path, format=format)
        except (AnnotationError, OSError) as exc:
            self._file_error("Export failed", f"Nothing was exported to {path}.", str(exc))
            return
        if format == "drawings-csv":
            self.say(f"Exported {result.drawings} drawings to {path}")
            return
        skipped = (f"; {result.skipped} regions and points left out (CSV holds trades only)"
                   if result.skipped else "")
        self.say(f"Exported {result.written} annotations to {path}{skipped}")

    def import_file(self, path) -> None:
        """Read ``path`` (JSON, or CSV trades; a CSV without market, symbol or timeframe
        columns gets the chart's) and merge it into the store: all of it, or nothing when any
        record is bad or would overlap a trade, which a message box names."""
        path = Path(path)
        found: Sequence[Annotation]
        try:
            if annotation_io.file_format(path) == "json":
                found, drawings = annotation_io.read_document(path)
            else:
                market, timeframe = self.series if self.series else (None, None)
                found, drawings = annotation_io.read_csv_document(
                    path, market=market.kind if market else None,
                    symbol=market.symbol if market else None, timeframe=timeframe)
            merged = self.store.merge(found)
            drawn = self.own_store.drawings.merge(drawings)
        except annotation_io.AnnotationImportError as exc:
            lines = []
            if exc.record is not None:
                lines.append(f"Record: {exc.record + 1} in the file"
                             + (f" (id {exc.record_id})" if exc.record_id else ""))
            if exc.field:
                lines.append(f"Field: {exc.field}")
            lines.append(f"Problem: {exc.reason}")
            self._file_error("Import failed", f"Nothing was imported from {path.name}.",
                             "\n".join(lines) + f"\n\n{exc}")
            return
        except AnnotationError as exc:
            self._file_error("Import failed", f"Nothing was imported from {path.name}.",
                             str(exc))
            return
        note = no_candles_note(found, self.paths.candle_cache)
        drawn_text = (f"; drawings: {len(drawings)} read, {drawn[0]} added, {drawn[1]} "
                      f"updated, {drawn[2]} as they were" if drawings else "")
        self.say(f"Imported {path.name}: {len(found)} read, {merged.added} added, "
                 f"{merged.updated} updated, {merged.unchanged} already there, "
                 f"{merged.kept_newer} kept (newer here)" + drawn_text
                 + (f"; {note}" if note else ""))

    def _file_error(self, title: str, text: str, details: str) -> None:
        log.warning("%s: %s", title, details)
        self.say(f"{title}: {details.splitlines()[-1]}")
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok,
                          self.window)
        box.setObjectName("annotationFileError")
        box.setInformativeText(details)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
