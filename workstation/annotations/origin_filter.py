"""Which of the trader's marks training reads: ``all`` of them, or only the ``blind`` ones
(made in blind replay with the future hidden; hindsight and unblinded marks left out), and
which kind of mark each candle's label came from (``label_origins``, the targets CSV's
``origin``)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..errors import WorkstationError
from ..market.timeframes import Timeframe
from .model import Annotation, Origin
from .targets import DEFAULT_REVIEW_MARGIN, MASKED, trader_targets

MARKS = ("all", "blind")


def check_marks(marks: str) -> str:
    if marks not in MARKS:
        raise WorkstationError(f"marks {marks!r}: use {' or '.join(MARKS)}")
    return marks


def marks_used(annotations: Iterable[Annotation], marks: str) -> list[Annotation]:
    """The marks training reads under ``marks``; ``blind`` with marks but none of them blind
    is refused in one line (training on no marks is not what was asked for)."""
    found = list(annotations)
    if check_marks(marks) == "all" or not found:
        return found
    blind = [a for a in found if a.origin is Origin.BLIND]
    if not blind:
        market = found[0].market_key
        raise WorkstationError(
            f"--marks blind: none of the {len(found):,} marks of {market} are blind; make some "
            f"in blind replay (Ctrl+R) or train on all marks")
    return blind


def label_origins(annotations: Iterable[Annotation], candles_ts: np.ndarray, tf: Timeframe, *,
                  review_margin: int = DEFAULT_REVIEW_MARGIN) -> list[str]:
    """Per candle, where its trader label came from: the origin (``blind``, ``unblinded``,
    ``hindsight``) of the marks that alone give the candle the label all of them give it
    (its position, else its regime), blind first; "" where no mark labels it."""
    found = list(annotations)
    full = trader_targets(found, candles_ts, tf, review_margin=review_margin)
    out = [""] * len(full)
    todo = (full.position != MASKED) | (full.regime != MASKED)
    for origin in (Origin.BLIND, Origin.UNBLINDED, Origin.HINDSIGHT):
        own = [a for a in found if a.origin is origin]
        if not own or not todo.any():
            continue
        alone = trader_targets(own, candles_ts, tf, review_margin=review_margin)
        same = np.where(full.position != MASKED, alone.position == full.position,
                        alone.regime == full.regime)
        for i in np.flatnonzero(todo & same):
            out[i] = origin.value
        todo &= ~same
    return out
