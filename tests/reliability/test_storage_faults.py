"""Damaged or foreign SQLite files, a full disk, deep JSON and long CSV notes: each is one clear
line naming the file (and line and field), nothing is written into a damaged file, and what was
saved before stays intact."""

from __future__ import annotations

import errno
import os
import sqlite3

import pytest

from workstation.annotations.io import (
    AnnotationImportError,
    export_annotations,
    import_annotations,
    read_json,
)
from workstation.annotations.model import Point, Trade
from workstation.annotations.store import (
    AnnotationsDiskFullError,
    AnnotationStore,
    DamagedAnnotationsError,
)
from workstation.atomic import atomic_write_text
from workstation.cli import describe_error, main
from workstation.market.cache import CacheDiskFullError, CandleCache, DamagedCacheError
from workstation.market.csv_io import write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.paths import app_paths
from workstation.storage import DiskFullError

T0 = 1_700_000_000_000
H = 3_600_000
KEY = SeriesKey("binance", "ETH/USDT", ONE_MINUTE)


def trade(i: int, notes: str = "") -> Trade:
    return Trade(symbol="ETH/USDT", timeframe="1h", direction="long", entry_ts=T0 + 10 * i * H,
                 entry_price=2000.0, exit_ts=T0 + (10 * i + 2) * H, exit_price=2010.0,
                 notes=notes, created_at=T0, updated_at=T0)


def corrupt_pages(path, first_page: int = 2) -> bytes:
    """Overwrite every page from ``first_page`` on with junk (the header stays readable, so
    the file opens and only its tables are broken); returns the damaged bytes."""
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    assert len(data) > (first_page + 1) * page, "the file is too small to damage"
    for at in range(first_page * page, len(data), page):
        data[at:at + page] = bytes([0x5A]) * page
    path.write_bytes(bytes(data))
    return bytes(data)


def no_wal_left(path):
    for suffix in ("-wal", "-shm"):
        assert not path.with_name(path.name + suffix).exists() or \
            path.with_name(path.name + suffix).stat().st_size == 0


# -- damaged or foreign SQLite files --------------------------------------------------------

def test_a_damaged_cache_is_named_and_import_candles_writes_nothing(tmp_path, capsys):
    cache_path = app_paths().candle_cache
    with CandleCache(cache_path) as cache:
        cache.put(KEY, demo_candles(50_000, ONE_MINUTE, seed=1, end_ts=T0))
    no_wal_left(cache_path)
    damaged = corrupt_pages(cache_path)
    csv = write_candles_csv(demo_candles(500, ONE_MINUTE, seed=2, end_ts=T0 + 10**9),
                            tmp_path / "c.csv")
    status = main(["import-candles", str(csv), "--symbol", "ETH/USDT", "--timeframe", "1m"])
    err = capsys.readouterr().err.strip()
    assert status == 1 and len(err.splitlines()) == 1
    assert f"candle cache {cache_path} cannot be used: damaged" in err
    assert "nothing was written to it" in err and "Move it aside" in err and ".recover" in err
    assert cache_path.read_bytes() == damaged


def test_reading_a_damaged_cache_names_the_file():
    cache_path = app_paths().candle_cache
    with CandleCache(cache_path) as cache:
        cache.put(KEY, demo_candles(50_000, ONE_MINUTE, seed=1, end_ts=T0))
    damaged = corrupt_pages(cache_path)
    with CandleCache(cache_path) as cache, pytest.raises(DamagedCacheError) as info:
        cache.load(KEY)
    assert str(cache_path) in str(info.value) and "Move it aside" in str(info.value)
    assert cache_path.read_bytes() == damaged


def test_a_foreign_database_is_not_turned_into_a_cache(tmp_path):
    path = tmp_path / "someone_elses.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE invoices (id INTEGER)")
    db.close()
    before = path.read_bytes()
    with pytest.raises(DamagedCacheError, match=r"not a Workstation candle cache \(tables: "
                                                r"invoices\)"):
        CandleCache(path)
    assert path.read_bytes() == before


def test_a_damaged_annotations_file_is_refused_before_any_write(tmp_path):
    path = tmp_path / "annotations.sqlite"
    with AnnotationStore(path) as store:
        for i in range(400):
            store.add(Point(symbol="ETH/USDT", timeframe="1m", ts=T0 + i * 60_000,
                            notes="x" * 200, created_at=T0, updated_at=T0))
    no_wal_left(path)
    with sqlite3.connect(path) as db:  # the schema and every root page stay readable
        last_root = db.execute("SELECT max(rootpage) FROM sqlite_master").fetchone()[0]
    db.close()
    damaged = corrupt_pages(path, first_page=last_root + 1)
    with pytest.raises(DamagedAnnotationsError) as info:
        AnnotationStore(path)
    message = str(info.value)
    assert f"annotations file {path} cannot be used: damaged" in message
    assert "nothing was written to it" in message and "keep the old file" in message
    assert path.read_bytes() == damaged


# -- a full disk ----------------------------------------------------------------------------

def fill_disk(conn: sqlite3.Connection) -> None:
    """The SQLite file may not grow any more: the next page it needs fails as a full disk
    does (``SQLITE_FULL``, rolled back by SQLite itself)."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")


def test_a_full_disk_during_an_annotation_edit_says_so_and_keeps_the_rest(tmp_path):
    path = tmp_path / "annotations.sqlite"
    with AnnotationStore(path) as store:
        store.add(trade(0, "kept"))
        fill_disk(store._conn)
        with pytest.raises(AnnotationsDiskFullError) as info:
            store.merge([trade(i, "n" * 50_000) for i in range(1, 40)])
        assert str(info.value).startswith(f"disk full: cannot write {path}; nothing of this "
                                          "change was stored")
        assert "no transaction is active" not in str(info.value)
        assert [t.notes for t in store.list()] == ["kept"]
        store.add(trade(1, "small"))  # the store still works once the edit fits
    with AnnotationStore(path) as again:
        assert [t.notes for t in again.list()] == ["kept", "small"]


def test_a_full_disk_during_a_candle_store_keeps_what_was_stored():
    path = app_paths().candle_cache
    first = demo_candles(3000, ONE_MINUTE, seed=4, end_ts=T0)
    with CandleCache(path) as cache:
        cache.put(KEY, first)
        fill_disk(cache._db)
        later = demo_candles(200_000, ONE_MINUTE, seed=5, end_ts=T0 + 400_000 * 60_000)
        with pytest.raises(CacheDiskFullError, match=f"disk full: cannot write {path}"):
            cache.put(KEY, later)
        assert cache.load(KEY).ts.tolist() == first.ts.tolist()
        assert cache.missing(KEY, int(later.ts[0]), int(later.ts[-1])) != []


def enospc(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_during_a_checkpoint_save_keeps_the_previous_one(tmp_path, monkeypatch):
    import torch

    from workstation.ml.checkpoints import CheckpointStore

    store = CheckpointStore(tmp_path / "checkpoints")
    model = torch.nn.Linear(3, 2)
    run = store.new_run_id()
    store.save(run, model, meta={"step": 1})
    before = {n: t.clone() for n, t in model.state_dict().items()}
    with torch.no_grad():
        model.weight.add_(1.0)
    monkeypatch.setattr(os, "fsync", enospc)  # where a full disk shows with delayed allocation
    with pytest.raises(DiskFullError) as info:
        store.save(run, model, meta={"step": 2})
    monkeypatch.undo()
    assert str(info.value).startswith(f"disk full: cannot write {store.run_dir(run)}; the "
                                      "previous checkpoint is intact")
    loaded = store.load(run)
    assert loaded.meta["step"] == 1
    assert all(torch.equal(loaded.weights[n], before[n]) for n in before)
    leftovers = [p.name for p in store.run_dir(run).iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_a_full_disk_during_an_export_names_the_file_and_keeps_the_old_one(tmp_path,
                                                                          monkeypatch):
    target = tmp_path / "marks.json"
    target.write_text("the previous export")
    monkeypatch.setattr(os, "fsync", enospc)
    with pytest.raises(DiskFullError, match=f"disk full: cannot write {target}; it was left"):
        atomic_write_text(target, "new")
    monkeypatch.undo()
    assert target.read_text() == "the previous export"
    assert [p.name for p in tmp_path.iterdir()] == ["marks.json"]


def test_any_other_full_disk_error_is_said_in_words():
    exc = OSError(errno.ENOSPC, "No space left on device", "/data/x.bin")
    assert describe_error(exc).startswith("disk full: cannot write /data/x.bin")


# -- deep JSON, long CSV fields --------------------------------------------------------------

def test_deeply_nested_json_names_line_column_and_field(tmp_path, capsys):
    path = tmp_path / "deep.json"
    depth = 5_000_000  # 10 MB of brackets
    path.write_text('{"version": 2,\n "annotations": [{"tags": ' + "[" * depth + "]" * depth
                    + "}]}")
    with pytest.raises(AnnotationImportError) as info:
        read_json(path)
    message = str(info.value)
    assert message.startswith(f"{path}: line 2 column ")
    assert "annotations[0].tags[0][0]" in message and "nested deeper than 100 levels" in message
    assert main(["annotations", "import", str(path)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nested deeper" in err and "Recursion" not in err


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_an_export_with_a_long_note_imports_back(tmp_path, fmt):
    long_note = ("a note, with \"quotes\"\nand lines; " * 20_000)[:300_000]  # > 128 KB
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        store.add(trade(0, long_note))
        store.add(trade(1, "short"))
        export_annotations(store, tmp_path / f"out.{fmt}")
    with AnnotationStore(tmp_path / "b.sqlite") as fresh:
        result = import_annotations(fresh, tmp_path / f"out.{fmt}")
        assert result.merge.added == 2
        assert sorted(len(t.notes) for t in fresh.list()) == [5, len(long_note)]


def test_a_log_on_a_full_disk_is_said_once_and_the_command_goes_on(capsys):
    import logging

    from workstation.logs import setup_logging

    handler = setup_logging(app_paths())

    class FullDisk:
        """The log file's stream on a disk with no space left."""

        def write(self, _text):
            enospc()

        def flush(self):
            pass

        def seek(self, *_args):
            return 0

        def tell(self):
            return 0

    handler.stream.close()
    handler.stream = FullDisk()
    try:
        for i in range(3):
            logging.getLogger("workstation.test").info("message %d", i)
    finally:
        logging.getLogger().removeHandler(handler)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"workstation: cannot write the log {app_paths().log_file} (disk full); "
                   "going on without it"]
