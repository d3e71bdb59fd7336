"""Shared test setup: offscreen Qt, a private WORKSTATION_HOME per test, few torch threads."""

from __future__ import annotations

import os

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
