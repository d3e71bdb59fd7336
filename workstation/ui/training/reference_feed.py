"""``ReferenceFeed``: the reference asset's candles for live mode, when its model reads one.

Live mode (``ml.live``) needs them beside the chart's at every candle; where they come from
follows what the chart shows:

- an exchange that streams: a second ``LiveData`` on the same exchange and timeframe (its
  closed candles go to the candle cache, as the chart's do);
- the demo market: that symbol's demo market at the chart's own times, computed as the chart
  moves (a simulation that runs at the chart's speed, from the same anchor);
- a series that does not stream (a file, the cache, a replay of one): the symbol's candles in
  the candle cache, offered as final (they will not grow, so a missing one is masked at once).

A reference that cannot be opened is reported once (``failed``), and live mode stops on it.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from ...market.candles import Candles
from ...market.series import SeriesKey
from ...market.sources import demo_market
from ..live_data import LiveData, feeds_can_run

log = logging.getLogger(__name__)
STREAMING = ("live", "connecting", "reconnecting", "polling")  # ``LiveData`` states


class ReferenceFeed(QObject):
    """See the module docstring. ``changed``: new reference candles (offer again)."""

    changed = Signal()
    failed = Signal(str)

    def __init__(self, cache_path: Path, parent=None):
        super().__init__(parent)
        self.data = LiveData(cache_path, self)
        self.data.candles_changed.connect(self._data_changed)
        self.data.state_changed.connect(self._data_state)
        self.symbol: str | None = None
        self.mode = "closed"  # closed | demo | stream | cache
        self._demo = None
        self._demo_candles: Candles | None = None
        self._opening: asyncio.Future | None = None

    def start(self, symbol: str, key: SeriesKey, state: str, feed_settings: dict | None = None
              ) -> None:
        """Follow ``symbol`` beside the chart's series ``key`` in ``state`` (``LiveData``'s);
        ``feed_settings``: the chart feed's (the same exchange URLs, options, retries)."""
        self.data.feed_settings = dict(feed_settings or {})
        self.symbol = symbol.strip().upper()
        self._demo, self._demo_candles = None, None
        if key.is_demo:
            self.mode = "demo"
            self._demo = demo_market(self.symbol, key.timeframe)
            self.changed.emit()
            return
        if state in STREAMING:
            self.mode, source = "stream", key.source
        else:
            self.mode = "cache"
            source = "cache" if key.source.startswith("csv") else f"cache:{key.source}"
        if not feeds_can_run():
            self.failed.emit(f"the reference asset {self.symbol} could not be followed: no "
                             f"event loop runs feeds here")
            return
        log.info("live mode: reference %s from %s", self.symbol, source)
        self._opening = asyncio.ensure_future(self.data.open(source, self.symbol,
                                                             key.timeframe.name))

    def candles(self, series: Candles) -> tuple[Candles | None, bool]:
        """The reference candles to offer beside ``series`` (None while none have come) and
        whether they are final."""
        if self.mode == "demo":
            return self._demo_span(series), False
        data = self.data
        if self.mode == "closed" or data.key is None or data.key.symbol != self.symbol \
                or not len(data.candles):
            return None, False
        return data.candles, self.mode == "cache"

    def _demo_span(self, series: Candles) -> Candles | None:
        """The demo reference's candles over ``series``' times, extended as it grows."""
        closed = len(series) - (0 if series.last_closed else 1)
        if closed <= 0:
            return None
        tf = series.timeframe.ms
        end = int(series.ts[closed - 1]) + tf  # the closed candles' times only
        have = self._demo_candles
        if have is None or not len(have) or int(have.ts[0]) > int(series.ts[0]):
            have = self._demo.candles(int(series.ts[0]), end)
        elif int(have.ts[-1]) + tf < end:
            have = have.merge(self._demo.candles(int(have.ts[-1]) + tf, end))
        self._demo_candles = have
        return have

    def close(self) -> None:
        """Stop following; an exchange connection closes in the background."""
        self.mode, self.symbol = "closed", None
        self._demo, self._demo_candles = None, None
        if self.data.running:
            self._opening = asyncio.ensure_future(self.data.stop())

    async def stop(self) -> None:
        """Stop following, and wait until an exchange connection has closed."""
        self.close()
        await self.data.stop()

    @Slot(str)
    def _data_changed(self, _kind: str) -> None:
        if self.mode in ("stream", "cache"):
            self.changed.emit()

    @Slot(str, str)
    def _data_state(self, state: str, detail: str) -> None:
        if self.mode in ("stream", "cache") and state in ("failed", "offline"):
            self.failed.emit(f"the reference asset {self.symbol} could not be followed: "
                             f"{detail}")
