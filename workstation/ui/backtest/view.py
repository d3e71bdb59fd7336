"""The Backtest view (a tab beside the chart, F9): the trader picks the signals (their marked
trades, or a saved run's predictions with a head and a confidence level), the costs, the
sizing and the fills, and runs it (Ctrl+Enter, or the Run button) off the GUI thread.

It shows the assumptions in words (IN-SAMPLE in red when the trader allowed a run's training
span) with the tick and how often the next open is the close, the equity and drawdown of the
signals beside buy & hold, the metrics table with backtesting.py's names and what each edge is
worth (``report.WORTH_SHOWN``: the return before costs beside the mean trade in bps and ticks,
the break-even cost and the placebo; the placebo's rank in words as its tooltip), the
trader's blind and hindsight marks as two samples on the same span and costs, with the
hindsight gap between them below the metrics (``report.GAP_COLUMNS``: hindsight minus blind,
"—" where either has no trade; hidden without marks), and the trades of the first signal
(``report.lead``); those trades are drawn on the
chart (entry and exit fills, a line between them coloured by the trade's result) and Enter on a
trade shows it there. Every control is a Tab stop, and every choice a command of the keymap
(``backtest.signals_marks`` ...: the ``Ctrl+K`` palette offers them, each brings the view
forward); the rules are the core's (``backtest.request``): a run's signals out of sample unless
the trader asks otherwise.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QColor, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...backtest.engine import NEXT_OPEN, SAME_CLOSE
from ...backtest.report import (
    IN_SAMPLE,
    WHOLE_SPAN,
    BacktestResult,
    hindsight_gap,
    lead,
    prices_line,
    summary,
)
from ...backtest.request import ANNOTATIONS, RUN_PREFIX, BacktestRequest, run_request
from ...errors import WorkstationError
from ..command_registry import create_command_actions
from ..tables import cell_texts
from ..training.worker import ProgressRelay, TaskFailed, TaskWorker, WorkerThread
from .result_tables import GAP_TITLE, fill_gaps, fill_metrics, gap_table, metric_cell, metrics_table

if TYPE_CHECKING:
    from ...market.candles import Candles

log = logging.getLogger(__name__)

GROUP = "backtest"  # the chart overlays of the trades
MAX_TRADES_DRAWN = 2000
_WIN, _LOSS = "#26a69a", "#ef5350"


class _Stopped:
    """The trader stopped the backtest before it finished."""


def _when(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M")


class BacktestView(QWidget):
    """See the module docstring. ``live``: the window's ``LiveData`` (candles and series);
    ``chart``: the ``ChartWidget`` the trades are drawn on; ``paths``: the app's paths (marks
    and checkpoints); ``show_chart``: called to bring the chart forward; ``show_view`` (set
    by ``BacktestTab``): called to bring this view forward. ``command_actions``: Run / stop;
    ``choice_actions``: the choices' commands (id -> QAction, enabled with their fields)."""

    finished = Signal(object)  # the results shown, or the message of a failure

    def __init__(self, paths, live, chart, show_chart=None, parent=None):
        super().__init__(parent)
        self.setObjectName("backtestView")
        self.paths = paths
        self.live = live
        self.chart = chart
        self.show_chart = show_chart
        self.show_view: Callable[[], object] | None = None
        self.results: list[BacktestResult] = []
        self.request: BacktestRequest | None = None
        self._candles: Candles | None = None  # those of the last run
        self._runners: list[WorkerThread] = []  # kept until their threads have ended
        self._running = False  # a backtest asked for whose result has not come yet
        self._stop = threading.Event()
        self.relay = ProgressRelay(self)
        self.relay.delivered.connect(self._delivered)
        self._build()
        self.command_actions = create_command_actions(
            self, {"backtest.run": self.toggle_run}, Qt.ShortcutContext.WidgetWithChildrenShortcut)
        # the choices: the palette's (they are the window's actions), not the View menu's
        self.choice_actions = create_command_actions(self, {
            "backtest.signals_marks": lambda: self._choose(self.signals, ANNOTATIONS),
            "backtest.signals_run": self.choose_newest_run,
            "backtest.head_position": lambda: self._choose(self.head, "position"),
            "backtest.head_candle": lambda: self._choose(self.head, "candle"),
            "backtest.confidence": lambda: self._edit(self.threshold),
            "backtest.costs": lambda: self._edit(self.fee),
            "backtest.size": lambda: self._edit(self.trade_size),
            "backtest.fill_next_open": lambda: self._choose(self.fill, NEXT_OPEN),
            "backtest.fill_same_close": lambda: self._choose(self.fill, SAME_CLOSE),
            "backtest.in_sample": self._in_sample_chosen,
        })
        allow = self.choice_actions["backtest.in_sample"]
        allow.setCheckable(True)
        self.in_sample.toggled.connect(allow.setChecked)
        self.signals.currentIndexChanged.connect(self._signals_changed)
        self._signals_changed()  # the run's choices enabled with their fields

    # -- building ---------------------------------------------------------------------------
    def _build(self) -> None:
        form = QFormLayout()
        self.signals = QComboBox()
        self.signals.setToolTip("Your marked trades, or a saved run's predictions")
        self.head = QComboBox()
        self.head.addItem("position (suggested position)", "position")
        self.head.addItem("candle (next candle, held one candle)", "candle")
        self.threshold = self._spin(0.0, 1.0, 0.5, 0.05, 2,
                                    "A run's signal needs at least this confidence, else flat")
        self.fee = self._spin(-1.0, 1000.0, -1.0, 1.0, 1, "Fee per side in bps")
        self.fee.setSpecialValueText("the exchange's (else 10 bps)")
        self.slippage = self._spin(0.0, 1000.0, 1.0, 0.5, 1, "Slippage per side in bps")
        self.trade_size = self._spin(0.01, 1.0, 1.0, 0.05, 2,
                                     "Fraction of equity each trade takes (fees included)")
        self.fill = QComboBox()
        self.fill.addItem("next candle's open", NEXT_OPEN)
        self.fill.addItem("same candle's close (optimistic)", SAME_CLOSE)
        self.in_sample = QCheckBox("allow its training span (IN-SAMPLE)")
        for label, widget in (("Signals", self.signals), ("Head", self.head),
                              ("Confidence ≥", self.threshold), ("Fee, bps", self.fee),
                              ("Slippage, bps", self.slippage), ("Size", self.trade_size),
                              ("Fills", self.fill), ("", self.in_sample)):
            form.addRow(label, widget)
        self.run_button = QPushButton("Run backtest")
        keys = QKeySequence("Ctrl+Return").toString(QKeySequence.SequenceFormat.NativeText)
        self.run_button.setToolTip(f"Backtest after costs, beside buy & hold ({keys})")
        self.run_button.clicked.connect(self.toggle_run)
        self.status = QLabel("Choose the signals and run the backtest (Ctrl+Enter).")
        self.status.setWordWrap(True)
        self.assumptions = QLabel()
        self.assumptions.setObjectName("backtestAssumptions")
        self.assumptions.setWordWrap(True)
        self.assumptions.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        left = QWidget()
        column = QVBoxLayout(left)
        column.addLayout(form)
        column.addWidget(self.run_button)
        column.addWidget(self.status)
        column.addWidget(self.assumptions)
        column.addStretch(1)
        left.setMinimumWidth(280)
        left.setMaximumWidth(340)

        from .plots import EquityPlots

        self.plots = EquityPlots()
        self.metrics = metrics_table("backtestMetrics")
        self.trades = QTableWidget(0, 7)
        self.trades.setObjectName("backtestTrades")
        self.trades.setHorizontalHeaderLabels(["Entry (UTC)", "Exit (UTC)", "Side", "Entry",
                                               "Exit", "Return %", "Fees"])
        self.trades.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.trades.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.trades.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents)
        self.trades.verticalHeader().setVisible(False)
        self.trades.setWordWrap(False)
        self.trades.activated.connect(lambda index: self.show_trade(index.row()))
        self.gap = gap_table("backtestHindsightGap")
        self.gap_label = QLabel(GAP_TITLE)
        self.gap_label.setWordWrap(True)
        self.trades_label = QLabel("Trades")
        tables = QWidget()
        tables_column = QVBoxLayout(tables)
        tables_column.setContentsMargins(0, 0, 0, 0)
        tables_column.addWidget(QLabel("Metrics (backtesting.py's names)"))
        tables_column.addWidget(self.metrics)  # as tall as its rows (``fill_metrics``)
        tables_column.addWidget(self.gap_label)
        tables_column.addWidget(self.gap)  # as tall as its rows (``show_gap``)
        self.gap.hide()  # until a backtest of the marks
        self.gap_label.hide()
        tables_column.addWidget(self.trades_label)
        tables_column.addWidget(self.trades, 1)
        results = QSplitter(Qt.Orientation.Horizontal)
        results.addWidget(self.plots)
        results.addWidget(tables)
        results.setSizes([440, 600])
        row = QHBoxLayout(self)
        row.addWidget(left)
        row.addWidget(results, 1)
        self.signals.addItem("Your marked trades", ANNOTATIONS)  # the runs: when shown

    @staticmethod
    def _spin(lo, hi, value, step, decimals, tip) -> QDoubleSpinBox:
        spin = QDoubleSpinBox()
        spin.setRange(lo, hi)
        spin.setDecimals(decimals)
        spin.setSingleStep(step)
        spin.setValue(value)
        spin.setToolTip(tip)
        return spin

    # -- the choices --------------------------------------------------------------------------
    def refresh_signals(self) -> None:
        """List the marks and every saved run that can be loaded (newest first), keeping the
        choice made."""
        from ...ml.checkpoints import CheckpointStore

        chosen = self.signals.currentData()
        self.signals.blockSignals(True)
        self.signals.clear()
        self.signals.addItem("Your marked trades", ANNOTATIONS)
        try:
            runs = CheckpointStore(self.paths.checkpoints_dir).list_runs(check=True)
        except (OSError, WorkstationError) as exc:
            log.warning("backtest: the saved runs cannot be listed: %s", exc)
            runs = []
        for run in reversed(runs):
            if run.error is None and run.step:
                self.signals.addItem(f"run {run.run_id} {run.provenance or ''}".strip(),
                                     RUN_PREFIX + run.run_id)
        index = self.signals.findData(chosen)
        self.signals.setCurrentIndex(max(0, index))
        self.signals.blockSignals(False)
        self._signals_changed()

    def _signals_changed(self, *_args) -> None:
        model = str(self.signals.currentData() or "").startswith(RUN_PREFIX)
        for widget in (self.head, self.threshold, self.in_sample):
            widget.setEnabled(model)
        for command_id in ("backtest.head_position", "backtest.head_candle",
                           "backtest.confidence", "backtest.in_sample"):
            self.choice_actions[command_id].setEnabled(model)

    def _bring_forward(self) -> None:
        if self.show_view is not None:
            self.show_view()

    def _choose(self, combo: QComboBox, data: str) -> None:
        """A choice's command: the view forward, ``combo`` on the item of ``data``."""
        self._bring_forward()
        combo.setCurrentIndex(combo.findData(data))
        combo.setFocus()

    def _edit(self, field: QWidget) -> None:
        """A value's command: the view forward, the keyboard in ``field``."""
        self._bring_forward()
        field.setFocus()

    def choose_newest_run(self) -> None:
        """Signals: the newest saved run's, or say that there is none."""
        self._bring_forward()
        if self.signals.count() < 2:
            self.refresh_signals()
        if self.signals.count() < 2:
            self._say("no saved run to backtest: train one first (F5)", failed=True)
            return
        self._choose(self.signals, str(self.signals.itemData(1)))

    def _in_sample_chosen(self) -> None:
        self._bring_forward()
        self.in_sample.setChecked(self.choice_actions["backtest.in_sample"].isChecked())
        self.in_sample.setFocus()

    def current_request(self) -> BacktestRequest:
        fee = self.fee.value()
        return BacktestRequest(
            signals=str(self.signals.currentData() or ANNOTATIONS),
            head=str(self.head.currentData()), thresholds=(round(self.threshold.value(), 4),),
            fee_bps=None if fee < 0 else fee, slippage_bps=self.slippage.value(),
            size=self.trade_size.value(), fill=str(self.fill.currentData()),
            in_sample=self.in_sample.isChecked())

    # -- running ------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._running

    def toggle_run(self) -> None:
        """Run the backtest, or stop the one running."""
        if self.running:
            self._stop.set()
            self.status.setText("stopping…")
            return
        candles, key = self.live.candles, self.live.key
        if key is None or candles is None or len(candles) < 3:
            self._say("no candles to backtest: open a data source first", failed=True)
            return
        try:
            request = self.current_request()
        except WorkstationError as exc:
            self._say(str(exc), failed=True)
            return
        self.request = request
        self._candles = candles.copy()  # the feed goes on
        self._stop = threading.Event()
        stop, db, store_dir = self._stop, self.paths.annotations_db, self.paths.checkpoints_dir
        cache = self.paths.candle_cache
        snapshot = self._candles

        def task():
            from ...ml.checkpoints import CheckpointStore
            from ...ml.trainer import Stopped

            try:
                return run_request(request, snapshot, key, annotations_db=db,
                                   store=CheckpointStore(store_dir), should_stop=stop.is_set,
                                   candle_cache=cache)
            except Stopped:
                return _Stopped()

        runner = WorkerThread(TaskWorker(task, "backtest", self.relay), "backtest")
        runner.finished.connect(self._runner_finished)
        self._runners.append(runner)
        self._running = True
        self.run_button.setText("Stop backtest")
        self._say(f"backtesting {len(snapshot):,} candles of {key.provenance}…")
        runner.start()

    @Slot()
    def _runner_finished(self) -> None:
        self.relay.flush()
        for runner in [r for r in self._runners if not r.is_running()]:
            runner.join(0)
            self._runners.remove(runner)

    @Slot(list)
    def _delivered(self, items: list) -> None:
        for item in items:
            self._running = False
            self.run_button.setText("Run backtest")
            if isinstance(item, TaskFailed):
                self._say(f"backtest failed: {item.message}", failed=True)
                self.finished.emit(item.message)
            elif isinstance(item, _Stopped):
                self._say("backtest stopped: nothing new is shown")
                self.finished.emit("stopped")
            else:
                self.show_results(item)
                self.finished.emit(item)

    def shutdown(self, timeout_s: float = 10.0) -> bool:
        """Stop a running backtest and wait for it; True if it has ended."""
        self._stop.set()
        return all(runner.join(timeout_s) for runner in self._runners)

    def _say(self, text: str, failed: bool = False) -> None:
        (log.warning if failed else log.info)("backtest: %s", text)
        self.status.setText(text)
        self.status.setStyleSheet("color: #ef5350;" if failed else "")

    # -- the results --------------------------------------------------------------------------
    def show_results(self, results: list[BacktestResult]) -> None:
        self.results = results
        candles = self._candles
        assert candles is not None  # results come from a run
        first = results[0]
        lines = first.assumptions.lines() + [prices_line(first)]
        samples = [f"{r.name}: {r.assumptions.sample}" for r in results]
        text = "<br>".join(lines + samples)
        if any(r.assumptions.sample == IN_SAMPLE for r in results):
            text += ("<br><b style='color:#ef5350'>IN-SAMPLE: the model was trained on this "
                     "span, so this is not evidence of an edge.</b>")
        self.assumptions.setText(text)
        self.plots.show_results(results, candles.ts)
        fill_metrics(self.metrics, results)
        self.show_gap(results)
        signal = lead(results)
        self._fill_trades(signal)
        self._draw_trades(signal)
        self._say(summary(results))

    def show_gap(self, results: list[BacktestResult]) -> None:
        """The hindsight gap of the span, or nothing (hidden) without both marks samples."""
        gap = hindsight_gap(results, WHOLE_SPAN)
        self.gap.setVisible(gap is not None)
        self.gap_label.setVisible(gap is not None)
        fill_gaps(self.gap, [] if gap is None else [gap])

    def gap_rows(self) -> list[tuple[str, ...]]:
        """The hindsight gap table's texts, a tuple a row (none when it is hidden)."""
        return cell_texts(self.gap)

    def metric_cell(self, label: str, name: str) -> str:
        """The metrics table's text for metric (or ``WORTH_SHOWN`` figure) ``label`` of
        signal ``name``."""
        return metric_cell(self.metrics, self.results, label, name)

    def _fill_trades(self, result: BacktestResult) -> None:
        assert self._candles is not None  # results come from a run
        t, ts = result.run.trades, self._candles.ts
        self.trades_label.setText(f"Trades of {result.name}: {len(t):,}")
        self.trades.setRowCount(len(t))
        for i in range(len(t)):
            cells = (_when(int(ts[t.entry_bar[i]])), _when(int(ts[t.exit_bar[i]])) +
                     (" (end)" if t.closed_at_end[i] else ""),
                     "long" if t.direction[i] > 0 else "short", f"{t.entry_price[i]:,.2f}",
                     f"{t.exit_price[i]:,.2f}", f"{t.return_pct[i] * 100:+.2f}",
                     f"{t.fees[i]:,.2f}")
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col == 5:
                    item.setForeground(QColor(_WIN if t.pnl[i] > 0 else _LOSS))
                self.trades.setItem(i, col, item)

    def _draw_trades(self, result: BacktestResult) -> None:
        """The trades' fills on the chart (the first ``MAX_TRADES_DRAWN``)."""
        overlays = self.chart.overlays
        overlays.clear(GROUP)
        assert self._candles is not None  # results come from a run
        t, ts = result.run.trades, self._candles.ts
        for i in range(min(len(t), MAX_TRADES_DRAWN)):
            long = t.direction[i] > 0
            color = _WIN if t.pnl[i] > 0 else _LOSS
            t0, t1 = int(ts[t.entry_bar[i]]), int(ts[t.exit_bar[i]])
            overlays.add_marker(t0, float(t.entry_price[i]), "up" if long else "down",
                                color, group=GROUP)
            overlays.add_marker(t1, float(t.exit_price[i]), "down" if long else "up",
                                color, group=GROUP)
            overlays.add_segment(t0, float(t.entry_price[i]), t1, float(t.exit_price[i]),
                                 color, group=GROUP)
        if len(t) > MAX_TRADES_DRAWN:
            log.info("backtest: the first %d of %d trades are drawn on the chart",
                     MAX_TRADES_DRAWN, len(t))

    def clear_chart(self) -> None:
        """Remove the trades from the chart (the results stay here)."""
        self.chart.overlays.clear(GROUP)

    def show_trade(self, row: int) -> None:
        """Bring the chart forward on trade ``row`` of the table (with a margin around it)."""
        if not self.results or not 0 <= row < self.trades.rowCount():
            return
        signal = lead(self.results)
        assert self._candles is not None  # results come from a run
        t, ts = signal.run.trades, self._candles.ts
        t0, t1 = int(ts[t.entry_bar[row]]), int(ts[t.exit_bar[row]])
        margin = max(t1 - t0, 20 * self._candles.timeframe.ms)
        if self.show_chart is not None:
            self.show_chart()
        self.chart.show_time_range(t0 - margin, t1 + margin)

    @property
    def trade_times(self) -> np.ndarray:
        """The first signal's (``report.lead``) trades as ``[entry ts, exit ts]`` rows (ms
        UTC)."""
        if not self.results:
            return np.empty((0, 2), dtype=np.int64)
        signal = lead(self.results)
        assert self._candles is not None  # results come from a run
        t, ts = signal.run.trades, self._candles.ts
        return np.column_stack([ts[t.entry_bar], ts[t.exit_bar]]).astype(np.int64)


class BacktestTab(QObject):
    """The Backtest view as a tab of the main window's centre, with its window-wide keys:
    F9 (the view or the chart) and Shift+B (clear its trades from the chart)."""

    def __init__(self, window, tabs, view: BacktestView):
        super().__init__(window)
        self.tabs = tabs
        self.view = view
        tabs.addTab(view, "Backtest")
        tabs.tabBar().setVisible(tabs.count() > 1)
        # the saved runs are read when the view comes forward (F9 or its tab), not at start-up
        tabs.currentChanged.connect(self._shown)
        self.command_actions = create_command_actions(window, {
            "view.backtest": self.toggle, "backtest.clear": view.clear_chart,
        }, Qt.ShortcutContext.WindowShortcut)
        self.command_actions.update(view.command_actions)
        view.show_view = lambda: self.tabs.setCurrentWidget(view)  # lists the runs: _shown

    def _shown(self, _index: int) -> None:
        if self.tabs.currentWidget() is self.view and not self.view.running:
            self.view.refresh_signals()

    def toggle(self) -> None:
        if self.tabs.currentWidget() is self.view:
            self.tabs.setCurrentIndex(0)
            self.view.chart.take_focus()
        else:
            self.tabs.setCurrentWidget(self.view)  # which lists the runs (``_shown``)
            self.view.signals.setFocus()
