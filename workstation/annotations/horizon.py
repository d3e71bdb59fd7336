"""What a view may show of the trader's marks while a replay clock hides the future.

A mark is seen once the clock has passed the close of its last candle; until then it is held
back whole (an entry whose exit is still hidden would say the move was worth marking).
A ``Horizon`` sorts the marks a view is given into those it shows now and those it holds;
moving the clock forward releases the held marks it has passed. Without a clock (live mode,
no replay) every mark is shown.
"""

from __future__ import annotations

from collections.abc import Iterable

from .model import Annotation


def seen_at(ann: Annotation) -> int:
    """When a mark can be seen in full: the close of its last candle (epoch ms)."""
    return ann.span[1] + ann.timeframe_ms


def seen_by(ann: Annotation, clock: int | None) -> bool:
    return clock is None or seen_at(ann) <= clock


class Horizon:
    """See the module docstring. ``clock`` is the replay clock (None: no replay)."""

    def __init__(self) -> None:
        self.clock: int | None = None
        self._held: dict[str, Annotation] = {}
        self._next: int | None = None  # the earliest ``seen_at`` of the held marks

    def split(self, annotations: Iterable[Annotation]) -> list[Annotation]:
        """Of a view's whole set, those it shows now; the rest are held (replacing any)."""
        self._held = {}
        shown = []
        for ann in annotations:
            if seen_by(ann, self.clock):
                shown.append(ann)
            else:
                self._held[ann.id] = ann
        self._next = min(map(seen_at, self._held.values()), default=None)
        return shown

    def admit(self, ann: Annotation) -> bool:
        """A new or changed mark: True when it may be shown now, else it is held."""
        self._held.pop(ann.id, None)
        if seen_by(ann, self.clock):
            return True
        self._held[ann.id] = ann
        at = seen_at(ann)
        self._next = at if self._next is None else min(self._next, at)
        return False

    def forget(self, ann_id: str) -> None:
        """A deleted mark is held no more."""
        self._held.pop(ann_id, None)

    def set_clock(self, clock: int | None) -> list[Annotation]:
        """Move the clock; returns the held marks it now lets through (a clock moved back
        holds nothing more: the view is given its set again with ``split``)."""
        self.clock = clock
        if self._next is None or (clock is not None and clock < self._next):
            return []
        released = [a for a in self._held.values() if seen_by(a, clock)]
        for ann in released:
            del self._held[ann.id]
        self._next = min(map(seen_at, self._held.values()), default=None)
        return released
