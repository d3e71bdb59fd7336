"""Replay sessions are kept (issue 27): each change durable, the newest unfinished one found
after a restart, a damaged file named and left alone."""

import dataclasses

import pytest

from workstation.annotations.replay_sessions import (
    DamagedReplayError,
    ReplaySession,
    ReplaySessionError,
    ReplaySessions,
)


def session(**changes) -> ReplaySession:
    base = ReplaySession(source="csv:/data/eth.csv", market="real", symbol="ETH/USDT",
                         timeframe="1m", started_clock=1_000_000, clock=1_000_000, speed="5/s",
                         span_from=0, span_to=2_000_000)
    return dataclasses.replace(base, **changes)


def test_sessions_survive_reopening_and_the_newest_open_one_resumes(tmp_path):
    path = tmp_path / "replay.sqlite"
    sessions = ReplaySessions(path)
    first = sessions.save(session())
    assert first.id == 1 and first.started_at > 0
    sessions.save(dataclasses.replace(first, clock=1_600_000, decisions=4, ended_at=5))
    second = sessions.save(session(clock=1_200_000))
    sessions.close()
    again = ReplaySessions(path)
    stored = again.all()
    assert [(s.id, s.clock, s.decisions, s.ended_at) for s in stored] == [
        (1, 1_600_000, 4, 5), (2, 1_200_000, 0, None)]
    assert again.latest(open_only=True) == second and stored[0].span == (0, 2_000_000)
    again.save(dataclasses.replace(second, ended_at=9))
    assert again.latest(open_only=True) is None and again.latest().id == 2
    again.close()


def test_a_clock_before_the_start_is_refused(tmp_path):
    sessions = ReplaySessions(tmp_path / "replay.sqlite")
    with pytest.raises(ReplaySessionError, match="CHECK"):
        sessions.save(session(clock=5))
    assert sessions.all() == []
    sessions.close()


def test_a_foreign_file_is_named_and_left_alone(tmp_path):
    path = tmp_path / "replay.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(DamagedReplayError, match="cannot be used"):
        ReplaySessions(path)
    assert path.read_bytes() == b"not a database at all" * 100
