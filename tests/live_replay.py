"""A fast replay of demo candles through a real LiveData and a chart that follows it, fed as a
live feed would be (``Replay``), and ``wait_live`` for a dock to go live on it."""

from __future__ import annotations

from workstation.market.demo import demo_candles
from workstation.market.replay import forming_ticks
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.events import LiveStep
from workstation.ui.chart.chart_widget import ChartWidget
from workstation.ui.live_data import LiveData

from conftest import END_TS, WAIT_MS

KEY = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)


class Replay:
    """A LiveData showing ``history`` demo candles, a chart that follows it, and the rest of
    the series to feed as a live feed would (forming ticks, then the closed candle)."""

    def __init__(self, paths, history: int = 700, total: int = 1000, seed: int = 5):
        candles = demo_candles(total, seed=seed, end_ts=END_TS)
        self.rest = [candles.row(i) for i in range(history, total)]
        self.live = LiveData(paths.candle_cache)
        self.chart = ChartWidget()
        self.live.candles_changed.connect(self._chart_follows)
        self.show(candles.slice(0, history), KEY)

    def show(self, candles, key) -> None:
        self.live.candles, self.live.key = candles, key
        self.live.candles_changed.emit("reset")

    def _chart_follows(self, kind: str) -> None:
        if kind == "reset":
            self.chart.set_candles(self.live.candles, self.live.key)
        else:
            self.chart.candles_changed(kind)

    def feed(self, n: int, qtbot=None, pause_ms: int = 0, dock=None) -> None:
        """``n`` more candles, each in two ticks; with ``qtbot``, the event loop runs
        ``pause_ms`` after each close (without, they arrive in one burst), and with ``dock``
        too, until the dock has shown the live step about that candle: no two candles share
        a step, however slow the machine."""
        stepped: list[int] = []
        if dock is not None:
            def record(items):
                stepped.extend(int(i.step.ts) for i in items if isinstance(i, LiveStep))
            dock.relay.delivered.connect(record)
        try:
            for _ in range(n):
                candle = self.rest.pop(0)
                for update in forming_ticks(candle, 2):
                    kind = self.live.candles.apply(update)
                    self.live.candles_changed.emit(kind)
                self.live.candle_closed.emit(len(self.live.candles) - 1)
                if qtbot is not None:
                    qtbot.wait(pause_ms)
                if dock is not None:
                    ts = int(self.live.candles.ts[-1])
                    qtbot.waitUntil(lambda ts=ts: ts in stepped, timeout=WAIT_MS)
        finally:
            if dock is not None:
                dock.relay.delivered.disconnect(record)


def wait_live(qtbot, dock) -> None:
    qtbot.waitUntil(lambda: dock.events_seen["LiveReady"] == 1 or dock.state == "failed",
                    timeout=WAIT_MS)
    assert dock.state == "live", dock.detail
