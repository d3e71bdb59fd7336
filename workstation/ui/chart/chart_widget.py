"""``ChartWidget``: the live candlestick chart (see the package docstring for its API)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import QtCore, QtGui, QtWidgets

from ...display import NO_DATA, volume
from ...market.candles import Candles
from ...market.series import SeriesKey
from ...viewmodel import ChartViewModel, TimeMap, view_limits
from ...viewmodel.chart import ReadoutCandle, readout_candle
from ..command_registry import create_command_actions
from .axis import GridItem, PriceAxis, Tag, TimeAxis
from .candle_item import CandleItem, ViewSizedItem, VolumeItem
from .colors import ChartColors
from .guides import CrosshairItem, CursorItem, PriceLineItem, pixel_size
from .indicator_layer import ChartIndicators
from .link_marks import LinkMarksItem
from .overlays import ChartOverlays
from .pyramid import CandlePyramid
from .readout import format_readout, price_decimals
from .ticks import format_time, time_ticks
from .visible import VisibleCandles, empty_visible, visible_candles

ZOOM_STEP = 1.25
Y_PADDING = 0.06  # of the visible price span, above and below
VOLUME_HEADROOM = 1.12


class ChartViewBox(pg.ViewBox):
    """A pane: wheel zooms and drag pans time (price too once the user pins it); keys are
    left to the chart's actions."""

    def __init__(self):
        super().__init__(enableMenu=False, defaultPadding=0.0)
        self.setMouseEnabled(x=True, y=False)
        self.disableAutoRange()

    def keyPressEvent(self, ev) -> None:
        ev.ignore()


class _ReadoutBox(QtWidgets.QWidget):
    """Holds the readout label without a layout: its text changes with every tick, and a
    label in a layout asks the header, then the chart, to lay out again for each new text;
    here a new text repaints the label alone, once. The text is selectable while the mouse
    is over it (a selectable label repaints each new text a second time). Where the full text
    does not fit (a chart of a four-chart layout), the compact one shows, cut with "…" if
    even that does not, and the full one is the tooltip."""

    def __init__(self):
        super().__init__()
        self.label = QtWidgets.QLabel(self)
        self.label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding,
                           QtWidgets.QSizePolicy.Policy.Fixed)
        self._texts: tuple[str, Callable[[], str]] = ("", str)
        self.full_width = 0  # of the full text

    def set_texts(self, full: str, compact: Callable[[], str]) -> None:
        """The readout, and what makes its compact form for a narrow box."""
        self._texts = (full, compact)
        self._fit()

    def _fit(self) -> None:
        full, make_compact = self._texts
        metrics, width = self.label.fontMetrics(), self.width()
        text = full
        self.full_width = metrics.horizontalAdvance(full)
        if self.full_width > width:
            compact = make_compact()
            text = compact if metrics.horizontalAdvance(compact) <= width else \
                metrics.elidedText(compact, QtCore.Qt.TextElideMode.ElideRight, width)
        tip = full if text != full else ""
        if tip != self.label.toolTip():
            self.label.setToolTip(tip)
        if text != self.label.text():
            self.label.setText(text)

    def sizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(0, self.label.sizeHint().height())

    def minimumSizeHint(self) -> QtCore.QSize:
        return self.sizeHint()

    def resizeEvent(self, event) -> None:
        self.label.setGeometry(self.rect())
        self._fit()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.Type.FontChange:
            self._fit()

    def enterEvent(self, event) -> None:
        self.label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)

    def leaveEvent(self, event) -> None:
        if not self.label.hasSelectedText():
            self.label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.NoTextInteraction)


class _ChartHeader(QtWidgets.QWidget):
    """The series' title, then the readout. Where both do not fit in full, the title shows
    its short form first (``SeriesKey.short_provenance``, the full one as its tooltip), so
    that the prices keep the room. After a tick made it short, the full title comes back on
    a later tick only with some room to spare, so it does not flicker as the readout's
    length changes; a resize, a new title or a new font decide afresh."""

    SLACK_CHARS = 4  # the spare room the full title needs to come back, in average characters
    _LINE = QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignVCenter
    _LINE |= QtCore.Qt.TextFlag.TextSingleLine

    def __init__(self):
        super().__init__()
        self.setAutoFillBackground(True)
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(8, 3, 8, 3)
        layout.setSpacing(16)
        self.title = QtWidgets.QLabel()
        self.readout = _ReadoutBox()
        layout.addWidget(self.title)
        layout.addWidget(self.readout, 1)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self._titles = ("", "")
        self._full_width = 0  # of the full title, as the label lays it out
        self._short = False  # the short title shows
        self._shown = ("", "")  # the title's text and tooltip
        self.title.installEventFilter(self)  # its font changes: measure again

    def title_width(self, text: str) -> int:
        """The width ``text`` takes in the title label (its size hint with that text)."""
        far = QtCore.QRect(0, 0, 1 << 20, 1 << 10)
        return self.title.fontMetrics().boundingRect(far, self._LINE, text).width()

    def set_titles(self, full: str, short: str) -> None:
        """The title, and its short form for a narrow chart."""
        if (full, short) != self._titles:
            self._titles = (full, short)
            self._full_width = self.title_width(full)
            self._fit(sticky=False)

    def set_readout(self, full: str, compact: Callable[[], str]) -> None:
        """The readout (``_ReadoutBox.set_texts``)."""
        self.readout.set_texts(full, compact)
        self._fit(sticky=True)

    def _fit(self, sticky: bool) -> None:
        layout = self.layout()
        margins = layout.contentsMargins()
        room = self.width() - margins.left() - margins.right() - layout.spacing()
        needed = self._full_width + self.readout.full_width
        if sticky and self._short:
            needed += self.SLACK_CHARS * self.title.fontMetrics().averageCharWidth()
        self._short = needed > room
        full, brief = self._titles
        shown = (brief, full if brief != full else "") if self._short else (full, "")
        if shown != self._shown:
            self._shown = shown
            self.title.setText(shown[0])
            self.title.setToolTip(shown[1])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit(sticky=False)

    def eventFilter(self, watched, event) -> bool:
        if watched is self.title and event.type() == QtCore.QEvent.Type.FontChange:
            self._full_width = self.title_width(self._titles[0])
            self._fit(sticky=False)
        return False


class ChartWidget(QtWidgets.QWidget):
    """Candles, volume, time and price axes, crosshair with readout, a keyboard cursor, the
    last-price line and overlays; follows a live series.

    Its view lives in ``view_model`` (a ``ChartViewModel``, in time): every view change goes
    through it, and the panes show what it holds. Changes are announced in UTC epoch ms
    (``object`` signals: the values need more than 32 bits)."""

    cursor_moved = QtCore.Signal(object)  # the cursor candle's open time (None: no candles)
    time_range_changed = QtCore.Signal(object, object)  # the visible times (t0, t1)
    candle_clicked = QtCore.Signal(int, float)
    hovered = QtCore.Signal(object)  # the time under the mouse (ms), None once it leaves

    def __init__(self, parent: QtWidgets.QWidget | None = None,
                 colors: ChartColors | None = None):
        super().__init__(parent)
        self.colors = colors or ChartColors()
        self._candles: Candles | None = None
        self._key: SeriesKey | None = None
        self._pyramid: CandlePyramid | None = None
        self._n = 0
        self._frame: VisibleCandles = empty_visible()
        self._last_unit: tuple[float, float, float] | None = None  # low, high, volume drawn
        self._panes_show: tuple[int, int] | None = None  # while the panes tell the view model
        self._limiting = False  # while the panes get new limits
        self._hover: int | None = None
        self._read_out: ReadoutCandle | None = None  # the readout's candle
        self._autoscale = True
        self._utc = True
        self._decimals = 2
        self._title_note = ""
        self.view_model = ChartViewModel()
        self.view_model.range_changed.connect(self._on_view_range)
        self.view_model.cursor_moved.connect(self._on_cursor_moved)
        self._build()
        self.command_actions = create_command_actions(self, {
            "chart.cursor_left": self._key_left,
            "chart.cursor_right": self._key_right,
            "chart.cursor_left_10": self._key_left_10,
            "chart.cursor_right_10": self._key_right_10,
            "chart.first": self._key_first,
            "chart.last": self._key_last,
            "chart.zoom_in": self._key_zoom_in,
            "chart.zoom_out": self._key_zoom_out,
            "chart.page_back": self._key_page_back,
            "chart.page_forward": self._key_page_forward,
            "chart.fit_all": self.fit_all,
            "chart.toggle_autoscale": self.toggle_autoscale,
            "chart.go_live": self._key_go_live,
            "chart.toggle_utc": self.toggle_utc,
        })

    # -- construction ------------------------------------------------------------------
    def _build(self) -> None:
        c = self.colors
        col = pg.mkColor
        self.view = pg.GraphicsView(background=c.background)
        self.view.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
        self.view.setObjectName("chartView")  # the style sheets frame it while it has focus
        # The view fills its background itself: no erase before, no background pixmap copy.
        self.view.setCacheMode(QtWidgets.QGraphicsView.CacheModeFlag.CacheNone)
        self.view.viewport().setAttribute(QtCore.Qt.WidgetAttribute.WA_OpaquePaintEvent)
        # Items paint without antialiasing and name their own dirty rectangles exactly.
        self.view.setOptimizationFlag(
            QtWidgets.QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing, True)
        self.header = _ChartHeader()
        self.title_label = self.header.title
        self.readout_label = self.header.readout.label
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addWidget(self.view, 1)
        self.grid = grid = pg.GraphicsLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(0)
        self.view.setCentralItem(grid)
        self.price_view = ChartViewBox()
        self.volume_view = ChartViewBox()
        self.price_axis = PriceAxis(self.price_view, col(c.axis_text), col(c.axis_line),
                                    formatter=self._format_price_tick)
        self.volume_axis = PriceAxis(self.volume_view, col(c.axis_text), col(c.axis_line),
                                     formatter=volume)
        self.time_axis = TimeAxis(self.price_view, col(c.axis_text), col(c.axis_line))
        grid.addItem(self.price_view, 0, 0)
        grid.addItem(self.price_axis, 0, 1)
        grid.addItem(self.volume_view, 1, 0)
        grid.addItem(self.volume_axis, 1, 1)
        grid.addItem(self.time_axis, 2, 0)
        grid.layout.setRowStretchFactor(0, 4)
        grid.layout.setRowStretchFactor(1, 1)

        self.price_grid = GridItem(col(c.grid))
        self.volume_grid = GridItem(col(c.grid))
        self.candle_item = CandleItem(col(c.up), col(c.down))
        self.volume_item = VolumeItem(col(c.volume_up), col(c.volume_down))
        self.cursor_item = CursorItem(self.price_view, col(c.cursor_band), col(c.cursor))
        self.volume_cursor_item = CursorItem(self.volume_view, col(c.cursor_band), None)
        self.price_line = PriceLineItem(self.price_view)
        self.crosshair = CrosshairItem(self.price_view, col(c.crosshair))
        self.volume_crosshair = CrosshairItem(self.volume_view, col(c.crosshair))
        self.overlays = ChartOverlays(self.view_model)
        layout.insertWidget(1, self.overlays.legend_strip)  # legends above the plot, not on it
        self.link_marks = LinkMarksItem(lambda: self.view_model.time_map)
        self._price_items: tuple[ViewSizedItem, ...] = (
            self.price_grid, self.link_marks, self.cursor_item, self.candle_item,
            self.overlays.item, self.price_line, self.crosshair)
        self._volume_items = (self.volume_grid, self.volume_cursor_item, self.volume_item,
                              self.volume_crosshair)
        for z, item in enumerate(self._price_items):
            item.setZValue(z)
            self.price_view.addItem(item, ignoreBounds=True)
        for z, item in enumerate(self._volume_items):
            item.setZValue(z)
            self.volume_view.addItem(item, ignoreBounds=True)
        self.indicators = ChartIndicators(self)
        self.indicators.price_lines.setZValue(self.overlays.item.zValue() - 0.5)
        self.price_view.addItem(self.indicators.price_lines, ignoreBounds=True)
        self._price_items += (self.indicators.price_lines,)
        layout.insertWidget(2, self.indicators.legend)

        self._style_header()

        self.price_view.sigXRangeChanged.connect(self._on_x_range)
        self.price_view.sigResized.connect(self._on_x_range)
        self.price_view.sigYRangeChanged.connect(self._on_price_y)
        self.volume_view.sigYRangeChanged.connect(self._on_volume_y)
        self.volume_view.sigResized.connect(self._on_volume_y)
        # The panes share time: the chart sets the volume pane's range with its own (one call
        # instead of pyqtgraph's view link), and mouse moves in the volume pane steer prices.
        self.volume_view.sigRangeChangedManually.connect(self._on_volume_mouse)
        scene = self.view.scene()
        scene.sigMouseMoved.connect(self._on_mouse_moved)
        scene.sigMouseClicked.connect(self._on_mouse_clicked)
        self.view.viewport().installEventFilter(self)
        self._update_title()
        self._update_readout()

    # -- public API ----------------------------------------------------------------------
    @property
    def candles(self) -> Candles | None:
        return self._candles

    @property
    def series_key(self) -> SeriesKey | None:
        return self._key

    def set_candles(self, candles: Candles, key: SeriesKey | None = None) -> None:
        """Show a series (a new symbol or timeframe): overlays are cleared, the view keeps its
        zoom (in candles) and goes to the live edge, the cursor goes to the last candle."""
        self._candles = candles
        self._key = key
        self._pyramid = CandlePyramid(candles)
        self._n = len(candles)
        tail = slice(max(0, self._n - 500), self._n)
        self._decimals = price_decimals(np.concatenate(
            (candles.open[tail], candles.high[tail], candles.low[tail], candles.close[tail])))
        self.overlays.clear()
        self.indicators.set_candles(candles)
        self._hover = None
        self._autoscale = True
        self.price_view.setMouseEnabled(x=True, y=False)
        self._update_limits()
        self.view_model.set_series(TimeMap.of(candles))
        self._show_view_range()
        self._refresh_frame()
        self._update_last_price()
        self._update_cursor_items()
        self._update_title()
        self._update_readout()

    def candles_changed(self, kind: str = "update") -> None:
        """Tell the chart its ``Candles`` changed: ``"update"`` (the forming candle changed in
        place), ``"append"`` (candles were added) or ``"reset"`` (anything else)."""
        if kind not in ("update", "append", "reset"):
            raise ValueError(f"candles_changed kind must be update, append or reset, not {kind!r}")
        c, pyramid = self._candles, self._pyramid
        if c is None:
            return
        assert pyramid is not None  # set with the candles
        n = len(c)
        if kind == "reset" or n < self._n:
            pyramid.rebuild()
            self._n = n
            self.indicators.set_candles(c)
            self._update_limits()
            self.view_model.reset_series(TimeMap.of(c))
            self._show_view_range()
            self._refresh_frame()
        elif n == self._n:
            pyramid.sync()
            self.indicators.sync(n - 1)
            self._update_forming()
        else:
            pyramid.sync()
            self.indicators.sync(self._n - 1)
            self._n = n
            self._update_limits()  # they only widen: the panes keep the view model's range
            self.view_model.extend_series(TimeMap.of(c))
            if not self._frame.ends_at(n) and self.visible_range()[1] == n:
                self._refresh_frame()
            self._update_cursor_items()
        self._update_last_price()
        self._update_readout()

    @property
    def cursor_index(self) -> int:
        """The keyboard's cursor candle (-1 without candles)."""
        return self.view_model.cursor_index

    @property
    def cursor_time(self) -> int | None:
        """The open time of the cursor candle (None without candles)."""
        return self.view_model.cursor_time

    def set_cursor(self, index: int) -> None:
        """Move the cursor candle (clamped to the series) and scroll it into view."""
        if self._n:
            assert self._candles is not None  # there are candles
            self.set_cursor_time(int(self._candles.ts[min(max(int(index), 0), self._n - 1)]))

    def set_title_note(self, note: str) -> None:
        """A note after the series' name in the title ("" for none)."""
        if note != self._title_note:
            self._title_note = note
            self._update_title()

    def set_link_marks(self, span: tuple[int, int] | None,
                       windows: list[tuple[int, int]]) -> None:
        """Mark another chart's crosshair (the ``span`` of this chart's candle that holds its
        time) and the visible ``windows`` of lower-timeframe charts (``LinkMarksItem``)."""
        self.link_marks.set_marks(span, windows)

    def set_cursor_time(self, ts: int) -> None:
        """Move the cursor to the candle that contains time ``ts`` (clamped to the series) and
        scroll it into view."""
        self.view_model.set_cursor(ts)

    def visible_range(self) -> tuple[int, int]:
        """Candle indices ``[i0, i1)`` that are (at least partly) on screen."""
        return self.view_model.visible_indices()

    def time_range(self) -> tuple[int, int]:
        """The visible times ``(t0, t1)``, at the left and right edges."""
        return self.view_model.time_range

    def show_time_range(self, t0: int, t1: int) -> None:
        """Show the times ``[t0, t1]`` (kept within the view limits)."""
        self.view_model.show(t0, t1)

    def take_focus(self) -> None:
        """Give the keyboard to the chart (its keys act while it has the focus), bringing
        forward the tab it sits in if another tab is in front."""
        parent = self.parentWidget()
        while parent is not None:
            if isinstance(parent, QtWidgets.QTabWidget):
                for i in range(parent.count()):
                    page = parent.widget(i)
                    if page is self or page.isAncestorOf(self):
                        parent.setCurrentIndex(i)
            parent = parent.parentWidget()
        self.window().activateWindow()
        self.view.setFocus(QtCore.Qt.FocusReason.ShortcutFocusReason)

    def go_live(self) -> None:
        """Show the newest candle at the right edge (keeping the zoom); new candles then
        scroll the view."""
        self.view_model.go_live()

    def fit_all(self) -> None:
        """Show every candle and fit prices to them."""
        if not self._n:
            return
        self._autoscale = True
        self.price_view.setMouseEnabled(x=True, y=False)
        self.view_model.fit_all()
        self._apply_autoscale()
        self._update_title()

    @property
    def autoscale(self) -> bool:
        return self._autoscale

    def set_autoscale(self, on: bool) -> None:
        """Fit prices to the visible candles (on) or pin the price range where it is (off)."""
        self._autoscale = bool(on)
        self.price_view.setMouseEnabled(x=True, y=not self._autoscale)
        if self._autoscale:
            self._apply_autoscale()
        self._update_title()

    def toggle_autoscale(self) -> None:
        self.set_autoscale(not self._autoscale)

    @property
    def utc(self) -> bool:
        return self._utc

    def set_utc(self, utc: bool) -> None:
        """Label times in UTC (True) or in the computer's time zone (False)."""
        self._utc = bool(utc)
        self._update_time_ticks()
        self._update_readout()
        self._update_hover_tags()

    def toggle_utc(self) -> None:
        self.set_utc(not self._utc)

    def zoom(self, factor: float, about: int | None = None) -> None:
        """Show ``factor`` times fewer candles, keeping time ``about`` (default: the cursor
        candle's centre) where it is on screen."""
        self.view_model.zoom(factor, about)

    def pan(self, candles: float) -> None:
        """Shift the view by ``candles`` (negative: back in time)."""
        self.view_model.pan(candles)

    def readout_text(self) -> str:
        return self.readout_label.text()

    def frame(self) -> VisibleCandles:
        """What is drawn now (units and their candle ranges)."""
        return self._frame

    def set_colors(self, colors: ChartColors) -> None:
        self.colors = c = colors
        col = pg.mkColor
        self.view.setBackground(c.background)
        self.candle_item.set_colors(col(c.up), col(c.down))
        self.volume_item.set_colors(col(c.volume_up), col(c.volume_down))
        self.price_grid.set_color(col(c.grid))
        self.volume_grid.set_color(col(c.grid))
        for axis in (self.price_axis, self.volume_axis, self.time_axis):
            axis.set_colors(col(c.axis_text), col(c.axis_line))
        self.crosshair.set_color(col(c.crosshair))
        self.volume_crosshair.set_color(col(c.crosshair))
        self.cursor_item.set_colors(col(c.cursor_band), col(c.cursor))
        self.volume_cursor_item.set_colors(col(c.cursor_band), None)
        self._style_header()
        self._update_last_price()
        self.indicators.set_colors(c)

    def _style_header(self) -> None:
        palette = self.header.palette()
        palette.setColor(QtGui.QPalette.ColorRole.Window, pg.mkColor(self.colors.background))
        palette.setColor(QtGui.QPalette.ColorRole.WindowText,
                         pg.mkColor(self.colors.readout_text))
        self.header.setPalette(palette)
        self.indicators.legend.set_colors(self.colors.background, self.colors.readout_text)
        for label in (self.title_label, self.readout_label):
            label.setPalette(palette)

    # -- keys ------------------------------------------------------------------------------
    def _key_left(self) -> None:
        self.set_cursor(self.cursor_index - 1)

    def _key_right(self) -> None:
        self.set_cursor(self.cursor_index + 1)

    def _key_left_10(self) -> None:
        self.set_cursor(self.cursor_index - 10)

    def _key_right_10(self) -> None:
        self.set_cursor(self.cursor_index + 10)

    def _key_first(self) -> None:
        self.set_cursor(0)

    def _key_last(self) -> None:
        self.set_cursor(self._n - 1)
        self.go_live()

    def _key_zoom_in(self) -> None:
        self.zoom(ZOOM_STEP)

    def _key_zoom_out(self) -> None:
        self.zoom(1 / ZOOM_STEP)

    def _page(self, direction: int) -> None:
        if not self._n:
            return
        x0, x1 = self.view_model.x_range()
        step = direction * (x1 - x0)
        self.pan(step)
        self.set_cursor(self.cursor_index + int(round(step)))

    def _key_page_back(self) -> None:
        self._page(-1)

    def _key_page_forward(self) -> None:
        self._page(1)

    def _key_go_live(self) -> None:
        self.go_live()
        self.set_cursor(self._n - 1)

    # -- view range --------------------------------------------------------------------------
    def _update_limits(self) -> None:
        """Give the panes the view model's limits for the series. A range they clamp to them
        is not the user's: the view model is not told, it shows its own range next."""
        limits = view_limits(self._n)
        self._limiting = True
        try:
            self.price_view.setLimits(xMin=limits.x_min, xMax=limits.x_max,
                                      minXRange=limits.min_width, maxXRange=limits.max_width)
        finally:
            self._limiting = False

    def _set_x_range(self, x0: float, x1: float) -> None:
        self.price_view.setXRange(x0, x1, padding=0)

    def _show_view_range(self) -> None:
        """Show the view model's range in the panes."""
        self._set_x_range(*self.view_model.x_range())

    def _on_view_range(self, t0: int, t1: int) -> None:
        if (t0, t1) != self._panes_show:  # not already on screen (a mouse gesture's range)
            self._show_view_range()
        self._update_readout(only_if_moved=True)
        self.time_range_changed.emit(t0, t1)

    def _on_x_range(self, *args) -> None:
        """The panes' range changed (by the view model, a mouse gesture or a direct
        ``setXRange``): redraw, and tell the view model, which announces only what it did
        not hold."""
        self._refresh_frame()
        if self._candles is None or self._limiting:
            return
        (x0, x1), _ = self.price_view.viewRange()
        time_map = self.view_model.time_map
        self._panes_show = (time_map.ts_of(x0), time_map.ts_of(x1))
        try:
            self.view_model.show_x_range(x0, x1)
        finally:
            self._panes_show = None

    def _refresh_frame(self) -> None:
        """Recompute what is drawn for the current x range and width (O(pixels))."""
        (x0, x1), _ = self.price_view.viewRange()
        width_px = int(round(self.price_view.width()))
        if width_px > 0 and x1 > x0:  # half a pixel of those candles are drawn on, in candles
            self.view_model.min_follow_x = 0.5 * (x1 - x0) / width_px
        if self._candles is not None:
            assert self._pyramid is not None  # set with the candles
            self._frame = visible_candles(self._candles, self._pyramid, x0, x1, width_px)
        else:
            self._frame = empty_visible()
        self._remember_last_unit()
        self.candle_item.set_frame(self._frame)
        self.volume_item.set_frame(self._frame)
        self._apply_autoscale()
        self._fit_volume()
        self.indicators.set_frame(self._frame, x0, x1)
        self._set_view_rects(self.price_view, self._price_items)
        self._set_view_rects(self.volume_view, self._volume_items)
        self._update_time_ticks()
        # The panes' new transforms now, not while the next frame is painted: pyqtgraph
        # applies them then, which marks everything dirty again and costs a second frame.
        self.price_view.updateMatrix()
        self.volume_view.updateMatrix()
        self.time_axis.follow_view()

    def _remember_last_unit(self) -> None:
        f = self._frame
        if f.ends_at(self._n):
            self._last_unit = (float(f.low[-1]), float(f.high[-1]), float(f.volume[-1]))
        else:
            self._last_unit = None

    def _apply_autoscale(self) -> None:
        if not self._autoscale:
            return
        lo, hi = self._frame.low_high()
        if not math.isfinite(lo):
            return
        pad = (hi - lo) * Y_PADDING or abs(hi) * 0.01 or 1.0
        self.price_view.setYRange(lo - pad, hi + pad, padding=0)

    def _fit_volume(self) -> None:
        top = self._frame.max_volume() * VOLUME_HEADROOM
        (x0, x1), _ = self.price_view.viewRange()
        self.volume_view.setRange(xRange=(x0, x1), yRange=(0, top if top > 0 else 1.0),
                                  padding=0)

    def _on_volume_mouse(self, *args) -> None:
        (x0, x1), _ = self.volume_view.viewRange()
        self._set_x_range(x0, x1)

    @staticmethod
    def _set_view_rects(view: pg.ViewBox, items) -> None:
        rect = view.viewRect()
        for item in items:
            item.set_view_rect(rect)

    def _on_price_y(self, *args) -> None:
        self._set_view_rects(self.price_view, self._price_items)
        self.price_grid.set_lines(self._grid_xs(), self.price_axis.values)

    def _on_volume_y(self, *args) -> None:
        self._set_view_rects(self.volume_view, self._volume_items)

    def _grid_xs(self) -> np.ndarray:
        return np.array([t.x for t in self.time_axis.ticks])

    def _update_time_ticks(self) -> None:
        if self._candles is None or not self._n:
            ticks = []
        else:
            (x0, x1), _ = self.price_view.viewRange()
            i0, i1 = self.view_model.time_map.index_range(x0, x1)
            px_per_candle = self.price_view.width() / max(x1 - x0, 1e-9)
            ticks = time_ticks(self._candles.ts, self._candles.timeframe.ms, i0, i1,
                               px_per_candle, self._utc)
        self.time_axis.set_ticks(ticks)
        xs = self._grid_xs()
        self.price_grid.set_lines(xs, self.price_axis.values)
        self.volume_grid.set_lines(xs, np.empty(0))
        self.indicators.set_grid_xs(xs)

    # -- live updates ----------------------------------------------------------------------
    def _update_forming(self) -> None:
        """The last candle changed in place: repaint just its unit (and rescale if it left the
        price or volume range)."""
        f = self._frame
        if not f.ends_at(self._n):
            self._update_cursor_items()
            return
        old = self._last_unit
        # only candles_changed calls this, with candles (and their pyramid)
        assert self._candles is not None and self._pyramid is not None
        f.refresh_last(self._candles, self._pyramid)
        self._remember_last_unit()
        new = self._last_unit
        assert old is not None and new is not None  # the frame ends at the last candle
        (_, _), (y0, y1) = self.price_view.viewRange()
        if self._autoscale and (new[0] < y0 or new[1] > y1):
            # Refit with extra room: a trending forming candle should not refit every tick.
            lo, hi = self._frame.low_high()
            pad = (hi - lo) * 2 * Y_PADDING or abs(hi) * 0.01 or 1.0
            self.price_view.setYRange(lo - pad, hi + pad, padding=0)
        vpx = pixel_size(self.volume_view)[1]
        if new[2] > self.volume_view.viewRange()[1][1]:
            self.volume_view.setYRange(0, new[2] * VOLUME_HEADROOM ** 2, padding=0)
        px, py = pixel_size(self.price_view)
        x = float(f.x[-1])
        half = f.unit_width / 2 + 2 * px
        lo = min(old[0], new[0]) - 3 * py
        hi = max(old[1], new[1]) + 3 * py
        self.candle_item.update(QtCore.QRectF(x - half, lo, 2 * half, hi - lo))
        vol_top = max(old[2], new[2]) + 3 * vpx
        # From half a pixel above the baseline: the bar never paints the baseline row.
        self.volume_item.update(QtCore.QRectF(x - half, vpx / 2, 2 * half, vol_top))
        self.indicators.forming_changed()
        self._update_cursor_items()

    def _update_last_price(self) -> None:
        c = self._candles
        if c is None or not self._n:
            self.price_line.set_price(None, pg.mkColor(self.colors.up))
            self.price_axis.set_tag("last", None)
            return
        close = float(c.close[-1])
        color = pg.mkColor(self.colors.up if close >= c.open[-1] else self.colors.down)
        self.price_line.set_price(close, color)
        self.price_axis.set_tag("last", Tag(close, self.format_price(close), color,
                                            pg.mkColor(self.colors.price_line_text)))

    def format_price(self, value: float) -> str:
        """A price with the decimals of the series' prices."""
        return f"{value:.{self._decimals}f}"

    def refresh_indicators(self) -> None:
        """The indicators shown changed: draw them for the current view."""
        self._refresh_frame()
        self._update_cursor_items()

    def _format_price_tick(self, value: float) -> str:
        return f"{value:.{self.price_axis.decimals}f}"

    # -- cursor, crosshair, readout ---------------------------------------------------------------
    def _on_cursor_moved(self, ts: int | None) -> None:
        self._update_cursor_items()
        self._update_readout()
        self.cursor_moved.emit(ts)

    def _update_cursor_items(self) -> None:
        c = self._candles
        i = self.cursor_index
        if c is None or not 0 <= i < self._n:
            self.cursor_item.set_candle(None)
            self.volume_cursor_item.set_candle(None)
            self.indicators.set_cursor(None)
            return
        self.cursor_item.set_candle(float(i), float(c.low[i]), float(c.high[i]))
        self.volume_cursor_item.set_candle(float(i))
        self.indicators.set_cursor(float(i))

    def _update_title(self) -> None:
        if self._key is not None:
            name, short = self._key.provenance, self._key.short_provenance
        elif self._candles is not None:
            name = short = f"{self._candles.timeframe.name} (source not given)"
        else:
            name = short = "no data"
        notes = [self._title_note] if self._title_note else []
        if not self._autoscale:
            notes.append("price axis pinned")
        after = "  ·  " + ", ".join(notes) if notes else ""
        self.header.set_titles(name + after, short + after)

    def _update_readout(self, only_if_moved: bool = False) -> None:
        """Read out the candle ``readout_candle`` picks: the cursor's while it is over the
        chart, else the newest visible one. ``only_if_moved`` (the view moved, the candles
        did not change): only where that is another candle than the one read out."""
        shown = None if self._candles is None else readout_candle(
            self._hover, self.cursor_index, self.view_model.visible_indices())
        if only_if_moved and shown == self._read_out:
            return
        self._read_out = shown
        self.indicators.show_values(None if shown is None else shown[0])
        if shown is None:
            self.header.set_readout(NO_DATA, lambda: NO_DATA)
            return
        candles, decimals, utc = self._candles, self._decimals, self._utc
        assert candles is not None  # an index to read out comes with candles
        i, at_cursor = shown
        self.header.set_readout(
            format_readout(candles, i, decimals, utc, at_cursor=at_cursor),
            lambda: format_readout(candles, i, decimals, utc, compact=True))

    def _update_hover_tags(self) -> None:
        if self._hover is None or self._candles is None:
            self.time_axis.set_tag("cross", None)
            return
        ts = int(self._candles.ts[self._hover])
        text = format_time(ts, self._candles.timeframe.ms, self._utc)
        self.time_axis.set_tag("cross", Tag(float(self._hover), text,
                                            pg.mkColor(self.colors.grid),
                                            pg.mkColor(self.colors.readout_text)))

    def _on_mouse_moved(self, pos: QtCore.QPointF) -> None:
        in_price = self.price_view.sceneBoundingRect().contains(pos)
        in_volume = self.volume_view.sceneBoundingRect().contains(pos)
        if not self._n or not (in_price or in_volume):
            self._clear_hover()
            return
        view = self.price_view if in_price else self.volume_view
        point = view.mapSceneToView(pos)
        index = min(max(int(round(point.x())), 0), self._n - 1)
        self._hover = index
        self.crosshair.set_position(float(index), point.y() if in_price else None)
        self.volume_crosshair.set_position(float(index), None if in_price else point.y())
        back, text = pg.mkColor(self.colors.grid), pg.mkColor(self.colors.readout_text)
        if in_price:
            self.price_axis.set_tag("cross", Tag(point.y(), self.format_price(point.y()),
                                                 back, text))
            self.volume_axis.set_tag("cross", None)
        else:
            self.volume_axis.set_tag("cross", Tag(point.y(), volume(point.y()), back,
                                                  text))
            self.price_axis.set_tag("cross", None)
        self._update_hover_tags()
        self._update_readout()
        self.hovered.emit(self.view_model.time_map.ts_of(point.x()))

    def _clear_hover(self) -> None:
        if self._hover is None:
            return
        self._hover = None
        self.crosshair.set_position(None, None)
        self.volume_crosshair.set_position(None, None)
        self.price_axis.set_tag("cross", None)
        self.volume_axis.set_tag("cross", None)
        self._update_hover_tags()
        self._update_readout()
        self.hovered.emit(None)

    def _on_mouse_clicked(self, ev) -> None:
        if ev.button() != QtCore.Qt.MouseButton.LeftButton or not self._n:
            return
        pos = ev.scenePos()
        if not self.price_view.sceneBoundingRect().contains(pos):
            return
        point = self.price_view.mapSceneToView(pos)
        index = min(max(int(round(point.x())), 0), self._n - 1)
        self.set_cursor(index)
        self.candle_clicked.emit(index, float(point.y()))

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QtCore.QEvent.Type.Leave:
            self._clear_hover()
        return False
