"""The arithmetic of the training curves, free of Qt: TensorBoard's smoothing (``smooth``,
``Smoother``), tick labels (``tick_text``, ``elapsed_text``), the spacing of time ticks
(``time_spacing``), a plotted value in a readout (``value_text``) and a fraction as the
percentage a plot draws (``percent_value``).
"""

from __future__ import annotations

import math

import numpy as np

_TIME_SPACINGS = (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
                  7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400)


def smooth(values, weight: float) -> np.ndarray:
    """TensorBoard's smoothing: an exponential moving average with ``weight`` on the past,
    debiased so that the first points are not pulled towards 0 (weight 0: the values)."""
    out = np.empty(len(values), dtype=np.float64)
    state = Smoother(weight)
    for i, value in enumerate(values):
        out[i] = state.add(float(value))
    return out


class Smoother:
    """``smooth`` one value at a time (what a new point's smoothed value is)."""

    def __init__(self, weight: float):
        self.weight = float(weight)
        self._last = 0.0
        self._n = 0

    def add(self, value: float) -> float:
        self._n += 1
        self._last = self.weight * self._last + (1.0 - self.weight) * value
        debias = 1.0 - self.weight ** self._n
        return self._last / debias if debias > 0 else value


def tick_text(value: float, spacing: float) -> str:
    """A short label for a tick ``spacing`` apart from its neighbours: as many decimals as
    the spacing needs, thousands as "k" from 10k, scientific for tiny or huge numbers."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else ""
    places = max(0, math.ceil(-math.log10(spacing))) if spacing > 0 else 0
    magnitude = abs(value)
    if magnitude >= 1e7 or places > 4:
        digits = max(0, int(math.floor(math.log10(magnitude)) - math.floor(math.log10(spacing))))
        mantissa, exponent = f"{value:.{min(digits, 3)}e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    if magnitude >= 10_000 and spacing >= 100:
        return f"{value / 1000:.{0 if spacing >= 1000 else 1}f}k"
    return f"{value:.{places}f}"


def elapsed_text(seconds: float, spacing: float = 1.0) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour), with tenths when ticks are under a second apart."""
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    if spacing < 1:
        whole, tenths = divmod(round(seconds * 10), 10)
        minutes, secs = divmod(int(whole), 60)
        return f"{sign}{minutes}:{secs:02d}.{tenths}"
    total = int(round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours}:{minutes:02d}:{secs:02d}" if hours else f"{sign}{minutes}:{secs:02d}"


def time_spacing(span: float, most: float) -> float | None:
    """The smallest of the round time spacings (seconds) that puts at most ``most`` ticks on
    ``span`` seconds; None when none does (weeks)."""
    return next((s for s in _TIME_SPACINGS if span / s <= most), None)


def value_text(value: float) -> str:
    """A plotted value in a readout: 4 decimals, 4 digits from 100, scientific when tiny or
    huge."""
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-3 or magnitude >= 1e6):
        return f"{value:.3e}"
    return f"{value:.4g}" if magnitude >= 100 else f"{value:.4f}"


def percent_value(fraction: float | None) -> float | None:
    """A fraction as the percentage a plot draws (0.523 -> 52.3); None stays None."""
    return None if fraction is None else fraction * 100.0
