"""Storage faults in words: a full disk and a damaged SQLite file, each named with what to do.

SQLite rolls a transaction back by itself when the disk fills (``SQLITE_FULL``); a plain
``ROLLBACK`` after that fails with "no transaction is active" and hides the real cause, so every
store rolls back through ``rollback`` here, and turns the error into one of these messages.

A full disk does not always say so: SQLite needs room for its ``-shm`` and ``-wal`` files even to
read, and fails with "disk I/O error" when it has none; torch's checkpoint writer ends with
"unexpected pos"; safetensors with "os error 28". ``is_disk_full`` tells these apart from real
damage by the error's cause and, where it is given the path, by the free space left there.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from .errors import WorkstationError

_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_FULL_TEXTS = ("no space left on device", "disk quota exceeded", "database or disk is full",
               f"os error {errno.ENOSPC})", f"os error {errno.EDQUOT})")
_DAMAGED_CODES = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
LOW_SPACE_BYTES = 1 << 20  # an I/O error with less free space than this is a full disk


class DiskFullError(WorkstationError):
    """The disk (or quota) is full; the message names what could not be written (``doing``,
    default "cannot write ``where``") and what is intact (``kept``)."""

    def __init__(self, where: str | Path, kept: str = "everything saved before is intact", *,
                 doing: str | None = None):
        self.where = Path(where)
        doing = doing or f"cannot write {where}"
        super().__init__(f"disk full: {doing}; {kept} (free some space and retry)")


class DamagedFileError(WorkstationError):
    """An SQLite file that is damaged or not ours; the app leaves it as it is."""


_Damaged = TypeVar("_Damaged", bound=DamagedFileError)


def is_disk_full(exc: BaseException, where: str | Path | None = None) -> bool:
    """Whether ``exc``, or an error it arose from, means the disk is full: ENOSPC or EDQUOT,
    ``SQLITE_FULL`` or a library's words for them; or, given ``where`` (the file or folder
    written), an I/O error (SQLite's, torch's writer's, EIO) while almost no space is free
    there."""
    for link in _chain(exc):
        if isinstance(link, DiskFullError):
            return True
        if isinstance(link, OSError) and link.errno in _FULL_ERRNOS:
            return True
        if isinstance(link, sqlite3.Error) and _code(link) == sqlite3.SQLITE_FULL:
            return True
        if not isinstance(link, OSError) and any(t in str(link).lower() for t in _FULL_TEXTS):
            return True
    if where is None or not any(_is_io_error(link) for link in _chain(exc)):
        return False
    free = free_bytes(where)
    return free is not None and free < LOW_SPACE_BYTES


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the errors it arose from (its causes and contexts), each once."""
    out: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and all(link is not seen for seen in out):
        out.append(link)
        link = link.__cause__ or link.__context__
    return out


def _is_io_error(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.Error):
        return _code(exc) == sqlite3.SQLITE_IOERR
    if isinstance(exc, OSError):
        return exc.errno == errno.EIO
    return type(exc) is RuntimeError  # torch's writer: "[enforce fail ...] unexpected pos"


def free_bytes(where: str | Path) -> int | None:
    """Bytes free for this user on the file system of ``where`` (its nearest existing
    folder), or None if that cannot be told."""
    folder = Path(where)
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
        return None
    return st.f_bavail * st.f_frsize


def is_damaged(exc: BaseException) -> bool:
    """Whether an ``sqlite3`` error means the file is damaged or not a database."""
    return isinstance(exc, sqlite3.DatabaseError) and _code(exc) in _DAMAGED_CODES


def _code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF  # the primary code of an extended one


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back the open transaction, if SQLite has not already done so."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


@contextmanager
def immediate_transaction(conn: sqlite3.Connection,
                          as_error: Callable[[sqlite3.DatabaseError], Exception],
                          ) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` .. ``COMMIT``, rolled back on any error (if SQLite has not already
    rolled it back, as on a full disk); SQLite's errors become ``as_error(exc)``, except a
    ``ProgrammingError`` (a bug, such as the wrong thread, not the file)."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
    except sqlite3.ProgrammingError:
        raise
    except sqlite3.DatabaseError as exc:
        raise as_error(exc) from exc


def schema_of(conn: sqlite3.Connection) -> tuple[int, set[str]]:
    """The file's ``user_version`` and table names, read in one snapshot (a process creating
    the schema at the same moment is seen entirely or not at all)."""
    conn.execute("BEGIN")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        rollback(conn)
    return version, tables


def damage_found(conn: sqlite3.Connection) -> str | None:
    """SQLite's first complaint about the file's structure (``PRAGMA quick_check``), or None."""
    rows = conn.execute("PRAGMA quick_check(1)").fetchall()
    problem = rows[0][0] if rows else "no answer to quick_check"
    return None if problem == "ok" else " ".join(str(problem).split())


def make_durable(conn: sqlite3.Connection, wait_s: float = 10.0) -> None:
    """Foreign keys on, WAL journal, ``synchronous=FULL``: each committed transaction
    survives a crash or a power cut, and a killed process leaves the file as it was. Setting
    the journal mode can be refused as "locked" at once, without SQLite's busy wait, while
    other processes open the same new file: it is asked again for up to ``wait_s``."""
    conn.execute("PRAGMA foreign_keys = ON")
    deadline = time.monotonic() + wait_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
    conn.execute("PRAGMA synchronous = FULL")


def why_not_writable(conn: sqlite3.Connection, *, what: str, schema_version: int,
                     tables_needed: frozenset[str] | set[str]) -> str | None:
    """Why a Workstation SQLite file (``what``, e.g. "annotations database") must not be
    written to: unreadable, damaged, written by a newer version, foreign (tables but no
    version) or missing ``tables_needed``; None when it may be. Other errors (a full disk,
    an I/O error) are raised: they say nothing about the file."""
    try:
        version, tables = schema_of(conn)
        problem = damage_found(conn)
    except sqlite3.DatabaseError as exc:
        if not is_damaged(exc):
            raise
        return f"not a readable SQLite database ({exc})"
    if problem is not None:
        return f"damaged ({problem})"
    if version > schema_version:
        return (f"it has schema version {version}, written by a newer Workstation (this one "
                f"reads up to {schema_version})")
    if version == 0 and tables:
        return f"it is not a Workstation {what} (tables: {', '.join(sorted(tables))})"
    if version > 0 and not tables >= tables_needed:
        return f"tables {', '.join(sorted(set(tables_needed) - tables))} are missing"
    return None


def damaged(path: Path, what: str, problem: str, lost: str, error: type[_Damaged]) -> _Damaged:
    """The message for a damaged or foreign ``what`` (e.g. "candle cache") at ``path``;
    ``lost`` says what moving it aside costs."""
    return error(
        f"{what} {path} cannot be used: {problem}; nothing was written to it. Move it aside to "
        f"start a new one ({lost}), or try `sqlite3 {path} .recover` to rescue what it holds")


def storage_error(exc: sqlite3.Error, path: Path, what: str, lost: str,
                  damaged_error: type[DamagedFileError] = DamagedFileError,
                  full_error: type[DiskFullError] = DiskFullError, *,
                  writing: bool = True) -> WorkstationError | None:
    """``full_error`` or ``damaged_error`` for an ``sqlite3`` error, None for others; a full
    disk met while ``writing`` a change, or while reading (SQLite needs room even then)."""
    if is_disk_full(exc, path):
        if not writing:
            return full_error(path, "the file is intact and nothing was changed",
                              doing=f"cannot read {what} {path} (SQLite needs a little free "
                                    f"space even to read)")
        return full_error(path, "nothing of this change was stored, everything before is intact")
    if is_damaged(exc):
        return damaged(path, what, f"damaged ({exc})", lost, damaged_error)
    return None
