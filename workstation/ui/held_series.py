"""``HeldSeries``: a symbol that some charts keep after chart 1 switched to another one (they
are not linked by symbol), live on a feed of its own.

It opens the symbol on chart 1's source and old timeframe in a second ``LiveData`` (the same
exchange settings and demo speed as chart 1's; closed candles go to the candle cache), and
resamples it in a ``TimeframeStack`` of its own for the timeframes its charts show, so they
follow that market as chart 1 follows its own. Only a series chart 1 streamed gets one (the
chart area decides): beside a file, the cache or a replay, charts keep the candles they
showed.
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import QObject, Signal, Slot

from ..market.series import SeriesKey
from ..market.timeframe_stack import TimeframeStack
from ..market.timeframes import Timeframe
from .live_data import LiveData, feeds_can_run

log = logging.getLogger(__name__)


class HeldSeries(QObject):
    """See the module docstring. ``changed(key, kinds)``: the stack's change per timeframe (a
    dict, as ``TimeframeStack.sync`` gives it, with the base's own; every timeframe
    ``"reset"`` when the series was replaced); ``state_changed(state, detail)``: its feed's."""

    changed = Signal(object, object)
    state_changed = Signal(str, str)

    def __init__(self, key: SeriesKey, primary: LiveData, parent=None):
        super().__init__(parent)
        self.key = key
        self.data = LiveData(primary.cache_path, self)
        self.data.feed_settings = primary.feed_settings  # the chart's: URLs, options, retries
        self.speed = primary.speed
        self.stack: TimeframeStack | None = None
        self.timeframes: set[Timeframe] = set()
        self.data.candles_changed.connect(self._candles_changed)
        self.data.state_changed.connect(self.state_changed)
        self._task: asyncio.Future | None = None

    @property
    def state(self) -> str:
        return self.data.state

    def open(self) -> None:
        if not feeds_can_run():
            log.warning("no event loop runs feeds: the charts keeping %s keep their candles",
                        self.key)
            return
        log.info("charts not linked by symbol keep %s: its own feed", self.key)
        self._task = asyncio.ensure_future(self.data.open(
            self.key.source, self.key.symbol, self.key.timeframe.name, speed=self.speed))

    def set_timeframes(self, timeframes: set[Timeframe]) -> None:
        """The timeframes its charts show (a new stack when they change)."""
        if timeframes != self.timeframes:
            self.timeframes = set(timeframes)
            self._restack()

    def candles(self, timeframe: Timeframe):
        """Its candles on ``timeframe`` (one of ``timeframes``), None before the feed gave any."""
        return None if self.stack is None else self.stack.candles(timeframe)

    def close(self) -> None:
        """Stop its feed (in the background), or its opening if that has not got that far."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
        if self.data.running:
            self._task = asyncio.ensure_future(self.data.stop())

    async def stop(self) -> None:
        self.close()
        await self.data.stop()

    def _restack(self) -> None:
        candles = self.data.candles
        if self.data.key != self.key or not len(candles):
            self.stack = None
            return
        self.stack = TimeframeStack(candles, self.timeframes - {candles.timeframe})

    @Slot(str)
    def _candles_changed(self, kind: str) -> None:
        if kind == "reset" or self.stack is None or self.stack.base is not self.data.candles:
            self._restack()
            if self.stack is not None:
                self.changed.emit(self.key, dict.fromkeys(self.timeframes, "reset"))
            return
        kinds = self.stack.sync()
        kinds.setdefault(self.stack.base.timeframe, kind)
        self.changed.emit(self.key, kinds)
