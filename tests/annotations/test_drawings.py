"""Drawings: what each shape holds, stored in the annotations file (real SQLite, schema 4,
kept through reopening, undoable), in the JSON file beside the marks, and hidden by a replay
clock until the last candle they touch has closed."""

from __future__ import annotations

import json
import sqlite3

import pytest

from workstation.annotations.drawings import Drawing, Shape, measured, visible_at
from workstation.annotations.io import (
    AnnotationImportError,
    export_annotations,
    import_annotations,
    read_csv,
    read_csv_document,
    read_document,
)
from workstation.annotations.model import AnnotationValidationError
from workstation.annotations.store import AnnotationNotFound, AnnotationStore
from workstation.market.series import MarketKey

T0 = 1_700_000_000_000 // 3_600_000 * 3_600_000
H = 3_600_000
ETH = MarketKey("real", "ETH/USDT")


def level(price=2000.0, **kw) -> Drawing:
    return Drawing(shape="level", symbol="eth/usdt", timeframe="1h", ts1=T0, price1=price, **kw)


def trend(**kw) -> Drawing:
    values = dict(shape="trend", symbol="ETH/USDT", timeframe="1h", ts1=T0, price1=2000.0,
                  ts2=T0 + 5 * H, price2=2100.0)
    values.update(kw)
    return Drawing(**values)


@pytest.mark.parametrize("values, field, says", [
    (dict(shape="level", ts1=T0), "price1", "must be a number"),
    (dict(shape="level", ts1=T0, price1=1.0, ts2=T0), "ts2", "a level has one point"),
    (dict(shape="vertical", ts1=T0, price1=3.0), "price1", "a vertical line has no price"),
    (dict(shape="trend", ts1=T0, price1=1.0), "ts2", "needs a second point"),
    (dict(shape="box", ts1=T0, price1=1.0, ts2=T0 - H, price2=2.0), "ts2", "before the first"),
    (dict(shape="circle", ts1=T0), "shape", "unknown shape"),
    (dict(shape="measure", ts1=T0, price1=1.0, ts2=T0, price2=-2.0), "price2", "positive"),
])
def test_each_shape_holds_what_it_is_drawn_by(values, field, says):
    with pytest.raises(AnnotationValidationError, match=says) as caught:
        Drawing(symbol="ETH/USDT", timeframe="1h", **values)
    assert caught.value.field == field


def test_a_level_a_vertical_line_and_a_measure():
    d = level()
    assert d.symbol == "ETH/USDT" and d.shape is Shape.LEVEL and d.points == ((T0, 2000.0),)
    assert Drawing(shape="vertical", symbol="ETH/USDT", timeframe="1h", ts1=T0).price1 is None
    m = measured(trend(shape="measure", price2=2150.0))
    assert (m.change, m.percent, m.candles, m.duration_ms) == (150.0, 7.5, 5, 5 * H)
    with pytest.raises(AnnotationValidationError, match="nothing to measure"):
        measured(d)


def test_locked_drawings_refuse_to_move_until_unlocked():
    d = trend(locked=True)
    with pytest.raises(AnnotationValidationError, match="locked"):
        d.moved(H, 10.0)
    assert d.edited(notes="support").notes == "support"
    free = d.edited(locked=False)
    moved = free.moved(H, 10.0)
    assert (moved.ts1, moved.price1, moved.ts2, moved.price2) == (T0 + H, 2010.0, T0 + 6 * H,
                                                                  2110.0)


def test_a_replay_clock_shows_only_drawings_known_by_then():
    early, late = level(), trend()  # the trend line touches T0 + 5h: known at its close
    assert visible_at([early, late], T0 + 5 * H) == [early]
    assert visible_at([early, late], T0 + 6 * H) == [early, late]
    assert visible_at([early, late], None) == [early, late]


def test_the_store_keeps_drawings_through_reopening_and_undo(tmp_path):
    path = tmp_path / "annotations.sqlite"
    heard = []
    with AnnotationStore(path) as store:
        store.drawings.subscribe(lambda change: heard.append(change.action))
        a, b = store.drawings.add(level()), store.drawings.add(trend())
        store.drawings.update(b.edited(price2=2200.0))
        gone = store.drawings.delete(a.id)
        store.drawings.restore(gone)  # undo puts it back with its id and times
        with pytest.raises(AnnotationNotFound):
            store.drawings.delete("00000000-0000-0000-0000-000000000000")
    assert heard == ["added", "added", "updated", "deleted", "added"]
    with AnnotationStore(path) as store:
        kept = {d.id: d for d in store.drawings.list(ETH)}  # oldest point first, then id
        assert set(kept) == {a.id, b.id} and kept[a.id] == a
        assert kept[b.id].price2 == 2200.0
        assert store.drawings.list(MarketKey("demo", "ETH/USDT")) == []


def test_the_database_itself_refuses_what_a_shape_cannot_hold(tmp_path):
    path = tmp_path / "annotations.sqlite"
    AnnotationStore(path).close()
    conn = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError):  # a level with a second point
        conn.execute("INSERT INTO drawings VALUES ('00000000-0000-0000-0000-000000000001', "
                     "'level', 'real', 'ETH/USDT', '1h', 1, 5.0, 2, 6.0, 0, '', 1, 1)")
    conn.close()


def test_drawings_go_out_and_come_back_with_the_json_file(tmp_path):
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        d1, d2 = store.drawings.add(level()), store.drawings.add(trend(market="demo"))
        result = export_annotations(store, tmp_path / "out.json")
        assert result.drawings == 2
        only_real = export_annotations(store, tmp_path / "real.json", market="real")
        assert only_real.drawings == 1
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["version"] == 4 and sorted(r["shape"] for r in doc["drawings"]) == ["level", "trend"]
    with AnnotationStore(tmp_path / "b.sqlite") as other:
        result = import_annotations(other, tmp_path / "out.json")
        assert result.drawings == (2, 0, 0)
        assert import_annotations(other, tmp_path / "out.json").drawings == (0, 0, 2)
        assert sorted(other.drawings.list(), key=lambda d: d.id) == sorted(
            [d1, d2], key=lambda d: d.id)


def test_a_bad_drawing_record_names_itself_and_imports_nothing(tmp_path):
    path = tmp_path / "bad.json"
    good = {"id": level().id, "shape": "level", "market": "real", "symbol": "ETH/USDT",
            "timeframe": "1h", "ts1": T0, "price1": 5.0, "ts2": None, "price2": None,
            "locked": False, "notes": "", "created_at": T0, "updated_at": T0}
    path.write_text(json.dumps({"version": 4, "annotations": [],
                                "drawings": [good, dict(good, id=trend().id, price1=-1)]}))
    with pytest.raises(AnnotationImportError, match=r"drawings\[1\].*price1.*positive") as caught:
        read_document(path)
    assert "bad.json" in str(caught.value)
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        with pytest.raises(AnnotationImportError, match="price1"):
            import_annotations(store, path)
        assert store.drawings.list() == []


def test_drawings_go_out_and_come_back_as_csv(tmp_path):
    noted = trend(notes='a "wedge", top\nsecond line', locked=True)
    vertical = Drawing(shape="vertical", symbol="ETH/USDT", timeframe="1h", ts1=T0 + 3 * H)
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        for d in (level(), noted, vertical):
            store.drawings.add(d)
        result = export_annotations(store, tmp_path / "d.csv", format="drawings-csv")
        assert (result.written, result.drawings) == (0, 3)
        made = sorted(store.drawings.list(), key=lambda d: d.id)
    text = (tmp_path / "d.csv").read_text()
    assert text.startswith("id,shape,market,symbol,timeframe,ts1,price1,ts2,price2,locked,")
    trades, drawings = read_csv_document(tmp_path / "d.csv")
    assert trades == [] and sorted(drawings, key=lambda d: d.id) == made  # every field back
    with pytest.raises(AnnotationImportError, match="holds drawings, not trades"):
        read_csv(tmp_path / "d.csv")
    with AnnotationStore(tmp_path / "b.sqlite") as other:
        assert import_annotations(other, tmp_path / "d.csv").drawings == (3, 0, 0)
        assert import_annotations(other, tmp_path / "d.csv").drawings == (0, 0, 3)


@pytest.mark.parametrize("cell, column, says", [
    ("price1=abc", "price1", "must be a number"),
    ("locked=maybe", "locked", "true or false"),
    ("shape=circle", "shape", "unknown shape"),
    ("ts1=", "ts1", ""),
])
def test_a_bad_drawings_csv_names_the_line_and_column_and_imports_nothing(tmp_path, cell,
                                                                          column, says):
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        store.drawings.add(level())
        store.drawings.add(trend())
        export_annotations(store, tmp_path / "d.csv", format="drawings-csv")
    lines = (tmp_path / "d.csv").read_text().splitlines()
    header = lines[0].split(",")
    name, value = cell.split("=")
    row = lines[2].split(",")
    row[header.index(name)] = value
    lines[2] = ",".join(row)
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    with AnnotationStore(tmp_path / "b.sqlite") as other:
        with pytest.raises(AnnotationImportError, match=f"line 3.*{column}.*{says}"):
            import_annotations(other, tmp_path / "d.csv")
        assert other.drawings.list() == []


def test_a_file_from_before_drawings_upgrades_keeping_its_marks(tmp_path):
    from workstation.annotations import store as store_module
    from workstation.annotations.model import Trade

    path = tmp_path / "v3.sqlite"
    conn = sqlite3.connect(path)
    for migration in store_module.MIGRATIONS[:3]:
        for statement in migration:
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    trade = Trade(symbol="ETH/USDT", timeframe="1h", direction="long", entry_ts=T0,
                  entry_price=1.0, exit_ts=T0 + H, exit_price=2.0)
    with AnnotationStore(path) as store:
        assert store.schema_version == 4 and store.drawings.list() == []
        store.add(trade)
        store.drawings.add(level())
    with AnnotationStore(path) as store:
        assert store.list() == [trade] and len(store.drawings.list()) == 1
