"""Replay sessions are kept (issue 27): each change durable, the newest unfinished one found
after a restart, the paper accounts traded on its clock kept with it, a version-1 file
upgraded, a damaged file named and left alone."""

import dataclasses
import sqlite3

import pytest

from workstation.annotations.replay_sessions import (
    _SCHEMA,
    SCHEMA_VERSION,
    DamagedReplayError,
    PaperResult,
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


def paper(**changes) -> PaperResult:
    base = PaperResult(account="PAPER demo DEMO/USDT 1m · run r1 · blind replay 1", trades=3,
                       wins=2, pnl=12.5, return_pct=0.125, equity=10_012.5, held=1,
                       marked_ts=1_300_000)
    return dataclasses.replace(base, **changes)


def test_a_sessions_paper_accounts_are_kept_with_it_and_replaced_as_they_trade(tmp_path):
    path = tmp_path / "replay.sqlite"
    sessions = ReplaySessions(path)
    first, second = sessions.save(session()), sessions.save(session())
    sessions.record_paper(first.id, paper(trades=1, pnl=-3.0))
    sessions.record_paper(first.id, paper())  # the same account, later: replaced
    sessions.record_paper(first.id, paper(account="PAPER demo · a fresh model · blind replay 1"))
    sessions.close()
    again = ReplaySessions(path)
    kept = again.paper(first.id)
    assert [p.account for p in kept] == [paper().account,
                                         "PAPER demo · a fresh model · blind replay 1"]
    assert kept[0] == paper() and again.paper(second.id) == []
    with pytest.raises(ReplaySessionError, match="FOREIGN KEY"):
        again.record_paper(99, paper())  # no such session: nothing kept
    again.close()


def test_a_version_1_file_gets_the_paper_table_and_keeps_its_sessions(tmp_path):
    path = tmp_path / "replay.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(_SCHEMA)
    conn.execute("INSERT INTO replay_sessions (source, market, symbol, timeframe, "
                 "started_clock, clock, speed, started_at) "
                 "VALUES ('csv:/e.csv', 'real', 'ETH/USDT', '1h', 10, 20, '60x', 1)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    sessions = ReplaySessions(path)
    (old,) = sessions.all()
    assert (old.id, old.clock, old.speed) == (1, 20, "60x")
    assert sessions.paper(1) == []
    sessions.record_paper(1, paper())
    assert sessions.paper(1) == [paper()]
    sessions.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    conn.close()
