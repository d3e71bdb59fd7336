"""Drawings in the annotations JSON file (version 4): a ``drawings`` list beside
``annotations``::

    "drawings": [{"id": "<uuid>", "shape": "level" | "trend" | "vertical" | "box" | "measure",
      "market": "real" | "demo", "symbol", "timeframe", "ts1", "price1", "ts2", "price2",
      "locked", "notes", "created_at", "updated_at"}, ...]

Every key must be present (``price1`` is null for a vertical line, ``ts2`` and ``price2`` for a
level and a vertical line); unknown keys are an error. Files before version 4 hold none.
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
