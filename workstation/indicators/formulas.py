"""The indicators' formulas, computed for the candles from ``start`` on.

``tail(spec, candles, start, before)`` returns every column of the spec (the drawn lines and
the running state a recursive indicator carries, such as RSI's average gain) for candles
``start .. len(candles) - 1``, given the columns already computed for the candles before
``start`` (``before``). From 0 that is the whole series; from the forming candle's index it is
one tick's update. The value at candle ``i`` reads only candles ``<= i``, and is NaN during the
warm-up (``IndicatorSpec.warmup``).

Definitions (those of TA-Lib and TradingView's Pine, where they agree):

- **SMA n**: the mean of the last ``n`` closes.
- **EMA n**: ``e = a * close + (1 - a) * e_prev`` with ``a = 2 / (n + 1)``, seeded with the
  SMA of the first ``n`` closes.
- **RSI n** (Wilder): average gain and loss of the close-to-close changes, seeded with their
  mean over the first ``n`` changes and then smoothed with ``a = 1 / n``;
  ``100 - 100 / (1 + gain / loss)``, 100 when there was no loss, 50 when the price did not move.
- **ATR n** (Wilder): the true range ``max(high - low, |high - prev close|, |low - prev
  close|)`` (``high - low`` for the first candle), seeded with the mean of the first ``n`` and
  smoothed with ``a = 1 / n``.
- **Bollinger n k**: the SMA n and ``k`` population standard deviations of the last ``n``
  closes either side.
- **VWAP**: the volume-weighted mean of the typical price ``(high + low + close) / 3`` since
  the session began (each UTC day); NaN until the session has traded volume.

Sums run in blocks, each re-centred on its first value, so that a million candles keep every
value within 1e-9 of a direct computation (tests/indicators check them against one).
"""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

from ..market.candles import Candles
from .spec import IndicatorKind, IndicatorSpec

SESSION_MS = 86_400_000  # VWAP's session: one UTC day
_BLOCK = 1024
_CANCELLATION = 1e4  # a variance this far below its squared spread is recomputed

Columns = dict[str, np.ndarray]


def columns_of(spec: IndicatorSpec) -> tuple[str, ...]:
    """Every column the spec keeps: its lines, then its running state."""
    if spec.kind is IndicatorKind.RSI:
        return ("value", "gain", "loss")
    if spec.kind is IndicatorKind.VWAP:
        return ("value", "pv", "volume")
    return spec.lines


def _nan(n: int) -> np.ndarray:
    return np.full(max(n, 0), np.nan)


def _window_mean_var(x: np.ndarray, n: int, first: int, stop: int,
                     var: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """Mean (and population variance) of ``x[i - n + 1 : i + 1]`` for ``first <= i < stop``
    (``first >= n - 1``), from running sums of each block's values less its first value. A
    variance far below the block's squared spread (a window where the price barely moved),
    whose running sums would cancel, is computed directly from its window instead."""
    means = np.empty(stop - first)
    variances = np.empty(stop - first) if var else None
    block = max(_BLOCK, 4 * n)
    for b0 in range(first, stop, block):
        b1 = min(stop, b0 + block)
        seg = x[b0 - n + 1:b1]
        centre = seg[0]  # not the block's mean: that would read candles after the window
        d = seg - centre
        s1 = np.cumsum(np.concatenate(([0.0], d)))
        m = (s1[n:] - s1[:-n]) / n
        means[b0 - first:b1 - first] = m + centre
        if variances is not None:
            s2 = np.cumsum(np.concatenate(([0.0], d * d)))
            square = (s2[n:] - s2[:-n]) / n
            v = np.maximum(square - m * m, 0.0)
            cancelled = np.flatnonzero(v * _CANCELLATION < square)
            if len(cancelled):
                w = np.lib.stride_tricks.sliding_window_view(seg, n)[cancelled]
                v[cancelled] = ((w - w.mean(axis=1, keepdims=True)) ** 2).mean(axis=1)
            variances[b0 - first:b1 - first] = v
    return means, variances


def _smoothed(x: np.ndarray, a: float, seed: float) -> np.ndarray:
    """``y = a * x + (1 - a) * y_prev`` along ``x``, from ``y_prev = seed``."""
    if not len(x):
        return np.empty(0)
    y, _ = lfilter([a], [1.0, a - 1.0], x, zi=[(1.0 - a) * seed])
    return y


def _recursive(source, n: int, a: float, start: int, prev: np.ndarray | None,
               total: int) -> np.ndarray:
    """A smoothing seeded at candle ``n - 1`` with the mean of the first ``n`` values (EMA,
    Wilder's), for candles ``start ..``; ``source(lo)`` gives the smoothed values from candle
    ``lo`` on, ``prev`` the smoothing's values before ``start``."""
    out = _nan(total - start)
    seed_at = n - 1
    if total <= seed_at:
        return out
    if start <= seed_at:
        x = source(0)
        seed = float(x[:n].mean())
        out[seed_at - start] = seed
        out[seed_at - start + 1:] = _smoothed(x[n:], a, seed)
    else:
        assert prev is not None
        out[:] = _smoothed(source(start), a, float(prev[start - 1]))
    return out


def _sma(spec: IndicatorSpec, c: Candles, start: int, before: Columns) -> Columns:
    n, total = spec.period, len(c)
    out = _nan(total - start)
    first = max(start, n - 1)
    if first < total:
        out[first - start:], _ = _window_mean_var(c.close, n, first, total, var=False)
    return {"value": out}


def _bollinger(spec: IndicatorSpec, c: Candles, start: int, before: Columns) -> Columns:
    n, total = spec.period, len(c)
    middle, upper, lower = _nan(total - start), _nan(total - start), _nan(total - start)
    first = max(start, n - 1)
    if first < total:
        mean, var = _window_mean_var(c.close, n, first, total, var=True)
        assert var is not None
        width = spec.width * np.sqrt(var)
        k = first - start
        middle[k:], upper[k:], lower[k:] = mean, mean + width, mean - width
    return {"middle": middle, "upper": upper, "lower": lower}


def _ema(spec: IndicatorSpec, c: Candles, start: int, before: Columns) -> Columns:
    n = spec.period
    return {"value": _recursive(lambda lo: c.close[lo:], n, 2.0 / (n + 1), start,
                                before.get("value"), len(c))}


def _true_range(c: Candles, lo: int) -> np.ndarray:
    """The true range of candles ``lo ..`` (the series' first: its high less its low)."""
    tr = c.high[lo:] - c.low[lo:]
    i0 = max(lo, 1)
    prev_close = c.close[i0 - 1:-1]
    tr[i0 - lo:] = np.maximum(tr[i0 - lo:], np.maximum(np.abs(c.high[i0:] - prev_close),
                                                       np.abs(c.low[i0:] - prev_close)))
    return tr


def _atr(spec: IndicatorSpec, c: Candles, start: int, before: Columns) -> Columns:
    n = spec.period
    return {"value": _recursive(lambda lo: _true_range(c, lo), n, 1.0 / n, start,
                                before.get("value"), len(c))}


def _rsi(spec: IndicatorSpec, c: Candles, start: int, before: Columns) -> Columns:
    n, total = spec.period, len(c)
    gain, loss = _nan(total - start), _nan(total - start)
    if total > n:
        first = max(start, n)  # the first average is over the changes 1 .. n
        lo = 0 if first == n else first - 1
        change = np.diff(c.close[lo:])
        up, down = np.maximum(change, 0.0), np.maximum(-change, 0.0)
        a = 1.0 / n
        k = first - start
        if first == n:
            g0, l0 = float(up[:n].mean()), float(down[:n].mean())
            gain[k], loss[k] = g0, l0
            gain[k + 1:] = _smoothed(up[n:], a, g0)
            loss[k + 1:] = _smoothed(down[n:], a, l0)
        else:
            gain[k:] = _smoothed(up, a, float(before["gain"][first - 1]))
            loss[k:] = _smoothed(down, a, float(before["loss"][first - 1]))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 100.0 - 100.0 / (1.0 + gain / loss)
    value = np.where(loss == 0.0, np.where(gain == 0.0, 50.0, 100.0), value)
    value[np.isnan(gain)] = np.nan
    return {"value": value, "gain": gain, "loss": loss}


def _session_sums(x: np.ndarray, new_session: np.ndarray, carry: float) -> np.ndarray:
    """The running sum of ``x`` since each session began (``new_session[i]``: candle ``i``
    opens one); ``carry`` is the running sum before ``x[0]`` if that continues a session.
    Block by block, so that no sum grows past a block's."""
    out = np.empty(len(x))
    for b0 in range(0, len(x), _BLOCK):
        seg, starts = x[b0:b0 + _BLOCK], new_session[b0:b0 + _BLOCK]
        run = np.cumsum(seg)
        run_before = np.concatenate(([0.0], run[:-1]))
        last_start = np.maximum.accumulate(np.where(starts, np.arange(len(seg)), -1))
        base = np.where(last_start >= 0, run_before[np.maximum(last_start, 0)], -carry)
        out[b0:b0 + len(seg)] = run - base
        carry = float(out[b0 + len(seg) - 1])
    return out


def _vwap(spec: IndicatorSpec, c: Candles, start: int, before: Columns) -> Columns:
    ts = c.ts
    session = ts[start:] // SESSION_MS
    before_first = ts[start - 1] // SESSION_MS if start else -1
    new_session = session != np.concatenate(([before_first], session[:-1]))
    typical = (c.high[start:] + c.low[start:] + c.close[start:]) / 3.0
    volume = c.volume[start:]
    pv_carry = 0.0 if start == 0 else float(before["pv"][start - 1])
    v_carry = 0.0 if start == 0 else float(before["volume"][start - 1])
    pv = _session_sums(typical * volume, new_session, pv_carry)
    vol = _session_sums(volume, new_session, v_carry)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(vol > 0, pv / vol, np.nan)
    return {"value": value, "pv": pv, "volume": vol}


_FORMULAS = {
    IndicatorKind.SMA: _sma,
    IndicatorKind.EMA: _ema,
    IndicatorKind.RSI: _rsi,
    IndicatorKind.ATR: _atr,
    IndicatorKind.BOLLINGER: _bollinger,
    IndicatorKind.VWAP: _vwap,
}


def tail(spec: IndicatorSpec, candles: Candles, start: int, before: Columns) -> Columns:
    """The spec's columns for candles ``start ..`` (see the module docstring); ``before``
    holds them for the candles before ``start`` (may be empty when ``start`` is 0)."""
    if spec.kind is IndicatorKind.VOLUME_PROFILE:
        raise ValueError("a volume profile is of a candle range, not per candle: "
                         "use indicators.profile.volume_profile")
    if not 0 <= start <= len(candles):
        raise ValueError(f"start {start} is outside the {len(candles)} candles")
    return _FORMULAS[spec.kind](spec, candles, start, before)


def compute(spec: IndicatorSpec, candles: Candles) -> Columns:
    """The spec's columns for every candle."""
    return tail(spec, candles, 0, {})
