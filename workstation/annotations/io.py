"""Annotations to and from files: versioned JSON (every kind, every field) and CSV (trades).

JSON, version 4 (``drawings``: ``drawing_io``)::

    {"version": 4, "annotations": [{"id": "<uuid>", "kind": "trade" | "region" | "point",
      "market": "real" | "demo", "symbol", "timeframe", "direction", "entry_ts",
      "entry_price", "exit_ts", "exit_price", "stop", "target", "label", "start_ts",
      "end_ts", "ts", "price", "notes", "tags", "source", "created_at", "updated_at",
      "blind", "decided_at", "unblinded_at"}, ...], "drawings": [...]}

Times are UTC epoch milliseconds. Fields that do not apply to a kind are null: a trade uses
direction, entry_ts/entry_price, exit_ts/exit_price and optional stop/target; a region uses
label, start_ts and end_ts; a point uses ts and an optional price. ``stop``, ``target``, ``ts``
and ``price`` may be left out (they read as null); every other key must be present; notes and
tags may be null (empty). Unknown keys are an error. Version 1 files (before annotations named
their market) have no ``market``: it is read from the symbol as the window wrote it then
(``model.legacy_market``: ``DEMO:<symbol>`` or a DEMO symbol is a demo mark).

Every kind carries how it was made (version 3): ``blind`` (true: marked in blind replay),
``decided_at`` (the replay clock at each decision, a list: a trade's entry and exit, a
region's start and end, a point's one; ``[]`` for a hindsight mark) and ``unblinded_at`` (when
a blind mark's decision was changed: it is then ``blind: false`` and keeps ``decided_at``;
null otherwise). The three may be left out or null, in any version: such a record (every
version 1 and 2 file) imports as a hindsight mark. A blind mark's decisions are each no earlier
than the close of the candle they mark (``model``).

CSV (trades; or drawings, ``drawing_io``: a file holds one or the other), UTF-8, one header
line::

    id,market,symbol,timeframe,direction,entry_ts,entry_price,exit_ts,exit_price,stop,target,notes,tags,source,created_at,updated_at,blind,entry_decided_at,exit_decided_at,unblinded_at

``tags`` are joined by ``;``; an empty cell is null. Only direction, entry_ts, entry_price,
exit_ts and exit_price columns are required: a missing market, symbol or timeframe comes from
the importer's ``market``/``symbol``/``timeframe`` (a file without a market column reads
symbols as version 1 JSON does); source defaults to human; missing created_at/updated_at
default to the file's modification time; a missing id is derived from the trade's content,
so that importing the same file again finds the same records. ``blind`` is ``true`` for a
blind trade and empty otherwise (``false``, ``1`` and ``0`` read too); ``entry_decided_at``
and ``exit_decided_at`` are its ``decided_at`` (both or neither); empty cells, or a file
without these columns, import as hindsight.

Reading is all-or-nothing: the first bad record raises ``AnnotationImportError`` naming the
file, the record (``annotations[i]`` or ``line N``), its id when known, and the field.
Writing goes to a temporary file in the same folder, fsynced, then renamed over the target.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import atomic_write_text
from ..market.series import MarketKind
from .drawing_io import (
    DRAWING_FIELDS,
    drawing_csv_row,
    drawing_from_csv_row,
    drawing_from_record,
    drawing_record,
)
from .drawings import Drawing
from .model import (
    Annotation,
    AnnotationError,
    AnnotationValidationError,
    Kind,
    Trade,
    annotation_class,
    legacy_market,
)
from .store import AnnotationStore, MergeResult

JSON_VERSION = 4  # 3: blind marks (``blind``, ``decided_at``, ``unblinded_at``); 4: drawings
JSON_VERSIONS = (1, 2, 3, 4)  # what this Workstation reads; without the blind keys: hindsight
JSON_FIELDS = (
    "id", "kind", "market", "symbol", "timeframe", "direction", "entry_ts", "entry_price",
    "exit_ts", "exit_price", "stop", "target", "label", "start_ts", "end_ts", "ts", "price",
    "notes", "tags", "source", "created_at", "updated_at", "blind", "decided_at",
    "unblinded_at",
)
_BLIND_FIELDS = ("blind", "decided_at", "unblinded_at")
_JSON_OPTIONAL_KEYS = {"stop", "target", "ts", "price", *_BLIND_FIELDS}
_COMMON_FIELDS = ("id", "market", "symbol", "timeframe", "notes", "tags", "source",
                  "created_at", "updated_at", *_BLIND_FIELDS)
_KIND_FIELDS = {
    Kind.TRADE: ("direction", "entry_ts", "entry_price", "exit_ts", "exit_price", "stop",
                 "target"),
    Kind.REGION: ("label", "start_ts", "end_ts"),
    Kind.POINT: ("ts", "price"),
}
_NULLABLE = {"stop", "target", "price", "notes", "tags", *_BLIND_FIELDS}

CSV_FIELDS = (
    "id", "market", "symbol", "timeframe", "direction", "entry_ts", "entry_price", "exit_ts",
    "exit_price", "stop", "target", "notes", "tags", "source", "created_at", "updated_at",
    "blind", "entry_decided_at", "exit_decided_at", "unblinded_at",
)
_CSV_DECIDED = ("entry_decided_at", "exit_decided_at")  # a trade's ``decided_at``
CSV_REQUIRED = ("direction", "entry_ts", "entry_price", "exit_ts", "exit_price")
# Ids of CSV trades without one: uuid5 of their content in this namespace.
CSV_ID_NAMESPACE = uuid.UUID("6f0d8a52-2d1e-4c59-9a55-7c2b8f1e0a31")
FORMATS = ("json", "csv", "drawings-csv")  # drawings-csv: a CSV file of drawings


class AnnotationImportError(AnnotationError):
    """A file that cannot be imported. ``record`` is the 0-based record index (None for the
    file as a whole), ``record_id`` its id when known, ``field`` the offending field."""

    def __init__(self, path, reason: str, *, record: int | None = None, where: str | None = None,
                 record_id: str | None = None, field: str | None = None):
        self.path = Path(path)
        self.record = record
        self.record_id = record_id
        self.field = field
        self.reason = reason
        parts = [str(path)]
        if where:
            parts.append(where + (f" (id {record_id})" if record_id else ""))
        if field:
            parts.append(field)
        super().__init__(": ".join(parts + [reason]))


@dataclass(frozen=True)
class ImportResult:
    """``read``: valid records in the file; ``annotations``: those matching the
    symbol/timeframe filter; ``merge``: what the store did with them."""

    read: int
    annotations: tuple[Annotation, ...]
    merge: MergeResult
    drawings: tuple[int, int, int] = (0, 0, 0)  # drawings added, updated, left as they were

    @property
    def selected(self) -> int:
        return len(self.annotations)


@dataclass(frozen=True)
class ExportResult:
    """``written`` records; ``skipped``: regions and points a CSV file cannot hold;
    ``drawings`` written beside them (JSON only)."""

    written: int
    skipped: int = 0
    drawings: int = 0


# -- JSON ----------------------------------------------------------------------------------

def to_json_record(ann: Annotation) -> dict:
    """The version-3 JSON object of one annotation (all keys, null where not applicable)."""
    record = dict.fromkeys(JSON_FIELDS)
    record["kind"] = ann.kind.value
    for name in _COMMON_FIELDS + _KIND_FIELDS[ann.kind]:
        value = getattr(ann, name)
        record[name] = value.value if hasattr(value, "value") else value
    record["tags"] = list(ann.tags)
    record["decided_at"] = list(ann.decided_at)
    return record


def from_json_record(record, version: int = JSON_VERSION) -> Annotation:
    """One annotation from its JSON object of file ``version``; ``AnnotationValidationError``
    names a bad field."""
    if not isinstance(record, dict):
        raise AnnotationValidationError("record", f"must be an object, got {type(record).__name__}")
    fields = JSON_FIELDS if version >= 2 else tuple(k for k in JSON_FIELDS if k != "market")
    for key in record:
        if key not in fields:
            raise AnnotationValidationError(str(key), "unknown field")
    for key in fields:
        if key not in record and key not in _JSON_OPTIONAL_KEYS:
            raise AnnotationValidationError(key, "missing")
    if version < 2:
        record = dict(record, market=None)
        if isinstance(record["symbol"], str):
            record["market"], record["symbol"] = legacy_market(record["symbol"])
    if record["kind"] is None:
        raise AnnotationValidationError("kind", "missing")
    cls = annotation_class(record["kind"])
    own = _COMMON_FIELDS + _KIND_FIELDS[cls.kind]
    for key in JSON_FIELDS:
        value = record.get(key)
        if key in own and value is None and key not in _NULLABLE:
            raise AnnotationValidationError(key, f"required for a {cls.kind.value}, got null")
        if key not in own and key != "kind" and value is not None:
            raise AnnotationValidationError(key, f"must be null for a {cls.kind.value}")
    values = {key: record.get(key) for key in own}
    values["notes"] = values["notes"] if values["notes"] is not None else ""
    values["tags"] = values["tags"] if values["tags"] is not None else ()
    values["blind"] = values["blind"] if values["blind"] is not None else False
    values["decided_at"] = values["decided_at"] if values["decided_at"] is not None else ()
    return cls(**values)


def write_json(annotations: Iterable[Annotation], path,
               drawings: Iterable[Drawing] = ()) -> int:
    """Write a JSON file of ``JSON_VERSION``, one record per line, the ``drawings`` after the
    annotations; returns how many annotations."""
    def body(records) -> str:
        lines = [json.dumps(r, ensure_ascii=False, allow_nan=False) for r in records]
        return ",\n".join(lines) + ("\n" if lines else "")

    annotations = list(annotations)
    text = (f'{{"version": {JSON_VERSION}, "annotations": [\n'
            f'{body(to_json_record(a) for a in annotations)}], "drawings": [\n'
            f'{body(drawing_record(d) for d in drawings)}]}}\n')
    atomic_write_text(Path(path), text)
    return len(annotations)


def read_json(path) -> list[Annotation]:
    """Every annotation in a JSON file, or ``AnnotationImportError`` and none."""
    return read_document(path)[0]


def read_document(path) -> tuple[list[Annotation], list[Drawing]]:
    """Every annotation and drawing in a JSON file, or ``AnnotationImportError`` and none."""
    path = Path(path)
    text = _read_text(path)
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        line, column, field = _too_deep(text)
        raise AnnotationImportError(
            path, f"nested deeper than {_DEPTH_LIMIT} levels (an annotations file is "
            f"{_DEPTH_NEEDED} deep)", where=f"line {line} column {column}", field=field,
        ) from None
    except json.JSONDecodeError as exc:
        raise AnnotationImportError(
            path, f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from exc
    except ValueError as exc:
        raise AnnotationImportError(path, f"not valid JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise AnnotationImportError(path, "must be a JSON object with version and annotations")
    if "version" not in doc:
        raise AnnotationImportError(path, "missing", field="version")
    version = doc["version"]
    if version not in JSON_VERSIONS or isinstance(version, bool):
        readable = " and ".join(str(v) for v in JSON_VERSIONS)
        raise AnnotationImportError(
            path, f"unsupported version {version!r} (this Workstation reads {readable})",
            field="version")
    annotations = _records(path, doc.get("annotations"), "annotations",
                           lambda record: from_json_record(record, version))
    return annotations, _records(path, doc.get("drawings", []), "drawings",
                                 drawing_from_record)


def _records(path: Path, records, key: str, parse) -> list:
    """Every record of the list ``key`` read by ``parse``, or ``AnnotationImportError``
    naming the first bad one (or the second of two with one id) and none."""
    if not isinstance(records, list):
        raise AnnotationImportError(path, "must be a list", field=key)
    out: list = []
    seen: dict[str, int] = {}
    for index, record in enumerate(records):
        where = f"{key}[{index}]"
        record_id = record.get("id") if isinstance(record, dict) else None
        record_id = record_id if isinstance(record_id, str) else None
        try:
            value = parse(record)
        except AnnotationValidationError as exc:
            raise AnnotationImportError(path, exc.reason, record=index, where=where,
                                        record_id=record_id, field=exc.field) from exc
        if value.id in seen:
            raise AnnotationImportError(
                path, f"same id as {key}[{seen[value.id]}]", record=index, where=where,
                record_id=value.id, field="id")
        seen[value.id] = index
        out.append(value)
    return out


_DEPTH_LIMIT = 100
_DEPTH_NEEDED = 4  # {"annotations": [{"tags": [...]}]}
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"\s*:?|[\[\]{},]')


def _too_deep(text: str) -> tuple[int, int, str]:
    """Line, column and path (``annotations[0].tags[0]...``) where nesting passes
    ``_DEPTH_LIMIT``; the scan stops there, so a huge file costs little."""
    stack: list[list] = []  # per open container: its bracket and the current key or index
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token[0] == '"':
            if token.endswith(":") and stack and stack[-1][0] == "{":
                stack[-1][1] = json.loads(token[: token.rindex('"') + 1])
        elif token in "[{":
            stack.append([token, 0 if token == "[" else ""])
            if len(stack) > _DEPTH_LIMIT:
                position = match.start()
                line = text.count("\n", 0, position) + 1
                column = position - text.rfind("\n", 0, position)
                steps = [f"[{at}]" if bracket == "[" else f".{at}"
                         for bracket, at in stack[:_DEPTH_NEEDED + 1]]
                return line, column, "".join(steps).lstrip(".") + "..."
        elif token in "]}":
            if stack:
                stack.pop()
        elif stack and stack[-1][0] == "[":
            stack[-1][1] += 1
    return 1, 1, "document"


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


# -- CSV -----------------------------------------------------------------------------------

_CSV_FIELD_LIMIT = 2**31 - 1  # the largest a C long holds everywhere

def _csv_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value.value if hasattr(value, "value") else value)


def _trade_row(trade) -> list[str]:
    if not isinstance(trade, Trade):
        raise AnnotationError(f"a CSV file holds trades only, not a {trade.kind.value}")
    row = {name: getattr(trade, name) for name in CSV_FIELDS
           if name not in ("tags", "blind", *_CSV_DECIDED)}
    row["tags"] = ";".join(trade.tags)
    row["blind"] = "true" if trade.blind else ""
    row.update(zip(_CSV_DECIDED, trade.decided_at or (None, None)))
    return [_csv_cell(row[name]) for name in CSV_FIELDS]


def _write_rows(path, header: tuple[str, ...], rows: Iterable[list[str]]) -> int:
    """Write a CSV file of ``header`` and ``rows`` atomically; returns how many rows."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    count = 0
    for row in rows:
        writer.writerow(row)
        count += 1
    atomic_write_text(Path(path), buffer.getvalue())
    return count


def write_csv(trades: Iterable[Trade], path) -> int:
    """Write trades as CSV (see the module docstring); returns the number written."""
    return _write_rows(path, CSV_FIELDS, (_trade_row(t) for t in trades))


def write_drawings_csv(drawings: Iterable[Drawing], path) -> int:
    """Write drawings as CSV (``drawing_io``); returns the number written."""
    return _write_rows(path, DRAWING_FIELDS, (drawing_csv_row(d) for d in drawings))


def _csv_drawings(path: Path, reader: csv.DictReader) -> list[Drawing]:
    header = tuple(reader.fieldnames or ())
    if header != DRAWING_FIELDS:
        raise AnnotationImportError(path, f"a drawings file has the columns "
                                          f"{','.join(DRAWING_FIELDS)}", where="line 1",
                                    field="header")
    return _csv_rows(path, reader, drawing_from_csv_row, "id")


def _csv_int(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is not None and value.is_integer():
            return int(value)
        raise AnnotationValidationError(
            name, f"must be an integer time in epoch milliseconds, got {text!r}") from None


def _csv_float(text: str, name: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise AnnotationValidationError(name, f"must be a number, got {text!r}") from None


def _csv_blind(cells: dict[str, str]) -> dict[str, Any]:
    """The blind fields of a CSV row (empty cells, or no such columns: hindsight)."""
    flag = cells["blind"].lower()
    if flag not in ("", "true", "false", "1", "0"):
        raise AnnotationValidationError("blind", f"must be true or false, got {cells['blind']!r}")
    decided = tuple(_csv_int(cells[name], name) for name in _CSV_DECIDED if cells[name])
    if len(decided) == 1:
        raise AnnotationValidationError(
            "exit_decided_at" if cells["entry_decided_at"] else "entry_decided_at",
            "give both entry_decided_at and exit_decided_at, or neither")
    unblinded = cells["unblinded_at"]
    return {"blind": flag in ("true", "1"), "decided_at": decided,
            "unblinded_at": _csv_int(unblinded, "unblinded_at") if unblinded else None}


def _csv_trade(row: dict, *, market: MarketKind | None, symbol: str | None,
               timeframe: str | None, default_time: int) -> Trade:
    cells = {name: (row.get(name) or "").strip() for name in CSV_FIELDS}
    cells["notes"] = row.get("notes") or ""
    for name in CSV_REQUIRED:
        if not cells[name]:
            raise AnnotationValidationError(name, "missing")
    for name, option in (("symbol", symbol), ("timeframe", timeframe)):
        if not cells[name]:
            if option is None:
                raise AnnotationValidationError(
                    name, f"missing; give a {name} column or --{name}")
            cells[name] = str(option)
    row_market = cells["market"]
    if not row_market:  # a symbol written the old way says demo; else the importer's market
        legacy, legacy_symbol = legacy_market(cells["symbol"])
        if market is None or legacy is MarketKind.DEMO:
            row_market, cells["symbol"] = legacy.value, legacy_symbol
        else:
            row_market = market.value
    values: dict[str, Any] = {
        "market": row_market,
        "symbol": cells["symbol"],
        "timeframe": cells["timeframe"],
        "direction": cells["direction"],
        "entry_ts": _csv_int(cells["entry_ts"], "entry_ts"),
        "entry_price": _csv_float(cells["entry_price"], "entry_price"),
        "exit_ts": _csv_int(cells["exit_ts"], "exit_ts"),
        "exit_price": _csv_float(cells["exit_price"], "exit_price"),
        "stop": _csv_float(cells["stop"], "stop") if cells["stop"] else None,
        "target": _csv_float(cells["target"], "target") if cells["target"] else None,
        "notes": cells["notes"],
        "tags": [tag for tag in cells["tags"].split(";") if tag.strip()],
    }
    if cells["source"]:
        values["source"] = cells["source"]
    created = _csv_int(cells["created_at"], "created_at") if cells["created_at"] else None
    updated = _csv_int(cells["updated_at"], "updated_at") if cells["updated_at"] else None
    if created is None:
        created = default_time if updated is None else min(default_time, updated)
    values["created_at"] = created
    values["updated_at"] = updated
    values.update(_csv_blind(cells))
    if cells["id"]:
        return Trade(**values, id=cells["id"])
    trade = Trade(**values)
    content = "|".join(str(x) for x in (trade.symbol, trade.timeframe, trade.direction.value,
                                        trade.entry_ts, repr(trade.entry_price), trade.exit_ts,
                                        repr(trade.exit_price)))
    if trade.market is MarketKind.DEMO:  # real trades keep the ids they always had
        content = f"demo|{content}"
    return dataclasses.replace(trade, id=str(uuid.uuid5(CSV_ID_NAMESPACE, content)))


def read_csv(path, *, market: MarketKind | str | None = None, symbol: str | None = None,
             timeframe: str | None = None) -> list[Trade]:
    """Every trade in a CSV file, or ``AnnotationImportError`` and none.

    ``market``/``symbol``/``timeframe`` fill in rows (or files) without them.
    """
    trades, drawings = read_csv_document(path, market=market, symbol=symbol,
                                         timeframe=timeframe)
    if drawings:
        raise AnnotationImportError(path, "this CSV file holds drawings, not trades",
                                    where="line 1", field="header")
    return trades


def read_csv_document(path, *, market: MarketKind | str | None = None,
                      symbol: str | None = None, timeframe: str | None = None
                      ) -> tuple[list[Trade], list[Drawing]]:
    """A CSV file's trades, or its drawings (a header that starts ``id,shape``), or
    ``AnnotationImportError`` and none."""
    market = MarketKind(market) if market is not None else None
    path = Path(path)
    text = _read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if csv.field_size_limit() < _CSV_FIELD_LIMIT:  # notes of any length import back
        csv.field_size_limit(_CSV_FIELD_LIMIT)
    if tuple(reader.fieldnames or ())[:2] == DRAWING_FIELDS[:2]:
        return [], _csv_drawings(path, reader)
    return _csv_trades(path, reader, market=market, symbol=symbol, timeframe=timeframe), []


def _csv_trades(path: Path, reader: csv.DictReader, *, market: MarketKind | None,
                symbol: str | None, timeframe: str | None) -> list[Trade]:
    default_time = int(path.stat().st_mtime * 1000)
    header = reader.fieldnames
    if not header:
        raise AnnotationImportError(path, "empty file; expected a header line", where="line 1",
                                    field="header")
    for name in header:
        if name not in CSV_FIELDS:
            raise AnnotationImportError(
                path, f"unknown column {name!r}; columns are {','.join(CSV_FIELDS)}",
                where="line 1", field="header")
    for name in CSV_REQUIRED:
        if name not in header:
            raise AnnotationImportError(path, f"missing column {name!r}", where="line 1",
                                        field="header")
    return _csv_rows(path, reader, lambda row: _csv_trade(
        row, market=market, symbol=symbol, timeframe=timeframe, default_time=default_time),
        "trade")


def _csv_rows(path: Path, reader: csv.DictReader, parse, same_what: str) -> list:
    """Every row of ``reader`` as ``parse`` makes it, all or none: the first bad row, or a
    record met twice (by id; ``same_what`` names a record that came without one), raises
    ``AnnotationImportError`` naming its line."""
    records: list = []
    seen: dict[str, int] = {}
    for index, row in enumerate(reader):
        where = f"line {reader.line_num}"
        record_id = (row.get("id") or "").strip() or None
        if None in row:
            raise AnnotationImportError(path, "more cells than header columns", record=index,
                                        where=where, record_id=record_id, field="row")
        try:
            record = parse(row)
        except AnnotationValidationError as exc:
            raise AnnotationImportError(path, exc.reason, record=index, where=where,
                                        record_id=record_id, field=exc.field) from exc
        if record.id in seen:
            same = "id" if record_id else same_what
            raise AnnotationImportError(path, f"same {same} as line {seen[record.id]}",
                                        record=index, where=where, record_id=record.id,
                                        field="id")
        seen[record.id] = reader.line_num
        records.append(record)
    return records


# -- files and the store -------------------------------------------------------------------

def file_format(path, format: str | None = None) -> str:
    """``format`` if given, else ``json``/``csv`` from the file's extension."""
    if format is not None:
        if format not in FORMATS:
            raise AnnotationError(f"unknown format {format!r}; use {', '.join(FORMATS)}")
        return format
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise AnnotationError(
            f"cannot tell the format of {path} from its extension; use --format json or csv")
    return suffix


def export_annotations(store: AnnotationStore, path, *, market: MarketKind | str | None = None,
                       symbol: str | None = None, timeframe: str | None = None,
                       format: str | None = None) -> ExportResult:
    """Write the store's annotations (optionally of one market kind, symbol, timeframe) to
    ``path``."""
    annotations = store.list(market=market, symbol=symbol, timeframe=timeframe)
    chosen = file_format(path, format)
    if chosen != "csv":
        drawings = _selected(store.drawings.list(), market, symbol, timeframe)
        if chosen == "drawings-csv":
            return ExportResult(0, drawings=write_drawings_csv(drawings, path))
        return ExportResult(write_json(annotations, path, drawings), drawings=len(drawings))
    trades = [ann for ann in annotations if isinstance(ann, Trade)]
    return ExportResult(write_csv(trades, path), len(annotations) - len(trades))


def import_annotations(store: AnnotationStore, path, *, market: MarketKind | str | None = None,
                       symbol: str | None = None, timeframe: str | None = None,
                       format: str | None = None) -> ImportResult:
    """Read ``path`` (all or nothing) and merge it into the store in one transaction; trades
    that would overlap others of their market refuse the whole file (``overlap``).

    ``market``/``symbol``/``timeframe`` select which records to import; CSV rows without them
    get them. Records are matched by id, so importing the same file twice adds nothing.
    """
    market = MarketKind(market) if market is not None else None
    annotations: list[Annotation] = []
    drawings: list[Drawing] = []
    if file_format(path, format) == "json":
        annotations, drawings = read_document(path)
    else:
        trades, drawings = read_csv_document(path, market=market, symbol=symbol,
                                             timeframe=timeframe)
        annotations += trades
    selected = _selected(annotations, market, symbol, timeframe)
    merged = store.merge(selected)
    return ImportResult(len(annotations), tuple(selected), merged,
                        store.drawings.merge(_selected(drawings, market, symbol, timeframe)))


def _selected(records, market, symbol, timeframe) -> list:
    """The marks or drawings of ``market`` / ``symbol`` / ``timeframe`` (None: any)."""
    market = MarketKind(market) if market is not None else None
    wanted_symbol = symbol.strip().upper() if symbol is not None else None
    return [r for r in records
            if (market is None or r.market is market)
            and (wanted_symbol is None or r.symbol == wanted_symbol)
            and (timeframe is None or r.timeframe == str(timeframe))]


def _read_text(path: Path) -> str:
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            return handle.read()
    except UnicodeDecodeError as exc:
        raise AnnotationImportError(
            path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise AnnotationImportError(path, f"cannot read it ({exc.strerror or exc})") from exc
