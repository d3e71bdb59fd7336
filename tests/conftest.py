"""Shared test setup, the suite's strict rules, and helpers several test files use.

Setup: offscreen Qt, a private WORKSTATION_HOME per test.

Rules (tests/project/test_harness_rules.py shows each one failing a test that breaks it):

- a Qt warning fails the test that emitted it: in setup and call through pytest-qt
  (``qt_log_level_fail`` in pyproject.toml), in teardown through ``pytest_runtest_teardown``;
- a test fails if it leaves a QThread running (named with where it was started) or a QTimer
  active (named with where it was created): ``no_qthread_or_qtimer_left_running``;
- torch's thread count and the garbage collector's state are put back after every test:
  ``restore_torch_threads_and_gc``;
- a test that hangs dumps every thread's stack (``faulthandler_timeout`` in pyproject.toml).

What the rules let through is ``QT_WARNINGS_ALLOWED`` and ``TIMERS_ALLOWED``, each with its
reason; nothing else may be let through anywhere.

Helpers (import them with ``from conftest import ...``, or use the fixtures): ``wait_for``,
``demo_live``, ``make_dock``, ``tiny_training``, ``demo_window``, ``Host`` (and the ``host``
fixture), ``make_candles``, ``candles_csv``, ``paths``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
import sys
import sysconfig
import threading
import time
import traceback
import weakref
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import numpy as np
import pytest
import shiboken6
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

pytest_plugins = ["pytester"]

# -- The justified exceptions: the one list of what the rules let through --------------------
QT_WARNINGS_ALLOWED = {  # regex searched in the message: why it is no bug
    r"^This plugin does not support propagateSizeHints\(\)$":
        "the offscreen platform (QT_QPA_PLATFORM=offscreen) has no window manager to pass a "
        "widget's size hints to; every dock and main window shown offscreen says it",
}
# regex searched in where a timer was created: why it may outlive its test (none may, today)
TIMERS_ALLOWED: dict[str, str] = {}


# -- Qt warnings ------------------------------------------------------------------------------
def pytest_configure(config):
    for pattern in QT_WARNINGS_ALLOWED:
        config.addinivalue_line("qt_log_ignore", pattern)


_FAILING_MESSAGES = (QtCore.QtMsgType.QtWarningMsg, QtCore.QtMsgType.QtCriticalMsg,
                     QtCore.QtMsgType.QtFatalMsg)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item):
    """pytest-qt checks Qt messages up to the end of the test call; this checks the teardown
    (closing widgets, fixtures shutting workers down) by the same rule."""
    if item.get_closest_marker("no_qt_log") or item.config.getini("qt_log_level_fail") == "NO":
        return (yield)
    allowed = item.config.getini("qt_log_ignore")
    emitted = []

    def record(kind, context, message):
        if kind in _FAILING_MESSAGES and not any(re.search(p, message) for p in allowed):
            emitted.append(f"{kind.name}: {message}")

    previous = QtCore.qInstallMessageHandler(record)
    try:
        result = yield
    finally:
        QtCore.qInstallMessageHandler(previous)
    if emitted:
        pytest.fail("Qt messages with level WARNING or above emitted in teardown:\n    "
                    + "\n    ".join(emitted), pytrace=False)
    return result


# -- QThreads and QTimers left running --------------------------------------------------------
_LIBRARIES = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib",
                                                        "platlib")})
_ROOT = Path(__file__).resolve().parents[1]
_tracked: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # QThread/QTimer -> where
_tracked_lock = threading.Lock()


def _where(frame) -> str:
    """Up to six frames of the calling code (libraries left out unless nothing else is
    there), innermost first, from ``frame`` up to where pytest called the test."""
    frames = []
    for f, line in traceback.walk_stack(frame):
        name = f.f_code.co_filename
        if f"{os.sep}_pytest{os.sep}" in name or f"{os.sep}pluggy{os.sep}" in name:
            break
        frames.append((name, line, f.f_code.co_name))
    own = [f for f in frames if not f[0].startswith(_LIBRARIES)] or frames[:1]
    return " <- ".join(f"{_shown(name)}:{line} ({function})" for name, line, function in own[:6])


def _shown(path: str) -> str:
    return Path(path).relative_to(_ROOT).as_posix() if path.startswith(str(_ROOT)) else path


def _track(obj, how: str) -> None:
    where = f"{how} at {_where(sys._getframe(2))}"
    with _tracked_lock:
        _tracked[obj] = where


def _tracking_init(cls):
    original = cls.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        _track(self, "created")
    return init


@pytest.fixture(scope="session", autouse=True)
def track_qthreads_and_qtimers():
    """Records where each QThread and QTimer is created, and where each QThread starts."""
    original_start = QtCore.QThread.start

    def start(self, *args, **kwargs):
        _track(self, "started")
        return original_start(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(QtCore.QThread, "__init__", _tracking_init(QtCore.QThread))
        patch.setattr(QtCore.QTimer, "__init__", _tracking_init(QtCore.QTimer))
        patch.setattr(QtCore.QThread, "start", start)
        yield


def _left_running() -> list[tuple[object, str]]:
    with _tracked_lock:
        tracked = list(_tracked.items())
    left = []
    for obj, where in tracked:
        if not shiboken6.isValid(obj):
            continue
        if isinstance(obj, QtCore.QThread) and obj.isRunning():
            left.append((obj, f"QThread {obj.objectName()!r} {where}"))
        elif (isinstance(obj, QtCore.QTimer) and obj.isActive()
              and not any(re.search(p, where) for p in TIMERS_ALLOWED)):
            shot = ", single shot" if obj.isSingleShot() else ""
            left.append((obj, f"QTimer ({obj.interval()} ms{shot}) {where}"))
    return left


@pytest.fixture(autouse=True)
def no_qthread_or_qtimer_left_running(track_qthreads_and_qtimers):
    """Fails a test that leaves a QThread running or a QTimer active: a worker or a timer
    that outlives its test races the next one. Widgets closed by qtbot are deleted first
    (their timers with them), then, only if something still runs, garbage is collected."""
    yield
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    left = _left_running()
    if left:
        gc.collect()
        left = _left_running()
    with _tracked_lock:
        for obj, _ in left:  # reported once, here: later tests are not blamed for them
            del _tracked[obj]
    for obj, _ in left:
        if isinstance(obj, QtCore.QTimer) and obj.thread() is QtCore.QThread.currentThread():
            obj.stop()
    if left:
        pytest.fail("left running after the test:\n    "
                    + "\n    ".join(text for _, text in left), pytrace=False)


# -- torch threads and the garbage collector --------------------------------------------------
@pytest.fixture(autouse=True)
def restore_torch_threads_and_gc(no_qthread_or_qtimer_left_running):
    """Puts back, after each test, torch's intra-op thread count (if torch is loaded; this
    never imports it) and the garbage collector's enabled flag, thresholds and freeze.

    A training dock's ``collect_garbage_on_gui_thread`` freezes what is alive and starts
    pyqtgraph's GarbageCollector (automatic collection off, a QTimer collects), once per
    process. Restoring undoes all of it, so that no test depends on which ran before it: the
    collector's timer stops and the worker module forgets it (the next dock starts a fresh
    one, as a fresh app does), what the test froze is unfrozen, and the garbage that piled
    up meanwhile is collected here, on the GUI thread, before automatic collection is back
    on (which could run in a later test's worker thread and destroy Qt objects there). Torn
    down before the leak check (which it depends on), which then sees no collector timer."""
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    enabled, threshold, frozen = gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()
    yield
    worker = sys.modules.get("workstation.ui.training.worker")
    if worker is not None and worker._gui_collector is not None:
        worker._gui_collector.timer.stop()
        worker._gui_collector = None
    if frozen == 0 and gc.get_freeze_count():  # else: what was frozen before stays frozen
        gc.unfreeze()
    if enabled and not gc.isenabled():
        gc.collect()  # now, on the GUI thread: not later, in another test's worker thread
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()
    if threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


# -- Setup ------------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def restore_umask():
    """The command line makes its process create private files (``paths.private_files``);
    a test that runs it in-process puts the umask back."""
    umask = os.umask(0o022)
    os.umask(umask)
    yield
    os.umask(umask)


@pytest.fixture(autouse=True)
def workstation_home(tmp_path, monkeypatch):
    """Every test gets its own empty workspace (config, data, logs) under tmp_path."""
    home = tmp_path / "home"
    monkeypatch.setenv("WORKSTATION_HOME", str(home))
    return home


@pytest.fixture
def paths():
    """The test's workspace, its folders created."""
    from workstation.paths import app_paths

    return app_paths().ensure()


# -- Helpers: the window on asyncio -----------------------------------------------------------
async def wait_for(condition, timeout: float = 30.0, interval: float = 0.02) -> None:
    """Await until ``condition()`` is true, polling every ``interval`` s; fails after
    ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(interval)


# -- Helpers: the training dock ---------------------------------------------------------------
END_TS = 1_700_000_000_000
WAIT_MS = 60_000  # a dock warming up, training or going live on a loaded 2-core machine


def shown_chart(qtbot, width: int = 1000, height: int = 600):
    """A ``ChartWidget`` of that size on screen (offscreen), closed when the test ends."""
    from workstation.ui.chart import ChartWidget

    widget = ChartWidget()
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def tiny_live_steps(n: int, steps: int, *, train: bool):
    """Demo candles and the live steps of a tiny model (``train``: with per-candle training)
    on their last ``steps`` candles, on one thread."""
    import torch

    from workstation.market.demo import demo_candles
    from workstation.ml.config import preset_config
    from workstation.ml.online import OnlineLearner

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        candles = demo_candles(n, seed=3, end_ts=END_TS)
        learner = OnlineLearner(preset_config("tiny", seq_len=16), train=train, seed=1)
        out = [learner.on_closed_candle(candles.slice(0, k)) for k in range(n - steps, n)]
        learner.close()
    finally:
        torch.set_num_threads(threads)
    return candles, out


def demo_live(paths, n: int = 1500, seed: int = 3):
    """A LiveData showing ``n`` demo candles of DEMO/USDT 1m that end at ``END_TS``."""
    from workstation.market.demo import demo_candles
    from workstation.market.series import SeriesKey
    from workstation.market.timeframes import ONE_MINUTE
    from workstation.ui.live_data import LiveData

    live = LiveData(paths.candle_cache)
    live.candles = demo_candles(n, seed=seed, end_ts=END_TS)
    live.key = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
    live.candles_changed.emit("reset")
    return live


def tiny_training(win, qtbot, *, epochs: int | None = 1) -> None:
    """``win``'s training form set to a tiny model on the CPU (32-candle windows and stride,
    batches of 16, ``epochs`` unless None), once the device warmed up."""
    panel = win.training
    qtbot.waitUntil(lambda: panel.state == "idle" and bool(panel.settings.devices)
                    and not panel.tasks_running, timeout=WAIT_MS)
    s = panel.settings
    s.preset.setCurrentText("tiny")
    s.seq_len.setValue(32)
    s.stride.setValue(32)
    s.batch_size.setValue(16)
    if epochs is not None:
        s.epochs.setValue(epochs)
    s.device.setCurrentIndex(s.device.findData("cpu"))


@pytest.fixture
def demo_window(qtbot, paths):
    """``demo_window(n=1500)``: the main window on ``n`` demo candles of DEMO/USDT 1m that end
    at ``END_TS`` (seed 3), its training form tiny (``tiny_training``); each shut down after
    the test."""
    from workstation.ui.main_window import MainWindow

    made = []

    def make(n: int = 1500):
        from workstation.market.demo import demo_candles
        from workstation.market.series import SeriesKey
        from workstation.market.timeframes import ONE_MINUTE

        win = MainWindow(paths)
        made.append(win)
        win.show()
        qtbot.waitExposed(win)
        win.live.candles = demo_candles(n, seed=3, end_ts=END_TS)
        win.live.key = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
        win.live.candles_changed.emit("reset")
        tiny_training(win, qtbot)
        return win

    yield make
    for win in made:
        asyncio.run(win.shutdown())
        win.deleteLater()


@pytest.fixture
def csv_window(qtbot, paths):
    """``csv_window(path, symbol, timeframe)``: the main window as the app shows it (nothing
    focused by the test) on a candle file, its candles on the chart; each shut down after
    the test."""
    from workstation.ui.main_window import MainWindow

    made = []

    def make(path, symbol: str, timeframe: str):
        win = MainWindow(paths)
        made.append(win)
        qtbot.addWidget(win)
        win.show()
        qtbot.waitExposed(win)
        asyncio.run(win.open_source(f"csv:{path}", symbol, timeframe))
        qtbot.waitUntil(lambda: win.chart.candles is win.live.candles
                        and len(win.live.candles) > 0)
        return win

    yield make
    for win in made:
        asyncio.run(win.shutdown())


@pytest.fixture
def make_dock(qtbot, paths):
    """``make_dock(live=None, chart=None, epochs=2)``: a TrainingPanel on ``live`` (default:
    ``demo_live``) drawing on ``chart``, warmed up and set to the tiny preset on the CPU; each
    one must shut down cleanly after the test."""
    from workstation.ui.training.panel import TrainingPanel

    docks = []

    def make(live=None, chart=None, epochs: int = 2):
        dock = TrainingPanel(paths, live or demo_live(paths), chart)
        qtbot.addWidget(dock)
        docks.append(dock)
        assert dock.state == "preparing"  # the device warms up on its own thread
        qtbot.waitUntil(lambda: dock.state == "idle", timeout=WAIT_MS)
        s = dock.settings
        s.preset.setCurrentText("tiny")
        s.seq_len.setValue(32)
        s.stride.setValue(32)  # windows that do not overlap: a few steps an epoch
        s.batch_size.setValue(16)
        s.epochs.setValue(epochs)
        s.device.setCurrentIndex(s.device.findData("cpu"))
        return dock

    yield make
    for dock in docks:
        assert dock.shutdown(60.0)


# -- Helpers: annotating on a chart -----------------------------------------------------------
Key = QtCore.Qt.Key
SHIFT = QtCore.Qt.KeyboardModifier.ShiftModifier
N = 400
T0 = 1_699_920_000_000
SERIES = ("ETH/USDT", "1m")


def make_candles(n: int = N):
    """``n`` 1m candles from ``T0`` on a gentle sine around 100."""
    from workstation.market.candles import Candles
    from workstation.market.timeframes import ONE_MINUTE

    i = np.arange(n)
    close = np.round(100 + 10 * np.sin(i / 25), 2)
    open_ = np.concatenate(([close[0]], close[:-1]))
    ts = T0 + i.astype(np.int64) * 60_000
    return Candles.from_arrays(ts, open_, np.maximum(open_, close) + 0.2,
                               np.minimum(open_, close) - 0.2, close, np.full(n, 5.0), ONE_MINUTE)


@pytest.fixture
def candles_csv(tmp_path):
    """``make_candles()`` in a CSV file."""
    from workstation.market.csv_io import write_candles_csv

    return write_candles_csv(make_candles(), tmp_path / "eth.csv")


class Host:
    """The part of the main window annotations live in: live data, the chart in the middle,
    the annotation layer and its dock, wired in the main window's order (the layer first,
    then the window's own reset handler that hands the candles to the chart)."""

    def __init__(self, qtbot, home):
        from workstation.paths import app_paths
        from workstation.ui.annotations.dock import AnnotationLayer
        from workstation.ui.chart import ChartWidget
        from workstation.ui.live_data import LiveData

        self.qtbot = qtbot
        self.paths = app_paths(home).ensure()
        self.window = QtWidgets.QMainWindow()
        self.live = LiveData(self.paths.candle_cache, self.window)
        self.chart = ChartWidget(self.window)
        self.window.setCentralWidget(self.chart)
        self.window.statusBar().showMessage("Ready")
        self.layer = AnnotationLayer(self.paths, self.live, self.chart, self.window)
        self.window.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, self.layer.dock)
        menu = self.window.menuBar().addMenu("&Annotate")
        for action in self.layer.command_actions.values():
            menu.addAction(action)
        self.live.candles_changed.connect(self._candles_changed)
        qtbot.addWidget(self.window)
        self.window.resize(1400, 800)
        self.window.show()
        qtbot.waitExposed(self.window)

    def _candles_changed(self, kind: str) -> None:
        if kind == "reset":
            self.chart.set_candles(self.live.candles, self.live.key)
        else:
            self.chart.candles_changed(kind)

    def open_csv(self, path, symbol: str = SERIES[0]) -> None:
        from workstation.market.series import MarketKey

        asyncio.run(self.live.open(f"csv:{path}", symbol, SERIES[1]))
        self.qtbot.waitUntil(lambda: self.layer.series == (MarketKey("real", symbol), SERIES[1])
                             and self.chart.candles is self.live.candles)
        self.focus_chart()

    def focus_chart(self) -> None:
        self.window.activateWindow()
        self.chart.view.setFocus()
        self.qtbot.waitUntil(lambda: self.chart.view.hasFocus())

    def press(self, key, modifier=QtCore.Qt.KeyboardModifier.NoModifier, times: int = 1):
        for _ in range(times):
            QTest.keyClick(self.chart.view, key, modifier)

    def cursor_to(self, index: int) -> None:
        """With keys only: Home, then Shift+Right (10) and Right (1)."""
        self.press(Key.Key_Home)
        self.press(Key.Key_Right, SHIFT, times=index // 10)
        self.press(Key.Key_Right, times=index % 10)
        assert self.chart.cursor_index == index

    def close(self) -> None:
        self.layer.close()
        self.window.close()


@pytest.fixture
def host(qtbot, tmp_path, candles_csv):
    """A ``Host`` (window, chart and annotation layer) showing the ``candles_csv`` file."""
    h = Host(qtbot, tmp_path / "ws")
    h.open_csv(candles_csv)
    yield h
    h.close()
