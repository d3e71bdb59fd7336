"""A fast replay of demo candles through a real LiveData and a chart that follows it, fed as a
live feed would be (``Replay``), and ``wait_live`` for a dock to go live on it; scripted
position calls for a live model (``script_position_calls``) and the check that a paper account
traded them as the backtest engine would (``assert_paper_is_the_engine``)."""

from __future__ import annotations

import dataclasses

import numpy as np

from workstation.backtest.engine import run_backtest
from workstation.backtest.signals import DEFAULT_THRESHOLD, position_signal
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


# what the scripted position head says, cycling every 3 candles: long, short, flat, and a long
# too unsure to count (flat by the threshold rule)
CALLS = ((0.15, 0.7, 0.15), (0.15, 0.15, 0.7), (0.6, 0.2, 0.2), (0.3, 0.45, 0.25))


def call_at(ts: int) -> tuple[float, float, float]:
    return CALLS[(ts // 60_000 // 3) % len(CALLS)]


def script_position_calls(monkeypatch) -> list[tuple[int, int]]:
    """The live model's position head replaced by ``CALLS``; returns the (ts, wanted) of every
    step it made, in order."""
    from workstation.ml.online import OnlineLearner

    made: list[tuple[int, int]] = []
    step = OnlineLearner.on_closed_candle

    def scripted(self, candles, reference=None, levels=None):
        out = step(self, candles, reference, levels)
        probs = call_at(out.prediction.ts)
        made.append((out.prediction.ts, position_signal(probs, DEFAULT_THRESHOLD)))
        return dataclasses.replace(out, prediction=dataclasses.replace(
            out.prediction, position_probs=probs))

    monkeypatch.setattr(OnlineLearner, "on_closed_candle", scripted)
    return made


def assert_paper_is_the_engine(saved, candles, calls: list[tuple[int, int]]) -> int:
    """The paper account ``saved`` equals the backtest engine on ``candles`` with the
    ``calls`` (ts, wanted), each carried over the candles without one; returns its closed
    trades."""
    index = {int(t): i for i, t in enumerate(candles.ts)}
    signal = np.zeros(len(candles), dtype=np.int8)
    decided = {index[ts]: wanted for ts, wanted in calls}
    held = 0
    for i in range(min(decided), len(candles)):
        held = decided.get(i, held)
        signal[i] = held
    last = index[saved.state.closed_ts]
    engine = run_backtest(candles.open, candles.close, signal, costs=saved.costs,
                          cash=10_000.0, span=(min(decided), last + 1))
    done = ~engine.trades.closed_at_end
    trades = [t for t in saved.trades if t.exit_ts <= saved.state.closed_ts]
    assert len(trades) == int(done.sum())
    np.testing.assert_allclose([t.pnl for t in trades], engine.trades.pnl[done], rtol=1e-9)
    assert [t.entry_ts for t in trades] == candles.ts[engine.trades.entry_bar[done]].tolist()
    np.testing.assert_allclose(saved.equity_curve()[1][:-1], engine.equity[:-1], rtol=1e-9)
    return len(trades)
