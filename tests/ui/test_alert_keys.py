"""Alerts in the window, by keys: Shift+A on a selected level, Ctrl+Shift+A (a confidence
asked inside the window) on the model's suggested position; a crossing tick or a sure flip in
a live step writes a log line, says so, and reaches the desktop's notification service (a
private session bus with a notification service of its own here); alerts outlive a restart;
a blind replay sets none off."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import signal
import subprocess

import pytest
from PySide6.QtCore import ClassInfo, QObject, Slot
from PySide6.QtDBus import QDBusConnection
from PySide6.QtTest import QTest

from workstation.alerts.book import AlertKind
from workstation.market.candles import CandleUpdate
from workstation.ml.events import LiveStep

from conftest import Key, tiny_live_steps


@ClassInfo({"D-Bus Interface": "org.freedesktop.Notifications"})
class NotificationService(QObject):
    """What a desktop's notification daemon answers to ``Notify``: it records each one."""

    def __init__(self):
        super().__init__()
        self.received: list[tuple[str, str, str]] = []

    @Slot(str, "uint", str, str, str, "QStringList", "QVariantMap", int, result="uint")
    def Notify(self, app_name, _replaces, _icon, summary, body, _actions, _hints, _timeout):
        self.received.append((app_name, summary, body))
        return len(self.received)


@pytest.fixture
def desktop(monkeypatch):
    """A private session bus with a notification service on it, for the app's notifier."""
    assert shutil.which("dbus-daemon") and shutil.which("gdbus"), \
        "dbus-daemon and gdbus are needed (Debian: dbus, libglib2.0-bin)"
    out = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1",
                          "--print-pid=1"], capture_output=True, text=True, check=True)
    address, pid = out.stdout.split()[:2]
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    bus = QDBusConnection.connectToBus(address, f"notifications-{pid}")
    service = NotificationService()
    assert bus.registerService("org.freedesktop.Notifications")
    assert bus.registerObject("/org/freedesktop/Notifications", service,
                              QDBusConnection.RegisterOption.ExportAllSlots)
    yield service
    bus.unregisterObject("/org/freedesktop/Notifications")
    QDBusConnection.disconnectFromBus(f"notifications-{pid}")
    os.kill(int(pid), signal.SIGTERM)


def focused(win, qtbot):
    win.chart.take_focus()
    qtbot.waitUntil(win.chart.view.hasFocus)
    return win.chart


def press(chart, key, modifier=None, times: int = 1):
    for _ in range(times):
        if modifier is None:
            QTest.keyClick(chart.view, key)
        else:
            QTest.keyClick(chart.view, key, modifier)


def tick(win, price: float, new_candle: bool = False) -> None:
    c = win.live.candles
    last = c.row(len(c) - 1)
    if new_candle:
        update = CandleUpdate(last.ts + c.timeframe.ms, price, price, price, price, 1.0, False)
    else:
        update = CandleUpdate(last.ts, last.open, max(last.high, price), min(last.low, price),
                              price, last.volume + 1, False)
    win.live.candles_changed.emit(c.apply(update))


def test_a_level_alert_by_keys_goes_off_on_a_crossing_and_outlives_a_restart(
        demo_window, qtbot, desktop, paths, caplog):
    from PySide6.QtCore import Qt

    win = demo_window()
    assert win.alerts.notifier.how == "gdbus"
    chart = focused(win, qtbot)
    press(chart, Key.Key_End)
    press(chart, Key.Key_H)
    press(chart, Key.Key_Up, times=4)  # the forming candle's high
    press(chart, Key.Key_Return)
    (level,) = win.annotations.own_store.drawings.list()
    press(chart, Key.Key_A, Qt.KeyboardModifier.ShiftModifier)
    (alert,) = win.alerts.book.list()
    assert (alert.kind, alert.drawing_id) == (AlertKind.LEVEL, level.id)
    assert "Alert set" in win.statusBar().currentMessage()
    assert win.drawings.shown[id(chart)].alerted == {level.id}

    tick(win, level.price1 - 1.0)  # the first price heard: only remembered
    assert win.alerts.fired == []
    tick(win, level.price1 + 0.5)
    (fired,) = win.alerts.fired
    assert "crossed the level" in fired.text and "upward" in fired.text
    assert "ALERT" in win.statusBar().currentMessage()
    qtbot.waitUntil(lambda: len(desktop.received) == 1)
    assert desktop.received[0][:2] == ("Workstation", "Workstation alert")
    assert "crossed the level" in desktop.received[0][2]
    tick(win, level.price1 - 0.5)  # back down on the same candle: once per candle
    assert len(win.alerts.fired) == 1
    tick(win, level.price1 + 0.25, new_candle=True)  # the next candle crosses up again
    assert len(win.alerts.fired) == 2
    lines = [r.getMessage() for r in caplog.records if r.name == "workstation.ui.alert_layer"]
    assert sum("ALERT: DEMO/USDT crossed the level" in line for line in lines) == 2
    saved = json.loads(paths.alerts_file.read_text())["alerts"][0]
    assert saved["fired"] == 2 and saved["last_fired_at"] == win.alerts.fired[-1].when

    asyncio.run(win.shutdown())
    again = demo_window()  # restarted: the alert is still there and still works
    (kept,) = again.alerts.book.list()
    assert kept.id == alert.id and again.drawings.shown[id(again.chart)].alerted == {level.id}
    chart = focused(again, qtbot)
    press(chart, Key.Key_D)
    press(chart, Key.Key_A, Qt.KeyboardModifier.ShiftModifier)  # again: removed
    assert again.alerts.book.list() == [] and "removed" in again.statusBar().currentMessage()


def test_shift_a_without_a_level_says_what_to_do(demo_window, qtbot):
    from PySide6.QtCore import Qt

    win = demo_window()
    chart = focused(win, qtbot)
    press(chart, Key.Key_A, Qt.KeyboardModifier.ShiftModifier)
    assert win.alerts.book.list() == []
    assert "Select a level first" in win.statusBar().currentMessage()


@pytest.fixture(scope="module")
def steps():
    return tiny_live_steps(300, 4, train=False)[1]


def test_a_flip_alert_by_keys_goes_off_on_a_sure_new_position(demo_window, qtbot, desktop,
                                                              steps):
    from PySide6.QtCore import Qt

    win = demo_window()
    chart = focused(win, qtbot)
    press(chart, Key.Key_A, Qt.KeyboardModifier.ControlModifier
          | Qt.KeyboardModifier.ShiftModifier)
    prompt = win.alerts.prompt
    qtbot.waitUntil(prompt.field.hasFocus)
    assert prompt.field.text() == "60"
    QTest.keyClicks(prompt.field, "150")
    QTest.keyClick(prompt.field, Key.Key_Return)  # out of range: says so and stays
    assert prompt.isVisible() and "not a number from 34 to 100" in prompt.hint.text()
    prompt.field.selectAll()
    QTest.keyClicks(prompt.field, "70")
    QTest.keyClick(prompt.field, Key.Key_Return)
    qtbot.waitUntil(chart.view.hasFocus)
    (alert,) = win.alerts.book.list()
    assert (alert.kind, alert.threshold, alert.symbol) == (AlertKind.FLIP, 0.7, "DEMO/USDT")

    def step(probs, k):
        s = steps[k]
        return LiveStep(0, dataclasses.replace(
            s, prediction=dataclasses.replace(s.prediction, position_probs=probs)))

    for k, probs in enumerate([(0.1, 0.1, 0.8), (0.2, 0.6, 0.2), (0.05, 0.9, 0.05)]):
        win.training.live_stepped.emit(step(probs, k))  # short, an unsure long, a sure long
    (fired,) = win.alerts.fired
    assert "flipped to LONG 90% (was SHORT; alert at 70%)" in fired.text
    qtbot.waitUntil(lambda: len(desktop.received) == 1)

    win.drawings.set_clock(int(win.live.candles.ts[-10]))  # a blind replay: history
    win.training.live_stepped.emit(step((0.1, 0.05, 0.85), 3))
    tick(win, 1.0)
    assert len(win.alerts.fired) == 1
    win.drawings.set_clock(None)
    press(chart, Key.Key_A, Qt.KeyboardModifier.ControlModifier
          | Qt.KeyboardModifier.ShiftModifier)  # again: removed
    assert win.alerts.book.list() == []
