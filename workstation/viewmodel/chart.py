"""``ChartViewModel``: what one chart shows, in time.

The state is the visible time range ``(t0, t1)``, the cursor time (the open time of the
cursor candle; ``None`` without candles) and ``follow_live``, all in UTC epoch ms. Gestures
(pan, zoom about a time, go live, fit all, cursor moves) and series changes (a new series,
appended candles, a reset) change it; ``range_changed(t0, t1)`` and ``cursor_moved(ts)``
announce each change once, and a change to the value already held announces nothing.

Pans and zooms count candles, because x is the candle index (``TimeMap``); the view stays
within ``view_limits``, which the chart also gives its panes for mouse gestures.

Follow-live: while the right edge is at or past the newest candle's open time (the newest
candle is on screen, or the view lies beyond it), appended candles scroll the view along,
keeping its width in candles, so the newest stays where it was; panning it off the right
edge stops that, going live starts it again. A range change that a series change made is
announced with ``series_moving`` set: it is no gesture (see ``LinkGroup``).

The readout (``readout_candle``) shows the cursor's candle while the cursor is over the chart
(mouse hover, or the keyboard cursor inside the visible range), else the newest visible
candle: a view scrolled away from the cursor never reads out a candle it does not show.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .listeners import Listeners
from .time_map import TimeMap

DEFAULT_VISIBLE = 150  # candles on screen before any series was shown
MIN_VISIBLE = 8  # zoomed in the furthest, candles on screen
EDGE_MARGIN = 50  # candles of empty space allowed before the first and after the last
CURSOR_MARGIN = 2.0  # candles kept between the cursor and the edge when it scrolls the view


class ViewLimits(NamedTuple):
    """How far a view may go, in x (candles): its left and right edges, and its width."""

    x_min: float
    x_max: float
    min_width: float
    max_width: float


def view_limits(n: int) -> ViewLimits:
    """The limits of a view of ``n`` candles."""
    return ViewLimits(-0.5 - EDGE_MARGIN, n - 0.5 + EDGE_MARGIN, MIN_VISIBLE,
                      max(n - 1 + 2 * EDGE_MARGIN, MIN_VISIBLE))


class ReadoutCandle(NamedTuple):
    """The candle the chart's readout shows, and whether it is the cursor's (hovered or the
    keyboard's) or, the cursor being off screen, the newest visible one."""

    candle: int  # its index
    at_cursor: bool


def readout_candle(hover: int | None, cursor: int,
                   visible: tuple[int, int]) -> ReadoutCandle | None:
    """What the readout shows (see the module docstring): the hovered candle, else the
    keyboard cursor's, whichever first lies in the ``visible`` candles ``[i0, i1)``, else the
    newest of them; None where no candle is visible."""
    i0, i1 = visible
    for i in (hover, cursor):
        if i is not None and i0 <= i < i1:
            return ReadoutCandle(i, True)
    return ReadoutCandle(i1 - 1, False) if i1 > i0 else None


def live_margin(width: float) -> float:
    """Empty space right of the newest candle at the live edge, in candles."""
    return min(max(2.0, 0.06 * width), EDGE_MARGIN * 0.8)


class ChartViewModel:
    """One chart's view in time; see the module docstring."""

    def __init__(self) -> None:
        self.range_changed = Listeners()  # (t0: int, t1: int)
        self.cursor_moved = Listeners()  # (ts: int | None)
        self._map = TimeMap(np.empty(0, dtype=np.int64), 60_000)
        self._range = self._times(*self._live_edge(DEFAULT_VISIBLE))
        self._cursor: int | None = None
        self.min_follow_x = 0.0  # a smaller move to follow another chart shows nothing
        self.series_moving = False  # the range changes because the series did, not a gesture

    # -- state -----------------------------------------------------------------------------
    @property
    def time_map(self) -> TimeMap:
        return self._map

    @property
    def time_range(self) -> tuple[int, int]:
        """The visible times ``(t0, t1)``: ``t0`` at the left edge, ``t1`` at the right."""
        return self._range

    @property
    def cursor_time(self) -> int | None:
        return self._cursor

    @property
    def cursor_index(self) -> int:
        """The cursor candle (-1 without candles)."""
        return -1 if self._cursor is None else self._map.index_at(self._cursor)

    @property
    def follow_live(self) -> bool:
        """Whether appended candles scroll the view: the right edge is at or past the newest
        candle's open time (always, without candles)."""
        ts = self._map.ts
        return not len(ts) or self._range[1] >= int(ts[-1])

    def x_range(self) -> tuple[float, float]:
        """The visible range in x."""
        t0, t1 = self._range
        return self._map.x_of(t0), self._map.x_of(t1)

    def visible_indices(self) -> tuple[int, int]:
        """Candles ``[i0, i1)`` at least partly on screen."""
        return self._map.index_range(*self.x_range())

    # -- series ------------------------------------------------------------------------------
    def set_series(self, time_map: TimeMap) -> None:
        """A new series: the view keeps its width in candles and shows the live edge, the
        cursor goes to the newest candle."""
        x0, x1 = self.x_range()
        self._map = time_map
        limits = view_limits(len(time_map))
        self._show_series_x(*self._live_edge(min(max(x1 - x0, limits.min_width),
                                                 limits.max_width)))
        self._set_cursor_to(self._newest())

    def extend_series(self, time_map: TimeMap) -> None:
        """Candles were appended (the series only grew): a view following live scrolls by as
        many candles, and a cursor on the newest candle moves to the new newest one."""
        following = self.follow_live
        cursor_on_newest = self._cursor == self._newest()
        x0, x1 = self.x_range()
        added = len(time_map) - len(self._map)
        self._map = time_map
        if following:
            self._show_series_x(x0 + added, x1 + added)
        if cursor_on_newest:
            self._set_cursor_to(self._newest())

    def reset_series(self, time_map: TimeMap) -> None:
        """The series' candles changed otherwise: the view keeps its times (within the new
        limits), the cursor moves to the candle that contains its time (the newest, if
        there was none)."""
        self._map = time_map
        self._show_series_x(*self.x_range())
        if self._cursor is None:
            self._set_cursor_to(self._newest())
        else:
            self._set_cursor_to(self._snap(self._cursor))

    # -- gestures ------------------------------------------------------------------------------
    def show(self, t0: int, t1: int) -> None:
        """Show the times ``[t0, t1]`` (within the limits)."""
        if not t1 > t0:
            raise ValueError(f"the range must end after it starts: {t0} .. {t1}")
        self._show_x(self._map.x_of(t0), self._map.x_of(t1))

    def show_x_range(self, x0: float, x1: float) -> None:
        """Show the x range ``[x0, x1]`` (within the limits): a mouse gesture."""
        self._show_x(x0, x1)

    def centre_on(self, ts: int) -> None:
        """Put time ``ts`` at the centre of the view, keeping its width in candles (within the
        limits): how a linked chart follows another's time. A move shorter than
        ``min_follow_x`` candles (the chart sets it to half a pixel) is not made: on a
        1d chart following a 1m one, a pan of minutes would redraw the same pixels."""
        x0, x1 = self.x_range()
        centre = self._map.x_of(ts)
        if abs(centre - (x0 + x1) / 2) < self.min_follow_x:
            return
        self._show_x(centre - (x1 - x0) / 2, centre + (x1 - x0) / 2)

    def pan(self, candles: float) -> None:
        """Shift the view by ``candles`` (negative: back in time)."""
        x0, x1 = self.x_range()
        self._show_x(x0 + candles, x1 + candles)

    def zoom(self, factor: float, about: int | None = None) -> None:
        """Show ``factor`` times fewer candles, keeping time ``about`` (default: the centre of
        the cursor candle) where it is on screen; off screen, it is centred first."""
        if not factor > 0:
            raise ValueError(f"zoom factor must be positive, not {factor}")
        x0, x1 = self.x_range()
        width = x1 - x0
        if about is not None:
            centre = self._map.x_of(about)
        elif self._cursor is not None:
            centre = float(self.cursor_index)
        else:
            centre = (x0 + x1) / 2
        if not x0 <= centre <= x1:
            x0 = centre - width / 2
        limits = view_limits(len(self._map))
        new_width = min(max(width / factor, limits.min_width), limits.max_width)
        frac = (centre - x0) / width
        self._show_x(centre - frac * new_width, centre + (1 - frac) * new_width)

    def go_live(self) -> None:
        """Show the newest candle at the right edge, keeping the width in candles."""
        x0, x1 = self.x_range()
        self._show_x(*self._live_edge(x1 - x0))

    def fit_all(self) -> None:
        """Show every candle, with a little room on both sides."""
        n = len(self._map)
        if n:
            margin = min(EDGE_MARGIN, max(1.0, 0.01 * n))
            self._show_x(-0.5 - margin, n - 0.5 + margin)

    def set_cursor(self, ts: int) -> None:
        """Put the cursor on the candle that contains ``ts`` (the first or last candle
        outside the series; the one before, in a gap) and scroll it into view."""
        if not len(self._map):
            return
        cursor = self._snap(ts)
        self._scroll_into_view(self._map.index_at(cursor))
        self._set_cursor_to(cursor)

    # -- internals ---------------------------------------------------------------------------
    def _newest(self) -> int | None:
        ts = self._map.ts
        return int(ts[-1]) if len(ts) else None

    def _snap(self, ts: int) -> int:
        """The open time of the candle that the cursor at ``ts`` is on."""
        i = min(max(self._map.index_at(ts), 0), len(self._map) - 1)
        return int(self._map.ts[i])

    def _live_edge(self, width: float) -> tuple[float, float]:
        right = len(self._map) - 0.5 + live_margin(width)
        return right - width, right

    def _scroll_into_view(self, index: int) -> None:
        x0, x1 = self.x_range()
        margin = min(CURSOR_MARGIN, (x1 - x0) / 4)
        if index - 0.5 < x0 + margin:
            self.pan(index - 0.5 - margin - x0)
        elif index + 0.5 > x1 - margin:
            self.pan(index + 0.5 + margin - x1)

    def _times(self, x0: float, x1: float) -> tuple[int, int]:
        return self._map.ts_of(x0), self._map.ts_of(x1)

    def _show_x(self, x0: float, x1: float) -> None:
        """Show ``[x0, x1]`` within the limits: first the width (about the centre), then the
        edges, as the chart's panes limit mouse gestures."""
        limits = view_limits(len(self._map))
        width = min(max(x1 - x0, limits.min_width), limits.max_width)
        if width != x1 - x0:
            centre = (x0 + x1) / 2
            x0, x1 = centre - width / 2, centre + width / 2
        if x0 < limits.x_min:
            x0, x1 = limits.x_min, limits.x_min + width
        elif x1 > limits.x_max:
            x0, x1 = limits.x_max - width, limits.x_max
        times = self._times(x0, x1)
        if times != self._range:
            self._range = times
            self.range_changed.emit(*times)

    def _show_series_x(self, x0: float, x1: float) -> None:
        """``_show_x`` for a change of the series (``series_moving`` while it announces)."""
        moving, self.series_moving = self.series_moving, True
        try:
            self._show_x(x0, x1)
        finally:
            self.series_moving = moving

    def _set_cursor_to(self, ts: int | None) -> None:
        if ts != self._cursor:
            self._cursor = ts
            self.cursor_moved.emit(ts)
