"""The settings' Trend windows field: a run started in the window reads the trend inputs it
names (as `train --trend-windows`), a recorded run brings them back, and a text that is no
list of candle counts is refused in one line (tiny preset, CPU, real worker thread)."""

from __future__ import annotations

import pytest

from workstation.errors import WorkstationError
from workstation.ml.events import RunStarted

from conftest import WAIT_MS


def test_a_run_started_in_the_window_reads_the_trend_windows_of_its_settings(qtbot,
                                                                              make_dock):
    dock = make_dock(epochs=1)
    settings = dock.settings
    settings.trend_windows.setText("10,40")
    assert settings.request().feature_overrides["trend_windows"] == (10, 40)
    started: list[RunStarted] = []
    dock.relay.delivered.connect(
        lambda items: started.extend(e for e in items if isinstance(e, RunStarted)))
    dock.start_training()
    qtbot.waitUntil(lambda: dock.state in ("idle", "failed") and not dock.busy,
                    timeout=WAIT_MS)
    assert dock.state == "idle", dock.detail
    (run,) = started
    assert run.features["trend_windows"] == [10, 40]
    settings.trend_windows.clear()
    settings.apply_recorded("tiny", run.model_config, run.train_config, run.features)
    assert settings.trend_windows.text() == "10,40"  # a recorded run's inputs come back
    settings.trend_windows.setText("10, x")
    with pytest.raises(WorkstationError, match="trend windows must be candle counts"):
        settings.request()
    for start in (dock.start_training, dock.toggle_evaluation):  # refused in one line
        start()
        assert not dock.busy and dock.state == "idle"
        assert "trend windows must be candle counts" in dock.detail_label.text()
    settings.trend_windows.clear()
    settings.train_until.setText("the day after tomorrow")  # no time either
    dock.start_training()
    assert not dock.busy and "cannot read 'the day after tomorrow' as a time" in \
        dock.detail_label.text()
