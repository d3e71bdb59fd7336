"""The training session's state machine (``viewmodel.training_session``), without Qt: the
states, what each allows, how the live commands switch live mode, and the settings Restart
takes from a run's history."""

from __future__ import annotations

import pytest

from workstation.viewmodel.training_session import (
    ACTIVE,
    IDLE,
    START,
    STATES,
    SWITCH,
    TrainingSession,
    restart_settings,
)

COMMANDS = {"train.start", "train.live", "train.live_train", "train.stop", "train.restart",
            "train.resume", "train.clear", "train.evaluate", "train.paper", "train.until_cursor"}
STARTS = ("train.start", "train.live", "train.live_train", "train.resume")


def in_state(state: str) -> TrainingSession:
    session = TrainingSession()
    session.move(state)
    return session


def test_a_session_starts_preparing_the_device():
    session = TrainingSession()
    assert session.state == "preparing" and session.detail == "preparing device (loading torch)"
    assert set(IDLE) | set(ACTIVE) == set(STATES)


def test_move_says_whether_the_state_changed_and_keeps_the_words():
    session = TrainingSession()
    assert session.move("idle", "ready: CPU") is True
    assert (session.state, session.detail) == ("idle", "ready: CPU")
    assert session.move("idle", "still ready") is False  # progress: only the words change
    assert (session.state, session.detail) == ("idle", "still ready")
    assert session.move("training") is True and session.detail == ""


def test_an_unknown_state_is_refused_and_changes_nothing():
    session = in_state("idle")
    with pytest.raises(ValueError, match="unknown training state 'sleeping'"):
        session.move("sleeping", "zzz")
    assert session.state == "idle"


@pytest.mark.parametrize("state", STATES)
def test_every_command_has_an_answer_in_every_state(state):
    for ready in (False, True):
        for busy in (False, True):
            assert set(in_state(state).enabled(ready, busy)) == COMMANDS


@pytest.mark.parametrize("state", IDLE)
def test_a_job_starts_from_idle_or_failed_once_the_devices_are_ready(state):
    session = in_state(state)
    assert session.can_start(ready=True, busy=False)
    assert not session.can_start(ready=False, busy=False)  # the device still warms up
    assert not session.can_start(ready=True, busy=True)  # a worker still ends
    enabled = session.enabled(ready=True, busy=False)
    assert all(enabled[c] for c in STARTS + ("train.evaluate", "train.restart", "train.clear"))
    assert not enabled["train.stop"]


@pytest.mark.parametrize("state", [s for s in STATES if s not in IDLE])
def test_no_job_starts_while_another_runs(state):
    session = in_state(state)
    assert not session.can_start(ready=True, busy=True)
    assert not session.can_start(ready=True, busy=False)
    enabled = session.enabled(ready=True, busy=True)
    switches = ("train.live", "train.live_train") if state == "live" else ()  # see below
    assert not any(enabled[c] for c in STARTS if c not in switches)


@pytest.mark.parametrize("training", [False, True])
def test_in_live_mode_the_other_live_command_switches_and_the_same_one_says_it_runs(training):
    session = in_state("live")
    session.live_train = training  # Shift+F6 started it, else F6
    enabled = session.enabled(ready=True, busy=True)
    assert enabled["train.live"] and enabled["train.live_train"]  # neither says nothing
    assert session.live_command(ready=True, busy=True, train=not training) == SWITCH
    running = "live inference" + (" with per-candle training" if training else "")
    assert session.live_command(ready=True, busy=True, train=training) == \
        f"{running} is running already"


def test_a_live_command_starts_from_idle_else_says_why_not():
    assert in_state("idle").live_command(ready=True, busy=False, train=True) == START
    assert in_state("idle").live_command(ready=False, busy=False, train=False) == \
        "live inference can start once the device is ready"
    assert in_state("training").live_command(ready=True, busy=True, train=True) == \
        "live inference with per-candle training can start once training has ended " \
        "(Stop: Shift+F5)"
    assert in_state("live").live_command(ready=True, busy=False, train=True) != SWITCH


@pytest.mark.parametrize("state", ["preparing", "training", "live", "evaluating"])
def test_a_running_worker_can_be_stopped_restarted_and_cleared(state):
    session = in_state(state)
    assert session.can_stop(busy=True) and not session.can_stop(busy=False)
    enabled = session.enabled(ready=True, busy=True)
    assert enabled["train.stop"] and enabled["train.restart"] and enabled["train.clear"]
    assert session.takes_progress


def test_stopping_takes_no_progress_and_allows_nothing_but_paper():
    session = in_state("stopping")
    assert not session.takes_progress
    assert not session.can_stop(busy=True)
    enabled = session.enabled(ready=True, busy=True)
    assert {c for c, on in enabled.items() if on} == {"train.paper"}


def test_the_evaluate_button_stops_the_evaluation_that_runs():
    assert in_state("evaluating").enabled(ready=True, busy=True)["train.evaluate"]
    assert not in_state("training").enabled(ready=True, busy=True)["train.evaluate"]
    assert not in_state("evaluating").enabled(ready=False, busy=True)["train.evaluate"]


def test_paper_trading_can_always_be_switched():
    for state in STATES:
        assert in_state(state).enabled(ready=False, busy=False)["train.paper"]


def test_the_gauges_sample_while_a_worker_is_at_work():
    for state in ACTIVE:
        assert in_state(state).gauges_run(busy=True)
        assert not in_state(state).gauges_run(busy=False)
    for state in IDLE:
        assert not in_state(state).gauges_run(busy=True)


def test_each_state_shown_has_its_colour():
    assert in_state("failed").color == "#ef5350"
    assert in_state("training").color == "#26a69a"
    assert in_state("idle").color == "#b2b5be"


def test_restart_takes_the_latest_start_or_resume_record():
    start = {"type": "start", "preset": "tiny"}
    resume = {"type": "resume", "preset": "small"}
    end = {"type": "end", "status": "stopped"}
    assert restart_settings([start, {"type": "checkpoint"}, end]) is start
    assert restart_settings([start, end, resume, end]) is resume
    assert restart_settings([end, {"type": "checkpoint"}]) is None
    assert restart_settings([]) is None
