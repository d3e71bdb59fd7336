"""AnnotationStore on real SQLite files: round trips, undo-friendly changes, listeners,
constraints in the database, migrations, refusing foreign or damaged files, SIGKILL."""

from __future__ import annotations

import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import uuid

import pytest

from workstation.annotations import store as store_module
from workstation.annotations.model import Point, Region, Source, Trade
from workstation.annotations.overlap import OverlappingTradesError, overlapping_pairs
from workstation.annotations.store import (
    SCHEMA_VERSION,
    AnnotationNotFound,
    AnnotationStore,
    AnnotationStoreError,
    DuplicateAnnotation,
    MergeResult,
    StoreChange,
)
from workstation.market.series import MarketKey
from workstation.paths import app_paths

T0 = 1_700_000_000_000
H = 3_600_000


def sample() -> list:
    return [
        Trade(symbol="ETH/USDT", timeframe="1m", direction="long", entry_ts=T0, entry_price=2000.5,
              exit_ts=T0 + H, exit_price=2100.25, stop=1990.0, target=2200.0,
              tags=("breakout", "london"), notes="clean retest, 'quoted', ünïcode",
              created_at=T0, updated_at=T0 + 5),
        Trade(symbol="ETH/USDT", timeframe="1m", direction="short", entry_ts=T0 + 2 * H,
              entry_price=2100.0, exit_ts=T0 + 3 * H, exit_price=2050.0,
              source=Source.MODEL_CONFIRMED, created_at=T0, updated_at=T0),
        Region(symbol="ETH/USDT", timeframe="1h", start_ts=T0 - 10 * H, end_ts=T0 + 10 * H,
               label="uptrend", tags=("weekly",), created_at=T0, updated_at=T0),
        Point(symbol="BTC/USDT", timeframe="1m", ts=T0 + 30 * H, price=43000.0, notes="CPI",
              created_at=T0, updated_at=T0),
    ]


@pytest.fixture
def store(tmp_path):
    with AnnotationStore(tmp_path / "annotations.sqlite") as s:
        yield s


def test_default_path_is_the_data_dir_file(workstation_home):
    with AnnotationStore() as s:
        assert s.path == app_paths().annotations_db
        assert str(s.path).startswith(str(workstation_home))
    assert app_paths().annotations_db.exists()


def test_round_trip_every_kind_and_field(store):
    items = sample()
    for ann in items:
        assert store.add(ann) is ann
    assert len(store) == 4
    for ann in items:
        assert store.get(ann.id) == ann
        assert ann.id in store
    assert store.list() == sorted(items, key=lambda a: (a.span[0], a.id))
    assert store.get(items[0].id).tags == ("breakout", "london")
    with AnnotationStore(store.path) as again:
        assert again.list() == store.list()


def test_list_filters(store):
    items = sample()
    for ann in items:
        store.add(ann)
    trade1, trade2, region, point = items
    assert store.list(symbol="eth/usdt") == [region, trade1, trade2]
    assert store.list(timeframe="1m") == [trade1, trade2, point]
    assert store.list(kind="trade") == [trade1, trade2]
    assert store.list(symbol="BTC/USDT", kind="point") == [point]
    # overlap with [start, end], inclusive
    assert store.list(start=T0 + H, end=T0 + H) == [region, trade1]
    assert store.list(start=T0 + H + 1, end=T0 + 2 * H - 1) == [region]
    assert store.list(start=T0 + 11 * H) == [point]
    assert store.list(end=T0 - 10 * H) == [region]
    assert store.list(symbol="SOL/USDT") == []


def test_update_returns_previous_and_writing_it_back_undoes(store):
    original = store.add(sample()[0])
    edited = original.edited(notes="late exit", tags=("late",), exit_price=2090.0)
    assert store.update(edited) == original
    assert store.get(original.id) == edited
    assert store.update(original) == edited  # undo
    assert store.get(original.id) == original
    with pytest.raises(AnnotationNotFound):
        store.update(sample()[1])


def test_delete_returns_record_and_restore_puts_it_back_exactly(store):
    ann = store.add(sample()[0])
    deleted = store.delete(ann.id)
    assert deleted == ann
    assert ann.id not in store and len(store) == 0
    # tags went with it (foreign key, ON DELETE CASCADE)
    raw = sqlite3.connect(store.path)
    assert raw.execute("SELECT count(*) FROM annotation_tags").fetchone()[0] == 0
    store.restore(deleted)
    assert store.get(ann.id) == ann  # same id, created_at, updated_at, tags
    assert raw.execute("SELECT count(*) FROM annotation_tags").fetchone()[0] == 2
    raw.close()
    with pytest.raises(AnnotationNotFound):
        store.delete("00000000-0000-4000-8000-000000000000")


def test_add_refuses_an_existing_id_and_upsert_replaces(store):
    ann = store.add(sample()[0])
    with pytest.raises(DuplicateAnnotation):
        store.add(ann.edited(notes="x"))
    assert store.get(ann.id) == ann
    edited = ann.edited(notes="x")
    assert store.upsert(edited) == ann
    assert store.get(ann.id) == edited
    new = sample()[1]
    assert store.upsert(new) is None
    assert len(store) == 2


def test_listeners_hear_committed_changes(store):
    heard: list[StoreChange] = []
    seen_by_other_connection = []

    def listener(change):
        heard.append(change)
        other = sqlite3.connect(store.path)
        seen_by_other_connection.append(
            other.execute("SELECT count(*) FROM annotations").fetchone()[0])
        other.close()

    unsubscribe = store.subscribe(listener)
    ann = store.add(sample()[0])
    store.update(ann.edited(notes="n"))
    store.delete(ann.id)
    assert [c.action for c in heard] == ["added", "updated", "deleted"]
    assert heard[0].annotations == (ann,)
    assert heard[2].annotations[0].notes == "n"
    assert seen_by_other_connection == [1, 1, 0]  # notified after commit
    unsubscribe()
    store.add(sample()[1])
    assert len(heard) == 3


def test_a_failing_listener_is_loud_but_the_change_and_other_listeners_stand(store):
    heard = []

    def broken(change):
        raise RuntimeError("listener bug")

    store.subscribe(broken)
    store.subscribe(heard.append)
    ann = sample()[0]
    with pytest.raises(RuntimeError, match="listener bug"):
        store.add(ann)
    assert store.get(ann.id) == ann and len(heard) == 1


def test_merge_adds_updates_keeps_newer_and_is_one_transaction(store):
    t1, t2, region, point = sample()
    store.add(t1)
    store.add(t2)
    newer_t2 = t2.edited(notes="edited here")
    store.update(newer_t2)
    heard = []
    store.subscribe(heard.append)
    result = store.merge([t1, t2, region.edited(label="range"), point])
    assert result == MergeResult(added=2, updated=0, unchanged=1, kept_newer=1)
    assert store.get(t2.id) == newer_t2
    older_t1 = t1
    assert store.merge([older_t1.edited(notes="from file")]).updated == 1
    assert [c.action for c in heard] == ["added", "updated"]

    def poisoned():
        yield Trade(symbol="SOL/USDT", timeframe="1m", direction="long", entry_ts=T0,
                    entry_price=1.0, exit_ts=T0, exit_price=1.0)
        raise RuntimeError("reader failed half-way")

    before = store.list()
    with pytest.raises(RuntimeError):
        store.merge(poisoned())
    assert store.list() == before


def test_replace_market_swaps_every_annotation_of_one_market_in_one_transaction(store):
    t1, t2, region, point = sample()
    for ann in (t1, t2, region, point):
        store.add(ann)
    eth = MarketKey("real", "ETH/USDT")
    heard = []
    store.subscribe(heard.append)
    new = Trade(symbol="ETH/USDT", timeframe="1m", direction="long", entry_ts=T0 + 50 * H,
                entry_price=1.0, exit_ts=T0 + 51 * H, exit_price=2.0)
    removed = store.replace_market(eth, [new])
    assert sorted(a.id for a in removed) == sorted(a.id for a in (t1, t2, region))  # all TFs
    assert store.list(market=eth) == [new]
    assert store.list(symbol="BTC/USDT") == [point]  # another market: untouched
    assert [c.action for c in heard] == ["deleted", "added"]
    clash = dataclasses.replace(new, id=str(uuid.uuid4()), entry_ts=T0 + 50 * H + 60_000)
    with pytest.raises(OverlappingTradesError):
        store.replace_market(eth, [new, clash])  # refused whole: the old marks stay
    assert store.list(market=eth) == [new]
    with pytest.raises(AnnotationStoreError, match="every annotation must be of"):
        store.replace_market(eth, [point])


def test_database_enforces_its_own_constraints(store):
    store.add(sample()[0])
    raw = sqlite3.connect(store.path)
    raw.execute("PRAGMA foreign_keys = ON")
    columns = ("id, kind, symbol, timeframe, source, start_ts, end_ts, direction, entry_price, "
               "exit_price, label, notes, created_at, updated_at")
    good = ["11111111-1111-4111-8111-111111111111", "trade", "ETH/USDT", "1m", "human", 1, 2,
            "long", 1.0, 2.0, None, "", 1, 1]
    bad_cases = {
        "kind": "line", "direction": "up", "entry_price": 0.0, "exit_price": -1.0,
        "start_ts": 3, "timeframe": "2m", "source": "robot", "id": "nope",
        "label": "uptrend",
    }
    names = [c.strip() for c in columns.split(",")]
    for column, value in bad_cases.items():
        row = list(good)
        row[names.index(column)] = value
        with pytest.raises(sqlite3.IntegrityError):
            raw.execute(f"INSERT INTO annotations ({columns}) VALUES ({', '.join('?' * 14)})", row)
    with pytest.raises(sqlite3.IntegrityError):  # a tag must belong to an annotation
        raw.execute("INSERT INTO annotation_tags VALUES "
                    "('22222222-2222-4222-8222-222222222222', 0, 'x')")
    raw.execute(f"INSERT INTO annotations ({columns}) VALUES ({', '.join('?' * 14)})", good)
    raw.commit()
    raw.close()


def test_file_settings(store):
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    assert version == SCHEMA_VERSION == store.schema_version
    conn.close()
    assert store._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_used_only_from_the_thread_that_opened_it(store):
    errors = []
    thread = threading.Thread(target=lambda: errors.append(_try(store.list)))
    thread.start()
    thread.join()
    assert isinstance(errors[0], sqlite3.ProgrammingError)


def _try(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return exc
    return None


def test_migrations_run_in_order_and_a_failed_one_changes_nothing(tmp_path, monkeypatch):
    path = tmp_path / "a.sqlite"
    ann = sample()[0]
    with AnnotationStore(path) as s:
        s.add(ann)
    v2 = ("ALTER TABLE annotations ADD COLUMN color TEXT",)
    monkeypatch.setattr(store_module, "MIGRATIONS", store_module.MIGRATIONS + (v2,))
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with AnnotationStore(path) as s:
        assert s.schema_version == SCHEMA_VERSION + 1
        assert s.get(ann.id) == ann
    broken = ("ALTER TABLE annotations ADD COLUMN size TEXT", "THIS IS NOT SQL")
    monkeypatch.setattr(store_module, "MIGRATIONS", store_module.MIGRATIONS + (broken,))
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", SCHEMA_VERSION + 2)
    with pytest.raises(AnnotationStoreError) as err:
        AnnotationStore(path)
    assert str(path) in str(err.value)
    assert f"left at version {SCHEMA_VERSION + 1}" in str(err.value)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    columns = [row[1] for row in conn.execute("PRAGMA table_info(annotations)")]
    assert "color" in columns and "size" not in columns
    conn.close()


def _version_1_file(path, rows) -> None:
    """A store as the first release wrote it: schema version 1, demo marks filed under
    ``DEMO:<symbol>`` (or the demo's own DEMO/... symbol); rows are (id, symbol, timeframe,
    kind, start, end, direction)."""
    conn = sqlite3.connect(path)
    for statement in store_module.MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    for id_, symbol, timeframe, kind, start, end, direction in rows:
        prices = (2000.0, 2010.0) if kind == "trade" else (None, None)
        conn.execute(
            "INSERT INTO annotations (id, kind, symbol, timeframe, source, start_ts, end_ts, "
            "direction, entry_price, exit_price, label, notes, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, 'human', ?, ?, ?, ?, ?, ?, '', ?, ?)",
            (id_, kind, symbol, timeframe, start, end, direction, *prices,
             "uptrend" if kind == "region" else None, T0, T0))
    conn.commit()
    conn.close()


def test_version_1_demo_marks_become_demo_marks_of_their_symbol(tmp_path):
    path = tmp_path / "a.sqlite"
    ids = [str(uuid.UUID(int=i)) for i in range(1, 5)]
    _version_1_file(path, [
        (ids[0], "DEMO:ETH/USDT", "1m", "trade", T0, T0 + H, "long"),
        (ids[1], "DEMO/USDT", "1h", "region", T0, T0 + 5 * H, None),
        (ids[2], "ETH/USDT", "1m", "trade", T0, T0 + H, "short"),
        (ids[3], "ETH/USDT", "1h", "trade", T0 - H, T0 + 3 * H, "long"),
    ])
    with AnnotationStore(path) as s:
        assert s.schema_version == SCHEMA_VERSION == 4
        demo_eth = MarketKey("demo", "ETH/USDT")
        assert [a.id for a in s.list(market=demo_eth)] == [ids[0]]
        assert [a.id for a in s.list(market=MarketKey("demo", "DEMO/USDT"))] == [ids[1]]
        real = s.trades(MarketKey("real", "ETH/USDT"))
        assert [t.id for t in real] == [ids[3], ids[2]]  # in entry order
        # the two real trades overlap (the old tool checked one timeframe): the store opens,
        # the rule names the pair, and changes that do not move them are accepted
        assert [(a.id, b.id) for a, b in overlapping_pairs(real)] == [(ids[3], ids[2])]
        s.update(real[1].edited(notes="still here"))
        assert s.get(ids[2]).notes == "still here"
        assert {a.origin.value for a in s.list()} == {"hindsight"}  # made in full view


def test_trades_held_at_the_same_time_are_refused_on_every_timeframe(store):
    hourly = Trade(symbol="ETH/USDT", timeframe="1h", direction="long", entry_ts=T0 - T0 % H,
                   entry_price=2000.0, exit_ts=T0 - T0 % H + 4 * H, exit_price=2050.0)
    store.add(hourly)  # held from the close of its first hour to the close of its fifth
    inside = Trade(symbol="ETH/USDT", timeframe="1m", direction="short",
                   entry_ts=hourly.held[0] + 60_000, entry_price=2010.0,
                   exit_ts=hourly.held[0] + 600_000, exit_price=2000.0)
    for change in (store.add, store.upsert, lambda t: store.merge([t])):
        with pytest.raises(OverlappingTradesError, match="1h long entered on the") as err:
            change(inside)
        assert err.value.pairs == [(hourly, inside)]
        assert inside.id not in store and len(store) == 1
    before = Trade(symbol="ETH/USDT", timeframe="1m", direction="short",
                   entry_ts=hourly.entry_ts, entry_price=2010.0,
                   exit_ts=hourly.held[0] - 60_000, exit_price=2000.0)
    store.add(before)  # out on the close where the hourly long comes in: a reversal
    other_market = [dataclasses.replace(inside, market="demo"),
                    dataclasses.replace(inside, symbol="BTC/USDT", id=str(uuid.uuid4()))]
    assert store.merge(other_market).added == 2
    moved = before.edited(exit_ts=hourly.held[0] + 60_000)
    with pytest.raises(OverlappingTradesError):
        store.update(moved)
    assert store.get(before.id) == before


def _refused(path, *, match):
    before = path.read_bytes()
    siblings = sorted(os.listdir(path.parent))
    with pytest.raises(AnnotationStoreError) as err:
        AnnotationStore(path)
    assert str(path) in str(err.value)
    assert "nothing was written to it" in str(err.value)
    assert match in str(err.value)
    assert path.read_bytes() == before
    assert sorted(os.listdir(path.parent)) == siblings
    return err.value


def test_a_file_that_is_not_a_database_is_refused_and_untouched(tmp_path):
    path = tmp_path / "annotations.sqlite"
    path.write_bytes(b"my precious notes, not sqlite\n" * 200)
    _refused(path, match="not a readable SQLite database")


def test_a_truncated_database_is_refused_and_untouched(tmp_path):
    path = tmp_path / "annotations.sqlite"
    with AnnotationStore(path) as s:
        s.merge(Point(symbol="ETH/USDT", timeframe="1m", ts=T0 + i, notes="x" * 200)
                for i in range(2000))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    _refused(path, match="malformed")


def test_damaged_pages_give_an_error_naming_the_file_and_leave_it_untouched(tmp_path):
    path = tmp_path / "annotations.sqlite"
    with AnnotationStore(path) as s:
        s.merge(Point(symbol="ETH/USDT", timeframe="1m", ts=T0 + i, notes="x" * 200)
                for i in range(2000))
    data = bytearray(path.read_bytes())
    middle = len(data) // 2 // 4096 * 4096
    data[middle: middle + 8192] = b"\xff" * 8192
    path.write_bytes(bytes(data))
    with pytest.raises(AnnotationStoreError) as err, AnnotationStore(path) as s:
        s.list()
    assert str(path) in str(err.value)
    assert path.read_bytes() == bytes(data)


def test_another_programs_database_is_refused_and_untouched(tmp_path):
    path = tmp_path / "annotations.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE recipes (name TEXT)")
    conn.execute("INSERT INTO recipes VALUES ('soup')")
    conn.commit()
    conn.close()
    _refused(path, match="not a Workstation annotations database")


def test_a_newer_schema_is_refused_and_untouched(tmp_path):
    path = tmp_path / "annotations.sqlite"
    with AnnotationStore(path) as s:
        s.add(sample()[0])
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()
    error = _refused(path, match="newer Workstation")
    assert f"schema version {SCHEMA_VERSION + 5}" in str(error)


def test_an_empty_file_becomes_a_new_store(tmp_path):
    path = tmp_path / "annotations.sqlite"
    path.write_bytes(b"")
    with AnnotationStore(path) as s:
        assert len(s) == 0 and s.schema_version == SCHEMA_VERSION


_KILLED_WRITER = textwrap.dedent("""
    import sys, time
    from workstation.annotations.model import Trade
    from workstation.annotations.store import AnnotationStore
    store = AnnotationStore(sys.argv[1])
    trade = Trade(symbol="ETH/USDT", timeframe="1m", direction="long", entry_ts=1, entry_price=1.5,
                  exit_ts=2, exit_price=1.75, tags=("kept",), id=sys.argv[2])
    store.add(trade)
    print("ok", flush=True)
    time.sleep(60)
""")


def test_an_acknowledged_change_survives_sigkill(tmp_path):
    path = tmp_path / "annotations.sqlite"
    ann_id = "33333333-3333-4333-8333-333333333333"
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(path), ann_id],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ok"
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    assert (tmp_path / "annotations.sqlite-wal").exists()  # killed before any checkpoint
    with AnnotationStore(path) as s:
        trade = s.get(ann_id)
    assert (trade.entry_price, trade.exit_price, trade.tags) == (1.5, 1.75, ("kept",))
