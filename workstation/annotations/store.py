"""``AnnotationStore``: annotations in one SQLite file (``app_paths().annotations_db``).

The file is in WAL mode with ``synchronous=FULL``: a change is one transaction, and once a
method returns, the change survives the process being killed. Foreign keys (tags belong to
their annotation and go with it) and CHECK constraints (kinds, directions, positive prices,
entry not after exit) hold in the database itself. ``PRAGMA user_version`` is the schema
version; ``MIGRATIONS`` brings an older file up to date, and a file from a newer version, a
file of another program or a damaged file is refused with an error naming it and left as it
was.

Every change goes through ``add``/``update``/``upsert``/``delete``/``restore``/``merge``, which
return what an undo needs (``delete`` returns the deleted record; ``restore`` puts it back with
its id and times; ``update`` returns the record it replaced). A change that would leave two
trades of a market held at the same time is refused whole (``overlap``); a file that already
holds such trades opens as it is. Listeners registered with
``subscribe`` hear about each committed change. A store is one connection, used from the
thread that opened it (sqlite3's ``check_same_thread``).
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..market.series import MarketKey, MarketKind
from ..market.timeframes import ALL
from ..market.timeframes import SUPPORTED as TIMEFRAMES
from ..storage import (
    DamagedFileError,
    DiskFullError,
    damaged,
    immediate_transaction,
    is_disk_full,
    make_durable,
    rollback,
    storage_error,
    why_not_writable,
)
from .drawing_table import DRAWINGS_V4, DrawingTable
from .listeners import Listeners
from .model import (
    LEGACY_DEMO_PREFIX,
    MAX_TIME_MS,
    Annotation,
    AnnotationError,
    Direction,
    Kind,
    Point,
    Region,
    Source,
    Trade,
    annotation_class,
    unchecked,
)
from .overlap import OverlappingTradesError, overlapping_pairs


class AnnotationStoreError(AnnotationError):
    """The annotations file cannot be used, or a change broke a rule of the store."""


class DamagedAnnotationsError(AnnotationStoreError, DamagedFileError):
    """The annotations file is damaged or not ours; it is left as it is."""


class AnnotationsDiskFullError(AnnotationStoreError, DiskFullError):
    """The disk filled during a change; the change was rolled back."""


_LOST = "it starts empty: keep the old file to rescue its marks"


class AnnotationNotFound(AnnotationStoreError):
    def __init__(self, annotation_id: str):
        self.annotation_id = annotation_id
        super().__init__(f"no annotation with id {annotation_id}")


class DuplicateAnnotation(AnnotationStoreError):
    def __init__(self, annotation_id: str):
        self.annotation_id = annotation_id
        super().__init__(f"an annotation with id {annotation_id} already exists")


@dataclass(frozen=True)
class StoreChange:
    """A committed change: ``action`` is "added", "updated" or "deleted"; ``annotations`` are
    the records as they are now (added, updated) or as they were (deleted)."""

    action: str
    annotations: tuple[Annotation, ...]


@dataclass(frozen=True)
class MergeResult:
    """What ``merge`` did: new ids added, older copies updated, identical ones left, and
    records the store already had in a newer version kept."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    kept_newer: int = 0


def _in(values: Iterable[str]) -> str:
    return "(" + ", ".join(f"'{value}'" for value in values) + ")"


_UUID_GLOB = "-".join("[0-9a-f]" * n for n in (8, 4, 4, 4, 12))
_TIME_OK = f"BETWEEN 0 AND {MAX_TIME_MS}"

_SCHEMA_V1 = (
    f"""
    CREATE TABLE annotations (
        id TEXT PRIMARY KEY NOT NULL CHECK (id GLOB '{_UUID_GLOB}'),
        kind TEXT NOT NULL CHECK (kind IN {_in(k.value for k in Kind)}),
        symbol TEXT NOT NULL CHECK (symbol <> '' AND symbol = upper(trim(symbol))),
        timeframe TEXT NOT NULL CHECK (timeframe IN {_in(TIMEFRAMES)}),
        source TEXT NOT NULL CHECK (source IN {_in(s.value for s in Source)}),
        start_ts INTEGER NOT NULL CHECK (start_ts {_TIME_OK}),
        end_ts INTEGER NOT NULL CHECK (end_ts {_TIME_OK}),
        direction TEXT CHECK (direction IN {_in(d.value for d in Direction)}),
        entry_price REAL CHECK (entry_price > 0),
        exit_price REAL CHECK (exit_price > 0),
        stop REAL CHECK (stop > 0),
        target REAL CHECK (target > 0),
        price REAL CHECK (price > 0),
        label TEXT CHECK (label <> '' AND label = trim(label)),
        notes TEXT NOT NULL,
        created_at INTEGER NOT NULL CHECK (created_at {_TIME_OK}),
        updated_at INTEGER NOT NULL CHECK (updated_at {_TIME_OK}),
        CHECK (start_ts <= end_ts),
        CHECK (created_at <= updated_at),
        CHECK (kind <> 'trade' OR (direction IS NOT NULL AND entry_price IS NOT NULL
               AND exit_price IS NOT NULL AND label IS NULL AND price IS NULL)),
        CHECK (kind <> 'region' OR (label IS NOT NULL AND direction IS NULL
               AND entry_price IS NULL AND exit_price IS NULL AND stop IS NULL
               AND target IS NULL AND price IS NULL)),
        CHECK (kind <> 'point' OR (start_ts = end_ts AND label IS NULL AND direction IS NULL
               AND entry_price IS NULL AND exit_price IS NULL AND stop IS NULL
               AND target IS NULL))
    ) STRICT
    """,
    "CREATE INDEX annotations_by_series ON annotations (symbol, timeframe, start_ts)",
    "CREATE INDEX annotations_by_time ON annotations (start_ts)",
    """
    CREATE TABLE annotation_tags (
        annotation_id TEXT NOT NULL REFERENCES annotations (id) ON DELETE CASCADE,
        position INTEGER NOT NULL CHECK (position >= 0),
        tag TEXT NOT NULL CHECK (tag <> '' AND tag = trim(tag) AND instr(tag, ';') = 0),
        PRIMARY KEY (annotation_id, position),
        UNIQUE (annotation_id, tag)
    ) STRICT, WITHOUT ROWID
    """,
    "CREATE INDEX annotation_tags_by_tag ON annotation_tags (tag)",
)

# Version 2: annotations name their market (real or demo). Before, the window filed demo
# marks under "DEMO:<symbol>" (or the demo's own DEMO/... symbols): those become demo marks
# of <symbol> (``model.legacy_market`` reads old files the same way).
_MARKET_V2 = (
    f"""
    ALTER TABLE annotations ADD COLUMN market TEXT NOT NULL DEFAULT 'real'
        CHECK (market IN {_in(m.value for m in MarketKind)})
    """,
    f"""
    UPDATE annotations SET market = 'demo',
        symbol = CASE WHEN substr(symbol, 1, {len(LEGACY_DEMO_PREFIX)}) = '{LEGACY_DEMO_PREFIX}'
                      THEN substr(symbol, {len(LEGACY_DEMO_PREFIX) + 1}) ELSE symbol END
    WHERE instr(symbol, 'DEMO') > 0
    """,
    "DROP INDEX annotations_by_series",
    "CREATE INDEX annotations_by_market ON annotations (market, symbol, timeframe, start_ts)",
)

# Version 3: blind marks (made in blind replay) and the replay clock of their first and last
# decision; a blind mark whose decision changed keeps them and says when (unblinded_at).
# Older marks were made in full view: hindsight.
_BLIND_V3 = (
    "ALTER TABLE annotations ADD COLUMN blind INTEGER NOT NULL DEFAULT 0 "
    "CHECK (blind IN (0, 1))",
    f"ALTER TABLE annotations ADD COLUMN decided_first INTEGER CHECK (decided_first {_TIME_OK})",
    f"ALTER TABLE annotations ADD COLUMN decided_last INTEGER "
    f"CHECK (decided_last {_TIME_OK} AND decided_last >= decided_first)",
    f"ALTER TABLE annotations ADD COLUMN unblinded_at INTEGER "
    f"CHECK (unblinded_at IS NULL OR (unblinded_at {_TIME_OK} AND blind = 0 "
    f"AND decided_first IS NOT NULL))",
)

# MIGRATIONS[n] takes a file from schema version n to n + 1; never edit a released entry,
# append a new one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (_SCHEMA_V1, _MARKET_V2, _BLIND_V3, DRAWINGS_V4)
SCHEMA_VERSION = len(MIGRATIONS)
_OWN_TABLES = {"annotations", "annotation_tags"}

_COLUMNS = (
    "id", "kind", "market", "symbol", "timeframe", "source", "start_ts", "end_ts", "direction",
    "entry_price", "exit_price", "stop", "target", "price", "label", "notes", "created_at",
    "updated_at", "blind", "decided_first", "decided_last", "unblinded_at",
)
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM annotations"
_INSERT = (
    f"INSERT INTO annotations ({', '.join(_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(_COLUMNS))})"
)
_UPDATE = (
    f"UPDATE annotations SET {', '.join(f'{c} = ?' for c in _COLUMNS[1:])} WHERE id = ?"
)
_LONGEST_CANDLE_MS = max(tf.ms for tf in ALL)
_SOURCES = {s.value: s for s in Source}
_DIRECTIONS = {d.value: d for d in Direction}
_MARKETS = {m.value: m for m in MarketKind}


def _moved(previous: Annotation, ann: Annotation) -> bool:
    """Whether an edit changed where a trade sits (its market or its times)."""
    return (previous.market_key, previous.timeframe, previous.span) != \
        (ann.market_key, ann.timeframe, ann.span)


def _row(ann: Annotation) -> tuple:
    common = (ann.id, ann.kind.value, ann.market.value, ann.symbol, ann.timeframe,
              ann.source.value)
    decided = ann.decided_at
    tail = (ann.notes, ann.created_at, ann.updated_at, int(ann.blind),
            decided[0] if decided else None, decided[-1] if decided else None,
            ann.unblinded_at)
    if isinstance(ann, Trade):
        return common + (ann.entry_ts, ann.exit_ts, ann.direction.value, ann.entry_price,
                         ann.exit_price, ann.stop, ann.target, None, None) + tail
    if isinstance(ann, Region):
        return common + (ann.start_ts, ann.end_ts, None, None, None, None, None, None,
                         ann.label) + tail
    if isinstance(ann, Point):
        return common + (ann.ts, ann.ts, None, None, None, None, None, ann.price, None) + tail
    raise AnnotationStoreError(f"not an annotation: {ann!r}")


def _annotation(row: tuple, tags: tuple[str, ...]) -> Annotation:
    (id_, kind, market, symbol, timeframe, source, start, end, direction, entry_price,
     exit_price, stop, target, price, label, notes, created, updated, blind, first, last,
     unblinded) = row
    decided = () if first is None else (first,) if kind == "point" else (first, last)
    common = {"symbol": symbol, "timeframe": timeframe, "market": _MARKETS[market],
              "notes": notes, "tags": tags,
              "source": _SOURCES[source], "id": id_, "created_at": created, "updated_at": updated,
              "blind": bool(blind), "decided_at": decided, "unblinded_at": unblinded}
    if kind == "trade":
        return unchecked(Trade, {**common, "direction": _DIRECTIONS[direction], "entry_ts": start,
                                 "entry_price": entry_price, "exit_ts": end,
                                 "exit_price": exit_price, "stop": stop, "target": target})
    if kind == "region":
        return unchecked(Region, {**common, "start_ts": start, "end_ts": end, "label": label})
    return unchecked(Point, {**common, "ts": start, "price": price})


class AnnotationStore:
    """Annotations in the SQLite file ``path`` (default: ``app_paths().annotations_db``)."""

    def __init__(self, path: str | Path | None = None):
        if path is None:
            from ..paths import app_paths

            path = app_paths().annotations_db
        self.path = Path(path)
        self._listeners: Listeners[StoreChange] = Listeners()
        self._conn = self._open()
        self.drawings = DrawingTable(self)

    # -- opening ---------------------------------------------------------------------------

    def _refuse(self, reason: str) -> AnnotationStoreError:
        return damaged(self.path, "annotations file", reason, _LOST, DamagedAnnotationsError)

    def _storage_error(self, exc: sqlite3.Error, *, writing: bool = True
                       ) -> AnnotationStoreError:
        found = storage_error(exc, self.path, "annotations file", _LOST,
                              DamagedAnnotationsError, AnnotationsDiskFullError, writing=writing)
        if isinstance(found, AnnotationStoreError):
            return found
        return AnnotationStoreError(f"annotations file {self.path}: {exc}")

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(self.path, isolation_level=None)
        except sqlite3.Error as exc:
            raise AnnotationStoreError(f"cannot open annotations file {self.path}: {exc}") from exc
        try:
            conn.execute("PRAGMA busy_timeout = 5000")  # wait for another process, not fail
            try:
                self._check_existing(conn)
            except sqlite3.DatabaseError as exc:  # not damage (refused): a full disk, a lock
                raise self._storage_error(exc, writing=False) from exc
            try:
                make_durable(conn)
            except sqlite3.DatabaseError as exc:
                if is_disk_full(exc, self.path):
                    raise self._storage_error(exc, writing=False) from exc
                raise AnnotationStoreError(
                    f"cannot open annotations file {self.path}: {exc}") from exc
            self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_existing(self, conn: sqlite3.Connection) -> None:
        """Refuse, before writing anything, a file that is damaged, foreign or too new."""
        problem = why_not_writable(conn, what="annotations database",
                                   schema_version=SCHEMA_VERSION, tables_needed=_OWN_TABLES)
        if problem is not None:
            raise self._refuse(problem)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Bring the file up to ``SCHEMA_VERSION``, one version per transaction; the version
        is read inside each write transaction, so processes opening a new file at once
        (the window and a CLI import at first launch) take turns instead of clashing."""
        while True:
            conn.execute("BEGIN IMMEDIATE")
            target = conn.execute("PRAGMA user_version").fetchone()[0] + 1
            if target > SCHEMA_VERSION:
                conn.execute("COMMIT")
                return
            try:
                for statement in MIGRATIONS[target - 1]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {target}")
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                rollback(conn)
                if is_disk_full(exc, self.path):
                    raise AnnotationsDiskFullError(
                        self.path, f"it was left at version {target - 1}") from exc
                raise AnnotationStoreError(
                    f"cannot upgrade annotations file {self.path} to schema version {target}: "
                    f"{exc}; it was left at version {target - 1}") from exc

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> AnnotationStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return self._conn.execute("PRAGMA user_version").fetchone()[0]

    # -- reading ---------------------------------------------------------------------------

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        try:
            yield self._conn
        except sqlite3.ProgrammingError:  # a bug (e.g. the wrong thread), not the file
            raise
        except sqlite3.DatabaseError as exc:
            raise self._storage_error(exc, writing=False) from exc

    @staticmethod
    def _query(conn: sqlite3.Connection, where: str, params: tuple) -> list[Annotation]:
        rows = conn.execute(f"{_SELECT} {where} ORDER BY start_ts, id", params).fetchall()
        tags: dict[str, list[str]] = {}
        for ann_id, tag in conn.execute(
            "SELECT t.annotation_id, t.tag FROM annotation_tags t "
            f"JOIN annotations ON annotations.id = t.annotation_id {where} "
            "ORDER BY t.annotation_id, t.position",
            params,
        ):
            tags.setdefault(ann_id, []).append(tag)
        return [_annotation(row, tuple(tags.get(row[0], ()))) for row in rows]

    def _load(self, where: str, params: tuple) -> list[Annotation]:
        with self._reading() as conn:
            conn.execute("BEGIN")  # one snapshot for both queries
            try:
                return self._query(conn, where, params)
            finally:
                conn.execute("COMMIT")

    def get(self, annotation_id: str) -> Annotation:
        """The annotation with this id; ``AnnotationNotFound`` if there is none."""
        found = self._load("WHERE annotations.id = ?", (str(annotation_id),))
        if not found:
            raise AnnotationNotFound(str(annotation_id))
        return found[0]

    def __contains__(self, annotation_id: object) -> bool:
        with self._reading() as conn:
            return conn.execute(
                "SELECT 1 FROM annotations WHERE id = ?", (str(annotation_id),)
            ).fetchone() is not None

    def __len__(self) -> int:
        with self._reading() as conn:
            return conn.execute("SELECT count(*) FROM annotations").fetchone()[0]

    def list(
        self,
        *,
        market: MarketKey | MarketKind | str | None = None,
        symbol: str | None = None,
        timeframe: str | None = None,
        kind: Kind | str | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> list[Annotation]:
        """Annotations matching every given filter, ordered by start time then id.

        ``market`` is a ``MarketKey`` (one symbol, real or demo) or a market kind alone.
        ``start``/``end`` (epoch ms, inclusive) select annotations whose span overlaps them.
        """
        clauses: list[str] = []
        params: builtins.list = []
        kind_of_market = market
        if isinstance(market, MarketKey):
            kind_of_market, symbol = market.kind, market.symbol
        if kind_of_market is not None:
            clauses.append("annotations.market = ?")
            params.append(MarketKind(kind_of_market).value)
        if symbol is not None:
            clauses.append("annotations.symbol = ?")
            params.append(symbol.strip().upper())
        if timeframe is not None:
            clauses.append("annotations.timeframe = ?")
            params.append(str(timeframe))
        if kind is not None:
            clauses.append("annotations.kind = ?")
            params.append(annotation_class(kind).kind.value)
        if start is not None:
            clauses.append("annotations.end_ts >= ?")
            params.append(int(start))
        if end is not None:
            clauses.append("annotations.start_ts <= ?")
            params.append(int(end))
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        return self._load(where, tuple(params))

    def trades(self, market: MarketKey) -> builtins.list[Trade]:
        """Every trade of ``market`` (all timeframes), in entry order."""
        return [t for t in self.list(market=market, kind=Kind.TRADE) if isinstance(t, Trade)]

    # -- changing --------------------------------------------------------------------------

    def _transaction(self):
        return immediate_transaction(self._conn, self._write_error)

    def _write_error(self, exc: sqlite3.DatabaseError) -> Exception:
        if isinstance(exc, sqlite3.IntegrityError):
            return AnnotationStoreError(f"annotations file {self.path} refused the change: "
                                        f"{exc}")
        return self._storage_error(exc)

    @staticmethod
    def _write_tags(conn: sqlite3.Connection, ann: Annotation) -> None:
        conn.execute("DELETE FROM annotation_tags WHERE annotation_id = ?", (ann.id,))
        conn.executemany(
            "INSERT INTO annotation_tags (annotation_id, position, tag) VALUES (?, ?, ?)",
            [(ann.id, i, tag) for i, tag in enumerate(ann.tags)],
        )

    def _existing(self, conn: sqlite3.Connection, annotation_id: str) -> Annotation | None:
        row = conn.execute(f"{_SELECT} WHERE id = ?", (annotation_id,)).fetchone()
        if row is None:
            return None
        tags = tuple(tag for (tag,) in conn.execute(
            "SELECT tag FROM annotation_tags WHERE annotation_id = ? ORDER BY position",
            (annotation_id,)))
        return _annotation(row, tags)

    def _insert(self, conn: sqlite3.Connection, ann: Annotation) -> None:
        conn.execute(_INSERT, _row(ann))
        self._write_tags(conn, ann)

    def _refuse_overlaps(self, conn: sqlite3.Connection, written: Iterable[Annotation]) -> None:
        """Raise ``OverlappingTradesError`` (rolling the transaction back) if a trade just
        written is held at the same time as another trade of its market (``overlap``); pairs
        the store held before are not this change's doing and are left alone."""
        mine: dict[MarketKey, dict[str, Trade]] = {}
        for ann in written:
            if isinstance(ann, Trade):
                mine.setdefault(ann.market_key, {})[ann.id] = ann
        pairs = []
        for market, trades in mine.items():
            where = "WHERE kind = 'trade' AND market = ? AND symbol = ?"
            params: tuple = (market.kind.value, market.symbol)
            if len(trades) == 1:  # one trade: only its neighbours in time can clash
                lo, hi = next(iter(trades.values())).span
                where += " AND start_ts <= ? AND end_ts >= ?"
                params += (hi + _LONGEST_CANDLE_MS, lo - _LONGEST_CANDLE_MS)
            pairs += [p for p in overlapping_pairs(self._query(conn, where, params))
                      if p[0].id in trades or p[1].id in trades]
        if pairs:
            raise OverlappingTradesError(pairs, "refused: trades would overlap")

    def _replace(self, conn: sqlite3.Connection, ann: Annotation) -> None:
        row = _row(ann)
        conn.execute(_UPDATE, row[1:] + row[:1])
        self._write_tags(conn, ann)

    def add(self, ann: Annotation) -> Annotation:
        """Insert a new annotation exactly as given; ``DuplicateAnnotation`` if its id exists."""
        with self._transaction() as conn:
            if self._existing(conn, ann.id) is not None:
                raise DuplicateAnnotation(ann.id)
            self._insert(conn, ann)
            self._refuse_overlaps(conn, (ann,))
        self._notify(StoreChange("added", (ann,)))
        return ann

    def restore(self, ann: Annotation) -> Annotation:
        """Put back a record ``delete`` returned, with its original id and times (undo)."""
        return self.add(ann)

    def update(self, ann: Annotation) -> Annotation:
        """Replace the stored annotation with the same id; returns the record it replaced.

        The store writes ``ann`` as given (use ``ann.edited(...)`` to stamp ``updated_at``), so
        writing the returned record back undoes the update exactly.
        """
        with self._transaction() as conn:
            previous = self._existing(conn, ann.id)
            if previous is None:
                raise AnnotationNotFound(ann.id)
            self._replace(conn, ann)
            if _moved(previous, ann):
                self._refuse_overlaps(conn, (ann,))
        self._notify(StoreChange("updated", (ann,)))
        return previous

    def upsert(self, ann: Annotation) -> Annotation | None:
        """Insert or replace by id; returns the replaced record, or None if it was new."""
        with self._transaction() as conn:
            previous = self._existing(conn, ann.id)
            if previous is None:
                self._insert(conn, ann)
            else:
                self._replace(conn, ann)
            if previous is None or _moved(previous, ann):
                self._refuse_overlaps(conn, (ann,))
        self._notify(StoreChange("added" if previous is None else "updated", (ann,)))
        return previous

    def delete(self, annotation_id: str) -> Annotation:
        """Remove an annotation (and its tags); returns it as it was, for ``restore``."""
        with self._transaction() as conn:
            previous = self._existing(conn, str(annotation_id))
            if previous is None:
                raise AnnotationNotFound(str(annotation_id))
            conn.execute("DELETE FROM annotations WHERE id = ?", (previous.id,))
        self._notify(StoreChange("deleted", (previous,)))
        return previous

    def replace_market(self, market: MarketKey, annotations: Iterable[Annotation]
                       ) -> builtins.list[Annotation]:
        """Put ``annotations`` (of ``market``) in place of every annotation of ``market``, all
        timeframes, in one transaction; returns the records removed (what a backup keeps)."""
        new = builtins.list(annotations)
        if any(ann.market_key != market for ann in new):
            raise AnnotationStoreError(f"replace_market: every annotation must be of {market}")
        with self._transaction() as conn:
            where = "WHERE market = ? AND symbol = ?"
            removed = self._query(conn, where, (market.kind.value, market.symbol))
            conn.execute(f"DELETE FROM annotations {where}", (market.kind.value, market.symbol))
            for ann in new:
                self._insert(conn, ann)
            self._refuse_overlaps(conn, new)
        if removed:
            self._notify(StoreChange("deleted", tuple(removed)))
        if new:
            self._notify(StoreChange("added", tuple(new)))
        return removed

    def merge(self, annotations: Iterable[Annotation]) -> MergeResult:
        """Bring many annotations in, all in one transaction, matched by id: new ids are added,
        a stored record older (by ``updated_at``) than the incoming one is replaced, identical
        ones are left, and a stored record newer than the incoming one is kept."""
        added: list[Annotation] = []
        updated: list[Annotation] = []
        unchanged = kept = 0
        with self._transaction() as conn:
            for ann in annotations:
                previous = self._existing(conn, ann.id)
                if previous is None:
                    self._insert(conn, ann)
                    added.append(ann)
                elif previous == ann:
                    unchanged += 1
                elif previous.version_time > ann.version_time:
                    kept += 1
                else:
                    self._replace(conn, ann)
                    updated.append(ann)
            self._refuse_overlaps(conn, added + updated)
        if added:
            self._notify(StoreChange("added", tuple(added)))
        if updated:
            self._notify(StoreChange("updated", tuple(updated)))
        return MergeResult(len(added), len(updated), unchanged, kept)

    # -- listeners -------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[StoreChange], None]) -> Callable[[], None]:
        """Call ``listener(change)`` after every committed change; returns an unsubscribe."""
        return self._listeners.subscribe(listener)

    def _notify(self, change: StoreChange) -> None:
        """Tell every listener; the first listener error is raised after all have heard."""
        self._listeners.notify(change)
