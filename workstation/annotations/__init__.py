"""Trades, regions and point notes a trader marks on the chart (no Qt here).

``model``: the annotation values; ``store``: the SQLite ``AnnotationStore``; ``io``: JSON and
CSV import/export; ``targets``: per-candle training targets from annotations.
"""

from .model import (
    Annotation,
    AnnotationError,
    AnnotationValidationError,
    Direction,
    Kind,
    Point,
    Region,
    RegionLabel,
    Source,
    Trade,
)
from .store import AnnotationNotFound, AnnotationStore, AnnotationStoreError, StoreChange

__all__ = [
    "Annotation", "AnnotationError", "AnnotationNotFound", "AnnotationStore",
    "AnnotationStoreError", "AnnotationValidationError", "Direction", "Kind", "Point", "Region",
    "RegionLabel", "Source", "StoreChange", "Trade",
]
