"""The position head's entries and exits as events, scored on held-out spans (numpy only).

Events. A position series (``targets.POSITION_CLASSES`` per candle, ``MASKED`` where there is
none) *enters* at candle ``i`` when it is long or short there and was not the same at ``i - 1``
(flat, the other side, or no position: an unreviewed candle); it *exits* at ``i`` when it was
long or short at ``i - 1`` and is flat or the other side at ``i`` (a reversal is an exit and an
entry; a trade whose next candle is unreviewed has no exit seen). The span's first candle is
neither: what came before it is not in the span. An event's side is the position entered, or
the one left. The trader's events come from the true positions, the model's from its predicted
ones (the first seed's model, as ``HeadScore.transitions``), both kept only on the candles where
both exist: the two are judged on the same candles.

Matching. A trader's event is *found* when the model has an event of the same kind and side
within ``window`` candles of it (``EVENT_WINDOW``, ``scoring.TRANSITION_WINDOW``), a model's
event is *made* when the trader has one that near: recall = found / trader's events, precision
= made / model's events (detection within a tolerance, not one-to-one pairing). A found event's
timing error is the offset of its nearest such model event, model minus trader in candles (of
two equally near, the earlier); ``timing`` and ``abs_timing`` are the medians over the found
events of it and of its absolute value.

Random baseline. ``RANDOM_DRAWS`` times (seeded), as many events as the model made are put on
distinct candles drawn uniformly among the span's judged candles (all but the first), each
long with the model's own share of long events, else short; its recall and precision are the
expectations over the draws (kept per UTC day for the interval).

Interval. Each margin (model minus random, of recall and of precision) gets a 95 % percentile
interval from a stationary bootstrap of the UTC days (``scoring.stationary_picks``,
``BOOTSTRAP_SAMPLES`` resamples): days are drawn in blocks of random length with mean
``scoring.block_length`` of the daily recall-margin series (found minus random found per day),
one resampling serving both margins. A resample's margin is a ratio of its days' sums: recall
sum(found - random found) / sum(trader's events); precision sum(made) / sum(model's events) -
sum(random made) / sum(random events); resamples whose denominators are 0 are dropped. The
random expectations are fixed per day, so the interval is that of the model's margin over the
days, not of the baseline's draws. Fewer than ``scoring.MIN_DAYS`` days: no interval. These
intervals describe, they give no verdict and take no part in the Holm adjustment.
Fewer than ``MIN_EVENTS`` trader's events of a kind: "too few entries (n)" and no rates.
Pooled over folds: every span's day tallies and timing errors together (a day split between two
spans is one block), each span's random events at its own model's rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..display import NO_DATA, number, percent, points
from .events import EventMatch, TradeEvents
from .scoring import (
    ALPHA,
    BOOTSTRAP_SAMPLES,
    MIN_DAYS,
    TRANSITION_WINDOW,
    block_length,
    day_blocks,
    stationary_picks,
)
from .targets import MASKED, POSITION_CLASSES, trade_starts

EVENT_WINDOW = TRANSITION_WINDOW  # candles a model's event may be off and still meet the trader's
RANDOM_DRAWS = 200
MIN_EVENTS = 5
ENTRIES, EXITS = "entries", "exits"
KINDS = (ENTRIES, EXITS)
LONG, SHORT = POSITION_CLASSES.index("long"), POSITION_CLASSES.index("short")


def events(position: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The candles of ``position``'s ``kind`` events and their sides (see the module
    docstring)."""
    x = np.asarray(position)
    before, now = x[:-1], x[1:]
    if kind == ENTRIES:  # a trade's start (``targets.trade_starts``), past the first candle
        at, side = trade_starts(x)[1:], now
    else:
        at, side = (now != before) & ((before == LONG) | (before == SHORT)) & (now != MASKED), \
            before
    return np.flatnonzero(at) + 1, side[at]


def offsets(at: np.ndarray, side: np.ndarray, other_at: np.ndarray, other_side: np.ndarray,
            window: int) -> np.ndarray:
    """For each event (``at``, ``side``) the offset of the nearest ``other`` event of its side
    (other minus it, the earlier of two equally near; ``other_at`` sorted), NaN when none lies
    within ``window`` candles."""
    out = np.full(len(at), np.nan)
    for s in (LONG, SHORT):
        mine, theirs = side == s, other_at[other_side == s]
        if not theirs.size or not mine.any():
            continue
        q = at[mine]
        j = np.searchsorted(theirs, q)
        before = np.where(j > 0, theirs[np.maximum(j - 1, 0)] - q, -np.inf)
        after = np.where(j < theirs.size, theirs[np.minimum(j, theirs.size - 1)] - q, np.inf)
        near = np.where(-before <= after, before, after)
        out[mine] = np.where(np.abs(near) <= window, near, np.nan)
    return out


@dataclass(frozen=True)
class EventTally:
    """One kind of event on one or more spans, per UTC day (``days``): the trader's events
    (``true``), those found, the model's (``predicted``), those made, the random baseline's
    expectations of the same (``random_*``), and the found events' signed timing ``errors``."""

    kind: str
    window: int
    days: np.ndarray
    true: np.ndarray
    found: np.ndarray
    predicted: np.ndarray
    made: np.ndarray
    random_found: np.ndarray
    random_predicted: np.ndarray
    random_made: np.ndarray
    errors: np.ndarray


_COUNTS = ("true", "found", "predicted", "made", "random_found", "random_predicted",
           "random_made")


def span_tallies(truth: np.ndarray, predicted: np.ndarray, ts: np.ndarray, *,
                 window: int = EVENT_WINDOW, seed: int = 0) -> dict[str, EventTally]:
    """The entries' and exits' tallies of one span: ``truth`` and ``predicted`` position
    classes per candle (``predicted`` may be ``[seeds, candles]``: the first seed's), ``ts``
    the candles' times."""
    model = np.atleast_2d(predicted)[0]
    judged = (truth != MASKED) & (model != MASKED)
    y, p = np.where(judged, truth, MASKED), np.where(judged, model, MASKED)
    days, day_of = np.unique(day_blocks(ts), return_inverse=True)
    rng = np.random.default_rng(seed)
    candidates = np.flatnonzero(judged[1:]) + 1

    def per_day(at: np.ndarray) -> np.ndarray:
        return np.bincount(day_of[at], minlength=days.size).astype(np.float64)

    out = {}
    for kind in KINDS:
        t_at, t_side = events(y, kind)
        p_at, p_side = events(p, kind)
        found = offsets(t_at, t_side, p_at, p_side, window)
        made = ~np.isnan(offsets(p_at, p_side, t_at, t_side, window))
        random = _random_tally(t_at, t_side, p_at.size, float(np.mean(p_side == LONG))
                               if p_side.size else 0.0, candidates, day_of, days.size,
                               window, rng)
        out[kind] = EventTally(kind, window, days, per_day(t_at),
                               per_day(t_at[~np.isnan(found)]), per_day(p_at),
                               per_day(p_at[made]), *random, found[~np.isnan(found)])
    return out


def _random_tally(t_at: np.ndarray, t_side: np.ndarray, count: int, long_share: float,
                  candidates: np.ndarray, day_of: np.ndarray, n_days: int, window: int,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The random baseline's expected found, events and made per day (module docstring)."""
    sums = np.zeros((3, n_days))
    if not count:
        return sums[0], sums[1], sums[2]
    for _ in range(RANDOM_DRAWS):
        at = np.sort(rng.choice(candidates, count, replace=False))
        side = np.where(rng.random(count) < long_share, LONG, SHORT)
        found = ~np.isnan(offsets(t_at, t_side, at, side, window))
        made = ~np.isnan(offsets(at, side, t_at, t_side, window))
        sums += [np.bincount(day_of[a], minlength=n_days)
                 for a in (t_at[found], at, at[made])]
    sums /= RANDOM_DRAWS
    return sums[0], sums[1], sums[2]


def pooled(tallies: Sequence[EventTally]) -> EventTally:
    """One tally of several spans' (of one kind): their days together, a day in two spans
    one day."""
    days, day_of = np.unique(np.concatenate([t.days for t in tallies]), return_inverse=True)
    counts = {name: np.bincount(day_of, weights=np.concatenate(
        [getattr(t, name) for t in tallies]), minlength=days.size) for name in _COUNTS}
    return EventTally(tallies[0].kind, tallies[0].window, days, **counts,
                      errors=np.concatenate([t.errors for t in tallies]))


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def match(tally: EventTally, seed: int = 0) -> EventMatch:
    """The scores of one tally (see the module docstring)."""
    total = {name: float(getattr(tally, name).sum()) for name in _COUNTS}
    true, predicted = int(total["true"]), int(total["predicted"])
    if true < MIN_EVENTS:
        return EventMatch(tally.kind, tally.window, true, predicted)
    recall = total["found"] / true
    random_recall = total["random_found"] / true
    precision = _ratio(total["made"], total["predicted"])
    random_precision = _ratio(total["random_made"], total["random_predicted"])
    precision_margin = None if precision is None or random_precision is None else \
        precision - random_precision
    recall_interval = precision_interval = block = None
    if tally.days.size >= MIN_DAYS:
        block = block_length(tally.found - tally.random_found)
        picks = stationary_picks(tally.days.size, block, BOOTSTRAP_SAMPLES,
                                 np.random.default_rng(seed))
        sums = {name: getattr(tally, name)[picks].sum(axis=1) for name in _COUNTS}
        with np.errstate(divide="ignore", invalid="ignore"):
            recall_interval = percentile_interval(
                (sums["found"] - sums["random_found"]) / sums["true"])
            if precision_margin is not None:
                precision_interval = percentile_interval(
                    sums["made"] / sums["predicted"]
                    - sums["random_made"] / sums["random_predicted"])
    errors = tally.errors
    return EventMatch(
        tally.kind, tally.window, true, predicted, found=int(total["found"]),
        made=int(total["made"]), recall=recall, precision=precision,
        timing=float(np.median(errors)) if errors.size else None,
        abs_timing=float(np.median(np.abs(errors))) if errors.size else None,
        random_recall=random_recall, random_precision=random_precision,
        recall_margin=recall - random_recall, precision_margin=precision_margin,
        recall_interval=recall_interval, precision_interval=precision_interval,
        block_days=block)


def percentile_interval(margins: np.ndarray) -> tuple[float, float] | None:
    """The 95 % percentile interval of the finite ``margins`` (None: none finite)."""
    kept = margins[np.isfinite(margins)]
    if not kept.size:
        return None
    low, high = np.percentile(kept, [100 * ALPHA, 100 * (1 - ALPHA)])
    return float(low), float(high)


def trade_events(spans: Sequence[dict[str, EventTally]], seed: int = 0) -> TradeEvents:
    """Entries and exits scored over ``spans`` (``span_tallies`` of each; several: pooled)."""
    scored = {kind: match(pooled([span[kind] for span in spans]), seed) for kind in KINDS}
    return TradeEvents(scored[ENTRIES], scored[EXITS])


def too_few_text(m: EventMatch) -> str | None:
    """"too few entries (n)" when ``m`` has too few trader's events for rates, else None."""
    return f"too few {m.kind} ({m.true})" if m.recall is None else None


def interval_text(interval: tuple[float, float] | None) -> str:
    """A margin's interval in percentage points ("[+1.20, +3.40]"), or "—"."""
    return NO_DATA if interval is None else \
        f"[{interval[0] * 100:+.2f}, {interval[1] * 100:+.2f}]"


def describe_match(m: EventMatch, names: tuple[str, str] = ("trader", "model")) -> str:
    """One kind of event's scores in words, the same in the CLI and the window; ``names``:
    whose events the truth's and the predicted are."""
    head = f"{m.kind} within {m.window} candles"
    few = too_few_text(m)
    if few is not None:
        return f"{head}: {few}"

    def rate(name: str, value: float | None, random: float | None, margin: float | None,
             interval: tuple[float, float] | None) -> str:
        bar = "" if margin is None else \
            ", too few days for an interval" if interval is None else f" {interval_text(interval)}"
        return f"{name} {percent(value)} (random {percent(random)}, margin {points(margin)}{bar})"

    return (f"{head}: {names[0]} {m.true:,}, {names[1]} {m.predicted:,}; "
            + rate("recall", m.recall, m.random_recall, m.recall_margin, m.recall_interval)
            + "; " + rate("precision", m.precision, m.random_precision, m.precision_margin,
                          m.precision_interval)
            + f"; timing {number(m.timing, '+.1f')} candles (absolute "
              f"{number(m.abs_timing, '.1f')})"
            + ("" if m.block_days is None else f"; blocks of {m.block_days:.1f} days"))
