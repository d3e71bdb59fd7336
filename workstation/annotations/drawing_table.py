"""``DrawingTable``: the drawings of an ``AnnotationStore``, in the same SQLite file.

A table of its own (schema version 4, ``DRAWINGS_V4``) with CHECK constraints for what each
shape holds, written through the store's own transactions: a change is one transaction and
survives the process being killed once it returns. ``add`` / ``update`` / ``delete`` /
``restore`` return what an undo needs, as the store's methods do; ``merge`` imports by id,
keeping the newer version; listeners hear each committed change (``DrawingChange``).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..market.series import MarketKey, MarketKind
from .drawings import Drawing, Shape
from .listeners import Listeners

if TYPE_CHECKING:
    from .store import AnnotationStore

DRAWINGS_V4 = (
    f"""
    CREATE TABLE drawings (
        id TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 36),
        shape TEXT NOT NULL CHECK (shape IN ({", ".join(f"'{s.value}'" for s in Shape)})),
        market TEXT NOT NULL CHECK (market IN ({", ".join(f"'{m.value}'" for m in MarketKind)})),
        symbol TEXT NOT NULL CHECK (symbol <> '' AND symbol = upper(trim(symbol))),
        timeframe TEXT NOT NULL,
        ts1 INTEGER NOT NULL CHECK (ts1 >= 0),
        price1 REAL CHECK (price1 > 0),
        ts2 INTEGER CHECK (ts2 >= ts1),
        price2 REAL CHECK (price2 > 0),
        locked INTEGER NOT NULL CHECK (locked IN (0, 1)),
        notes TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL CHECK (updated_at >= created_at),
        CHECK ((shape = 'vertical') = (price1 IS NULL)),
        CHECK ((shape IN ('level', 'vertical')) = (ts2 IS NULL AND price2 IS NULL)),
        CHECK (ts2 IS NULL OR price2 IS NOT NULL)
    ) STRICT
    """,
    "CREATE INDEX drawings_by_market ON drawings (market, symbol, ts1)",
)
_COLUMNS = ("id", "shape", "market", "symbol", "timeframe", "ts1", "price1", "ts2", "price2",
            "locked", "notes", "created_at", "updated_at")
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM drawings"
_INSERT = (f"INSERT INTO drawings ({', '.join(_COLUMNS)}) "
           f"VALUES ({', '.join('?' * len(_COLUMNS))})")
_UPDATE = f"UPDATE drawings SET {', '.join(f'{c} = ?' for c in _COLUMNS[1:])} WHERE id = ?"


@dataclass(frozen=True)
class DrawingChange:
    """A committed change: ``action`` "added", "updated" or "deleted"; ``drawings`` as they
    are now (added, updated) or were (deleted)."""

    action: str
    drawings: tuple[Drawing, ...]


def _row(d: Drawing) -> tuple:
    return (d.id, d.shape.value, d.market.value, d.symbol, d.timeframe, d.ts1, d.price1, d.ts2,
            d.price2, int(d.locked), d.notes, d.created_at, d.updated_at)


def _drawing(row) -> Drawing:
    (id_, shape, market, symbol, timeframe, ts1, price1, ts2, price2, locked, notes, created,
     updated) = row
    return Drawing(id=id_, shape=Shape(shape), market=MarketKind(market), symbol=symbol,
                   timeframe=timeframe, ts1=ts1, price1=price1, ts2=ts2, price2=price2,
                   locked=bool(locked), notes=notes, created_at=created, updated_at=updated)


class DrawingTable:
    """See the module docstring; ``store.drawings`` is one."""

    def __init__(self, store: AnnotationStore):
        self._store = store
        self._listeners: Listeners[DrawingChange] = Listeners()

    def list(self, market: MarketKey | None = None) -> builtins.list[Drawing]:
        """Every drawing (of ``market``), oldest point first."""
        where, params = "", []
        if market is not None:
            where, params = "WHERE market = ? AND symbol = ?", [market.kind.value,
                                                                market.symbol]
        with self._store._reading() as conn:
            rows = conn.execute(f"{_SELECT} {where} ORDER BY ts1, id", params).fetchall()
        return [_drawing(row) for row in rows]

    def add(self, d: Drawing) -> Drawing:
        """Insert ``d`` exactly as given (an id that exists is refused)."""
        from .store import DuplicateAnnotation

        with self._store._transaction() as conn:
            if conn.execute("SELECT 1 FROM drawings WHERE id = ?", (d.id,)).fetchone():
                raise DuplicateAnnotation(d.id)
            conn.execute(_INSERT, _row(d))
        self._notify(DrawingChange("added", (d,)))
        return d

    def restore(self, d: Drawing) -> Drawing:
        """Put back what ``delete`` returned, with its id and times (undo)."""
        return self.add(d)

    def update(self, d: Drawing) -> Drawing:
        """Replace the drawing with ``d``'s id; returns the one it replaced."""
        from .store import AnnotationNotFound

        with self._store._transaction() as conn:
            row = conn.execute(f"{_SELECT} WHERE id = ?", (d.id,)).fetchone()
            if row is None:
                raise AnnotationNotFound(d.id)
            values = _row(d)
            conn.execute(_UPDATE, values[1:] + values[:1])
        self._notify(DrawingChange("updated", (d,)))
        return _drawing(row)

    def delete(self, drawing_id: str) -> Drawing:
        """Delete and return the drawing (``restore`` puts it back)."""
        from .store import AnnotationNotFound

        with self._store._transaction() as conn:
            row = conn.execute(f"{_SELECT} WHERE id = ?", (drawing_id,)).fetchone()
            if row is None:
                raise AnnotationNotFound(drawing_id)
            conn.execute("DELETE FROM drawings WHERE id = ?", (drawing_id,))
        old = _drawing(row)
        self._notify(DrawingChange("deleted", (old,)))
        return old

    def merge(self, drawings: Iterable[Drawing]) -> tuple[int, int, int]:
        """Import by id in one transaction: new ones added, older copies updated, the rest
        left; returns ``(added, updated, left)``."""
        added, updated, left = [], [], 0
        with self._store._transaction() as conn:
            for d in drawings:
                row = conn.execute(f"{_SELECT} WHERE id = ?", (d.id,)).fetchone()
                if row is None:
                    conn.execute(_INSERT, _row(d))
                    added.append(d)
                elif (d.updated_at or 0) > row[-1]:
                    values = _row(d)
                    conn.execute(_UPDATE, values[1:] + values[:1])
                    updated.append(d)
                else:
                    left += 1
        if added:
            self._notify(DrawingChange("added", tuple(added)))
        if updated:
            self._notify(DrawingChange("updated", tuple(updated)))
        return len(added), len(updated), left

    def subscribe(self, listener: Callable[[DrawingChange], None]) -> Callable[[], None]:
        """Call ``listener(change)`` after every committed change; returns an unsubscribe."""
        return self._listeners.subscribe(listener)

    def _notify(self, change: DrawingChange) -> None:
        self._listeners.notify(change)
