"""Blind marks in files (blind replay, points 3 and 7): the flag, the replay clock of each
decision (``decided_at``) and the audit of an unblinding (``unblinded_at``) are written and
read back exactly by the SQLite store (reopened, and through its fast unchecked load), JSON
export and import (every kind), CSV export and import (trades) and undo/redo; a store file
of the previous schema version, and JSON/CSV files without the new fields, come in as
hindsight; a bad value is refused in one line naming the record and the field."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import sqlite3
import uuid

import pytest
from PySide6.QtGui import QUndoStack

from workstation.annotations import store as store_module
from workstation.annotations.io import (
    CSV_FIELDS,
    JSON_VERSION,
    AnnotationImportError,
    export_annotations,
    import_annotations,
    read_csv,
    to_json_record,
)
from workstation.annotations.model import Direction, Origin, Point, Region, Trade
from workstation.annotations.store import SCHEMA_VERSION, AnnotationStore
from workstation.ui.annotations.undoable_changes import (
    AddAnnotation,
    DeleteAnnotation,
    EditAnnotation,
)

M = 60_000  # the marks are on 1m candles
T0 = 1_700_000_000_000 - 1_700_000_000_000 % M
CREATED = T0 + 500 * M
UNBLINDED = CREATED + 7_777


def _id(n: int) -> str:
    return str(uuid.UUID(int=n))


def blind_trade() -> Trade:
    return Trade(id=_id(1), symbol="ETH/USDT", timeframe="1m", direction=Direction.LONG,
                 entry_ts=T0, entry_price=2000.0, exit_ts=T0 + 5 * M, exit_price=2010.5,
                 stop=1990.0, notes="in replay", tags=("breakout",), created_at=CREATED, blind=True,
                 decided_at=(T0 + M + 7, T0 + 6 * M + 123))


def blind_region() -> Region:
    return Region(id=_id(2), symbol="ETH/USDT", timeframe="1m", start_ts=T0 + 10 * M,
                  end_ts=T0 + 20 * M, label="reviewed", created_at=CREATED, blind=True,
                  decided_at=(T0 + 11 * M, T0 + 21 * M + 1))


def blind_point() -> Point:
    return Point(id=_id(3), symbol="ETH/USDT", timeframe="1m", ts=T0 + 30 * M, price=2001.25,
                 created_at=CREATED, blind=True, decided_at=(T0 + 31 * M + 5,))


def unblinded_trade() -> Trade:
    """A blind trade whose exit price was changed later, outside replay."""
    return Trade(id=_id(4), symbol="ETH/USDT", timeframe="1m", direction=Direction.SHORT,
                 entry_ts=T0 + 40 * M, entry_price=2020.0, exit_ts=T0 + 45 * M,
                 exit_price=1999.0, created_at=CREATED, updated_at=UNBLINDED,
                 decided_at=(T0 + 41 * M, T0 + 46 * M), unblinded_at=UNBLINDED)


def unblinded_region() -> Region:
    return Region(id=_id(5), symbol="ETH/USDT", timeframe="1m", start_ts=T0 + 60 * M,
                  end_ts=T0 + 70 * M, label="uptrend", created_at=CREATED,
                  updated_at=UNBLINDED + 1, decided_at=(T0 + 61 * M, T0 + 71 * M),
                  unblinded_at=UNBLINDED + 1)


def unblinded_point() -> Point:
    return Point(id=_id(6), symbol="ETH/USDT", timeframe="1m", ts=T0 + 80 * M,
                 created_at=CREATED, updated_at=UNBLINDED + 2, decided_at=(T0 + 81 * M,),
                 unblinded_at=UNBLINDED + 2)


def hindsight_trade() -> Trade:
    return Trade(id=_id(7), symbol="ETH/USDT", timeframe="1m", direction=Direction.LONG,
                 entry_ts=T0 + 90 * M, entry_price=2000.0, exit_ts=T0 + 95 * M,
                 exit_price=2005.0, created_at=CREATED)


def marks() -> list:
    return [blind_trade(), blind_region(), blind_point(), unblinded_trade(),
            unblinded_region(), unblinded_point(), hindsight_trade()]


EXPECTED = {  # id: (origin, blind, decided_at, unblinded_at), written out by hand
    _id(1): (Origin.BLIND, True, (T0 + M + 7, T0 + 6 * M + 123), None),
    _id(2): (Origin.BLIND, True, (T0 + 11 * M, T0 + 21 * M + 1), None),
    _id(3): (Origin.BLIND, True, (T0 + 31 * M + 5,), None),
    _id(4): (Origin.UNBLINDED, False, (T0 + 41 * M, T0 + 46 * M), UNBLINDED),
    _id(5): (Origin.UNBLINDED, False, (T0 + 61 * M, T0 + 71 * M), UNBLINDED + 1),
    _id(6): (Origin.UNBLINDED, False, (T0 + 81 * M,), UNBLINDED + 2),
    _id(7): (Origin.HINDSIGHT, False, (), None),
}


def blind_fields(anns) -> dict:
    return {a.id: (a.origin, a.blind, a.decided_at, a.unblinded_at) for a in anns}


def exactly(ann) -> None:
    """``ann`` holds every field of its class, with the types the constructor gives."""
    assert set(vars(ann)) == {f.name for f in dataclasses.fields(ann)}
    assert type(ann.blind) is bool
    assert type(ann.decided_at) is tuple and all(type(t) is int for t in ann.decided_at)
    assert ann.unblinded_at is None or type(ann.unblinded_at) is int


def _stored(tmp_path, name="a.sqlite") -> AnnotationStore:
    store = AnnotationStore(tmp_path / name)
    store.merge(marks())
    return store


# -- the store --------------------------------------------------------------------------------

def test_blind_and_unblinded_marks_of_every_kind_survive_reopening_the_store(tmp_path):
    path = tmp_path / "a.sqlite"
    with AnnotationStore(path) as store:
        for ann in marks():
            store.add(ann)
    with AnnotationStore(path) as store:
        back = store.list()
        one = store.get(_id(3))
    assert blind_fields(back) == EXPECTED
    assert sorted(back, key=lambda a: a.id) == marks()  # every other field too
    for ann in [*back, one]:
        exactly(ann)
    raw = sqlite3.connect(path)
    rows = raw.execute("SELECT id, blind, decided_first, decided_last, unblinded_at "
                       "FROM annotations ORDER BY id").fetchall()
    raw.close()
    assert rows == [
        (_id(1), 1, T0 + M + 7, T0 + 6 * M + 123, None),
        (_id(2), 1, T0 + 11 * M, T0 + 21 * M + 1, None),
        (_id(3), 1, T0 + 31 * M + 5, T0 + 31 * M + 5, None),
        (_id(4), 0, T0 + 41 * M, T0 + 46 * M, UNBLINDED),
        (_id(5), 0, T0 + 61 * M, T0 + 71 * M, UNBLINDED + 1),
        (_id(6), 0, T0 + 81 * M, T0 + 81 * M, UNBLINDED + 2),
        (_id(7), 0, None, None, None),
    ]


def test_update_upsert_and_replace_market_write_the_blind_fields(tmp_path):
    with _stored(tmp_path) as store:
        edited = store.get(_id(1)).edited(exit_ts=T0 + 7 * M)  # a decision: unblinds it
        assert store.update(edited) == blind_trade()
        got = store.get(_id(1))
        assert (got.origin, got.decided_at, got.unblinded_at) == (
            Origin.UNBLINDED, (T0 + M + 7, T0 + 6 * M + 123), edited.unblinded_at)
        assert store.upsert(blind_trade()) == edited
        assert store.get(_id(1)) == blind_trade()
        market = blind_trade().market_key
        store.replace_market(market, marks()[:3])
        assert blind_fields(store.list()) == {k: EXPECTED[k] for k in (_id(1), _id(2), _id(3))}


def test_the_store_refuses_blind_rows_its_checks_forbid(tmp_path):
    with _stored(tmp_path) as store:
        path = store.path
    raw = sqlite3.connect(path)
    for change in ("UPDATE annotations SET blind = 2 WHERE id = ?",
                   "UPDATE annotations SET unblinded_at = 5 WHERE id = ?",  # still blind
                   "UPDATE annotations SET decided_last = decided_first - 1 WHERE id = ?"):
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            raw.execute(change, (_id(1),))
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):  # unblinded without decisions
        raw.execute("UPDATE annotations SET unblinded_at = 5 WHERE id = ?", (_id(7),))
    raw.close()


def _previous_version_file(path) -> None:
    """A store as the version before blind marks wrote it (schema version 2)."""
    previous = 2
    conn = sqlite3.connect(path)
    for migration in store_module.MIGRATIONS[:previous]:
        for statement in migration:
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {previous}")
    columns = [row[1] for row in conn.execute("PRAGMA table_info(annotations)")]
    assert "blind" not in columns and "market" in columns
    insert = ("INSERT INTO annotations (id, kind, market, symbol, timeframe, source, start_ts, "
              "end_ts, direction, entry_price, exit_price, label, price, notes, created_at, "
              "updated_at) VALUES (?, ?, ?, 'ETH/USDT', '1m', 'human', ?, ?, ?, ?, ?, ?, ?, "
              "'old', ?, ?)")
    conn.executemany(insert, [
        (_id(11), "trade", "real", T0, T0 + 5 * M, "long", 2000.0, 2010.0, None, None,
         CREATED, CREATED),
        (_id(12), "region", "demo", T0, T0 + 9 * M, None, None, None, "range", None,
         CREATED, CREATED + 1),
        (_id(13), "point", "real", T0 + 3 * M, T0 + 3 * M, None, None, None, None, 1999.5,
         CREATED, CREATED),
    ])
    conn.execute("INSERT INTO annotation_tags VALUES (?, 0, 'kept')", (_id(11),))
    conn.commit()
    conn.close()


def test_a_file_from_before_blind_marks_upgrades_with_every_mark_hindsight(tmp_path):
    path = tmp_path / "old.sqlite"
    _previous_version_file(path)
    with AnnotationStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 4
        old = store.list()
    assert [a.id for a in old] == [_id(11), _id(12), _id(13)]
    assert blind_fields(old) == dict.fromkeys((_id(11), _id(12), _id(13)),
                                              (Origin.HINDSIGHT, False, (), None))
    for ann in old:
        exactly(ann)
    trade, region, point = old
    assert isinstance(trade, Trade) and isinstance(region, Region) and isinstance(point, Point)
    assert (trade.tags, trade.exit_price, region.label, region.updated_at, point.price) == (
        ("kept",), 2010.0, "range", CREATED + 1, 1999.5)
    with AnnotationStore(path) as store:  # the upgraded file holds blind marks too
        store.add(blind_point())
    with AnnotationStore(path) as store:
        assert store.get(_id(3)) == blind_point()
        assert store.get(_id(11)).origin is Origin.HINDSIGHT


# -- JSON -------------------------------------------------------------------------------------

def test_json_export_then_import_into_a_fresh_store_keeps_the_blind_fields(tmp_path):
    path = tmp_path / "marks.json"
    with _stored(tmp_path) as store:
        assert export_annotations(store, path).written == 7
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["version"] == JSON_VERSION == 4
    written = {r["id"]: (r["blind"], r["decided_at"], r["unblinded_at"])
               for r in doc["annotations"]}
    assert written == {
        _id(1): (True, [T0 + M + 7, T0 + 6 * M + 123], None),
        _id(2): (True, [T0 + 11 * M, T0 + 21 * M + 1], None),
        _id(3): (True, [T0 + 31 * M + 5], None),
        _id(4): (False, [T0 + 41 * M, T0 + 46 * M], UNBLINDED),
        _id(5): (False, [T0 + 61 * M, T0 + 71 * M], UNBLINDED + 1),
        _id(6): (False, [T0 + 81 * M], UNBLINDED + 2),
        _id(7): (False, [], None),
    }
    with AnnotationStore(tmp_path / "fresh.sqlite") as fresh:
        result = import_annotations(fresh, path)
        assert (result.read, result.merge.added) == (7, 7)
        back = fresh.list()
        assert import_annotations(fresh, path).merge.unchanged == 7  # same again: nothing new
    assert blind_fields(back) == EXPECTED
    assert sorted(back, key=lambda a: a.id) == marks()


def test_an_import_does_not_make_an_unblinded_mark_blind_again(tmp_path):
    """The store's newer, unblinded version is kept over an older blind one in a file."""
    path = tmp_path / "before.json"
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        store.add(blind_trade())
        export_annotations(store, path)
        store.update(blind_trade().edited(entry_price=2001.0))
        unblinded = store.get(_id(1))
        assert import_annotations(store, path).merge.kept_newer == 1
        assert store.get(_id(1)) == unblinded
        assert unblinded.origin is Origin.UNBLINDED
        assert unblinded.decided_at == (T0 + M + 7, T0 + 6 * M + 123)


def _hindsight_record(version: int) -> dict:
    record = to_json_record(hindsight_trade())
    for key in ("blind", "decided_at", "unblinded_at"):
        del record[key]
    if version == 1:
        del record["market"]
    return record


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_json_records_without_the_blind_keys_import_as_hindsight(tmp_path, version):
    path = tmp_path / "old.json"
    nulls = dict(_hindsight_record(version), id=_id(8), entry_ts=T0 + 100 * M,
                 exit_ts=T0 + 101 * M, blind=None, decided_at=None, unblinded_at=None)
    path.write_text(json.dumps({"version": version,
                                "annotations": [_hindsight_record(version), nulls]}))
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        assert import_annotations(store, path).merge.added == 2
        back = store.list()
    assert blind_fields(back) == {_id(7): (Origin.HINDSIGHT, False, (), None),
                                  _id(8): (Origin.HINDSIGHT, False, (), None)}
    assert back[0] == hindsight_trade()


def _bad_json(tmp_path, record_changes: dict, ann=None):
    good = to_json_record(hindsight_trade())
    record = dict(to_json_record(ann or blind_trade()), **record_changes)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"version": JSON_VERSION, "annotations": [good, record]}))
    return path


@pytest.mark.parametrize("changes, ann, field, reason", [
    ({"blind": "yes"}, None, "blind", "must be true or false, got 'yes'"),
    ({"blind": 1}, None, "blind", "must be true or false, got 1"),
    ({"decided_at": "soon"}, None, "decided_at", "must be a list of times, got 'soon'"),
    ({"decided_at": [T0 + M]}, None, "decided_at", "a trade has 2 decision time(s)"),
    ({"decided_at": [T0 + 6 * M, T0 + 2 * M]}, None, "decided_at", "in time order"),
    ({"decided_at": [T0 + M, "x"]}, None, "decided_at", "integer time"),
    ({"decided_at": [T0 + M - 1, T0 + 6 * M]}, None, "decided_at",
     f"entry_ts was decided at {T0 + M - 1}, before its candle closed at {T0 + M}"),
    ({"decided_at": []}, None, "decided_at", "needs the replay clock time of each decision"),
    ({"unblinded_at": T0 + 9 * M}, None, "unblinded_at", "a blind mark has not been unblinded"),
    ({"unblinded_at": "later"}, unblinded_trade(), "unblinded_at", "integer time"),
    ({"decided_at": []}, unblinded_trade(), "decided_at", "needs the replay clock"),
    ({"decided_at": [T0 + 31 * M, T0 + 32 * M]}, blind_point(), "decided_at",
     "a point has 1 decision time(s) (ts), got 2"),
])
def test_a_bad_json_blind_value_imports_nothing_and_names_record_and_field(
        tmp_path, changes, ann, field, reason):
    path = _bad_json(tmp_path, changes, ann)
    record_id = (ann or blind_trade()).id
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        with pytest.raises(AnnotationImportError) as refused:
            import_annotations(store, path)
        assert len(store) == 0
    error = refused.value
    assert (error.record, error.field, error.record_id) == (1, field, record_id)
    assert reason in error.reason
    message = str(error)
    assert message.startswith(f"{path}: annotations[1] (id {record_id}): {field}: ")
    assert "\n" not in message


# -- CSV --------------------------------------------------------------------------------------

def test_csv_export_then_import_keeps_the_blind_fields_of_trades(tmp_path):
    path = tmp_path / "trades.csv"
    with _stored(tmp_path) as store:
        result = export_annotations(store, path)
    assert (result.written, result.skipped) == (3, 4)
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert list(rows[0])[-4:] == ["blind", "entry_decided_at", "exit_decided_at",
                                  "unblinded_at"]
    assert [(r["id"], r["blind"], r["entry_decided_at"], r["exit_decided_at"],
             r["unblinded_at"]) for r in rows] == [
        (_id(1), "true", str(T0 + M + 7), str(T0 + 6 * M + 123), ""),
        (_id(4), "", str(T0 + 41 * M), str(T0 + 46 * M), str(UNBLINDED)),
        (_id(7), "", "", "", ""),
    ]
    with AnnotationStore(tmp_path / "fresh.sqlite") as fresh:
        assert import_annotations(fresh, path).merge.added == 3
        back = fresh.list()
    assert blind_fields(back) == {k: EXPECTED[k] for k in (_id(1), _id(4), _id(7))}
    assert back == [blind_trade(), unblinded_trade(), hindsight_trade()]


def test_a_csv_without_the_blind_columns_imports_as_hindsight(tmp_path):
    old_header = CSV_FIELDS[:CSV_FIELDS.index("blind")]
    assert old_header[-1] == "updated_at" and len(old_header) == 16
    path = tmp_path / "old.csv"
    path.write_text(",".join(old_header) + "\n"
                    f"{_id(7)},real,ETH/USDT,1m,long,{T0 + 90 * M},2000.0,{T0 + 95 * M},"
                    f"2005.0,,,,,human,{CREATED},{CREATED}\n", encoding="utf-8")
    minimal = tmp_path / "minimal.csv"
    minimal.write_text("symbol,timeframe,direction,entry_ts,entry_price,exit_ts,exit_price\n"
                       f"ETH/USDT,1m,short,{T0},10,{T0 + M},9\n", encoding="utf-8")
    empty_cells = tmp_path / "empty.csv"
    empty_cells.write_text(",".join(CSV_FIELDS) + "\n"
                           f"{_id(9)},real,ETH/USDT,1m,long,{T0},1,{T0 + M},2,,,,,human,"
                           f"{CREATED},{CREATED},,,,\n", encoding="utf-8")
    [old] = read_csv(path)
    assert old == hindsight_trade()
    for trade in (old, *read_csv(minimal), *read_csv(empty_cells)):
        assert (trade.origin, trade.blind, trade.decided_at, trade.unblinded_at) == (
            Origin.HINDSIGHT, False, (), None)
        exactly(trade)


@pytest.mark.parametrize("cells, field, reason", [
    ("yes,,,", "blind", "must be true or false, got 'yes'"),
    (f"true,{T0 + M},,", "exit_decided_at",
     "give both entry_decided_at and exit_decided_at, or neither"),
    (f"true,,{T0 + 2 * M},", "entry_decided_at", "or neither"),
    (f"true,soon,{T0 + 2 * M},", "entry_decided_at", "integer time in epoch milliseconds"),
    ("true,,,", "decided_at", "needs the replay clock time of each decision"),
    (f"true,{T0},{T0 + 2 * M},", "decided_at", "before its candle closed"),
    (f"true,{T0 + 2 * M},{T0 + M},", "decided_at", "in time order"),
    (f"true,{T0 + M},{T0 + 2 * M},{T0 + 3 * M}", "unblinded_at",
     "a blind mark has not been unblinded"),
    (f",{T0 + M},{T0 + 2 * M},x", "unblinded_at", "integer time in epoch milliseconds"),
    (f",,,{T0 + 3 * M}", "decided_at", "needs the replay clock"),  # unblinded from nothing
])
def test_a_bad_csv_blind_cell_imports_nothing_and_names_line_and_field(
        tmp_path, cells, field, reason):
    path = tmp_path / "bad.csv"
    path.write_text("symbol,timeframe,direction,entry_ts,entry_price,exit_ts,exit_price,blind,"
                    "entry_decided_at,exit_decided_at,unblinded_at\n"
                    f"ETH/USDT,1m,long,{T0 + 9 * M},1,{T0 + 10 * M},2,,,,\n"
                    f"ETH/USDT,1m,long,{T0},1,{T0 + M},2,{cells}\n", encoding="utf-8")
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        with pytest.raises(AnnotationImportError) as refused:
            import_annotations(store, path)
        assert len(store) == 0
    error = refused.value
    assert (error.record, error.field) == (1, field)
    assert reason in error.reason
    assert str(error).startswith(f"{path}: line 3: {field}: ")
    assert "\n" not in str(error)


# -- undo -------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, decision", [
    (blind_trade, {"exit_price": 2050.0}),
    (blind_region, {"label": "range"}),
    (blind_point, {"ts": T0 + 29 * M}),
])
def test_undo_and_redo_restore_the_blind_fields_exactly(qapp, tmp_path, make, decision):
    ann = make()
    errors: list[str] = []
    stack = QUndoStack()
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        stack.push(AddAnnotation(store, ann, errors.append))
        assert store.get(ann.id) == ann
        noted = store.get(ann.id).edited(notes="looked again")  # not a decision: still blind
        stack.push(EditAnnotation(store, noted, "notes", errors.append))
        assert (store.get(ann.id).origin, store.get(ann.id).notes) == (Origin.BLIND,
                                                                      "looked again")
        moved = store.get(ann.id).edited(**decision)  # a decision: unblinds it
        assert moved.unblinded_at is not None
        stack.push(EditAnnotation(store, moved, "decision", errors.append))
        got = store.get(ann.id)
        assert (got.origin, got.blind, got.decided_at, got.unblinded_at) == (
            Origin.UNBLINDED, False, ann.decided_at, moved.unblinded_at)
        stack.undo()  # blind again, with the same decision times
        assert store.get(ann.id) == noted
        assert blind_fields([store.get(ann.id)]) == blind_fields([ann])
        stack.redo()
        assert store.get(ann.id) == moved
        stack.push(DeleteAnnotation(store, moved, errors.append))
        assert ann.id not in store
        stack.undo()  # the deleted unblinded mark comes back as it was
        assert store.get(ann.id) == moved
        exactly(store.get(ann.id))
        for _ in range(3):
            stack.undo()
        assert ann.id not in store  # the add undone
        stack.redo()
        assert store.get(ann.id) == ann
        stack.redo()
        stack.redo()
        stack.redo()
        assert ann.id not in store  # the delete redone
    with AnnotationStore(tmp_path / "a.sqlite") as store:  # and every step was committed
        assert len(store) == 0
        stack.clear()
    assert errors == []
