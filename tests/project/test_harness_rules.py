"""The suite's own rules (tests/conftest.py) fail the tests that break them: each inner file
runs in a fresh pytest process under a copy of the real conftest.py and pytest settings."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

QT_RULES = """\
import sys

import pytest
from PySide6 import QtCore, QtWidgets

KEEP = []


def test_a_qt_warning_fails(qapp):
    QtCore.qWarning("something is wrong")


def test_an_allowed_warning_passes(qapp):
    QtCore.qWarning("This plugin does not support propagateSizeHints()")


@pytest.fixture
def warns_on_teardown(qapp):
    yield
    QtCore.qWarning("closing went wrong")


def test_a_warning_in_teardown_fails(warns_on_teardown):
    pass


def test_an_active_timer_fails(qapp):
    timer = QtCore.QTimer()  # timer created
    timer.start(60_000)
    KEEP.append(timer)


def test_a_timer_started_by_a_signal_fails(qapp):
    timer = QtCore.QTimer()  # signal timer created
    timer.setInterval(5_000)
    source = QtCore.QObject()
    source.objectNameChanged.connect(timer.start)
    source.setObjectName("go")
    KEEP.append(timer)


def test_stopped_timers_and_closed_widgets_pass(qtbot):
    widget = QtWidgets.QWidget()
    qtbot.addWidget(widget)  # closed and deleted after the test, its timer with it
    QtCore.QTimer(widget).start(1_000)
    stopped = QtCore.QTimer()
    stopped.start(1_000)
    stopped.stop()
    KEEP.append(stopped)


def test_a_running_thread_fails_and_is_named_with_where_it_started(qapp):
    thread = QtCore.QThread()
    thread.setObjectName("leaky")
    thread.start()  # thread started
    KEEP.append(thread)


def test_a_leak_is_blamed_on_its_own_test_only(qapp):
    thread = KEEP[-1]
    assert thread.isRunning()
    thread.quit()
    assert thread.wait(5_000)


def test_the_rules_never_import_torch():
    assert "torch" not in sys.modules
"""

STATE_RULES = """\
import gc

import torch

from workstation.ui.training import worker

BEFORE = (torch.get_num_threads(), gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())


def state():
    return torch.get_num_threads(), gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()


def test_a_test_changes_threads_and_gc():
    torch.set_num_threads(BEFORE[0] + 1)
    gc.set_threshold(5, 5, 5)
    gc.disable()
    gc.freeze()
    assert state() != BEFORE


def test_the_next_one_finds_them_as_they_were():
    assert state() == BEFORE


def test_the_training_docks_collector_takes_over_gc(qapp):
    worker.collect_garbage_on_gui_thread()
    assert not gc.isenabled() and gc.get_freeze_count() > 0
    assert worker._gui_collector.timer.isActive()


def test_and_is_gone_for_the_next_test():
    assert state() == BEFORE and worker._gui_collector is None
"""


def run_under_the_rules(pytester, source: str):
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    start = text.index("[tool.pytest.ini_options]")
    end = text.find("\n[", start)
    pytester.makepyprojecttoml(text[start:end if end >= 0 else None])
    pytester.makepyfile(test_inner=source)
    return pytester.runpytest_subprocess("test_inner.py", "-p", "no:cacheprovider")


def line_of(source: str, marker: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if line.endswith(marker))


def test_qt_warnings_running_timers_and_threads_fail_their_own_test(pytester):
    result = run_under_the_rules(pytester, QT_RULES)
    result.assert_outcomes(passed=8, failed=1, errors=4)
    out = result.stdout.str()
    assert "FAILED test_inner.py::test_a_qt_warning_fails" in out
    assert "Qt messages with level WARNING or above emitted" in out
    assert "QtWarningMsg: something is wrong" in out
    for name in ("test_a_warning_in_teardown_fails", "test_an_active_timer_fails",
                 "test_a_timer_started_by_a_signal_fails",
                 "test_a_running_thread_fails_and_is_named_with_where_it_started"):
        assert f"ERROR test_inner.py::{name}" in out
    assert "emitted in teardown:\n    QtWarningMsg: closing went wrong" in out
    for what, marker, test in (
            ("QTimer (60000 ms) created", "# timer created", "test_an_active_timer_fails"),
            ("QTimer (5000 ms) created", "# signal timer created",
             "test_a_timer_started_by_a_signal_fails"),
            ("QThread 'leaky' started", "# thread started",
             "test_a_running_thread_fails_and_is_named_with_where_it_started")):
        assert re.search(rf"{re.escape(what)} at \S*test_inner\.py:"
                         rf"{line_of(QT_RULES, marker)} \({test}\)", out), what


def test_torch_threads_and_the_garbage_collector_are_restored(pytester):
    run_under_the_rules(pytester, STATE_RULES).assert_outcomes(passed=4)
