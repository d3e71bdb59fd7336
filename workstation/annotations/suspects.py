"""Likely label errors: the trader's marks that the model, on candles it never trained on,
reads as another class with confidence (confident learning, in our own code).

The input is a held-out probability of every class at every candle (NaN where the candle was
never tested: a walk-forward evaluation tests each candle of its test spans once, with a model
trained only on what came before) and the label each candle was trained on.

- A class's threshold ``t_k`` is the mean probability of ``k`` over the tested candles labelled
  ``k`` (``class_thresholds``): how sure the model is of a class where the class is right, so a
  rare class is not drowned by a common one.
- A candle's confident class is, of the classes whose probability reaches their threshold, the
  most probable; none when no class does (``confident_classes``). A candle is off when its
  confident class is not its label.
- A mark's candles are those its label is set on (``annotations.targets``): a trade's held
  candles (``position``: long or short), a regime region's candles (``regime``); only those
  still carrying the mark's label count (overlapping regions of other regimes are masked).
  A mark is suspect when at least ``min_share`` of its tested candles are off; the model's
  reading is the confident class most of its off candles have. Suspects are ranked by their
  self-confidence, the mean held-out probability of their own label, lowest first.
- Marks tagged ``CHECKED`` (the trader looked and kept them) are not flagged again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

import numpy as np

from ..errors import WorkstationError
from ..timeparse import format_minute
from .model import Annotation, Direction, Region, Trade
from .targets import MASKED, POSITION_NAMES, REGIME_CODES, REGIME_NAMES, candle_span

CHECKED = "checked"  # the tag of a mark the trader kept after it was flagged
MIN_SHARE = 0.5
_ROUNDING = 1e-9  # of a mean of probabilities
HEAD_CLASSES = {"position": POSITION_NAMES, "regime": REGIME_NAMES}


@dataclass(frozen=True)
class Suspect:
    """A mark the held-out model reads otherwise: ``label`` (long, short or a regime) and what
    the model reads confidently instead (``reading``: flat, the other side, another regime),
    on ``off`` of its ``tested`` held-out candles; ``self_confidence`` is the mean held-out
    probability of ``label`` there, ``reading_confidence`` that of ``reading`` on the off
    candles."""

    annotation_id: str
    head: str
    label: str
    reading: str
    tested: int
    off: int
    self_confidence: float
    reading_confidence: float
    start_ts: int
    end_ts: int

    @property
    def share_off(self) -> float:
        return self.off / self.tested

    @property
    def fix_words(self) -> str:
        """What fixing it does (``fixed``)."""
        if self.head == "position":
            return "delete the trade" if self.reading == "flat" else f"make it {self.reading}"
        return f"relabel it {self.reading}"

    def describe(self) -> str:
        """One line: the mark, what the model reads instead, on how many candles, how sure."""
        what = f"{self.label} trade" if self.head == "position" else f"{self.label} region"
        return (f"{what} {format_minute(self.start_ts)} → {format_minute(self.end_ts)}: the "
                f"held-out model reads {self.reading} on {self.off} of {self.tested} candles "
                f"(p({self.label}) {self.self_confidence:.2f}, p({self.reading}) "
                f"{self.reading_confidence:.2f})")

    def to_dict(self) -> dict:
        return {**asdict(self), "share_off": round(self.share_off, 4)}


@dataclass(frozen=True)
class SuspectReport:
    """The ranked ``suspects`` of one evaluation, beside how many marks were read: ``scored``
    (with a tested candle), ``untested`` (none of its candles in a test span), ``checked``
    (kept by the trader earlier, not read); ``thresholds``: per head, each class's ``t_k``
    (None: no tested candle of that class)."""

    suspects: tuple[Suspect, ...]
    scored: int
    untested: int
    checked: int
    thresholds: dict[str, tuple[float | None, ...]]

    def describe(self) -> str:
        """One line: how many marks were read and how many look wrong."""
        return (f"{len(self.suspects)} of {self.scored} marks read on held-out candles look "
                f"wrong to the model (off on at least half of their candles); {self.untested} "
                f"never tested, {self.checked} kept by you earlier")

    def to_dict(self) -> dict:
        return {"suspects": [s.to_dict() for s in self.suspects], "scored": self.scored,
                "untested": self.untested, "checked": self.checked,
                "thresholds": {h: list(t) for h, t in self.thresholds.items()}}


def _checked_probabilities(labels: np.ndarray, probabilities: np.ndarray, head: str) -> None:
    if probabilities.ndim != 2 or probabilities.shape[1] != len(labels):
        raise WorkstationError(f"{head}: probabilities of shape {probabilities.shape} for "
                               f"{len(labels)} candles: they must be [classes, candles]")


def class_thresholds(labels: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """``t_k`` of every class ``k`` (NaN where no tested candle is labelled ``k``): the mean
    probability of ``k`` over the tested candles (finite probabilities) labelled ``k``."""
    tested = np.isfinite(probabilities).all(axis=0)
    out = np.full(probabilities.shape[0], np.nan)
    for k in range(probabilities.shape[0]):
        mine = tested & (labels == k)
        if mine.any():
            out[k] = float(probabilities[k, mine].mean())
    return out


def confident_classes(probabilities: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Each candle's confident class (``MASKED`` where none reaches its threshold or the
    candle was not tested): the most probable of the classes at or above their ``t_k`` (a
    probability equal to its class's mean reaches it, whatever the rounding of the mean)."""
    bar = np.where(np.isnan(thresholds), np.inf, thresholds - _ROUNDING)[:, None]
    reached = probabilities >= bar
    scores = np.where(reached, probabilities, -np.inf)
    best = np.argmax(scores, axis=0)
    return np.where(reached.any(axis=0), best, MASKED).astype(np.int64)


def _mark_candles(mark: Annotation, closes: np.ndarray) -> tuple[str, int, slice] | None:
    """The head, label code and candles (by index) a mark sets, or None (not a label)."""
    if isinstance(mark, Trade):
        start, end = mark.held
        code = 1 if mark.direction is Direction.LONG else 2
        return "position", code, slice(int(np.searchsorted(closes, start, side="left")),
                                       int(np.searchsorted(closes, end, side="left")))
    if isinstance(mark, Region) and mark.label in REGIME_CODES:
        start, end = candle_span(mark)
        return "regime", REGIME_CODES[mark.label], slice(
            int(np.searchsorted(closes, start, side="right")),
            int(np.searchsorted(closes, end, side="right")))
    return None


def likely_label_errors(marks: Iterable[Annotation], closes: np.ndarray,
                        heads: Mapping[str, tuple[np.ndarray, np.ndarray]], *,
                        min_share: float = MIN_SHARE) -> SuspectReport:
    """The suspects among ``marks`` (see the module docstring). ``closes``: each candle's close
    time (epoch ms, increasing); ``heads``: head name (``position``, ``regime``) to its labels
    (int, ``MASKED`` where none) and held-out probabilities (``[classes, candles]``, NaN where
    not tested). A head missing from ``heads`` leaves its marks unscored (untested)."""
    if not 0 < min_share <= 1:
        raise WorkstationError(f"min_share must be in (0, 1], got {min_share}")
    closes = np.asarray(closes, dtype=np.int64)
    read: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    for head, (labels, probabilities) in heads.items():
        labels, probabilities = np.asarray(labels), np.asarray(probabilities, dtype=float)
        _checked_probabilities(labels, probabilities, head)
        if len(labels) != len(closes):
            raise WorkstationError(f"{head}: {len(labels)} labels for {len(closes)} candles")
        thresholds = class_thresholds(labels, probabilities)
        read[head] = (labels, probabilities, thresholds,
                      confident_classes(probabilities, thresholds))
    suspects: list[Suspect] = []
    scored = untested = checked = 0
    for mark in marks:
        where = _mark_candles(mark, closes)
        if where is None:
            continue
        if CHECKED in mark.tags:
            checked += 1
            continue
        head, code, span = where
        if head not in read:
            untested += 1
            continue
        labels, probabilities, _, confident = read[head]
        mine = np.flatnonzero((labels[span] == code)
                              & np.isfinite(probabilities[:, span]).all(axis=0)) + span.start
        if not len(mine):
            untested += 1
            continue
        scored += 1
        off = mine[(confident[mine] != code) & (confident[mine] != MASKED)]
        if len(off) < min_share * len(mine):
            continue
        reading = int(np.bincount(confident[off]).argmax())
        names = HEAD_CLASSES[head]
        suspects.append(Suspect(
            mark.id, head, names[code], names[reading], len(mine), len(off),
            float(probabilities[code, mine].mean()), float(probabilities[reading, off].mean()),
            *mark.span))
    suspects.sort(key=lambda s: (s.self_confidence, s.start_ts))
    return SuspectReport(tuple(suspects), scored, untested, checked,
                         {head: tuple(None if np.isnan(t) else round(float(t), 6)
                                      for t in r[2]) for head, r in read.items()})


def kept(mark: Annotation) -> Annotation:
    """``mark`` as the trader keeps it after a look: tagged ``CHECKED``, not flagged again."""
    return mark.edited(tags=(*mark.tags, CHECKED))


def review_state(suspect: Suspect, mark: Annotation | None) -> str:
    """What became of a suspect, from the store's version of its mark (None: not there):
    "deleted", "kept", "now <label>" (fixed, or relabelled by hand), or "" (as flagged)."""
    if mark is None:
        return "deleted"
    if CHECKED in mark.tags:
        return "kept"
    now = str(mark.direction) if isinstance(mark, Trade) else getattr(mark, "label", "")
    return "" if now == suspect.label else f"now {now}"


def fixed(mark: Annotation, suspect: Suspect) -> Annotation | None:
    """``mark`` as the model reads it: a trade the model reads flat is deleted (None), one it
    reads on the other side turns round (its stop and target, set for the old side, are
    dropped); a region takes the regime the model reads. A fix is an edit: a blind mark
    becomes hindsight (``Annotation.edited``)."""
    if suspect.annotation_id != mark.id:
        raise WorkstationError(f"suspect {suspect.annotation_id} is not mark {mark.id}")
    if isinstance(mark, Trade):
        if suspect.reading == "flat":
            return None
        return mark.edited(direction=Direction(suspect.reading), stop=None, target=None)
    if isinstance(mark, Region):
        return mark.edited(label=suspect.reading)
    raise WorkstationError(f"a {mark.kind} is not a label: nothing to fix")


class HeldOutProbabilities:
    """The trader heads' held-out probabilities over a series of ``candles``, filled test span
    by test span (``add``, as ``ml.evaluation.evaluate``'s ``on_held_out`` hands them on);
    NaN where a candle was never tested."""

    def __init__(self, candles: int):
        self.candles = candles
        self.probabilities: dict[str, np.ndarray] = {}

    def add(self, span: tuple[int, int], probabilities: Mapping[str, np.ndarray]) -> None:
        start, stop = span
        for head, p in probabilities.items():
            if p.ndim != 2 or p.shape[1] != stop - start:
                raise WorkstationError(f"{head}: probabilities of shape {p.shape} for the "
                                       f"{stop - start} candles of span {start}..{stop}")
            into = self.probabilities.setdefault(head, np.full((p.shape[0], self.candles),
                                                               np.nan))
            into[:, start:stop] = p

    def heads(self, labels: Mapping[str, np.ndarray]
              ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """``likely_label_errors``'s ``heads``: each head's ``labels`` beside its probabilities."""
        return {head: (labels[head], p) for head, p in self.probabilities.items()}
