"""JSON and CSV import/export: round trips through the store, all-or-nothing imports that
name the bad record and field, re-imports that do not duplicate."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import uuid

import pytest

from workstation.annotations.io import (
    CSV_FIELDS,
    JSON_FIELDS,
    AnnotationImportError,
    export_annotations,
    file_format,
    import_annotations,
    read_csv,
    read_json,
    to_json_record,
    write_json,
)
from workstation.annotations.model import AnnotationError, Point, Region, Source, Trade
from workstation.annotations.overlap import OverlappingTradesError
from workstation.annotations.store import AnnotationStore, MergeResult
from workstation.market.series import MarketKind

T0 = 1_700_000_000_000
H = 3_600_000


def annotations() -> list:
    return [
        Trade(symbol="ETH/USDT", timeframe="1m", direction="long", entry_ts=T0,
              entry_price=0.1 + 0.2,
              exit_ts=T0 + H, exit_price=2100.25, stop=0.25, target=3000.0,
              tags=("breakout", "london"), notes='comma, "quote"\nsecond line; ünïcode',
              created_at=T0, updated_at=T0 + 5),
        Trade(symbol="ETH/USDT", timeframe="1m", direction="short", entry_ts=T0 + 2 * H,
              entry_price=2100.0, exit_ts=T0 + 3 * H, exit_price=2050.0,
              source=Source.MODEL_CONFIRMED, created_at=T0, updated_at=T0),
        Region(symbol="ETH/USDT", timeframe="1h", start_ts=T0 - 10 * H, end_ts=T0 + 10 * H,
               label="accumulation", tags=("weekly",), created_at=T0, updated_at=T0),
        Point(symbol="BTC/USDT", timeframe="1m", ts=T0 + 30 * H, price=43000.0, notes="CPI",
              created_at=T0, updated_at=T0),
        Point(symbol="BTC/USDT", timeframe="1m", ts=T0 + 31 * H, created_at=T0, updated_at=T0),
    ]


@pytest.fixture
def store(tmp_path):
    with AnnotationStore(tmp_path / "store.sqlite") as s:
        yield s


@pytest.fixture
def fresh(tmp_path):
    with AnnotationStore(tmp_path / "fresh.sqlite") as s:
        yield s


def test_json_round_trip_through_the_store(store, fresh, tmp_path):
    store.merge(annotations())
    path = tmp_path / "out.json"
    assert export_annotations(store, path).written == 5
    result = import_annotations(fresh, path)
    assert result.read == result.selected == 5
    assert result.merge == MergeResult(added=5)
    assert fresh.list() == store.list()
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_json_shape(tmp_path):
    trade, _, region, point, _ = annotations()
    path = tmp_path / "a.json"
    write_json([trade, region, point], path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["version"] == 4 and doc["drawings"] == []
    t, r, p = doc["annotations"]
    assert set(t) == set(JSON_FIELDS)
    assert {"id", "kind", "market", "symbol", "timeframe", "direction", "entry_ts",
            "entry_price", "exit_ts",
            "exit_price", "label", "start_ts", "end_ts", "notes", "tags", "source", "created_at",
            "updated_at"} <= set(t)
    assert (t["kind"], t["market"], t["direction"], t["entry_ts"], t["entry_price"],
            t["source"]) == ("trade", "real", "long", T0, 0.1 + 0.2, "human")
    assert t["label"] is None and t["start_ts"] is None and t["ts"] is None
    assert t["tags"] == ["breakout", "london"]
    assert (r["kind"], r["label"], r["start_ts"], r["end_ts"]) == ("region", "accumulation",
                                                                   T0 - 10 * H, T0 + 10 * H)
    assert r["direction"] is None and r["entry_ts"] is None and r["stop"] is None
    assert (p["kind"], p["ts"], p["price"], p["start_ts"]) == ("point", T0 + 30 * H, 43000.0, None)


def test_csv_round_trip_of_trades(store, fresh, tmp_path):
    store.merge(annotations())
    path = tmp_path / "trades.csv"
    result = export_annotations(store, path)
    assert (result.written, result.skipped) == (2, 3)
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == CSV_FIELDS
    assert import_annotations(fresh, path).merge.added == 2
    assert fresh.list() == store.list(kind="trade")
    assert fresh.list()[0].entry_price == 0.1 + 0.2  # exact float


def test_reimporting_the_same_file_does_not_duplicate(store, tmp_path):
    path = tmp_path / "a.json"
    write_json(annotations(), path)
    assert import_annotations(store, path).merge.added == 5
    again = import_annotations(store, path)
    assert again.merge == MergeResult(unchanged=5)
    assert len(store) == 5


def test_import_keeps_newer_local_edits_and_takes_newer_file_records(store, tmp_path):
    items = annotations()
    path = tmp_path / "a.json"
    write_json(items, path)
    import_annotations(store, path)
    local = store.get(items[0].id).edited(notes="edited after export")
    store.update(local)
    newer_in_file = items[1].edited(notes="edited elsewhere")
    write_json([items[0], newer_in_file], path)
    result = import_annotations(store, path)
    assert result.merge == MergeResult(updated=1, kept_newer=1)
    assert store.get(items[0].id) == local
    assert store.get(items[1].id) == newer_in_file


def test_symbol_and_timeframe_select_what_is_imported_and_exported(store, fresh, tmp_path):
    path = tmp_path / "a.json"
    write_json(annotations(), path)
    result = import_annotations(store, path, symbol="eth/usdt", timeframe="1m")
    assert (result.read, result.selected, result.merge.added) == (5, 2, 2)
    out = tmp_path / "b.json"
    export_annotations(store, out, symbol="ETH/USDT", timeframe="1m")
    assert len(read_json(out)) == 2
    import_annotations(fresh, path)
    assert export_annotations(fresh, out, symbol="BTC/USDT").written == 2


def _record(**changes):
    record = to_json_record(annotations()[0])
    record.update(changes)
    return record


def _write_doc(path, records, version=2):
    path.write_text(json.dumps({"version": version, "annotations": records}), encoding="utf-8")


@pytest.mark.parametrize(
    "bad, field, reason",
    [
        ({"entry_ts": T0 + 2 * H}, "entry_ts", "after exit"),
        ({"direction": "sideways"}, "direction", "unknown direction"),
        ({"entry_price": 0}, "entry_price", "positive"),
        ({"exit_price": -2.5}, "exit_price", "positive"),
        ({"kind": "arrow"}, "kind", "unknown kind"),
        ({"entry_ts": "yesterday"}, "entry_ts", "integer time"),
        ({"exit_ts": None}, "exit_ts", "required for a trade"),
        ({"label": "uptrend"}, "label", "must be null for a trade"),
        ({"colour": "red"}, "colour", "unknown field"),
        ({"tags": ["a;b"]}, "tags", ";"),
        ({"id": "42"}, "id", "not a UUID"),
    ],
)
def test_a_bad_json_record_imports_nothing_and_is_named(store, tmp_path, bad, field, reason):
    good = [to_json_record(a) for a in annotations()[1:]]
    record = _record(**bad)
    path = tmp_path / "bad.json"
    _write_doc(path, good[:2] + [record] + good[2:])
    with pytest.raises(AnnotationImportError) as err:
        import_annotations(store, path)
    error = err.value
    assert (error.record, error.field) == (2, field)
    assert reason in error.reason
    message = str(error)
    assert str(path) in message and "annotations[2]" in message and f": {field}: " in message
    if field != "id":
        assert error.record_id == record["id"] and record["id"] in message
    assert len(store) == 0


def test_a_missing_json_field_is_named(store, tmp_path):
    record = _record()
    del record["exit_price"]
    path = tmp_path / "bad.json"
    _write_doc(path, [to_json_record(annotations()[1]), record])
    with pytest.raises(AnnotationImportError) as err:
        import_annotations(store, path)
    assert (err.value.record, err.value.field, err.value.reason) == (1, "exit_price", "missing")
    assert len(store) == 0


def test_optional_keys_may_be_left_out(tmp_path):
    record = _record(stop=None, target=None)
    for key in ("stop", "target", "ts", "price"):
        del record[key]
    path = tmp_path / "a.json"
    _write_doc(path, [record])
    (trade,) = read_json(path)
    assert trade.stop is None and trade.target is None


@pytest.mark.parametrize(
    "text, field, reason",
    [
        ('{"version": 1, "annotations": [', None, "not valid JSON"),
        ('{"version": 1, "annotations": [{"entry_price": NaN}]}', None, "not valid JSON"),
        ("[]", None, "must be a JSON object"),
        ('{"annotations": []}', "version", "missing"),
        ('{"version": 5, "annotations": []}', "version", "unsupported version 5"),
        ('{"version": 1, "annotations": {}}', "annotations", "must be a list"),
        ('{"version": 1, "annotations": [7]}', "record", "must be an object"),
    ],
)
def test_malformed_json_files(store, tmp_path, text, field, reason):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AnnotationImportError) as err:
        import_annotations(store, path)
    assert err.value.field == field
    assert reason in str(err.value) and str(path) in str(err.value)
    assert len(store) == 0


def test_version_1_files_read_demo_marks_from_their_old_symbols(store, tmp_path):
    """Before annotations named their market, the window filed demo marks as DEMO:<symbol>
    (or kept the demo's own DEMO/... symbol): they come in as demo marks of <symbol>."""
    records = [{k: v for k, v in to_json_record(a).items() if k != "market"}
               for a in annotations()[:3]]
    records[0]["symbol"] = "DEMO:ETH/USDT"
    records[1]["symbol"] = "DEMO/USDT"
    path = tmp_path / "v1.json"
    _write_doc(path, records, version=1)
    first, second, third = read_json(path)
    assert (first.market, first.symbol) == (MarketKind.DEMO, "ETH/USDT")
    assert (second.market, second.symbol) == (MarketKind.DEMO, "DEMO/USDT")
    assert (third.market, third.symbol) == (MarketKind.REAL, "ETH/USDT")
    _write_doc(path, [to_json_record(annotations()[0])], version=1)  # "market" is version 2's
    with pytest.raises(AnnotationImportError, match="market: unknown field"):
        read_json(path)


def test_demo_and_real_marks_stay_apart_in_files(store, fresh, tmp_path):
    demo = dataclasses.replace(annotations()[1], market=MarketKind.DEMO, id=str(uuid.uuid4()))
    store.merge(annotations()[:1] + [demo])
    for name in ("a.json", "a.csv"):
        export_annotations(store, tmp_path / name)
        assert import_annotations(fresh, tmp_path / name, market="demo").selected == 1
        assert fresh.list(market="demo") == [demo] and fresh.list(market="real") == []
        fresh.delete(demo.id)
    csv_path = tmp_path / "plain.csv"
    csv_path.write_text("direction,entry_ts,entry_price,exit_ts,exit_price\n"
                        f"long,{T0},1,{T0 + H},2\n", encoding="utf-8")
    (trade,) = read_csv(csv_path, market="demo", symbol="ETH/USDT", timeframe="1m")
    (real,) = read_csv(csv_path, symbol="ETH/USDT", timeframe="1m")
    assert trade.market is MarketKind.DEMO and real.market is MarketKind.REAL
    assert trade.id != real.id  # the same content on two markets is two trades


def test_an_import_that_would_overlap_a_trade_imports_nothing(store, tmp_path):
    items = annotations()
    store.merge(items)
    clash = Trade(symbol="ETH/USDT", timeframe="1h", direction="short", entry_ts=T0 + H // 2,
                  entry_price=2000.0, exit_ts=T0 + H + H // 2, exit_price=1990.0)
    path = tmp_path / "clash.json"
    write_json([annotations()[3], clash], path)
    with pytest.raises(OverlappingTradesError, match="1h short entered on the") as err:
        import_annotations(store, path)
    assert [(a.id, b.id) for a, b in err.value.pairs] == [(items[0].id, clash.id)]
    assert len(store) == 5 and clash.id not in store


def test_duplicate_ids_in_one_file_are_an_error(store, tmp_path):
    path = tmp_path / "dup.json"
    first = to_json_record(annotations()[1])
    _write_doc(path, [first, dict(first, notes="other")])
    with pytest.raises(AnnotationImportError) as err:
        import_annotations(store, path)
    assert (err.value.record, err.value.field) == (1, "id")
    assert "annotations[0]" in err.value.reason
    assert len(store) == 0


def _write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


MINIMAL = ("direction", "entry_ts", "entry_price", "exit_ts", "exit_price")


@pytest.mark.parametrize(
    "row, field, reason",
    [
        (["long", T0 + 10, 100, T0, 101], "entry_ts", "after exit"),
        (["flat", T0, 100, T0 + 10, 101], "direction", "unknown direction"),
        (["short", T0, 0, T0 + 10, 101], "entry_price", "positive"),
        (["short", T0, 100, T0 + 10, -5], "exit_price", "positive"),
        (["short", T0, "abc", T0 + 10, 5], "entry_price", "must be a number"),
        (["short", T0, 100, "", 5], "exit_ts", "missing"),
    ],
)
def test_a_bad_csv_row_imports_nothing_and_is_named(store, tmp_path, row, field, reason):
    path = tmp_path / "bad.csv"
    _write_csv(path, MINIMAL, [["long", T0, 100, T0 + 5, 101], row])
    with pytest.raises(AnnotationImportError) as err:
        import_annotations(store, path, symbol="ETH/USDT", timeframe="1m")
    assert (err.value.record, err.value.field) == (1, field)
    assert reason in err.value.reason
    assert "line 3" in str(err.value) and str(path) in str(err.value)
    assert len(store) == 0


def test_csv_without_symbol_needs_it_from_the_caller(store, tmp_path):
    path = tmp_path / "plain.csv"
    _write_csv(path, MINIMAL, [["long", T0, 100, T0 + 5, 101], ["short", T0 + 6, 101, T0 + 9, 99]])
    with pytest.raises(AnnotationImportError) as err:
        import_annotations(store, path)
    assert err.value.field == "symbol" and "--symbol" in err.value.reason
    result = import_annotations(store, path, symbol="sol/usdt", timeframe="5m")
    assert result.merge.added == 2
    trades = store.list()
    assert {(t.symbol, t.timeframe) for t in trades} == {("SOL/USDT", "5m")}
    mtime_ms = int(path.stat().st_mtime * 1000)
    assert {t.created_at for t in trades} == {mtime_ms}
    # ids come from the content, so the same file again adds nothing
    again = import_annotations(store, path, symbol="SOL/USDT", timeframe="5m")
    assert again.merge == MergeResult(unchanged=2)
    assert read_csv(path, symbol="SOL/USDT", timeframe="5m")[0].id == trades[0].id


def test_csv_header_problems(store, tmp_path):
    path = tmp_path / "bad.csv"
    _write_csv(path, MINIMAL[:-1], [["long", T0, 100, T0 + 5]])
    with pytest.raises(AnnotationImportError, match="missing column 'exit_price'"):
        import_annotations(store, path, symbol="X", timeframe="1m")
    _write_csv(path, MINIMAL + ("colour",), [["long", T0, 100, T0 + 5, 101, "red"]])
    with pytest.raises(AnnotationImportError, match="unknown column 'colour'"):
        import_annotations(store, path, symbol="X", timeframe="1m")
    path.write_text("", encoding="utf-8")
    with pytest.raises(AnnotationImportError, match="empty file"):
        import_annotations(store, path, symbol="X", timeframe="1m")
    assert len(store) == 0


def test_csv_export_refuses_non_trades_when_written_directly(tmp_path):
    from workstation.annotations.io import write_csv

    with pytest.raises(AnnotationError, match="trades only"):
        write_csv(annotations()[2:3], tmp_path / "x.csv")


def test_format_from_extension(tmp_path):
    assert file_format("a.JSON") == "json"
    assert file_format("a.csv") == "csv"
    assert file_format("a.txt", "csv") == "csv"
    with pytest.raises(AnnotationError, match="--format"):
        file_format(tmp_path / "a.txt")


def test_unreadable_files(store, tmp_path):
    with pytest.raises(AnnotationImportError, match="cannot read"):
        import_annotations(store, tmp_path / "missing.json")
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"version": 1, "annotations": [], "x": "\xe9"}')
    with pytest.raises(AnnotationImportError, match="not UTF-8"):
        import_annotations(store, path)


def excel_csv(lines: list[str]) -> bytes:
    """What Excel's "CSV UTF-8" writes: a BOM, CRLF line ends, and here a blank last line."""
    return b"\xef\xbb\xbf" + "".join(line + "\r\n" for line in [*lines, ""]).encode()


def test_excel_saved_files_import(store, fresh, tmp_path):
    path = tmp_path / "from-excel.csv"
    path.write_bytes(excel_csv([
        "symbol,timeframe,direction,entry_ts,entry_price,exit_ts,exit_price,notes",
        f"ETH/USDT,1m,long,{T0},2000,{T0 + H},2100,\"first, with a comma\"",
        f"ETH/USDT,1m,short,{T0 + 2 * H},2100,{T0 + 3 * H},2050,"]))
    result = import_annotations(store, path)
    assert (result.read, result.merge.added) == (2, 2)
    first, second = sorted(store.list(), key=lambda ann: ann.span)
    assert first.notes == "first, with a comma" and second.notes == ""
    doc = tmp_path / "from-excel.json"
    write_json(annotations(), doc)
    doc.write_bytes(b"\xef\xbb\xbf" + doc.read_bytes().replace(b"\n", b"\r\n"))
    assert import_annotations(fresh, doc).merge.added == len(annotations())
