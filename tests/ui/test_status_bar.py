"""The status bar: a series nothing updates says what it is and nothing ticks; texts that do
not fit are elided in the middle, whole in their tooltips."""

from __future__ import annotations

import asyncio
import time
import types

from PySide6 import QtWidgets

from workstation.market.csv_io import write_candles_csv
from workstation.paths import app_paths
from workstation.timeparse import format_minute
from workstation.ui import status
from workstation.ui.live_data import LiveData
from workstation.ui.status import StatusPanel

from conftest import SERIES, make_candles


def status_window(qtbot, tmp_path, width: int = 1200):
    window = QtWidgets.QMainWindow()
    live = LiveData(app_paths(tmp_path / "ws").ensure().candle_cache, window)
    panel = StatusPanel(window.statusBar(), live)
    qtbot.addWidget(window)
    window.resize(width, 300)
    window.show()
    qtbot.waitExposed(window)
    return window, live, panel


def test_a_file_opened_after_a_live_feed_says_file_and_its_age_never_ticks(qtbot, tmp_path,
                                                                           monkeypatch):
    candles = make_candles()
    path = write_candles_csv(candles, tmp_path / "eth.csv")
    _window, live, panel = status_window(qtbot, tmp_path)

    async def demo_then_file():
        await live.open("demo", None, "1m", speed=600)
        while live.last_update_wall is None:  # the demo market's feed has updated a candle
            await asyncio.sleep(0.01)
        await live.open(f"csv:{path}", *SERIES)

    asyncio.run(demo_then_file())
    assert live.state == "static"
    shown = f"file · {len(candles)} candles, last {format_minute(int(candles.ts[-1]))}"
    assert panel.age.text() == shown
    later = time.monotonic() + 5.0  # five seconds on: the text is the same
    monkeypatch.setattr(status, "time", types.SimpleNamespace(monotonic=lambda: later))
    panel.refresh()
    assert panel.age.text() == shown
    assert "last update" not in panel.age.text()


def test_status_texts_that_do_not_fit_are_elided_in_the_middle(qtbot, tmp_path):
    path = write_candles_csv(make_candles(), tmp_path / "binance_ethusdt_spot_2023_11_1m.csv")
    window, live, panel = status_window(qtbot, tmp_path, width=420)
    asyncio.run(live.open(f"csv:{path}", *SERIES))
    full = panel.provenance.text()
    assert "binance_ethusdt_spot_2023_11_1m.csv" in full
    window.resize(420, 300)
    qtbot.waitUntil(lambda: window.width() <= 420)  # the long texts do not widen the window
    for label in (panel.provenance, panel.age):
        shown = label.shown_text()
        assert "…" in shown and shown != label.text(), shown
        head, tail = shown.split("…")
        assert label.text().startswith(head) and label.text().endswith(tail)  # the middle
        assert label.text() in label.toolTip()
