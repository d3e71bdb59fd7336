"""Drawings in the annotations JSON file (version 4): a ``drawings`` list beside
``annotations``::

    "drawings": [{"id": "<uuid>", "shape": "level" | "trend" | "vertical" | "box" | "measure",
      "market": "real" | "demo", "symbol", "timeframe", "ts1", "price1", "ts2", "price2",
      "locked", "notes", "created_at", "updated_at"}, ...]

Every key must be present (``price1`` is null for a vertical line, ``ts2`` and ``price2`` for a
level and a vertical line); unknown keys are an error. Files before version 4 hold none.

CSV (drawings only), one header line of the same names in that order, a row per drawing: an
empty cell is null, ``locked`` is ``true`` or empty (``false``, ``1``, ``0`` read too).
``io`` reads a CSV file whose header starts ``id,shape`` as drawings.
"""

from __future__ import annotations

from .drawings import Drawing
from .model import AnnotationValidationError

DRAWING_FIELDS = ("id", "shape", "market", "symbol", "timeframe", "ts1", "price1", "ts2",
                  "price2", "locked", "notes", "created_at", "updated_at")


def drawing_record(d: Drawing) -> dict:
    return {"id": d.id, "shape": d.shape.value, "market": d.market.value, "symbol": d.symbol,
            "timeframe": d.timeframe, "ts1": d.ts1, "price1": d.price1, "ts2": d.ts2,
            "price2": d.price2, "locked": d.locked, "notes": d.notes,
            "created_at": d.created_at, "updated_at": d.updated_at}


_TRUE, _FALSE = ("true", "1"), ("false", "0", "")
_INTS = ("ts1", "ts2", "created_at", "updated_at")
_FLOATS = ("price1", "price2")


def drawing_csv_row(d: Drawing) -> list[str]:
    record = drawing_record(d)
    record["locked"] = "true" if d.locked else ""
    return ["" if record[k] is None else repr(record[k]) if isinstance(record[k], float)
            else str(record[k]) for k in DRAWING_FIELDS]


def drawing_from_csv_row(row: dict[str, str]) -> Drawing:
    """One drawing from a CSV row of text cells; ``AnnotationValidationError`` names a bad
    cell."""
    record: dict = {}
    for name in DRAWING_FIELDS:
        text = (row.get(name) or "").strip()
        if name in _INTS or name in _FLOATS:
            if not text:
                record[name] = None
                continue
            try:
                record[name] = int(text) if name in _INTS else float(text)
            except ValueError:
                kind = "a whole number" if name in _INTS else "a number"
                raise AnnotationValidationError(name, f"must be {kind}, got {text!r}") from None
        elif name == "locked":
            if text.lower() not in _TRUE + _FALSE:
                raise AnnotationValidationError(name, f"must be true or false, got {text!r}")
            record[name] = text.lower() in _TRUE
        else:
            record[name] = row.get(name) or "" if name == "notes" else text
    if record["created_at"] is None:
        raise AnnotationValidationError("created_at", "missing")
    return Drawing(**record)


def drawing_from_record(record) -> Drawing:
    """One drawing from its JSON object; ``AnnotationValidationError`` names a bad field."""
    if not isinstance(record, dict):
        raise AnnotationValidationError("record", f"must be an object, got "
                                                  f"{type(record).__name__}")
    unknown = sorted(set(record) - set(DRAWING_FIELDS))
    if unknown:
        raise AnnotationValidationError(unknown[0], "unknown key")
    missing = [k for k in DRAWING_FIELDS if k not in record]
    if missing:
        raise AnnotationValidationError(missing[0], "missing")
    return Drawing(**record)
