"""The main window: chart in the centre (the training workspace in a tab beside it, or in a
window of its own), annotation list and log docks, data bar, status bar, and the menus built
from the command actions of the keymap's commands."""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from pathlib import Path
from typing import cast

from PySide6.QtCore import QChildEvent, QEvent, QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QActionGroup, QCloseEvent, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .. import __version__
from ..errors import WorkstationError
from ..paths import AppPaths
from .chart.chart_widget import ChartWidget
from .chart_area import ChartArea
from .command_registry import create_command_actions
from .data_bar import DataBar
from .focus import keep_tab_order, to_front, types_text
from .indicator_commands import IndicatorCommands
from .live_data import LiveData
from .log_dock import LogDock
from .offline_banner import OfflineBanner
from .question import ask
from .resources import icon
from .status import StatusPanel
from .theme import CHART_COLORS, THEMES, apply_theme

log = logging.getLogger(__name__)
FIRST_SOURCE = ("binance", "ETH/USDT", "1m")


class MainWindow(QMainWindow):
    """See the module docstring. ``close_requested`` fires when the user closes the window;
    the app then awaits ``shutdown()``, which stops the feed and training and saves."""

    close_requested = Signal()

    def __init__(self, paths: AppPaths):
        super().__init__()
        self.paths = paths
        self.settings = QSettings(str(paths.config_dir / "workstation.ini"),
                                  QSettings.Format.IniFormat)
        # the theme first: each widget is then styled once, as it is made
        apply_theme(cast(QApplication, QApplication.instance()),
                    cast(str, self.settings.value("view/theme", "dark")))
        self.setWindowTitle(f"Workstation {__version__}")
        self.setObjectName("mainWindow")
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks
                            | QMainWindow.DockOption.AllowTabbedDocks)
        self._shut_down = False
        self._opening: asyncio.Future | None = None  # the source being opened

        self.live = LiveData(paths.candle_cache, self)
        self.chart = ChartWidget(self)  # chart 1: the annotation tools, training, backtests
        self.chart_area = ChartArea(self.chart, self.settings, paths.candle_cache, self,
                                    feed=self.live)
        self.indicators = IndicatorCommands(self, self.chart_area, self.settings, self._say)
        self.offline = OfflineBanner(self)
        centre = QWidget(self)
        column = QVBoxLayout(centre)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.offline)
        column.addWidget(self.chart_area, 1)
        self.centre_tabs = QTabWidget(self)  # Chart, and Training unless it has a window
        self.centre_tabs.setObjectName("centreTabs")
        self.centre_tabs.setDocumentMode(True)
        self.centre_tabs.addTab(centre, "Chart")
        self.setCentralWidget(self.centre_tabs)
        self.data_bar = DataBar(self)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.data_bar)
        self.data_bar.attach(self.live, self.settings)  # fills in symbols, remembers them
        self.status = StatusPanel(self.statusBar(), self.live)
        self.log_dock = LogDock(self)
        self.log_dock.attach()
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.log_dock)

        from .annotations.dock import AnnotationLayer
        from .linked_annotations import LinkedAnnotations
        from .training.panel import TrainingPanel
        from .training.workspace import TrainingWorkspace

        self.annotations = AnnotationLayer(paths, self.live, self.chart, self)
        self.linked_annotations = LinkedAnnotations(self.annotations.store, self.chart_area)
        for other in self.chart_area.charts[1:]:  # the annotation keys act on the active chart
            self.annotations.attach(other)
        self.chart_area.active_changed.connect(self._annotation_target)
        self.chart_area.series_changed.connect(self._annotation_target)
        self.annotations.selected_changed.connect(self._annotation_selected)
        self._annotation_target()
        from .drawings.layer import DrawingLayer

        self.drawings = DrawingLayer(self.annotations, self.chart_area, self.settings)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.annotations.dock)
        self.training = TrainingPanel(paths, self.live, self.chart, self)
        from .alert_layer import AlertLayer
        from .desktop_notify import DesktopNotifier

        self.alerts = AlertLayer(self, paths.alerts_file, self.live, self.drawings,
                                 self.settings, self._say, DesktopNotifier(self))
        self.training.live_stepped.connect(self.alerts.live_step)
        self.indicators.feed_inputs = self.training.settings.set_indicator_inputs
        self.training_workspace = TrainingWorkspace(self, self.centre_tabs, self.training,
                                                    self.settings)
        from .teaching import Teacher

        self.teacher = Teacher(self, paths, self.live, self.annotations.store, self.training,
                               self.training_workspace.show_report, self._say)
        from .annotations.label_review import LabelReview

        self.label_review = LabelReview(self.training.evaluation.suspects, self.annotations,
                                        self.chart)
        self.training.review.open_requested.connect(self._review_stretch)
        from .backtest.view import BacktestTab, BacktestView

        self.backtest = BacktestTab(self, self.centre_tabs, BacktestView(
            paths, self.live, self.chart, show_chart=self.chart.take_focus))

        from .replay_mode import ReplayMode

        self.replay = ReplayMode(self)
        from .consistency_check import ConsistencyCheck

        self.consistency = ConsistencyCheck(self)
        self.training.device_text_changed.connect(self.status.show_device)
        self.training.state_changed.connect(self._training_state)
        self.live.candles_changed.connect(self._candles_changed)
        self.chart_area.base_timeframe_requested.connect(self._base_timeframe)
        self.chart_area.message.connect(self._say)
        self.live.state_changed.connect(self._state_changed)
        self.data_bar.open_requested.connect(self._open_requested)
        self.offline.retry_requested.connect(self._retry)
        self.offline.demo_requested.connect(self._open_demo)
        self.offline.import_requested.connect(self.import_csv)
        self.data_bar.handed_back.connect(self.focus_home)
        self._build_menus()
        self.resize(1500, 900)
        self._restore()
        keep_tab_order(self)  # Tab walks the areas as they sit on screen
        self._shown_once = False

    # -- the keyboard ----------------------------------------------------------------------
    def focus_home(self) -> bool:
        """Give the keyboard to the active chart, if the charts are on screen (not behind the
        training or backtest tab); returns whether it did. At launch, after a layout switch,
        a dialog, an overlay or a source switch, the chart's keys act at once."""
        chart = self.chart_area.active_chart
        if self._shut_down or not chart.isVisible():
            return False
        if not self.isActiveWindow():  # with no window manager nobody else activates it
            to_front(self)
        chart.view.setFocus(Qt.FocusReason.OtherFocusReason)
        return True

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_once:  # not the source field, the first widget of the Tab chain
            self._shown_once = True
            QTimer.singleShot(0, self.focus_home)

    def childEvent(self, event: QChildEvent) -> None:
        super().childEvent(event)
        child = event.child()
        if event.type() == QEvent.Type.ChildPolished and isinstance(child, QDialog):
            child.installEventFilter(self)  # a dialog of this window: see eventFilter

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Hide and isinstance(watched, QDialog):
            QTimer.singleShot(0, self._after_dialog)  # it closed: the keyboard to the chart
        return False

    def _after_dialog(self) -> None:
        active = QApplication.activeModalWidget()
        if active is None and not any(isinstance(w, QDialog) and w.isVisible()
                                      for w in QApplication.topLevelWidgets()):
            self.focus_home()

    # -- data ------------------------------------------------------------------------------
    def initial_source(self, args) -> tuple[str, str | None, str]:
        """The command line's choice, else the last one used, else binance ETH/USDT 1m."""
        if args.source:
            return args.source, args.symbol, args.timeframe or "1m"
        last = self.settings.value("data/last")
        if isinstance(last, list) and len(last) == 3:
            return last[0], last[1] or None, last[2]
        return FIRST_SOURCE

    async def open_source(self, source: str, symbol: str | None, timeframe: str, *,
                          speed: float = 1.0, symbol_ok: bool = False) -> None:
        """Open a source on ``timeframe`` ("": a file's own). A file refused for its
        timeframe leaves the chart and the data bar as they were and says why in the status
        bar; one that contradicts its symbol is asked about first, and opened on a yes."""
        from ..market.file_symbol import SymbolMismatch

        live = self.live
        shown = (live.spec, live.key.symbol, live.key.timeframe.name) \
            if live.spec and live.key is not None else None
        if timeframe:
            self.data_bar.set_values(source, symbol or "", timeframe)
        await live.open(source, symbol, timeframe, speed=speed, symbol_ok=symbol_ok)
        refused = live.refused
        if refused is None:
            opened_on = timeframe or (live.key.timeframe.name if live.key is not None else "")
            self.settings.setValue("data/last", [source, symbol or "", opened_on])
        elif shown is not None:
            self.data_bar.set_values(*shown)
        if isinstance(refused, SymbolMismatch):
            as_symbol = refused.symbol

            def answered(yes: bool) -> None:
                if yes:
                    self._opening = asyncio.ensure_future(self.open_source(
                        source, as_symbol, timeframe, speed=speed, symbol_ok=True))

            ask(self, f"{refused.reason}. Open it as {as_symbol} anyway? It is stored as "
                      f"{as_symbol}, and your {as_symbol} marks are drawn on its candles.",
                f"Open as {as_symbol}", answered, name="symbolQuestion")
            return
        if refused is not None:
            self.statusBar().showMessage(str(refused), 20_000)
            if shown is None:  # nothing on screen to keep: the banner says why, and stays
                self.offline.show_problem("failed", str(refused))
        if not types_text(QApplication.focusWidget()):  # unless the trader went to type
            self.focus_home()

    def _open_requested(self, source: str, symbol: str, timeframe: str) -> None:
        self._opening = asyncio.ensure_future(self.open_source(source, symbol or None,
                                                               timeframe))

    def _candles_changed(self, kind: str) -> None:
        if kind == "reset":
            self.chart_area.set_base(self.live.candles, self.live.key)
            key = self.live.key
            self.data_bar.show_demo(bool(key and key.is_demo))
            self.setWindowTitle(f"Workstation {__version__} — {key.provenance if key else ''}")
        else:
            self.chart_area.base_changed(kind)

    def _annotation_target(self, *_) -> None:
        area = self.chart_area
        index = area.active
        self.annotations.set_target(area.charts[index], area.series_key(index),
                                    area.name_of(index) if len(area.shown()) > 1 else "")

    def _annotation_selected(self, ann) -> None:
        target = self.annotations.target  # chart 1's own layer highlights its own
        self.linked_annotations.select(None if target is self.chart else target, ann)

    def _say(self, text: str) -> None:
        self.statusBar().showMessage(text, 10_000)

    def _review_stretch(self, stretch) -> None:
        """A stretch of the Review tab, opened in blind replay at its start (on its series)."""
        queue = self.training.review.queue
        if queue is not None and self.live.key != queue.series:
            self._say(f"That stretch is of {queue.series.provenance}: open it to replay there")
            return
        self.replay.start_at(stretch.start_ts)

    def _base_timeframe(self, timeframe: str) -> None:
        """Chart 1 steps to another timeframe: the source opens on it (a file's candles
        resampled from the file's own timeframe, the next whole multiple of it; a file has
        none shorter than its own)."""
        from ..market.timeframes import ALL, parse_timeframe

        source, symbol, _ = self.data_bar.values()
        own, key = self.live.file_timeframe, self.live.key
        wanted = parse_timeframe(timeframe)
        if own is not None and key is not None:
            name = key.source.removeprefix("csv:")
            fits = [tf for tf in ALL if tf.ms % own.ms == 0]
            longer = [tf for tf in fits if tf >= wanted]
            shorter = [tf for tf in fits if tf <= wanted]
            step = (longer[:1] if wanted > key.timeframe else shorter[-1:])
            if wanted < own or not step:
                self.statusBar().showMessage(f"{name} has no candles shorter than {own.name}",
                                             10_000)
                return
            wanted = step[0]
        self._open_requested(source, symbol, wanted.name)

    def _state_changed(self, state: str, detail: str) -> None:
        if state in ("offline", "failed"):  # says in words that the chart is not live
            self.offline.show_problem(state, detail)
        elif state not in ("connecting", "reconnecting"):
            self.offline.hide()
        if state in ("offline", "failed"):
            self.statusBar().showMessage(detail, 20_000)

    def _retry(self) -> None:
        self._open_requested(*self.data_bar.values())

    def _open_demo(self) -> None:
        self._open_requested("demo", "", self.data_bar.values()[2])

    def _training_state(self, state: str) -> None:
        self.training_workspace.bring_forward(state)  # a run that starts (or fails)

    def import_csv(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import candles", str(Path.home()),
                                              "Candle files (*.csv *.csv.gz *.zip);;All files (*)")
        if not path:
            return
        # no symbol: the one used with this file before, else what its name says (not the
        # symbol of the source on screen, which may be another market's); no timeframe: the
        # file's own
        self._open_requested(f"csv:{path}", "", "")

    def export_candles(self, path: str | None = None) -> Path | None:
        """Write the closed candles on screen to a CSV file (asked for when ``path`` is None);
        returns the file written, None if nothing was."""
        from ..market.csv_io import write_candles_csv

        candles, key = self.live.candles, self.live.key
        closed = candles.n_closed
        if key is None or closed <= 0:
            self.statusBar().showMessage("no closed candles on screen to export", 10_000)
            return None
        if path is None:
            name = f"{key.symbol.replace('/', '')}_{key.timeframe}.csv".lower()
            path, _ = QFileDialog.getSaveFileName(self, "Export candles", str(Path.home() / name),
                                                  "CSV files (*.csv)")
            if not path:
                return None
        try:
            written = write_candles_csv(candles.slice(0, closed), Path(path))
        except (OSError, WorkstationError) as exc:
            self.statusBar().showMessage(f"the candles were not exported: {exc}", 20_000)
            log.warning("export candles: %s", exc)
            return None
        text = f"{closed:,} closed candles of {key.provenance} written to {written}"
        log.info("export candles: %s", text)
        self.statusBar().showMessage(text, 10_000)
        return written

    # -- menus -----------------------------------------------------------------------------
    def _build_menus(self) -> None:
        from .help import CheatSheet, CommandPalette, show_about

        window_actions = create_command_actions(self, {
            "file.import_candles": self.import_csv, "file.export_candles": self.export_candles,
            "file.quit": self.close,
            **{f"view.theme_{name}": partial(self.set_theme, name) for name in THEMES},
            "help.about": partial(show_about, self)}, Qt.ShortcutContext.WindowShortcut)
        for command_id, icon_name in (("file.import_candles", "import"),
                                      ("file.export_candles", "export"),
                                      ("file.quit", "quit"), ("help.about", "about")):
            window_actions[command_id].setIcon(icon(icon_name))
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        for command_id in ("file.import_candles", "file.export_candles"):
            file_menu.addAction(window_actions[command_id])
        file_menu.addSeparator()
        for action in self.annotations.file_actions():
            file_menu.addAction(action)
        file_menu.addSeparator()
        file_menu.addAction(window_actions["file.quit"])

        view = bar.addMenu("&View")
        for action in self.chart.command_actions.values():
            view.addAction(action)
        view.addSeparator()
        for action in self.chart_area.command_actions.values():
            view.addAction(action)
        view.addSeparator()
        themes = QActionGroup(self)
        self.theme_actions = {}
        for name in THEMES:
            action = window_actions[f"view.theme_{name}"]
            action.setCheckable(True)
            themes.addAction(action)
            view.addAction(action)
            self.theme_actions[name] = action
        view.addSeparator()
        for dock in (self.annotations.dock, self.log_dock):
            view.addAction(dock.toggleViewAction())
        for action in self.training_workspace.command_actions.values():
            view.addAction(action)
        for action in self.backtest.command_actions.values():
            view.addAction(action)
        view.addAction(self.data_bar.toggleViewAction())

        indicators = bar.addMenu("&Indicators")
        for action in self.indicators.command_actions.values():
            indicators.addAction(action)

        draw = bar.addMenu("&Draw")
        for action in self.drawings.command_actions.values():
            draw.addAction(action)
        draw.addSeparator()
        for action in self.alerts.command_actions.values():
            draw.addAction(action)

        replay = bar.addMenu("&Replay")
        for action in self._replay_actions():
            replay.addAction(action)

        annotate = bar.addMenu("&Annotate")
        for action in self.annotations.command_actions.values():
            annotate.addAction(action)

        train = bar.addMenu("&Train")
        for action in self.training.command_actions.values():
            train.addAction(action)
        train.addSeparator()
        for action in self.teacher.command_actions.values():
            train.addAction(action)

        help_menu = bar.addMenu("&Help")
        self.cheat_sheet = CheatSheet(self)
        self.command_palette = CommandPalette(self)
        help_actions = create_command_actions(
            self, {"help.shortcuts": self.cheat_sheet.toggle,
                   "help.palette": self.command_palette.open_palette},
            Qt.ShortcutContext.WindowShortcut)
        for action in help_actions.values():
            help_menu.addAction(action)
        focus = [a for i, a in self.chart_area.command_actions.items()
                 if i.startswith("chart.focus")]
        shared = [*focus, *help_actions.values(),
                  *(a for i, a in self.backtest.command_actions.items() if i != "backtest.run")]
        self.training_workspace.share(
            shared, lambda: self.chart_area.focus_chart(self.chart_area.active))
        help_menu.addAction(window_actions["help.about"])

    def _replay_actions(self) -> list:
        """The Replay menu: starting and ending anywhere in the window, playing on the charts."""
        r = self.replay
        window = create_command_actions(self, {
            "replay.start_random": r.start_random, "replay.start_cursor": r.start_at_cursor,
            "replay.span": r.ask_span, "replay.resume": lambda: r.resume(),
            "replay.end": r.end, "replay.consistency": self.consistency.step,
            "replay.consistency_report": self.consistency.report},
            Qt.ShortcutContext.WindowShortcut)
        on_charts = create_command_actions(self.chart, {
            "replay.play": r.toggle_play, "replay.step": lambda: r.step(1),
            "replay.step_many": r.step_many, "replay.faster": r.faster,
            "replay.slower": r.slower})
        for chart in self.chart_area.charts[1:]:
            chart.addActions(list(on_charts.values()))
        return [*list(window.values())[:2], *on_charts.values(), *list(window.values())[2:]]

    def set_theme(self, name: str) -> None:
        applied = apply_theme(cast(QApplication, QApplication.instance()), name)
        self.chart_area.set_colors(CHART_COLORS[applied])
        self.theme_actions[applied].setChecked(True)
        self.settings.setValue("view/theme", applied)

    # -- persistence and closing -----------------------------------------------------------
    def _restore(self) -> None:
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)
        else:  # first launch: the chart gets most of the room
            self.resizeDocks([self.annotations.dock], [340], Qt.Orientation.Horizontal)
            self.resizeDocks([self.log_dock], [130], Qt.Orientation.Vertical)
        self.set_theme(cast(str, self.settings.value("view/theme", "dark")))

    def _save(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._shut_down:
            event.accept()
            return
        event.ignore()
        self.close_requested.emit()

    async def shutdown(self) -> None:
        """Stop the feed (closing exchange connections) and the training run (saving at a
        safe point), save the layout, then close for real."""
        if self._shut_down:
            return
        self._save()
        self.replay.shutdown()
        self.consistency.shutdown()
        await self.live.stop()
        if not self.training.shutdown(timeout_s=60.0):
            QMessageBox.warning(self, "Workstation", "Training did not stop within 60 s.")
        await self.training.reference_feed.stop()
        await self.chart_area.stop_feeds()
        self.backtest.view.shutdown()
        for changed in (self.chart_area.active_changed, self.chart_area.series_changed):
            changed.disconnect(self._annotation_target)  # focus moves as the window closes
        self.linked_annotations.close()
        self.drawings.close()
        self.alerts.close()
        self.annotations.close()
        self.training_workspace.close()
        self.log_dock.detach()
        self._shut_down = True
        self.close()
