"""A candle file's own timeframe, told from its timestamps, and its candles on a chosen one.

The timeframe is the most common spacing between consecutive candles (gaps, being rarer, do
not change it). A file at a longer timeframe that is a whole multiple of its own is resampled
(``Candles.resample``); a shorter one, or one that is not a multiple, is refused in one line
naming both, so a 1h file is never taken for 1m candles.
"""

from __future__ import annotations

import numpy as np

from ..display import step
from ..errors import WorkstationError
from .candles import Candles
from .timeframes import ALL, SUPPORTED, Timeframe

MIN_CANDLES = 3  # two spacings: one alone may be a gap


class FileTimeframeError(WorkstationError):
    """A file whose timeframe cannot be told from its timestamps."""


class TimeframeMismatch(FileTimeframeError):
    """A file opened at a timeframe its candles cannot give."""


def infer_timeframe(ts: np.ndarray, name: str) -> Timeframe:
    """The timeframe of sorted, distinct open times ``ts`` (ms) of the file ``name``."""
    if len(ts) < MIN_CANDLES:
        raise FileTimeframeError(f"{name} holds {len(ts)} candle{'s' if len(ts) != 1 else ''}: "
                                 f"too few to tell its timeframe ({MIN_CANDLES} or more needed)")
    gaps = np.diff(ts)
    for guess in (int(gaps[0]), int(gaps[len(gaps) // 2])):  # a step most spacings have
        if 2 * np.count_nonzero(gaps == guess) > len(gaps):  # is the most common, untied,
            known = [tf for tf in ALL if tf.ms == guess]  # found without sorting them all
            if known:
                return known[0]
    spacings, counts = np.unique(gaps, return_counts=True)
    order = np.argsort(-counts, kind="stable")  # the most common first; ties: shortest first
    best, count = int(spacings[order[0]]), int(counts[order[0]])
    if count < 2:
        raise FileTimeframeError(f"{name} has no clear step: no two of its candles are the "
                                 f"same time apart")
    if len(order) > 1 and int(counts[order[1]]) == count:
        raise FileTimeframeError(f"{name} has no clear step: its candles are {step(best)} and "
                                 f"{step(int(spacings[order[1]]))} apart equally often")
    for tf in ALL:
        if tf.ms == best:
            return tf
    raise FileTimeframeError(f"{name}: its candles are {step(best)} apart, not a supported "
                             f"timeframe ({', '.join(SUPPORTED)})")


def on_timeframe(candles: Candles, wanted: Timeframe | None, name: str) -> Candles:
    """The file ``name``'s ``candles`` (on its own timeframe) on ``wanted`` (None: its own):
    as they are, resampled to a whole multiple, else ``TimeframeMismatch``."""
    own = candles.timeframe
    if wanted is None or wanted == own:
        return candles
    if wanted.ms > own.ms and wanted.ms % own.ms == 0:
        return candles.resample(wanted)
    longer = [tf for tf in ALL if tf.ms > own.ms]
    fits = [tf.name for tf in longer if tf.ms % own.ms == 0]
    others = ("a longer timeframe" if len(fits) == len(longer) else ", ".join(fits)) \
        if fits else ""
    raise TimeframeMismatch(f"{name} holds {own.name} candles, not {wanted.name}: choose "
                            f"{own.name}" + (f" (or {others}: it is resampled)" if others else ""))


def resampled_note(own: Timeframe, shown: Timeframe) -> str:
    """What a message adds when a file's candles are shown resampled ("" when not)."""
    return "" if own == shown else f" (resampled from the file's {own.name} candles)"
