"""Where a run's spans lie: training, validation, and what ``train_until`` holds out.

A run uses the candles up to ``train_until`` (all of them without it); the rest, from ``gap``
candles after it, is its **held-out** span: never trained on, never validated on, never used
for any choice (what a backtest of the run may call out of sample).

Inside the used candles the validation span is chosen by one rule:

- **without marks** (no candle reviewed): the last ``val_fraction`` of the candles, at least
  one window, after a gap of ``gap`` candles that ends the training span;
- **with marks**: the validation span is carved from the reviewed stretch, so the trader's
  heads are validated on marks and trained on marks: it ends at the last reviewed candle and
  begins where the last ``val_fraction`` of the reviewed candles begin (at least
  ``MIN_VAL_REVIEWED`` of them: a few marks validate on their newest candles; validation need
  not hold a whole window, its predictions read their context from the gap before it).
  Training is every candle up to ``gap`` before it and, ``gap`` candles after it, the
  unreviewed candles that follow (``after``: they train the market heads; no mark lies
  there, as validation ends at the last reviewed candle).

``gap`` (``embargo_of``: ``seq_len`` + the longest look-ahead of any target, the market heads'
horizon or the longest mark, capped) keeps every training window and target out of the
validation span on both sides, and out of the held-out span. ``span_marks`` counts what each
span holds: trades (entries of a long or short position), regions (runs of one regime) and
reviewed candles.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..errors import WorkstationError
from ..timeparse import format_minute
from .config import DEFAULT_MAX_EMBARGO
from .hindsight import longest_reach, marks_longer
from .targets import MASKED, Targets, run_starts, trade_starts

MIN_VAL_REVIEWED = 20   # reviewed candles a validation carved from the marks holds at least
NO_MARKS_RULE = "the validation span is the last {pct} of the candles"
MARKS_RULE = "the validation span is the last {pct} of the reviewed candles"


@dataclass(frozen=True)
class TimeSplit:
    """Half-open candle ranges ``[start, stop)``: ``train`` before ``val`` (``val[0] -
    train[1] == gap``), ``after`` training candles after it (or None), ``held_out`` the
    candles after ``train_until`` (or None); ``rule`` says how validation was placed."""

    train: tuple[int, int]
    val: tuple[int, int]
    gap: int
    after: tuple[int, int] | None = None
    held_out: tuple[int, int] | None = None
    rule: str = ""

    @property
    def train_spans(self) -> tuple[tuple[int, int], ...]:
        """Every span the model trains on, in time order."""
        return (self.train,) if self.after is None else (self.train, self.after)

    @property
    def used(self) -> int:
        """Candles the run may read targets of: everything before the held-out span's gap."""
        return self.val[1] if self.after is None else self.after[1]

    def spans(self) -> dict[str, tuple[int, int]]:
        """Each named span, in time order (``train`` + ``after`` as one training entry
        each)."""
        out = {"train": self.train, "validation": self.val}
        if self.after is not None:
            out["train after validation"] = self.after
        if self.held_out is not None:
            out["held out"] = self.held_out
        return out


def embargo_of(seq_len: int, horizon: int, longest_mark: int = 0, over_cap: int = 0,
               max_embargo: int = DEFAULT_MAX_EMBARGO) -> tuple[int, str]:
    """The embargo (candles) and what set it: a window plus the longest look-ahead of any
    target, the market heads' ``horizon`` or the longest mark (``longest_mark`` candles,
    capped at ``max_embargo``; ``over_cap`` marks are longer than the cap)."""
    mark = min(longest_mark, max_embargo)
    if mark <= horizon:
        reach = f"the {horizon:,}-candle horizon"
        if longest_mark:
            reach += f" (the longest mark, {longest_mark:,} candles, is shorter)"
    else:
        reach = f"the longest mark, {mark:,} candles (capped at {max_embargo:,}"
        longer = "1 mark is longer" if over_cap == 1 else f"{over_cap:,} marks are longer"
        reach += f"; {longer})" if over_cap else ")"
    embargo = seq_len + max(horizon, mark)
    return embargo, f"{embargo:,} candles = {seq_len:,}-candle windows + {reach}"


def until_index(ts: np.ndarray, train_until: int | None) -> int:
    """How many candles a run may use: those that open at or before ``train_until`` (ms)."""
    n = len(ts)
    if train_until is None:
        return n
    limit = int(np.searchsorted(ts, int(train_until), side="right"))
    when = format_minute(int(train_until))
    if limit == 0:
        raise WorkstationError(f"train until {when} is before the first candle "
                               f"({format_minute(int(ts[0]))}): nothing to train on")
    if limit >= n:
        raise WorkstationError(f"train until {when} is at or after the newest candle "
                               f"({format_minute(int(ts[-1]))}): nothing would be held out; "
                               f"choose an earlier date or the cursor's candle")
    return limit


def reviewed_stretch(targets: Targets) -> tuple[int, int] | None:
    """From the first reviewed candle to just after the last (None: no mark)."""
    marked = np.flatnonzero(targets.reviewed())
    return (int(marked[0]), int(marked[-1]) + 1) if marked.size else None


def plan_split(n: int, seq_len: int, val_fraction: float, gap: int, *,
               reviewed: np.ndarray | None = None, limit: int | None = None,
               gap_words: str = "") -> TimeSplit:
    """The spans of a run over ``n`` candles (see the module docstring); ``reviewed`` is True
    per reviewed candle, ``limit`` the candles the run may use (``until_index``),
    ``gap_words`` what set the gap (``embargo_of``; part of the rule's words)."""
    if gap < seq_len:
        raise WorkstationError(f"the gap between training and validation ({gap}) must be at "
                               f"least one window ({seq_len})")
    if not 0.0 < val_fraction < 1.0:
        raise WorkstationError(f"val_fraction must be between 0 and 1, got {val_fraction!r}")
    limit = n if limit is None else int(limit)
    held_out = (limit + gap, n) if limit + gap < n else None
    if limit < n and held_out is None:
        raise WorkstationError(f"train until leaves {n - limit} candles after it, fewer than "
                               f"the gap of {gap} the held-out span begins after")
    pct = f"{val_fraction * 100:g} %"
    marked = (np.flatnonzero(np.asarray(reviewed[:limit], dtype=bool))
              if reviewed is not None else np.zeros(0, dtype=np.int64))
    if not marked.size:
        n_val = max(seq_len, int(round(limit * val_fraction)))
        val = (limit - n_val, limit)
        after = None
        rule = NO_MARKS_RULE.format(pct=pct)
    else:
        end = int(marked[-1]) + 1
        count = min(marked.size, max(MIN_VAL_REVIEWED, int(round(marked.size * val_fraction))))
        val = (int(marked[-count]), end)
        after = (end + gap, limit) if limit - (end + gap) >= seq_len else None
        rule = MARKS_RULE.format(pct=pct)
    train_stop = val[0] - gap
    if train_stop < seq_len:
        need = 2 * seq_len + gap
        where = "" if not marked.size else (
            f" before the validation part of the reviewed candles (they end at candle "
            f"{val[1]:,}; mark trades later in the history, or review more)")
        raise WorkstationError(f"{limit} candles are too few to train with windows of "
                               f"{seq_len}: need at least {need} (a training window, a gap of "
                               f"{gap} and a validation window){where}")
    if gap_words:
        rule += f"; gaps of {gap_words}"
    return TimeSplit(train=(0, train_stop), val=val, gap=gap, after=after,
                     held_out=held_out, rule=rule)


@dataclass(frozen=True)
class SpanMarks:
    """What one span holds of the trader's marks."""

    trades: int
    regions: int
    reviewed: int

    def text(self) -> str:
        return (f"{self.trades:,} trade{'s' * (self.trades != 1)}, {self.regions:,} "
                f"region{'s' * (self.regions != 1)}, {self.reviewed:,} reviewed candles")


def span_marks(targets: Targets, span: tuple[int, int]) -> SpanMarks:
    """The trades, regions and reviewed candles of ``span`` (a trade or region that began
    before it counts where it is seen first inside it)."""
    position = targets.position[slice(*span)]
    return SpanMarks(int(trade_starts(position).sum()),
                     int(run_starts(targets.regime[slice(*span)]).sum()),
                     int(np.count_nonzero(position != MASKED)))


def split_marks(targets: Targets, split: TimeSplit) -> dict[str, SpanMarks]:
    """``span_marks`` of every span of ``split`` (the two training spans as one)."""
    out: dict[str, SpanMarks] = {}
    for name, span in split.spans().items():
        marks = span_marks(targets, span)
        if name == "train after validation":
            first = out["train"]
            out["train"] = SpanMarks(first.trades + marks.trades, first.regions + marks.regions,
                                     first.reviewed + marks.reviewed)
            continue
        out[name] = marks
    return out


def check_marks(marks: dict[str, SpanMarks], split: TimeSplit, ts: np.ndarray
                ) -> tuple[str, ...]:
    """Refuse a run whose training span holds none of the trades there are (one line that
    names the fix); the warnings of a run that may go on (a validation span without
    trades)."""
    total = sum(m.trades for m in marks.values())
    if not total or marks["train"].trades:
        if total and not marks["validation"].trades:
            return (f"the validation span ({span_text(split.val, ts)}) holds no trade, so "
                    f"the position head's validation score measures nothing; mark trades "
                    f"there or review more candles",)
        return ()
    where = [f"{marks['validation'].trades} in validation ({span_text(split.val, ts)})"]
    if "held out" in marks:
        where.append(f"{marks['held out'].trades} held out after train until")
    raise WorkstationError(
        f"none of the {total} trades lies in the training span "
        f"({span_text(split.train, ts)}): {', '.join(where)}; mark trades earlier in the "
        f"history" + (", or train until a later candle" if "held out" in marks else ""))


def span_text(span: tuple[int, int], ts: np.ndarray) -> str:
    """``2024-01-01 00:00 to 2024-02-01 12:00`` (the first and last candle's open times)."""
    return f"{format_minute(int(ts[span[0]]))} to {format_minute(int(ts[span[1] - 1]))}"


def spans_record(split: TimeSplit, marks: dict[str, SpanMarks], ts: np.ndarray) -> dict:
    """Every span of ``split`` as plain data: candle range, first and last open time, and
    what it holds of the marks (the training spans' counts together, under ``train``)."""
    out = {}
    for name, span in split.spans().items():
        counts = marks.get(name)
        out[name] = {"span": list(span), "first_ts": int(ts[span[0]]),
                     "last_ts": int(ts[span[1] - 1]),
                     **({} if counts is None else asdict(counts))}
    return out


def describe_spans(spans: dict) -> list[str]:
    """One line per span of a ``spans_record`` (the CLI and the window say the same):
    ``train: 2024-01-01 00:00 to 2024-03-01 12:00, 120 trades, 4 regions, 9,400 reviewed
    candles``."""
    lines = []
    for name, span in spans.items():
        text = f"{name}: {format_minute(span['first_ts'])} to {format_minute(span['last_ts'])}"
        if "trades" in span:
            text += ", " + SpanMarks(span["trades"], span["regions"], span["reviewed"]).text()
        else:  # the unreviewed candles after validation (counted under train: none)
            text += ", no marks (it trains the market heads)"
        lines.append(text)
    return lines


@dataclass(frozen=True)
class RunSpans:
    """Where a run's spans lie (``split``), what each holds of the marks (``marks``), and
    the warnings it goes on with."""

    split: TimeSplit
    marks: dict[str, SpanMarks]
    warnings: tuple[str, ...]

    def record(self, ts: np.ndarray) -> dict:
        """``spans_record`` of these spans."""
        return spans_record(self.split, self.marks, ts)


def run_spans(targets: Targets, ts: np.ndarray, seq_len: int, horizon: int,
              val_fraction: float, train_until: int | None, *, strict: bool = True
              ) -> RunSpans:
    """A run's spans by the module's rule, with gaps of ``embargo_of`` (a window and the
    longest look-ahead: ``horizon`` or the longest mark, capped at ``DEFAULT_MAX_EMBARGO``);
    a run whose training span holds none of the trades is refused (``check_marks``) unless
    not ``strict``, when the refusal is its warning instead. The trainer's rule, and what the
    window shows before a run starts."""
    gap, gap_words = embargo_of(seq_len, horizon, longest_reach(targets),
                                marks_longer(targets, DEFAULT_MAX_EMBARGO))
    split = plan_split(len(ts), seq_len, val_fraction, gap, reviewed=targets.reviewed(),
                       limit=until_index(ts, train_until), gap_words=gap_words)
    marks = split_marks(targets, split)
    try:
        warnings = check_marks(marks, split, ts)
    except WorkstationError as exc:
        if strict:
            raise
        warnings = (str(exc),)
    return RunSpans(split, marks, warnings)
