"""``ReferenceFeed``: the reference asset's candles for live mode, when its model reads one.

Live mode (``ml.live``) needs them beside the chart's at every candle; where they come from
follows what the chart shows:

- an exchange the chart streams from: a second ``LiveData`` on the same exchange and
  timeframe (its closed candles go to the candle cache, as the chart's do);
- the demo market: that symbol's demo market at the chart's own times, computed as the chart
  moves (a simulation that runs at the chart's speed, from the same anchor);
- a series that does not stream (a file, the cache, a replay of one): the symbol's candles in
  the candle cache, offered as final (they will not grow, so a missing one is masked at once).

Which one is decided by what the chart asked for (``LiveData.streaming``), not by its state
at that moment, and candles are handed out only once they are the ones asked for (the
symbol, the timeframe, the source). A reference that cannot be opened is reported
(``failed``), and live mode stops on it.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from ...market.candles import Candles
from ...market.demo import DemoMarket
from ...market.series import DEMO_SOURCE, SeriesKey
from ...market.sources import demo_market
from ...market.timeframes import Timeframe
from ..live_data import LiveData, feeds_can_run

log = logging.getLogger(__name__)


class ReferenceFeed(QObject):
    """See the module docstring. ``changed``: reference candles closed or arrived (offer
    again)."""

    changed = Signal()
    failed = Signal(str)

    def __init__(self, cache_path: Path, parent=None):
        super().__init__(parent)
        self.data = LiveData(cache_path, self)
        self.data.candles_changed.connect(self._data_changed)
        self.data.state_changed.connect(self._data_state)
        self.symbol: str | None = None
        self.mode = "closed"  # closed | demo | stream | cache
        self._wanted: tuple[str, str | None, str, Timeframe] | None = None  # opened, key source
        self._demo: DemoMarket | None = None
        self._demo_candles: Candles | None = None
        self._opening: asyncio.Future | None = None

    def start(self, symbol: str, key: SeriesKey, streaming: bool,
              feed_settings: dict | None = None) -> None:
        """Follow ``symbol`` beside the chart's series ``key``; ``streaming``: whether the
        chart's source streams (``LiveData.streaming``); ``feed_settings``: the chart feed's
        (the same exchange URLs, options, retries). Following what it already follows
        changes nothing."""
        symbol = symbol.strip().upper()
        if key.is_demo:
            mode, source, key_source = "demo", DEMO_SOURCE, DEMO_SOURCE
        elif streaming:
            mode, source, key_source = "stream", key.source, key.source
        elif key.source.startswith("csv"):
            mode, source, key_source = "cache", "cache", None  # wherever the cache has it
        else:
            mode, source, key_source = "cache", f"cache:{key.source}", key.source
        wanted = (source, key_source, symbol, key.timeframe)
        if (mode, wanted) == (self.mode, self._wanted):
            return
        self._cancel_opening()
        self.mode, self.symbol, self._wanted = mode, symbol, wanted
        self._demo, self._demo_candles = None, None
        if mode == "demo":
            self._demo = demo_market(symbol, key.timeframe)
            if self.data.running:  # the exchange it followed before
                self._opening = asyncio.ensure_future(self.data.stop())
            self.changed.emit()
            return
        if not feeds_can_run():
            self.failed.emit(f"the reference asset {symbol} could not be followed: no event "
                             f"loop runs feeds here")
            return
        log.info("live mode: reference %s from %s", symbol, source)
        self.data.feed_settings = dict(feed_settings or {})
        self._opening = asyncio.ensure_future(self.data.open(source, symbol,
                                                             key.timeframe.name))

    def candles(self, series: Candles) -> tuple[Candles | None, bool]:
        """The reference candles to offer beside ``series`` (None until those asked for have
        come) and whether they are final."""
        if self.mode == "demo":
            return self._demo_span(series), False
        if self.mode == "closed" or not self._current():
            return None, False
        return self.data.candles, self.mode == "cache"

    def _current(self) -> bool:
        """Whether the candles held are the ones the last ``start`` asked for."""
        data, wanted = self.data, self._wanted
        if wanted is None or data.key is None or not len(data.candles):
            return False
        source, key_source, symbol, timeframe = wanted
        return (data.spec == source and (key_source is None or data.key.source == key_source)
                and data.key.symbol == symbol and data.candles.timeframe == timeframe)

    def _demo_span(self, series: Candles) -> Candles | None:
        """The demo reference's candles over ``series``' closed candles' times, extended as
        it grows."""
        closed = series.n_closed
        if closed <= 0:
            return None
        tf = series.timeframe.ms
        end = int(series.ts[closed - 1]) + tf
        have = self._demo_candles
        assert self._demo is not None  # demo mode: ``start`` made it
        if have is None or not len(have) or int(have.ts[0]) > int(series.ts[0]):
            have = self._demo.candles(int(series.ts[0]), end)
        elif int(have.ts[-1]) + tf < end:
            have = have.merge(self._demo.candles(int(have.ts[-1]) + tf, end))
        self._demo_candles = have
        return have

    def _cancel_opening(self) -> None:
        if self._opening is not None and not self._opening.done():
            self._opening.cancel()  # an open still waiting for the previous feed to stop
        self._opening = None

    def close(self) -> None:
        """Stop following; an exchange connection closes in the background."""
        self._cancel_opening()
        self.mode, self.symbol, self._wanted = "closed", None, None
        self._demo, self._demo_candles = None, None
        if self.data.running:
            self._opening = asyncio.ensure_future(self.data.stop())

    async def stop(self) -> None:
        """Stop following, and wait until an exchange connection has closed."""
        self.close()
        await self.data.stop()

    @Slot(str)
    def _data_changed(self, kind: str) -> None:
        if self.mode in ("stream", "cache") and kind in ("append", "reset"):
            self.changed.emit()

    @Slot(str, str)
    def _data_state(self, state: str, detail: str) -> None:
        if self.mode in ("stream", "cache") and state in ("failed", "offline"):
            self.failed.emit(f"the reference asset {self.symbol} could not be followed: "
                             f"{detail}")
