"""Axis ticks: round prices for the price axis, round times (UTC or local) for the time axis.

Pure numpy and ``time``: no Qt here. The time axis is gapless (x is the candle index), so a
tick at a round time sits in the candle that contains it, placed like the crosshair's time
(``TimeMap.centre_x``: a candle's open time at its centre); times that fall in a gap of the
data get no tick.

Labels read as TradingView's: the finest unit the step shows ("09:00"), replaced at the
boundary of a larger unit by that unit ("27 Mar" at midnight, "Mar" on the 1st, "2023" in
January). The first label the axis draws reads its tick's ``lead``, the label with the larger
unit it lies in ("27 Mar 09:00", "12 Mar", "Mar 2023"), so the date is on screen at every zoom
(``axis_labels``). Midnight and the 1st are those of the shown zone (UTC or local).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from ...viewmodel import TimeMap

_S = 1_000
_M = 60 * _S
_H = 60 * _M
_D = 24 * _H
FIXED_STEPS_MS = (1 * _S, 2 * _S, 5 * _S, 10 * _S, 15 * _S, 30 * _S,
                  1 * _M, 2 * _M, 5 * _M, 10 * _M, 15 * _M, 30 * _M,
                  1 * _H, 2 * _H, 3 * _H, 4 * _H, 6 * _H, 12 * _H)
DAY_STEPS = (1, 2, 5, 10, 15)  # days of the month: 1, 1+k, 1+2k, ... (up to the 28th)
MONTH_STEPS = (1, 2, 3, 6)
YEAR_STEPS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
_MONTH_MS = 30 * _D
_YEAR_MS = 365 * _D


class TimeTick(NamedTuple):
    x: float  # candle-index units
    ts: int  # epoch ms of the tick
    label: str
    lead: str  # the label as the axis's first: with the larger unit ("27 Mar 09:00")


def price_ticks(lo: float, hi: float, height_px: float,
                spacing_px: float = 44.0) -> tuple[np.ndarray, int]:
    """Round price levels in ``[lo, hi]`` at least ``spacing_px`` apart, and the number of
    decimals their labels need."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo or height_px <= 0:
        return np.empty(0), 0
    raw = (hi - lo) * spacing_px / height_px
    exp = math.floor(math.log10(raw))
    mag = 10.0 ** exp
    for mult in (1.0, 2.0, 2.5, 5.0, 10.0):
        if mult * mag >= raw:
            break
    step = mult * mag
    first = math.ceil(lo / step)
    last = math.floor(hi / step)
    values = np.arange(first, last + 1) * step
    decimals = max(0, -exp - (1 if mult == 10.0 else 0)) + (1 if mult == 2.5 else 0)
    return values, min(decimals, 12)


def utc_offset_ms(ts_ms: int, utc: bool) -> int:
    """Offset of the displayed wall clock from UTC at ``ts_ms``."""
    if utc:
        return 0
    return int(time.localtime(ts_ms / 1000).tm_gmtoff) * 1000


def wall_time(ts_ms: int, utc: bool) -> time.struct_time:
    return time.gmtime(ts_ms / 1000) if utc else time.localtime(ts_ms / 1000)


def _choose_step(ms_per_px: float, spacing_px: float, min_step: int) -> tuple[str, int]:
    need = max(ms_per_px * spacing_px, min_step)
    for step in FIXED_STEPS_MS:
        if step >= need:
            return "fixed", step
    for days in DAY_STEPS:
        if days * _D >= need:
            return "days", days
    for months in MONTH_STEPS:
        if months * _MONTH_MS >= need:
            return "months", months
    for years in YEAR_STEPS:
        if years * _YEAR_MS >= need:
            return "years", years
    return "years", max(YEAR_STEPS[-1], int(math.ceil(need / _YEAR_MS)))


def _candidates(kind: str, step: int, t_lo: int, t_hi: int, utc: bool) -> np.ndarray:
    """Round instants (epoch ms) in ``[t_lo, t_hi]`` for a step of ``kind``."""
    off = utc_offset_ms((t_lo + t_hi) // 2, utc)
    w_lo, w_hi = t_lo + off, t_hi + off
    if kind == "fixed":
        first = -(-w_lo // step) * step
        wall = np.arange(first, w_hi + 1, step, dtype=np.int64)
    elif kind == "days":
        days = np.arange(np.datetime64(w_lo, "ms").astype("datetime64[D]"),
                         np.datetime64(w_hi, "ms").astype("datetime64[D]") + 1)
        dom = (days - days.astype("datetime64[M]")).astype(np.int64) + 1
        keep = ((dom - 1) % step == 0) & ((dom <= 28) | (step == 1))
        wall = days[keep].astype("datetime64[ms]").astype(np.int64)
    elif kind == "months":
        months = np.arange(np.datetime64(w_lo, "ms").astype("datetime64[M]"),
                           np.datetime64(w_hi, "ms").astype("datetime64[M]") + 1)
        keep = months.astype(np.int64) % 12 % step == 0
        wall = months[keep].astype("datetime64[ms]").astype(np.int64)
    else:
        years = np.arange(np.datetime64(w_lo, "ms").astype("datetime64[Y]"),
                          np.datetime64(w_hi, "ms").astype("datetime64[Y]") + 1)
        keep = (years.astype(np.int64) + 1970) % step == 0
        wall = years[keep].astype("datetime64[ms]").astype(np.int64)
    inst = wall - off
    return inst[(inst >= t_lo) & (inst <= t_hi)]


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def tick_labels(ts_ms: int, kind: str, step: int, utc: bool) -> tuple[str, str]:
    """The label of a tick, the finest unit the step shows or the coarser unit it starts (a
    day at midnight, a month on its 1st, a year in January), and its lead: the label with
    the larger unit it lies in (the day before a time, the month after a day, the year after
    a month), or the label itself where it names that unit already."""
    t = wall_time(ts_ms, utc)
    month = _MONTHS[t.tm_mon - 1]
    year_start = t.tm_mon == 1 and t.tm_mday == 1
    if kind == "fixed":
        if t.tm_hour == t.tm_min == t.tm_sec == 0:
            label = str(t.tm_year) if year_start else f"{t.tm_mday} {month}"
            return label, label
        label = f"{t.tm_hour:02d}:{t.tm_min:02d}"
        if step < _M:
            label += f":{t.tm_sec:02d}"
        return label, f"{t.tm_mday} {month} {label}"
    if kind == "days" and t.tm_mday != 1:
        return str(t.tm_mday), f"{t.tm_mday} {month}"
    if kind in ("days", "months") and t.tm_mon != 1:
        return month, f"{month} {t.tm_year}"
    return str(t.tm_year), str(t.tm_year)


def time_ticks(ts: np.ndarray, timeframe_ms: int, i0: int, i1: int, px_per_candle: float,
               utc: bool, spacing_px: float = 90.0) -> list[TimeTick]:
    """Ticks for candles ``[i0, i1)`` of the open times ``ts`` drawn ``px_per_candle`` apart.
    Work is O(ticks * log n)."""
    i0 = max(0, int(i0))
    i1 = min(len(ts), int(i1))
    if i1 - i0 < 1 or px_per_candle <= 0:
        return []
    t_lo = int(ts[i0])
    t_hi = int(ts[i1 - 1]) + timeframe_ms - 1
    ms_per_px = (t_hi + 1 - t_lo) / ((i1 - i0) * px_per_candle)
    kind, step = _choose_step(ms_per_px, spacing_px, timeframe_ms)
    inst = _candidates(kind, step, t_lo, t_hi, utc)
    if not inst.size:
        return []
    idx = np.searchsorted(ts, inst, side="right") - 1
    inst = inst[(idx >= i0) & (inst - ts[idx] < timeframe_ms)]
    x = TimeMap(ts, timeframe_ms).centre_x(inst)
    ticks: list[TimeTick] = []
    min_dx = 0.8 * spacing_px / px_per_candle
    last_x = -math.inf
    for xi, ti in zip(x.tolist(), inst.tolist()):
        if xi - last_x >= min_dx:
            ticks.append(TimeTick(xi, ti, *tick_labels(ti, kind, step, utc)))
            last_x = xi
    return ticks


def axis_labels(ticks: Sequence[TimeTick], xs: Sequence[int],
                text_width: Callable[[str], float], width: float,
                gap: float) -> list[tuple[int, str]]:
    """The labels an axis ``width`` px wide draws for ``ticks`` centred at pixels ``xs``:
    (x, text) of each that fits whole on the axis, ``gap`` px or more after the one before
    it. The first reads its tick's ``lead``, so the axis always names the day (the month,
    the year) it shows."""
    shown: list[tuple[int, str]] = []
    right = -math.inf
    for tick, x in zip(ticks, xs):
        text = tick.label if shown else tick.lead
        half = text_width(text) / 2
        if x - half < 0 or x + half > width or x - half < right + gap:
            continue
        shown.append((x, text))
        right = x + half
    return shown


def format_time(ts_ms: int, timeframe_ms: int, utc: bool) -> str:
    """A candle's open time as the readout and the crosshair tag show it."""
    t = wall_time(ts_ms, utc)
    text = f"{t.tm_year}-{t.tm_mon:02d}-{t.tm_mday:02d}"
    if timeframe_ms < _D:
        text += f" {t.tm_hour:02d}:{t.tm_min:02d}"
        if timeframe_ms < _M:
            text += f":{t.tm_sec:02d}"
    return text
