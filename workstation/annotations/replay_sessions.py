"""Blind replay sessions, kept in their own SQLite file (``replay.sqlite``).

A ``ReplaySession`` says where a replay ran (source, market, symbol, timeframe), the span its
random starts were drawn from, the clock where it started and where it is (or stopped), its
speed, how many blind decisions were made in it and when it ran; ``ended_at`` is None while
it can be resumed. When the model paper-trades on the replay clock (live mode in a replay),
each paper account's results are kept with its session (``PaperResult``: trades, P&L, return,
equity, the position held, as the account's own file ``paper.sqlite`` last had them). Each
change is one durable transaction (WAL, ``synchronous=FULL``), so a replay resumes after a
crash where its clock was last saved.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..errors import WorkstationError
from ..market.candles import Candles
from ..market.replay_clock import index_at
from ..market.series import MarketKind
from ..storage import (
    DamagedFileError,
    DiskFullError,
    damaged,
    immediate_transaction,
    make_durable,
    storage_error,
    why_not_writable,
)
from .model import Region, RegionLabel, now_ms

SCHEMA_VERSION = 2
_SCHEMA = """CREATE TABLE replay_sessions (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    market TEXT NOT NULL,
    symbol TEXT NOT NULL,
    timeframe TEXT NOT NULL,
    span_from INTEGER,
    span_to INTEGER,
    started_clock INTEGER NOT NULL,
    clock INTEGER NOT NULL CHECK (clock >= started_clock),
    speed TEXT NOT NULL,
    decisions INTEGER NOT NULL DEFAULT 0 CHECK (decisions >= 0),
    reviewed_id TEXT,
    started_at INTEGER NOT NULL,
    ended_at INTEGER)"""
_PAPER_SCHEMA = """CREATE TABLE replay_paper (
    session_id INTEGER NOT NULL REFERENCES replay_sessions (id) ON DELETE CASCADE,
    account TEXT NOT NULL,
    trades INTEGER NOT NULL CHECK (trades >= 0),
    wins INTEGER NOT NULL CHECK (wins >= 0),
    pnl REAL NOT NULL,
    return_pct REAL NOT NULL,
    equity REAL NOT NULL,
    held INTEGER NOT NULL CHECK (held IN (-1, 0, 1)),
    marked_ts INTEGER,
    PRIMARY KEY (session_id, account))"""
_TABLES = {"replay_sessions"}  # a version-1 file has no replay_paper yet: it gets one
_LOST = "the list of past replays starts over; your marks are not in it"


class ReplaySessionError(WorkstationError):
    """The replay sessions file cannot be used."""


class DamagedReplayError(ReplaySessionError, DamagedFileError):
    """The replay sessions file is damaged or not ours; it is left as it is."""


class ReplayDiskFullError(ReplaySessionError, DiskFullError):
    """The disk filled while a replay session was saved; that change was not kept."""


@dataclass(frozen=True)
class ReplaySession:
    """One blind replay (see the module docstring); times are epoch ms."""

    source: str
    market: str
    symbol: str
    timeframe: str
    started_clock: int
    clock: int
    speed: str
    span_from: int | None = None
    span_to: int | None = None
    decisions: int = 0
    reviewed_id: str | None = None  # the blind "reviewed" region of the span the clock passed
    started_at: int = 0
    ended_at: int | None = None
    id: int | None = None

    @property
    def span(self) -> tuple[int, int] | None:
        if self.span_from is None or self.span_to is None:
            return None
        return self.span_from, self.span_to


_COLUMNS = tuple(f.name for f in fields(ReplaySession) if f.name != "id")


@dataclass(frozen=True)
class PaperResult:
    """Where one paper account of a replay session stands: ``account`` its label
    (``backtest.paper.PaperAccount.label``), ``trades`` closed (``wins`` with a positive
    P&L), ``pnl`` and ``return_pct`` after costs, ``equity`` at the close of ``marked_ts``
    and the position ``held`` (+1 long, 0 flat, -1 short)."""

    account: str
    trades: int
    wins: int
    pnl: float
    return_pct: float
    equity: float
    held: int
    marked_ts: int | None = None


_PAPER_COLUMNS = tuple(f.name for f in fields(PaperResult))


def reviewed_region(session: ReplaySession, candles: Candles, shown: int) -> Region | None:
    """The blind "reviewed" region of the candles a session's clock passed, the first shown
    after its start to the last of the ``shown`` candles of ``candles`` (None: none yet),
    each decided at its close; the session's own region (``reviewed_id``) once it has one."""
    first, last = index_at(candles, session.started_clock), shown - 1
    if last < first:
        return None
    tf = candles.timeframe.ms
    start, end = int(candles.ts[first]), int(candles.ts[last])
    region = Region(market=MarketKind(session.market), symbol=session.symbol,
                    timeframe=session.timeframe, start_ts=start, end_ts=end,
                    label=RegionLabel.REVIEWED, notes=f"blind replay session {session.id}",
                    blind=True, decided_at=(start + tf, end + tf))
    return replace(region, id=session.reviewed_id) if session.reviewed_id else region


class ReplaySessions:
    """The sessions file; ``save`` inserts or updates one, ``latest`` finds the newest."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise ReplaySessionError(f"cannot open replay sessions {self.path}: {exc}") from exc
        try:
            make_durable(self._conn)
            problem = why_not_writable(self._conn, what="replay sessions file",
                                       schema_version=SCHEMA_VERSION, tables_needed=_TABLES)
            if problem is not None:
                raise damaged(self.path, "replay sessions file", problem, _LOST,
                              DamagedReplayError)
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            if version < SCHEMA_VERSION:
                with self._transaction():
                    if version == 0:
                        self._conn.execute(_SCHEMA)
                    self._conn.execute(_PAPER_SCHEMA)
                    self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise self._error(exc) from exc
        except BaseException:
            self._conn.close()
            raise

    def _transaction(self):
        return immediate_transaction(self._conn, self._error)

    def _error(self, exc: sqlite3.DatabaseError) -> Exception:
        return storage_error(exc, self.path, "replay sessions file", _LOST, DamagedReplayError,
                             ReplayDiskFullError) or ReplaySessionError(
            f"replay sessions {self.path}: {exc}")

    def save(self, session: ReplaySession) -> ReplaySession:
        """Write ``session`` (a new one gets its ``id`` and ``started_at``); returns it."""
        if session.id is None and not session.started_at:
            session = replace(session, started_at=now_ms())
        values = [getattr(session, name) for name in _COLUMNS]
        with self._transaction() as conn:
            if session.id is None:
                cursor = conn.execute(
                    f"INSERT INTO replay_sessions ({', '.join(_COLUMNS)}) "
                    f"VALUES ({', '.join('?' * len(_COLUMNS))})", values)
                session = replace(session, id=cursor.lastrowid)
            else:
                conn.execute(f"UPDATE replay_sessions SET "
                             f"{', '.join(f'{name} = ?' for name in _COLUMNS)} WHERE id = ?",
                             [*values, session.id])
        return session

    def record_paper(self, session_id: int, result: PaperResult) -> None:
        """Keep ``result`` as session ``session_id``'s account ``result.account`` now."""
        values = [getattr(result, name) for name in _PAPER_COLUMNS]
        with self._transaction() as conn:
            conn.execute(f"INSERT OR REPLACE INTO replay_paper (session_id, "
                         f"{', '.join(_PAPER_COLUMNS)}) "
                         f"VALUES (?, {', '.join('?' * len(_PAPER_COLUMNS))})",
                         [session_id, *values])

    def paper(self, session_id: int) -> list[PaperResult]:
        """The paper accounts of session ``session_id``, by label."""
        rows = self._conn.execute(
            f"SELECT {', '.join(_PAPER_COLUMNS)} FROM replay_paper WHERE session_id = ? "
            "ORDER BY account", (session_id,)).fetchall()
        return [PaperResult(*row) for row in rows]

    def all(self) -> list[ReplaySession]:
        """Every session, oldest first."""
        rows = self._conn.execute(
            f"SELECT {', '.join(_COLUMNS)}, id FROM replay_sessions ORDER BY id").fetchall()
        return [ReplaySession(*row) for row in rows]

    def latest(self, *, open_only: bool = False) -> ReplaySession | None:
        """The newest session (the newest one not ended, with ``open_only``)."""
        found = [s for s in self.all() if not open_only or s.ended_at is None]
        return found[-1] if found else None

    def close(self) -> None:
        self._conn.close()
