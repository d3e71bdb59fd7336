"""``CandleCache``: closed candles of many series in one SQLite file, loaded in column blocks.

Each series (source, symbol, timeframe) is cut into fixed time blocks of ``BLOCK_CANDLES``
grid slots; a block is one row holding its candles as packed little-endian columns, so a
million candles load as a few hundred BLOBs and ``np.frombuffer`` instead of a million Python
rows. ``coverage`` records the time spans already fetched from a source: where the exchange
answered, with candles or with a justified emptiness (before the listing, a window it
confirmed empty), so a second fetch asks only for what is missing, and again for what the
exchange did not serve. Caches written before coverage was honest (a fetch could record a
span it never got an answer for) are repaired once on opening: their coverage is recomputed
from the stored candles. Every change is one transaction in WAL mode with
``synchronous=FULL``: a process killed mid-write leaves the cache as it was before that write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import WorkstationError
from ..storage import (
    DamagedFileError,
    DiskFullError,
    damage_found,
    damaged,
    make_durable,
    rollback,
    schema_of,
    storage_error,
)
from .candles import Candles
from .series import SeriesKey
from .timeframes import parse_timeframe

BLOCK_CANDLES = 2048
_MMAP_BYTES = 1 << 36  # SQLite maps at most this much of the file (here, all of it)
SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS series (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    symbol TEXT NOT NULL,
    timeframe TEXT NOT NULL,
    UNIQUE (source, symbol, timeframe)
);
CREATE TABLE IF NOT EXISTS blocks (
    series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    block INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count > 0),
    first_ts INTEGER NOT NULL,
    last_ts INTEGER NOT NULL CHECK (last_ts >= first_ts),
    data BLOB NOT NULL,
    PRIMARY KEY (series_id, block)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS coverage (
    series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    start_ts INTEGER NOT NULL,
    end_ts INTEGER NOT NULL CHECK (end_ts >= start_ts),
    PRIMARY KEY (series_id, start_ts)
) WITHOUT ROWID;
"""


# Files imported into the cache (csv:FILE opened in the window): which file, as it was
# (size, mtime), under which series, how many candles. Added after schema 1; made when first
# needed, so that caches of every version stay readable by every version.
_IMPORTED_FILES = """
CREATE TABLE IF NOT EXISTS imported_files (
    path TEXT NOT NULL,
    symbol TEXT NOT NULL,
    timeframe TEXT NOT NULL,
    source TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    candles INTEGER NOT NULL,
    PRIMARY KEY (path, symbol, timeframe)
) WITHOUT ROWID
"""

# One-off repairs done to this file, by name. Made when first needed, like imported_files.
_REPAIRS = """
CREATE TABLE IF NOT EXISTS repairs (
    name TEXT PRIMARY KEY,
    done_ms INTEGER NOT NULL
) WITHOUT ROWID
"""
_HONEST_COVERAGE = "coverage-from-candles"  # coverage recomputed from the stored candles

# The price tick an exchange gave for a market when its candles were fetched (its price
# precision), with where it came from. Made when first needed, like imported_files.
_TICKS = """
CREATE TABLE IF NOT EXISTS ticks (
    source TEXT NOT NULL,
    symbol TEXT NOT NULL,
    tick REAL NOT NULL CHECK (tick > 0),
    said TEXT NOT NULL,
    PRIMARY KEY (source, symbol)
) WITHOUT ROWID
"""

_TABLES = {"series", "blocks", "coverage"}
_LOST = "candles in it can be fetched or imported again"


class CacheError(WorkstationError):
    """The cache file cannot be used; the message names the file."""


class DamagedCacheError(CacheError, DamagedFileError):
    """The cache file is damaged or not a cache; it is left as it is."""


class CacheDiskFullError(CacheError, DiskFullError):
    """The disk filled during a write to the cache; the write was rolled back."""


@dataclass(frozen=True)
class SeriesSummary:
    key: SeriesKey
    count: int
    first_ts: int
    last_ts: int
    gaps: int  # stretches of missing candles between first and last
    missing: int  # candles missing between first and last
    # spans between the first and last candle (open times, inclusive) never answered for by
    # the source: a later fetch asks for them again
    uncovered: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class FileStamp:
    """A file as it is now: its absolute path, size and modification time (ns). A file whose
    stamp changed is imported again."""

    path: str
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: str | Path) -> FileStamp:
        resolved = Path(path).expanduser().resolve()
        try:
            st = resolved.stat()
        except OSError as exc:
            raise CacheError(f"{resolved}: cannot read: {exc.strerror or exc}") from exc
        return cls(str(resolved), st.st_size, st.st_mtime_ns)


def _spans(covered) -> list[tuple[int, int]]:
    """``put``'s ``covered``: one (first, last) span or a sequence of them."""
    if len(covered) == 2 and all(isinstance(v, (int, np.integer)) for v in covered):
        return [(int(covered[0]), int(covered[1]))]
    return [(int(first), int(last)) for first, last in covered]


def _runs(ts: np.ndarray, tf: int) -> list[tuple[int, int]]:
    """Runs of consecutive grid slots in the ascending open times ``ts``."""
    if not len(ts):
        return []
    breaks = np.flatnonzero(np.diff(ts) != tf)
    starts = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks, [len(ts) - 1]))
    return [(int(ts[s]), int(ts[e])) for s, e in zip(starts.tolist(), ends.tolist())]


def _pack(ts: np.ndarray, cols: list[np.ndarray]) -> bytes:
    return ts.astype("<i8").tobytes() + b"".join(c.astype("<f8").tobytes() for c in cols)


def _unpack(blob: bytes, count: int) -> list[np.ndarray]:
    table = np.frombuffer(blob, dtype="<f8", count=6 * count).reshape(6, count)
    return [table[0].view("<i8"), *table[1:]]


def _closed_rows(key: SeriesKey, candles: Candles) -> int:
    """How many rows of ``candles`` are stored under ``key``: the closed ones (a forming
    last candle is left out); candles on another timeframe are refused."""
    if candles.timeframe != key.timeframe:
        raise CacheError(f"{key}: candles are {candles.timeframe.name}, "
                         f"not {key.timeframe.name}")
    return candles.n_closed


class CandleCache:
    """See the module docstring. Use as a context manager or call ``close()``."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._checked = False  # the file's structure is checked before the first write
        self._coverage_ok = False  # coverage repaired (``_repair_coverage``) if it had to be
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
        except sqlite3.Error as exc:
            raise CacheError(f"cannot open candle cache {self.path}: {exc}") from exc
        try:
            with self._reading():
                self._db.execute("PRAGMA busy_timeout=5000")  # processes opening it at once wait
                self._check_existing()
                make_durable(self._db)
                # blocks read through a memory map: a year of 1s candles (1.5 GB) loads
                # 0.2-0.3 s sooner than through read() (`bench scale`)
                self._db.execute(f"PRAGMA mmap_size={_MMAP_BYTES}")
            if self._db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                with self._transaction():  # idempotent: another process may be first
                    fresh = not self._db.execute("SELECT 1 FROM sqlite_master WHERE "
                                                 "name='series'").fetchone()
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            self._db.execute(statement)
                    self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                    if fresh:  # nothing to repair in a new file
                        self._mark_repaired(_HONEST_COVERAGE)
        except BaseException:
            self._db.close()
            raise

    def _repaired(self, name: str) -> bool:
        return bool(self._db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                                     "name='repairs'").fetchone()) and bool(self._db.execute(
            "SELECT 1 FROM repairs WHERE name=?", (name,)).fetchone())

    def _mark_repaired(self, name: str) -> None:
        self._db.execute(_REPAIRS)
        self._db.execute("INSERT OR REPLACE INTO repairs (name, done_ms) VALUES (?, "
                         "CAST(strftime('%s','now') AS INTEGER) * 1000)", (name,))

    def _repair_coverage(self) -> None:
        """Once per file: coverage written before it was honest (a fetch recorded the whole
        range it asked for even where the exchange answered nothing) becomes the runs of
        stored candles, so a later fetch asks again for every stretch without candles. Done
        before the first use of coverage."""
        if self._coverage_ok:
            return
        with self._reading():
            if self._repaired(_HONEST_COVERAGE):
                return
        with self._transaction():
            if self._repaired(_HONEST_COVERAGE):  # another process was first
                return
            for series_id, timeframe in self._db.execute(
                    "SELECT id, timeframe FROM series").fetchall():
                tf = parse_timeframe(timeframe).ms
                ts = self._series_ts(series_id)
                self._db.execute("DELETE FROM coverage WHERE series_id=?", (series_id,))
                for start, end in _runs(ts, tf):
                    self._db.execute("INSERT INTO coverage (series_id, start_ts, end_ts) "
                                     "VALUES (?,?,?)", (series_id, start, end))
            self._mark_repaired(_HONEST_COVERAGE)
        self._coverage_ok = True

    def _series_ts(self, series_id: int) -> np.ndarray:
        return np.concatenate([np.frombuffer(data, dtype="<i8", count=count) for count, data in
                               self._db.execute("SELECT count, data FROM blocks WHERE "
                                                "series_id=? ORDER BY block", (series_id,))]
                              or [np.empty(0, np.int64)])

    def _check_existing(self) -> None:
        """Refuse, before writing anything, a file that is not a cache or is too new."""
        version, tables = schema_of(self._db)
        if version > SCHEMA_VERSION:
            raise CacheError(f"{self.path}: written by a newer Workstation "
                             f"(schema {version}, this one reads {SCHEMA_VERSION})")
        if (version == 0 and tables) or (version > 0 and not tables >= _TABLES):
            raise damaged(self.path, "candle cache", "it is not a Workstation candle cache "
                          f"(tables: {', '.join(sorted(tables)) or 'none'})", _LOST,
                          DamagedCacheError)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> CandleCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- plumbing ------------------------------------------------------------------------
    @contextmanager
    def _reading(self, *, writing: bool = False) -> Iterator[None]:
        """SQLite errors as one line naming the file and what to do."""
        try:
            yield
        except sqlite3.ProgrammingError:  # a bug (e.g. the wrong thread), not the file
            raise
        except sqlite3.Error as exc:
            raise (storage_error(exc, self.path, "candle cache", _LOST, DamagedCacheError,
                                 CacheDiskFullError, writing=writing)
                   or CacheError(f"candle cache {self.path}: {exc}")) from exc

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction; the file's structure is checked before the first."""
        with self._reading(writing=True):
            if not self._checked:
                problem = damage_found(self._db)
                if problem is not None:
                    raise damaged(self.path, "candle cache", f"damaged ({problem})", _LOST,
                                  DamagedCacheError)
                self._checked = True
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                rollback(self._db)
                raise
            try:
                self._db.execute("COMMIT")
            except BaseException:
                rollback(self._db)
                raise

    def _series_id(self, key: SeriesKey) -> int | None:
        row = self._db.execute(
            "SELECT id FROM series WHERE source=? AND symbol=? AND timeframe=?",
            (key.source, key.symbol, key.timeframe.name)).fetchone()
        return row[0] if row else None

    def _new_series_id(self, key: SeriesKey) -> int:
        found = self._series_id(key)
        if found is not None:
            return found
        cursor = self._db.execute("INSERT INTO series (source, symbol, timeframe) "
                                  "VALUES (?,?,?)", (key.source, key.symbol, key.timeframe.name))
        if cursor.lastrowid is None:
            raise CacheError(f"candle cache {self.path}: no id for the new series {key}")
        return cursor.lastrowid

    # -- writing -------------------------------------------------------------------------
    def put(self, key: SeriesKey, candles: Candles,
            covered: tuple[int, int] | Sequence[tuple[int, int]] | None = None) -> int:
        """Store the closed candles (a forming last candle is left out), merging with what is
        there (new values win); record ``covered`` (a span (first, last open time), or a list
        of them; None: the stored candles' first to last) as fetched. Returns the number of
        candles stored."""
        n = _closed_rows(key, candles)
        span = BLOCK_CANDLES * key.timeframe.ms
        self._repair_coverage()
        with self._transaction():
            series_id = self._new_series_id(key)
            if n > 0:
                cols = [c[:n] for c in candles.columns()]
                block_of = cols[0] // span
                starts = np.flatnonzero(np.concatenate(([True], block_of[1:] != block_of[:-1])))
                ends = np.append(starts[1:], n)
                for s, e in zip(starts.tolist(), ends.tolist()):
                    self._merge_block(series_id, int(block_of[s]), [c[s:e] for c in cols])
            if covered is not None:
                for first, last in _spans(covered):
                    self._add_coverage(series_id, first, last)
            elif n > 0:
                self._add_coverage(series_id, int(candles.ts[0]), int(candles.ts[n - 1]))
        return max(n, 0)

    def _merge_block(self, series_id: int, block: int, new: list[np.ndarray]) -> None:
        row = self._db.execute("SELECT count, data FROM blocks WHERE series_id=? AND block=?",
                               (series_id, block)).fetchone()
        if row:
            old = _unpack(row[1], row[0])
            merged = [np.concatenate((a, b)) for a, b in zip(old, new)]
            order = np.argsort(merged[0], kind="stable")
            ts_sorted = merged[0][order]
            keep = np.ones(len(order), dtype=bool)
            keep[:-1] = ts_sorted[1:] != ts_sorted[:-1]  # the later (new) row wins
            new = [c[order[keep]] for c in merged]
        ts = new[0]
        self._db.execute(
            "INSERT OR REPLACE INTO blocks (series_id, block, count, first_ts, last_ts, data) "
            "VALUES (?,?,?,?,?,?)",
            (series_id, block, len(ts), int(ts[0]), int(ts[-1]), _pack(ts, new[1:])))

    def _add_coverage(self, series_id: int, start: int, end: int) -> None:
        rows = self._db.execute(
            "SELECT start_ts, end_ts FROM coverage WHERE series_id=? AND end_ts>=? AND start_ts<=?",
            (series_id, start - 1, end + 1)).fetchall()
        for s, e in rows:
            start, end = min(start, s), max(end, e)
        self._db.execute("DELETE FROM coverage WHERE series_id=? AND end_ts>=? AND start_ts<=?",
                         (series_id, start - 1, end + 1))
        self._db.execute("INSERT INTO coverage (series_id, start_ts, end_ts) VALUES (?,?,?)",
                         (series_id, start, end))

    def replace_with_file(self, key: SeriesKey, candles: Candles, stamp: FileStamp,
                          progress: Callable[[float], None] | None = None) -> int:
        """Make ``key``'s candles exactly ``candles`` (what was there is dropped) and record
        that they are the file ``stamp``, in one transaction: a crash leaves the old series
        and record, or the new. Another file recorded under the same series loses its record
        (it is imported again when opened). ``progress(fraction)`` hears each block written;
        an exception it raises rolls everything back. Returns the number of candles."""
        n = _closed_rows(key, candles)
        span = BLOCK_CANDLES * key.timeframe.ms
        with self._transaction():
            self._db.execute(_IMPORTED_FILES)
            series_id = self._new_series_id(key)
            self._db.execute("DELETE FROM blocks WHERE series_id=?", (series_id,))
            self._db.execute("DELETE FROM coverage WHERE series_id=?", (series_id,))
            self._db.execute("DELETE FROM imported_files WHERE source=? AND symbol=? AND "
                             "timeframe=?", (key.source, key.symbol, key.timeframe.name))
            if n > 0:
                cols = [c[:n] for c in candles.columns()]
                block_of = cols[0] // span
                starts = np.flatnonzero(np.concatenate(([True], block_of[1:] != block_of[:-1])))
                ends = np.append(starts[1:], n)
                for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
                    self._merge_block(series_id, int(block_of[s]), [c[s:e] for c in cols])
                    if progress is not None and (i % 64 == 0 or i == len(starts) - 1):
                        progress((i + 1) / len(starts))
                self._add_coverage(series_id, int(candles.ts[0]), int(candles.ts[n - 1]))
            self._db.execute(
                "INSERT OR REPLACE INTO imported_files (path, symbol, timeframe, source, size, "
                "mtime_ns, candles) VALUES (?,?,?,?,?,?,?)",
                (stamp.path, key.symbol, key.timeframe.name, key.source, stamp.size,
                 stamp.mtime_ns, max(n, 0)))
        return max(n, 0)

    def imported(self, stamp: FileStamp, key: SeriesKey) -> bool:
        """Whether ``key`` holds the file ``stamp`` as it is now (same path, size and mtime,
        imported under this key, and every candle still there)."""
        with self._reading():
            recorded = self._import_record(stamp, key)
            if recorded is None:
                return False
            series_id = self._series_id(key)
            held = 0 if series_id is None else self._db.execute(
                "SELECT COALESCE(SUM(count), 0) FROM blocks WHERE series_id=?",
                (series_id,)).fetchone()[0]
            return held == recorded

    def load_imported(self, stamp: FileStamp, key: SeriesKey) -> Candles | None:
        """``key``'s candles if they are the file ``stamp`` as it is now (as ``imported``
        says), else None; read once."""
        with self._reading():
            recorded = self._import_record(stamp, key)
        if recorded is None:
            return None
        candles = self.load(key)
        return candles if len(candles) == recorded else None

    def _import_record(self, stamp: FileStamp, key: SeriesKey) -> int | None:
        """The candles recorded for the file ``stamp`` imported under ``key`` (None: no
        record of it as it is now)."""
        if not self._has_imports():
            return None
        row = self._db.execute(
            "SELECT source, size, mtime_ns, candles FROM imported_files WHERE path=? AND "
            "symbol=? AND timeframe=?", (stamp.path, key.symbol, key.timeframe.name)).fetchone()
        if row is None or tuple(row[:3]) != (key.source, stamp.size, stamp.mtime_ns):
            return None
        return int(row[3]) if row[3] > 0 else None

    def imported_symbols(self, path: str | Path) -> list[str]:
        """The symbols the file at ``path`` was imported under, most candles first."""
        resolved = str(Path(path).expanduser().resolve())
        with self._reading():
            if not self._has_imports():
                return []
            return [symbol for (symbol,) in self._db.execute(
                "SELECT symbol FROM imported_files WHERE path=? GROUP BY symbol "
                "ORDER BY MAX(candles) DESC, symbol", (resolved,))]

    def put_tick(self, source: str, symbol: str, tick: float, said: str) -> None:
        """Record the price tick ``source`` gives ``symbol`` (``said``: where it came from)."""
        with self._transaction():
            self._db.execute(_TICKS)
            self._db.execute("INSERT OR REPLACE INTO ticks (source, symbol, tick, said) "
                             "VALUES (?,?,?,?)", (source, symbol, float(tick), said))

    def tick(self, source: str, symbol: str) -> tuple[float, str] | None:
        """The recorded price tick of ``symbol`` on ``source`` and where it came from; None
        when none was recorded."""
        with self._reading():
            if self._db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                                "name='ticks'").fetchone() is None:
                return None
            row = self._db.execute("SELECT tick, said FROM ticks WHERE source=? AND symbol=?",
                                   (source, symbol)).fetchone()
        return None if row is None else (float(row[0]), str(row[1]))

    def _has_imports(self) -> bool:
        return self._db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                                "name='imported_files'").fetchone() is not None

    def delete(self, key: SeriesKey) -> bool:
        with self._transaction():
            series_id = self._series_id(key)
            if series_id is None:
                return False
            self._db.execute("DELETE FROM series WHERE id=?", (series_id,))
        return True

    # -- reading -------------------------------------------------------------------------
    def load(self, key: SeriesKey, since: int | None = None, until: int | None = None) -> Candles:
        """Candles of ``key`` with open time in [since, until] (both optional, inclusive)."""
        with self._reading():
            self._db.execute("BEGIN")  # one snapshot: the count and the blocks agree
            try:
                return self._load(key, since, until)
            finally:
                self._db.execute("COMMIT")

    def _load(self, key: SeriesKey, since: int | None, until: int | None) -> Candles:
        series_id = self._series_id(key)
        if series_id is None:
            return Candles(key.timeframe)
        lo = -(2**63) if since is None else int(since)
        hi = 2**63 - 1 if until is None else int(until)
        where = "FROM blocks WHERE series_id=? AND last_ts>=? AND first_ts<=?"
        most = self._db.execute(f"SELECT COALESCE(SUM(count), 0) {where}",
                                (series_id, lo, hi)).fetchone()[0]

        def parts() -> Iterator[list[np.ndarray]]:
            """Each block's columns, cut to [lo, hi]; one block's bytes held at a time."""
            for count, first, last, data in self._db.execute(
                    f"SELECT count, first_ts, last_ts, data {where} ORDER BY block",
                    (series_id, lo, hi)):
                cols = _unpack(data, count)
                if first < lo or last > hi:
                    i0 = np.searchsorted(cols[0], lo, side="left")
                    i1 = np.searchsorted(cols[0], hi, side="right")
                    cols = [c[i0:i1] for c in cols]
                yield cols

        return Candles.from_parts(parts(), most, key.timeframe)

    def missing(self, key: SeriesKey, start: int, end: int) -> list[tuple[int, int]]:
        """Spans of [start, end] (open times, inclusive) not yet fetched, on the key's grid."""
        self._repair_coverage()
        with self._reading():
            return self._missing(key, start, end)

    def _missing(self, key: SeriesKey, start: int, end: int) -> list[tuple[int, int]]:
        tf = key.timeframe.ms
        start = start - start % tf
        end = end - end % tf
        series_id = self._series_id(key)
        covered = [] if series_id is None else self._db.execute(
            "SELECT start_ts, end_ts FROM coverage WHERE series_id=? AND end_ts>=? AND start_ts<=? "
            "ORDER BY start_ts", (series_id, start, end)).fetchall()
        gaps, cursor = [], start
        for s, e in covered:
            if s > cursor:
                gaps.append((cursor, s - tf))
            cursor = max(cursor, e + tf)
        if cursor <= end:
            gaps.append((cursor, end))
        return gaps

    def keys(self) -> list[SeriesKey]:
        """The series that hold candles, without reading them (sorted as ``series()``)."""
        with self._reading():
            return [SeriesKey(source, symbol, parse_timeframe(timeframe))
                    for source, symbol, timeframe in
                    self._db.execute(
                        "SELECT source, symbol, timeframe FROM series WHERE EXISTS (SELECT 1 "
                        "FROM blocks WHERE blocks.series_id = series.id) ORDER BY source, "
                        "symbol, timeframe")]

    def series(self) -> list[SeriesSummary]:
        """What the cache holds, one summary per series."""
        self._repair_coverage()
        with self._reading():
            return self._series()

    def _series(self) -> list[SeriesSummary]:
        out = []
        for series_id, source, symbol, timeframe in self._db.execute(
                "SELECT id, source, symbol, timeframe FROM series ORDER BY source, symbol, "
                "timeframe").fetchall():
            key = SeriesKey(source, symbol, parse_timeframe(timeframe))
            ts = self._series_ts(series_id)
            if not len(ts):
                continue
            step = np.diff(ts) // key.timeframe.ms
            gaps = step > 1
            uncovered = tuple(self._missing(key, int(ts[0]), int(ts[-1])))
            out.append(SeriesSummary(key, len(ts), int(ts[0]), int(ts[-1]),
                                     int(np.count_nonzero(gaps)), int((step[gaps] - 1).sum()),
                                     uncovered))
        return out
