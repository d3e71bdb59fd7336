"""Shared test setup: offscreen Qt, a private WORKSTATION_HOME per test, few torch threads."""

from __future__ import annotations

import gc
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def workstation_home(tmp_path, monkeypatch):
    """Every test gets its own empty workspace (config, data, logs) under tmp_path."""
    home = tmp_path / "home"
    monkeypatch.setenv("WORKSTATION_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def no_qthread_left_running():
    """Fails any test that leaves a QThread running (a worker that outlives its test would
    race the next one)."""
    yield
    if "PySide6.QtCore" not in sys.modules:
        return
    from PySide6.QtCore import QCoreApplication, QThread

    app = QCoreApplication.instance()
    gc.collect()
    running = [t.objectName() or repr(t) for t in gc.get_objects()
               if issubclass(type(t), QThread) and t.isRunning()
               and (app is None or t is not app.thread())]
    assert not running, f"QThreads left running: {running}"
