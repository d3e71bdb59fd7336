"""How far the trader's labels read ahead, and whether they look like hindsight (numpy only).

A mark is a run of one label on consecutive candles: a trade (``position`` long or short,
from its entry candle to the candle before its exit, which is flat again) or a region
(``regime``). A candle's label reads ahead to the mark's end: its exit for a trade, its last
candle for a region. ``label_reach`` gives, per trader head with labels, the median, the 95th
percentile and the longest of these distances (in candles of the series): the longest is the
look-ahead the walk-forward embargo must cover (``folds``).

The hindsight check (position head): a long entry is an extreme when its close is at or below
every close of the next ``window`` candles (a short's at or above), ``window`` = the median
trade length, at least ``MIN_WINDOW``. Chance is the share of all candles of the same series
that are such a low (for longs) or high (for shorts), weighted by the entries' directions; the
entries are ``hindsight`` when a one-sided binomial test against chance gives p <
``HINDSIGHT_P`` and the rate is at least ``HINDSIGHT_RATIO`` times chance. Closes come from the
targets' log returns (``Targets.next_return_bps``), so the check needs nothing but the targets.
"""

from __future__ import annotations

import math

import numpy as np

from ..display import percent
from .events import LabelReach
from .targets import MASKED, TRADER_HEADS, Targets

MIN_WINDOW = 5
HINDSIGHT_P = 1e-3
HINDSIGHT_RATIO = 2.0
_LONG, _SHORT = 1, 2  # ``targets.POSITION_CLASSES``: flat, long, short


def mark_runs(labels: np.ndarray, head: str) -> tuple[np.ndarray, np.ndarray]:
    """``[start, stop)`` of every mark of ``head`` in its per-candle ``labels``."""
    labels = np.asarray(labels)
    marked = (labels != MASKED) & ((labels == _LONG) | (labels == _SHORT)
                                   if head == "position" else True)
    edges = np.flatnonzero(np.diff(labels) != 0) + 1
    starts = np.concatenate([[0], edges])
    stops = np.concatenate([edges, [len(labels)]])
    keep = marked[starts] if len(labels) else np.zeros(0, dtype=bool)
    return starts[keep], stops[keep]


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    i = np.arange(k, n + 1)
    log_choose = np.array([math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)
                           for j in i])
    log_pmf = log_choose + i * math.log(p) + (n - i) * math.log1p(-p)
    top = log_pmf.max()
    return float(min(1.0, math.exp(top) * np.exp(log_pmf - top).sum()))


def _extremes(log_close: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Per candle (the last ``window`` none): its close is the lowest / highest of itself and
    the next ``window`` closes."""
    n = len(log_close)
    low = np.zeros(n, dtype=bool)
    high = np.zeros(n, dtype=bool)
    if n > window:
        ahead = np.lib.stride_tricks.sliding_window_view(log_close[1:], window)
        low[:n - window] = log_close[:n - window] <= ahead.min(axis=1)
        high[:n - window] = log_close[:n - window] >= ahead.max(axis=1)
    return low, high


def _hindsight(position: np.ndarray, starts: np.ndarray, stops: np.ndarray,
               log_close: np.ndarray) -> dict:
    window = max(MIN_WINDOW, int(np.median(stops - starts)))
    low, high = _extremes(log_close, window)
    checked = starts[starts < len(log_close) - window]
    longs = checked[position[checked] == _LONG]
    shorts = checked[position[checked] == _SHORT]
    entries = len(longs) + len(shorts)
    if not entries:
        return {"window": window}
    last = len(log_close) - window
    chance = (len(longs) * low[:last].mean() + len(shorts) * high[:last].mean()) / entries
    extremes = int(low[longs].sum() + high[shorts].sum())
    p_value = binomial_tail(extremes, entries, float(chance))
    return {"window": window, "entries": entries, "extremes": extremes,
            "chance": float(chance), "p_value": p_value,
            "hindsight": p_value < HINDSIGHT_P and extremes / entries >= HINDSIGHT_RATIO * chance}


def label_reach(targets: Targets) -> tuple[LabelReach, ...]:
    """Per trader head with marks: how far its labels read ahead (see the module docstring)."""
    out = []
    returns = np.nan_to_num(np.asarray(targets.next_return_bps, dtype=np.float64)) / 1e4
    log_close = np.concatenate([[0.0], np.cumsum(returns[:-1])])
    for head in TRADER_HEADS:
        labels = targets.classes(head)
        starts, stops = mark_runs(labels, head)
        if not starts.size:
            continue
        end = stops if head == "position" else stops - 1  # a trade's exit, a region's last
        reach = np.concatenate([e - np.arange(s, t) for s, t, e in zip(starts, stops, end,
                                                                      strict=True)])
        extra = _hindsight(labels, starts, stops, log_close) if head == "position" else {}
        out.append(LabelReach(head, int(starts.size), int(reach.size),
                              float(np.median(reach)), float(np.percentile(reach, 95)),
                              int((end - starts).max()), **extra))
    return tuple(out)


def describe_reach(reach: LabelReach) -> str:
    """One head's reach (and for the position head the hindsight check) in words."""
    text = (f"{reach.head} labels read ahead a median {reach.median:,.0f} candles, 95th "
            f"percentile {reach.p95:,.0f}, longest {reach.longest:,} ({reach.marks:,} marks)")
    if reach.entries and reach.chance is not None:
        share = (f"{percent(reach.extreme_rate, 0)} of entries are the low (long) / high "
                 f"(short) of the next {reach.window} candles, where chance is "
                 f"{percent(reach.chance, 0)} (binomial p {reach.p_value:.1g})")
        text += (f"; labels look like hindsight: {share}" if reach.hindsight
                 else f"; no sign of hindsight: {share}")
    return text


def _reaches(targets: Targets) -> np.ndarray:
    """How far each mark of the trader heads reads ahead from its first candle."""
    out = [np.zeros(0, dtype=np.int64)]
    for head in TRADER_HEADS:
        starts, stops = mark_runs(targets.classes(head), head)
        out.append((stops if head == "position" else stops - 1) - starts)
    return np.concatenate(out)


def marks_longer(targets: Targets, candles: int) -> int:
    """Marks of the trader heads that read further ahead than ``candles``."""
    return int((_reaches(targets) > candles).sum())


def longest_reach(targets: Targets) -> int:
    """The furthest any trader label reads ahead (candles; 0 without marks)."""
    reaches = _reaches(targets)
    return int(reaches.max()) if reaches.size else 0
