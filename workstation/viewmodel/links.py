"""``LinkGroup``: charts kept in step by time, never by index.

A group holds charts' view models (``ChartViewModel``, each on its own timeframe) and three
toggles: ``symbol`` (a switch of symbol on one chart switches the others), ``crosshair``
(the crosshair on one chart marks, on every other, the span of the candle of that chart's
timeframe that contains its time) and ``time`` (every other chart centres on the time at the
centre of the chart that moved, keeping its own zoom; and each chart shows the visible
windows of the lower-timeframe charts as shaded spans).

One chart drives each gesture: its change is noted (``request_*``), ``flush`` makes the others
follow once, and what the followers do while following drives nothing, so no change loops
back. Changes noted before a flush coalesce to the newest, so followers move at most once
per flush; the window flushes once per frame (``flush_wanted`` asks for one).

New candles are no gesture. The *lead* is the chart the last gesture moved (or that the
owner asked to lead, ``request_time``) while it is linked, else the group's first chart: its
series' scrolls drive like gestures, so the others keep to a chart 1 that follows live. Any
other chart that its series scrolled (its next candle closed, a new series came), a chart
just linked, and every chart when the time link comes back on take the lead's time at the
next flush, moving nothing else, so the chart the trader placed stays where it is.
"""

from __future__ import annotations

from collections.abc import Callable

from .chart import ChartViewModel
from .listeners import Listeners


def candle_span(ts: int, timeframe_ms: int) -> tuple[int, int]:
    """The open and close time of the candle of ``timeframe_ms`` that contains ``ts``."""
    start = ts - ts % timeframe_ms
    return start, start + timeframe_ms


class LinkGroup:
    """See the module docstring. ``marks_changed(view)``: what ``view`` should mark (its
    ``crosshair_span`` or ``windows``) changed; ``symbol_changed(view, symbol)``: ``view``
    is to show ``symbol``; ``flush_wanted()``: a change waits for ``flush``."""

    def __init__(self, *, symbol: bool = True, crosshair: bool = True, time: bool = True):
        self.symbol = symbol
        self.crosshair = crosshair
        self.time = time
        self.marks_changed = Listeners()
        self.symbol_changed = Listeners()
        self.flush_wanted = Listeners()
        self._views: list[ChartViewModel] = []
        self._listeners: dict[int, Callable[[int, int], None]] = {}  # by id(view)
        self._following = False
        self._time_driver: ChartViewModel | None = None
        self._anchor: ChartViewModel | None = None  # what the last gesture moved
        self._joining: list[ChartViewModel] = []  # to take the lead's time at the flush
        self._cross: tuple[ChartViewModel, int | None] | None = None  # driver, time shown
        self._next_cross: tuple[ChartViewModel, int | None] | None = None  # to show next
        self._waiting = False

    @property
    def views(self) -> tuple[ChartViewModel, ...]:
        return tuple(self._views)

    @property
    def lead(self) -> ChartViewModel | None:
        """The chart the others keep to: the anchor while it is in the group, else the
        first chart of the group."""
        if self._anchor in self._views:
            return self._anchor
        return self._views[0] if self._views else None

    def add(self, view: ChartViewModel) -> None:
        """Link ``view``: it takes the lead's time at the next flush."""
        self._views.append(view)
        listener = self._listeners[id(view)] = self._range_listener(view)
        view.range_changed.connect(listener)
        self._join(view)
        self._changed_marks()

    def remove(self, view: ChartViewModel) -> None:
        self._views.remove(view)
        view.range_changed.disconnect(self._listeners.pop(id(view)))
        if self._time_driver is view:
            self._time_driver = None
        if self._cross is not None and self._cross[0] is view:
            self._cross = None
        if self._next_cross is not None and self._next_cross[0] is view:
            self._next_cross = None
        self._changed_marks()

    def set_toggles(self, *, symbol: bool | None = None, crosshair: bool | None = None,
                    time: bool | None = None) -> None:
        """Switch links on or off; what the charts mark follows at once."""
        if symbol is not None:
            self.symbol = symbol
        if crosshair is not None:
            self.crosshair = crosshair
        if time is not None:
            if time and not self.time:  # back on: every chart takes the lead's time now
                for view in self._views:
                    self._join(view)
            self.time = time
        self._changed_marks()

    # -- what a chart drives --------------------------------------------------------------------
    def _range_listener(self, view: ChartViewModel) -> Callable[[int, int], None]:
        def moved(_t0: int, _t1: int) -> None:
            if self._following:
                return
            if view.series_moving and view is not self.lead:  # no gesture: it rejoins
                if self.time:  # (off: nothing to rejoin; turning it on rejoins them all)
                    self._join(view)
                return
            self.request_time(view)
        return moved

    def _join(self, view: ChartViewModel) -> None:
        """``view`` takes the lead's time at the next flush, moving nothing else."""
        if view not in self._joining:
            self._joining.append(view)
        self._want_flush()

    def request_time(self, driver: ChartViewModel) -> None:
        """``driver``'s visible range changed (a view model's change arrives here by
        itself): the others follow it, and it is the anchor; ignored while the charts
        follow."""
        if self._following:
            return
        self._time_driver = self._anchor = driver
        self._want_flush()

    def request_crosshair(self, driver: ChartViewModel, ts: int | None) -> None:
        """The crosshair on ``driver`` is at time ``ts`` (None: it left the chart)."""
        if self._following:
            return
        self._next_cross = (driver, ts)
        self._want_flush()

    def request_symbol(self, driver: ChartViewModel, symbol: str) -> list[ChartViewModel]:
        """``driver`` switched to ``symbol``: the charts that switch with it (announced by
        ``symbol_changed``); none while the symbol link is off."""
        followers = [v for v in self._views if v is not driver] if self.symbol else []
        for view in followers:
            self.symbol_changed.emit(view, symbol)
        return followers

    def flush(self) -> None:
        """Make the other charts follow the changes noted since the last flush, once."""
        self._waiting = False
        driver, self._time_driver = self._time_driver, None
        joining, self._joining = self._joining, []
        if driver not in self._views:
            driver = None
        leader: ChartViewModel | None
        if driver is not None:
            leader, followers = driver, [v for v in self._views if v is not driver]
        else:  # no gesture: the charts that rejoin take the lead's time
            leader = self.lead
            followers = [v for v in joining if v in self._views and v is not leader]
        self._following = True
        try:
            if leader is not None and self.time:
                t0, t1 = leader.time_range
                centre = (t0 + t1) // 2
                for view in followers:
                    view.centre_on(centre)
        finally:
            self._following = False
        cross, self._next_cross = self._next_cross, None
        if cross is not None:
            self._cross = cross
        if driver is not None or cross is not None or joining:
            self._changed_marks()

    # -- what a chart marks ----------------------------------------------------------------------
    def crosshair_span(self, view: ChartViewModel) -> tuple[int, int] | None:
        """The span ``view`` marks for another chart's crosshair (None: nothing to mark)."""
        if not self.crosshair or self._cross is None:
            return None
        driver, ts = self._cross
        if driver is view or ts is None or driver not in self._views:
            return None
        return candle_span(ts, view.time_map.timeframe_ms)

    def windows(self, view: ChartViewModel) -> list[tuple[int, int]]:
        """The visible time ranges of the lower-timeframe charts, to shade on ``view``."""
        if not self.time:
            return []
        tf = view.time_map.timeframe_ms
        return [v.time_range for v in self._views if v.time_map.timeframe_ms < tf]

    def _changed_marks(self) -> None:
        for view in tuple(self._views):
            self.marks_changed.emit(view)

    def _want_flush(self) -> None:
        if not self._waiting:
            self._waiting = True
            self.flush_wanted.emit()
