"""``ChartArea``: one, two (side by side or stacked) or four charts in the window's centre.

Chart 1 is the window's chart (training and the Backtest view use it; the annotation keys act
on the active chart, whose series ``series_key`` says). Its timeframe is the data bar's and is
the base of a ``TimeframeStack``: every other chart shows a higher timeframe resampled from it
in memory (older candles of that timeframe come from the candle cache when it has them), so
the charts never disagree. A chart that is not linked by symbol keeps its symbol when chart 1
switches (``kept``); it stays live on a feed of its own (``HeldSeries``, given chart 1's feed
to copy) until chart 1 comes back to that symbol or the chart is linked again. The layout,
each chart's timeframe, the active chart and the links persist in the window's settings.

Keys (the "Charts" group of the keymap): Ctrl+1 .. Ctrl+4 bring the charts forward and
make that chart active (outlined; its chart keys act); Alt+1 .. Alt+4 pick the layout;
``[`` / ``]`` step the timeframe of the chart with the keyboard; Ctrl+Shift+Y / X / T
switch the symbol, crosshair and time links; Ctrl+Shift+L puts the active chart into the
link group or takes it out.
The sync rules live in ``viewmodel.LinkGroup``; this widget flushes it once per frame.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QFrame, QGridLayout, QMainWindow, QVBoxLayout, QWidget

from ..errors import WorkstationError
from ..market.cache import CandleCache
from ..market.candles import Candles
from ..market.series import SeriesKey
from ..market.timeframe_stack import TimeframeStack
from ..market.timeframes import ALL, Timeframe, parse_timeframe
from ..viewmodel import LinkGroup
from .chart.chart_widget import ChartWidget
from .command_registry import create_command_actions
from .focus import set_tab_order, window_areas
from .held_series import HeldSeries
from .live_data import LiveData

log = logging.getLogger(__name__)
LAYOUTS: dict[str, tuple[tuple[int, int], ...]] = {  # grid cells of charts 1, 2, ...
    "one": ((0, 0),),
    "side_by_side": ((0, 0), (0, 1)),
    "stacked": ((0, 0), (1, 0)),
    "four": ((0, 0), (0, 1), (1, 0), (1, 1)),
}
DEFAULT_TIMEFRAMES = ("1m", "15m", "1h", "1d")
CHARTS = len(DEFAULT_TIMEFRAMES)
OUTLINE = "#2962ff"
OUTLINE_PX = 2


def _call(method, value):
    """A slot that calls ``method(value)`` whatever the signal passes (``checked``)."""
    return lambda *_: method(value)


def shown_timeframe(wanted: Timeframe, base: Timeframe) -> Timeframe:
    """The timeframe a chart that wants ``wanted`` shows over ``base`` candles: ``wanted``
    when it is a whole multiple of the base, else the next longer one that is (the base if
    none is)."""
    fits = [tf for tf in ALL if tf.ms % base.ms == 0 and tf.ms >= wanted.ms]
    return min(fits) if fits else base


class ChartFrame(QFrame):
    """A chart's place in the grid: outlined in the accent colour while it is active."""

    def __init__(self, chart: ChartWidget, parent: QWidget | None = None):
        super().__init__(parent)
        self.chart = chart
        self.active = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(OUTLINE_PX, OUTLINE_PX, OUTLINE_PX, OUTLINE_PX)
        layout.addWidget(chart)

    def set_active(self, active: bool) -> None:
        if active != self.active:
            self.active = active
            self.update()

    def paintEvent(self, event) -> None:
        if not self.active:
            return
        painter = QPainter(self)
        pen = QPen(QColor(OUTLINE), OUTLINE_PX)
        pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
        painter.setPen(pen)
        half = OUTLINE_PX / 2
        painter.drawRect(self.rect().toRectF().adjusted(half, half, -half, -half))
        painter.end()


class ChartArea(QWidget):
    """See the module docstring. ``base_timeframe_requested(name)``: chart 1 is to show
    another timeframe, which means opening the source on it (the window does)."""

    base_timeframe_requested = Signal(str)
    active_changed = Signal(int)  # the index of the chart that became active
    series_changed = Signal()  # the charts shown or their series changed
    message = Signal(str)  # a line for the status bar

    def __init__(self, primary: ChartWidget, settings: QSettings | None = None,
                 cache_path: Path | None = None, parent: QWidget | None = None,
                 feed: LiveData | None = None):
        super().__init__(parent)
        self.settings = settings
        self.cache_path = cache_path
        self.feed = feed  # chart 1's: a chart that keeps another symbol gets a feed like it
        self.kept: dict[int, SeriesKey] = {}  # chart -> the series it keeps (chart 1's before)
        self.feeds: dict[SeriesKey, HeldSeries] = {}  # the kept series' own feeds
        self._streamed: set[SeriesKey] = set()  # series chart 1 showed from a stream
        self.charts: list[ChartWidget] = [primary]
        self.frames: list[ChartFrame] = [ChartFrame(primary, self)]
        try:  # settings a person may have edited: what cannot be read is the default
            self.wanted = [parse_timeframe(str(tf)) for tf in
                           self._setting("charts/timeframes", DEFAULT_TIMEFRAMES)]
            links = [str(x).lower() == "true" for x in self._setting("charts/links",
                                                                     ("true",) * 3)]
            self.unlinked = {int(x) for x in self._setting("charts/unlinked", ()) if str(x)}
            active = int(self._setting("charts/active", 0))
            if len(self.wanted) != CHARTS or len(links) != 3:
                raise ValueError("not one value per chart and link")
        except (ValueError, WorkstationError) as exc:
            log.warning("chart layout settings ignored: %s", exc)
            self.wanted = [parse_timeframe(tf) for tf in DEFAULT_TIMEFRAMES]
            links, self.unlinked, active = [True] * 3, set(), 0
        self.group = LinkGroup(symbol=links[0], crosshair=links[1], time=links[2])
        self.layout_name = ""
        self.active = 0
        self.stack: TimeframeStack | None = None
        self.key: SeriesKey | None = None
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(0)
        self._flush_timer.timeout.connect(self.group.flush)
        self.group.flush_wanted.connect(self._flush_timer.start)
        self.group.marks_changed.connect(self._show_marks)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(0)
        self._wire(0)
        for index in range(1, CHARTS):  # made now, so Tab walks them right after chart 1
            self._add_chart(index)
        self.command_actions = create_command_actions(self.window(), {
            "chart.focus": lambda: self.focus_chart(0),
            **{f"chart.focus_{n}": _call(self.focus_chart, n - 1) for n in (2, 3, 4)},
            **{f"chart.layout_{name}": _call(self.switch_layout, name) for name in LAYOUTS},
            "chart.link_symbol": lambda: self.toggle_link("symbol"),
            "chart.link_crosshair": lambda: self.toggle_link("crosshair"),
            "chart.link_time": lambda: self.toggle_link("time"),
            "chart.link_active": self.toggle_active_link,
        }, Qt.ShortcutContext.WindowShortcut)
        for name in ("symbol", "crosshair", "time"):
            action = self.command_actions[f"chart.link_{name}"]
            action.setCheckable(True)
            action.setChecked(getattr(self.group, name))
        layout = str(self._setting("charts/layout", "one"))
        self.set_layout(layout if layout in LAYOUTS else "one")
        self.activate(active)

    # -- settings ----------------------------------------------------------------------------
    def _setting(self, name: str, default):
        """A setting; a list one reads back as a list however INI files keep it."""
        value = None if self.settings is None else self.settings.value(name)
        if value is None:
            return default
        if isinstance(default, tuple) and not isinstance(value, (list, tuple)):
            return [value]
        return value

    def _save(self) -> None:
        if self.settings is None:
            return
        self.settings.setValue("charts/layout", self.layout_name)
        self.settings.setValue("charts/timeframes", [tf.name for tf in self.wanted])
        self.settings.setValue("charts/active", self.active)
        self.settings.setValue("charts/links", [str(self.group.symbol).lower(),
                                                str(self.group.crosshair).lower(),
                                                str(self.group.time).lower()])
        self.settings.setValue("charts/unlinked", sorted(self.unlinked))

    # -- charts ------------------------------------------------------------------------------
    @property
    def primary(self) -> ChartWidget:
        return self.charts[0]

    @property
    def active_chart(self) -> ChartWidget:
        return self.charts[self.active]

    def shown(self) -> list[ChartWidget]:
        """The charts of the layout, chart 1 first."""
        return self.charts[: len(LAYOUTS[self.layout_name])]

    @property
    def frozen(self) -> set[int]:
        """The charts that keep another symbol than chart 1's."""
        return set(self.kept)

    def timeframe_of(self, index: int, base: Timeframe | None = None) -> Timeframe:
        """The timeframe chart ``index`` (0-based) shows over ``base`` (default: chart 1's, or
        the kept series' for a chart that keeps another symbol)."""
        if base is None and index in self.kept:
            base = self.kept[index].timeframe
        if base is None:
            base = self.stack.base.timeframe if self.stack is not None else self.wanted[0]
        return base if index == 0 else shown_timeframe(self.wanted[index], base)

    def _add_chart(self, index: int) -> None:
        chart = ChartWidget(self, colors=self.primary.colors)
        self.charts.append(chart)
        self.frames.append(ChartFrame(chart, self))
        self.frames[-1].hide()
        self._wire(index)

    def _wire(self, index: int) -> None:
        chart = self.charts[index]
        chart.setObjectName(f"chart{index + 1}")  # the palette names whose command it lists
        chart.hovered.connect(lambda ts: self.group.request_crosshair(chart.view_model, ts))
        chart.view.installEventFilter(self)
        chart.command_actions.update(create_command_actions(chart, {  # keys while it has focus
            "chart.timeframe_down": lambda: self.step_timeframe(-1, index),
            "chart.timeframe_up": lambda: self.step_timeframe(1, index),
        }))

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.window().installEventFilter(self)  # its frames: see eventFilter

    def eventFilter(self, obj, event) -> bool:
        if event.type() == event.Type.UpdateRequest and obj is self.window():
            # A frame is about to be painted: the linked charts follow now, and every chart's
            # scene hands over what it has to repaint, so all of them go into this frame
            # (not one frame per chart).
            self._flush_timer.stop()
            self.group.flush()
            for chart in self.shown():
                QCoreApplication.sendPostedEvents(chart.view.scene(), QEvent.Type.MetaCall)
        elif event.type() == event.Type.FocusIn:
            for i, chart in enumerate(self.shown()):
                if obj is chart.view:
                    self.activate(i)
        return False

    def set_layout(self, name: str) -> None:
        """Show the charts of layout ``name`` (``LAYOUTS``)."""
        if name not in LAYOUTS:
            raise WorkstationError(f"no chart layout {name!r}; choose from {', '.join(LAYOUTS)}")
        if name == self.layout_name:
            return
        cells = LAYOUTS[name]
        for frame in self.frames:
            self._grid.removeWidget(frame)
            frame.hide()
        for i, (row, column) in enumerate(cells):
            self._grid.addWidget(self.frames[i], row, column)
            self.frames[i].show()
        for i, chart in enumerate(self.charts):  # the palette offers the charts shown
            for action in chart.command_actions.values():
                action.setVisible(i < len(cells))
        for r in range(2):
            self._grid.setRowStretch(r, 1 if any(c[0] == r for c in cells) else 0)
            self._grid.setColumnStretch(r, 1 if any(c[1] == r for c in cells) else 0)
        self.layout_name = name
        self._rebuild()
        self.activate(self.active if self.active < len(cells) else 0)  # outlines; saves
        window = self.window()
        if isinstance(window, QMainWindow):  # Tab walks the charts in their places
            set_tab_order(window_areas(window))

    def switch_layout(self, name: str) -> None:
        """The layout commands: show layout ``name`` and give its active chart the keyboard
        (hiding and re-placing the charts would leave the focus on whatever came next)."""
        self.set_layout(name)
        self.focus_chart(self.active)

    def activate(self, index: int) -> None:
        """Make chart ``index`` (0-based, of the layout) the active one: outlined, its keys
        act."""
        index = min(max(int(index), 0), len(self.shown()) - 1)
        changed = index != self.active
        self.active = index
        for i, frame in enumerate(self.frames):
            frame.set_active(i == index and len(self.shown()) > 1)
        self._save()
        if changed:
            self.active_changed.emit(index)

    def focus_chart(self, index: int) -> None:
        """Bring the charts forward and give chart ``index`` the keyboard; a chart the layout
        does not show first switches to the four-chart layout."""
        if index >= len(self.shown()):
            self.set_layout("four" if index >= 2 else "side_by_side")
        self.activate(index)
        self.charts[index].take_focus()

    # -- timeframes --------------------------------------------------------------------------
    def step_timeframe(self, step: int, index: int) -> None:
        """Show chart ``index`` on the next shorter (-1) or longer (+1) timeframe."""
        now = self.timeframe_of(index)
        names = [tf for tf in ALL if (step > 0 and tf > now) or (step < 0 and tf < now)]
        if index == 0:
            if names:
                self.base_timeframe_requested.emit((names[0] if step > 0 else names[-1]).name)
            return
        base = self.kept[index].timeframe if index in self.kept else self.timeframe_of(0)
        fits = [tf for tf in names if tf.ms % base.ms == 0]
        if not fits:
            return
        self.wanted[index] = fits[0] if step > 0 else fits[-1]
        self._save()
        self._rebuild()

    # -- links -------------------------------------------------------------------------------
    def toggle_link(self, name: str) -> None:
        """Switch the ``symbol``, ``crosshair`` or ``time`` link."""
        on = not getattr(self.group, name)
        self.group.set_toggles(**{name: on})
        self.command_actions[f"chart.link_{name}"].setChecked(on)
        self._save()
        if name == "symbol" and on and self.kept:
            self.kept.clear()  # linked again: they show chart 1's symbol
            self._rebuild()

    def toggle_active_link(self) -> None:
        """Put the active chart into the link group, or take it out."""
        self.unlinked ^= {self.active}
        self._save()
        if self.active in self.kept and self.active not in self.unlinked:
            del self.kept[self.active]
            self._rebuild()
        else:
            self._relink()

    def _relink(self) -> None:
        for view in self.group.views:
            self.group.remove(view)
        for i, chart in enumerate(self.shown()):
            if i not in self.unlinked:
                self.group.add(chart.view_model)
        for chart in self.charts:
            if chart.view_model not in self.group.views:
                chart.set_link_marks(None, [])

    def _show_marks(self, view) -> None:
        for chart in self.shown():
            if chart.view_model is view:
                chart.set_link_marks(self.group.crosshair_span(view), self.group.windows(view))

    # -- candles -----------------------------------------------------------------------------
    def set_base(self, candles: Candles, key: SeriesKey | None) -> None:
        """A new series for chart 1 (a source opened, or its candles replaced): every chart
        shows it on its own timeframe; charts linked by symbol follow a new symbol, the others
        keep what they show."""
        old = self.key
        switched = (old is not None and key is not None
                    and (key.source, key.symbol) != (old.source, old.symbol))
        self.key = key
        if key is not None and self.feed is not None:  # a kept series streams if it did here
            if self.feed.streaming:
                self._streamed.add(key)
            else:
                self._streamed.discard(key)
        if switched:
            assert key is not None and old is not None  # switched says so
            following = set(map(id, self.group.request_symbol(self.primary.view_model,
                                                                key.symbol)))
            for i, chart in enumerate(self.shown()):
                if i and id(chart.view_model) not in following and i not in self.kept:
                    self.kept[i] = old
        if key is not None:  # chart 1 is back on a symbol a chart kept: it follows again
            for i in [i for i, k in self.kept.items()
                      if (k.source, k.symbol) == (key.source, key.symbol)]:
                del self.kept[i]
        self._rebuild(candles)

    def base_changed(self, kind: str) -> None:
        """Chart 1's candles changed by a feed update (``"update"`` or ``"append"``)."""
        self.primary.candles_changed(kind)
        if self.stack is None:
            return
        kinds = self.stack.sync()
        for i, chart in enumerate(self.shown()):
            if i == 0 or i in self.frozen:
                continue
            changed = kinds.get(self.timeframe_of(i))
            if changed == "reset":
                chart.set_candles(self.stack.candles(self.timeframe_of(i)), self._key_of(i))
            elif changed is not None:
                chart.candles_changed(changed)

    def follow_all(self) -> None:
        """Every chart shows chart 1's symbol again (a blind replay drives them all)."""
        if self.kept:
            self.kept.clear()
            self._rebuild()

    def series_key(self, index: int) -> SeriesKey | None:
        """The live series chart ``index`` shows: None when there is none, or when it keeps
        another symbol's candles without a feed of its own."""
        kept = self.kept.get(index)
        if kept is None:
            return self._key_of(index)
        held, tf = self.feeds.get(kept), self.timeframe_of(index)
        if held is None or held.candles(tf) is None:
            return None
        return SeriesKey(kept.source, kept.symbol, tf)

    def name_of(self, index: int) -> str:
        """How messages name chart ``index``: "chart 2 (15m)"."""
        return f"chart {index + 1} ({self.timeframe_of(index).name})"

    def _key_of(self, index: int) -> SeriesKey | None:
        key = self.key
        return None if key is None else SeriesKey(key.source, key.symbol,
                                                   self.timeframe_of(index))

    def _rebuild(self, candles: Candles | None = None) -> None:
        """Build the stack for the charts shown and give each chart its series."""
        base = candles if candles is not None else (
            self.stack.base if self.stack is not None else None)
        if base is None:
            self._relink()
            self.series_changed.emit()
            return
        shown = self.shown()
        if candles is not None:
            self.primary.set_candles(base, self.key)
        tfs = {self.timeframe_of(i, base.timeframe) for i in range(1, len(shown))
               if i not in self.kept}
        self.stack = TimeframeStack(base, tfs, self._history(tfs - {base.timeframe}))
        self._hold()
        for i in range(1, len(shown)):
            if i in self.kept:
                self._show_kept(i)
                continue
            series = self.stack.candles(self.timeframe_of(i))
            if shown[i].candles is not series:
                shown[i].set_candles(series, self._key_of(i))
            shown[i].set_title_note("")
        self._relink()
        # chart 1's new series leads; otherwise the chart that led before still does
        lead = self.primary.view_model if candles is not None else self.group.lead
        if lead is not None:
            self.group.request_time(lead)
        self.series_changed.emit()

    # -- charts that keep another symbol -----------------------------------------------------
    def _hold(self) -> None:
        """A feed for each series the charts shown keep (when chart 1's feed is known and the
        source streams); a feed no chart keeps any more stops."""
        wanted: dict[SeriesKey, set[Timeframe]] = {}
        for i, key in self.kept.items():
            if i < len(self.shown()):
                wanted.setdefault(key, set()).add(self.timeframe_of(i))
        for key in [k for k in self.feeds if k not in wanted]:
            self.feeds.pop(key).close()
        for key, tfs in wanted.items():
            if self.feed is None or key not in self._streamed:
                continue
            held = self.feeds.get(key)
            if held is None:
                held = self.feeds[key] = HeldSeries(key, self.feed, self)
                held.changed.connect(self._held_changed)
                held.state_changed.connect(self._held_state)
                held.open()
            held.set_timeframes(tfs)

    def _show_kept(self, index: int) -> None:
        """Chart ``index`` shows the series it keeps: live from its feed once that has
        candles, else the candles it showed."""
        chart, key = self.charts[index], self.kept[index]
        held, tf = self.feeds.get(key), self.timeframe_of(index)
        series = held.candles(tf) if held is not None else None
        if series is None:
            chart.set_title_note(f"{key.symbol}: connecting" if held is not None
                                 else "another symbol: not live")
            return
        assert held is not None  # the series is one of its
        if chart.candles is not series:
            # a new series: it takes the link group's lead's time (LinkGroup)
            chart.set_candles(series, SeriesKey(key.source, key.symbol, tf))
        live = held.state in ("live", "polling", "connecting", "reconnecting")
        chart.set_title_note("" if live else f"{key.symbol}: {held.state}")

    def _held_changed(self, key: SeriesKey, kinds: dict) -> None:
        """A kept series' feed moved: its charts follow (a reset shows the new series)."""
        held, reset = self.feeds.get(key), False
        for i, kept in self.kept.items():
            if kept != key or i >= len(self.shown()) or held is None:
                continue
            tf = self.timeframe_of(i)
            kind = kinds.get(tf)
            if kind == "reset" or self.charts[i].candles is not held.candles(tf):
                self._show_kept(i)
                reset = True
            elif kind is not None:
                self.charts[i].candles_changed(kind)
        if reset:
            self.series_changed.emit()

    def _held_state(self, _state: str, _detail: str) -> None:
        for i in self.kept:
            if i < len(self.shown()):
                self._show_kept(i)

    async def stop_feeds(self) -> None:
        """Stop the kept series' feeds (at shutdown), waiting until they have closed."""
        feeds, self.feeds = list(self.feeds.values()), {}
        for held in feeds:
            await held.stop()

    def _history(self, tfs) -> dict[Timeframe, Candles]:
        """Older candles of each timeframe from the candle cache (none for the demo market,
        whose timeframes are separate simulations)."""
        key = self.key
        if key is None or key.is_demo or self.cache_path is None or not tfs:
            return {}
        found = {}
        try:
            with CandleCache(self.cache_path) as cache:
                for tf in tfs:
                    older = cache.load(SeriesKey(key.source, key.symbol, tf))
                    if len(older):
                        found[tf] = older
        except WorkstationError as exc:
            log.warning("older candles for the linked charts: %s", exc)
        return found

    def set_colors(self, colors) -> None:
        for chart in self.charts:
            chart.set_colors(colors)
