"""Blind marks keep what makes them blind (issue 27, items 3 and 7): the flag, the replay clock
of each decision and the audit of an unblinding go through the store (reopened), JSON and CSV
export and import, and undo; files without them import as hindsight; bad values are refused
in one line naming the field."""

from __future__ import annotations

import json

import pytest
from PySide6.QtGui import QUndoStack

from workstation.annotations.io import (
    AnnotationImportError,
    export_annotations,
    import_annotations,
    read_csv,
    read_json,
)
from workstation.annotations.model import Origin, Point, Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.ui.annotations.undoable_changes import (
    AddAnnotation,
    DeleteAnnotation,
    EditAnnotation,
)

T0 = 1_700_000_040_000 - 1_700_000_040_000 % 60_000
M = 60_000


def blind_marks() -> list:
    trade = Trade(symbol="ETH/USDT", timeframe="1m", direction="long", entry_ts=T0,
                  entry_price=2000.0, exit_ts=T0 + 5 * M, exit_price=2010.0, blind=True,
                  decided_at=(T0 + M + 7, T0 + 6 * M))
    region = Region(symbol="ETH/USDT", timeframe="1m", start_ts=T0 + 10 * M,
                    end_ts=T0 + 20 * M, label="reviewed", blind=True,
                    decided_at=(T0 + 11 * M, T0 + 21 * M))
    point = Point(symbol="ETH/USDT", timeframe="1m", ts=T0 + 30 * M, price=2001.0, blind=True,
                  decided_at=(T0 + 31 * M,))
    was = Trade(symbol="ETH/USDT", timeframe="1m", direction="short", entry_ts=T0 + 40 * M,
                entry_price=2020.0, exit_ts=T0 + 45 * M, exit_price=2000.0, blind=True,
                decided_at=(T0 + 41 * M, T0 + 46 * M)).edited(exit_price=1999.0)
    hindsight = Trade(symbol="ETH/USDT", timeframe="1m", direction="long", entry_ts=T0 + 50 * M,
                      entry_price=2000.0, exit_ts=T0 + 55 * M, exit_price=2005.0)
    return [trade, region, point, was, hindsight]


def blind_fields(anns) -> list:
    return sorted((a.id, a.blind, a.decided_at, a.unblinded_at, a.origin) for a in anns)


def test_the_store_keeps_blind_fields_across_reopening(tmp_path):
    path = tmp_path / "a.sqlite"
    marks = blind_marks()
    with AnnotationStore(path) as store:
        for ann in marks:
            store.add(ann)
    with AnnotationStore(path) as store:
        stored = store.list()
    assert blind_fields(stored) == blind_fields(marks)
    origins = {a.id: a.origin for a in stored}
    assert [origins[a.id] for a in marks] == [Origin.BLIND] * 3 + [Origin.UNBLINDED,
                                                                  Origin.HINDSIGHT]
    assert marks[3].decided_at == (T0 + 41 * M, T0 + 46 * M) and marks[3].unblinded_at


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_export_and_import_keep_blind_fields(tmp_path, suffix):
    marks = blind_marks()
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        for ann in marks:
            store.add(ann)
        export_annotations(store, tmp_path / f"marks{suffix}")
    with AnnotationStore(tmp_path / "b.sqlite") as fresh:
        import_annotations(fresh, tmp_path / f"marks{suffix}")
        back = fresh.list()
    kept = [a for a in marks if suffix == ".json" or isinstance(a, Trade)]
    assert blind_fields(back) == blind_fields(kept)


def test_files_without_blind_fields_import_as_hindsight(tmp_path):
    record = {"id": "00000000-0000-4000-8000-000000000001", "kind": "trade", "market": "real",
              "symbol": "ETH/USDT", "timeframe": "1m", "direction": "long", "entry_ts": T0,
              "entry_price": 1.0, "exit_ts": T0 + M, "exit_price": 2.0, "label": None,
              "start_ts": None, "end_ts": None, "notes": "", "tags": [], "source": "human",
              "created_at": T0, "updated_at": T0}
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"version": 2, "annotations": [record]}))
    [old] = read_json(path)
    assert old.origin is Origin.HINDSIGHT and old.decided_at == ()
    csv_path = tmp_path / "old.csv"
    csv_path.write_text("symbol,timeframe,direction,entry_ts,entry_price,exit_ts,exit_price\n"
                        f"ETH/USDT,1m,long,{T0},1,{T0 + M},2\n")
    [row] = read_csv(csv_path)
    assert row.origin is Origin.HINDSIGHT


@pytest.mark.parametrize("cells, field", [
    ("maybe,,,", "blind"),
    (f"true,{T0 + M},,", "exit_decided_at"),
    ("true,,,", "decided_at"),
    (f"true,{T0},{T0 + 2 * M},", "decided_at"),  # decided before the entry candle closed
    (f",{T0 + M},{T0 + 2 * M},x", "unblinded_at"),
])
def test_bad_blind_cells_are_refused_naming_the_field(tmp_path, cells, field):
    path = tmp_path / "bad.csv"
    path.write_text("symbol,timeframe,direction,entry_ts,entry_price,exit_ts,exit_price,blind,"
                    "entry_decided_at,exit_decided_at,unblinded_at\n"
                    f"ETH/USDT,1m,long,{T0},1,{T0 + M},2,{cells}\n")
    with pytest.raises(AnnotationImportError) as refused:
        read_csv(path)
    assert refused.value.field == field and "\n" not in str(refused.value)


def test_a_bad_json_decision_list_is_refused(tmp_path):
    marks = blind_marks()
    path = tmp_path / "m.json"
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        store.add(marks[0])
        export_annotations(store, path)
    doc = json.loads(path.read_text())
    doc["annotations"][0]["decided_at"] = "soon"
    path.write_text(json.dumps(doc))
    with pytest.raises(AnnotationImportError, match="decided_at"):
        read_json(path)


def test_undo_and_redo_restore_blind_fields_exactly(qapp, tmp_path):
    trade = blind_marks()[0]
    errors: list[str] = []
    stack = QUndoStack()
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        stack.push(AddAnnotation(store, trade, errors.append))
        moved = store.get(trade.id).edited(exit_price=2020.0)  # unblinds it
        stack.push(EditAnnotation(store, moved, "edit", errors.append))
        assert store.get(trade.id).origin is Origin.UNBLINDED
        stack.undo()
        assert blind_fields([store.get(trade.id)]) == blind_fields([trade])
        stack.redo()
        assert store.get(trade.id).unblinded_at == moved.unblinded_at
        stack.push(DeleteAnnotation(store, store.get(trade.id), errors.append))
        stack.undo()
        assert blind_fields([store.get(trade.id)]) == blind_fields([moved])
    assert errors == []
