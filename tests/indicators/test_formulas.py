"""The indicators against a direct, candle-by-candle reference (plain Python loops written
from the definitions, no numpy tricks), to 1e-9; causal (perturb the future), warm-up masked,
and the same value whether computed at once or tick by tick."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workstation.indicators import IndicatorSpec, IndicatorValues, compute, parse_spec
from workstation.indicators.formulas import SESSION_MS
from workstation.market.candles import Candles
from workstation.market.perturb import changed_after
from workstation.market.timeframes import parse_timeframe

SPECS = ["sma 1", "sma 20", "ema 1", "ema 9", "ema 50", "rsi 2", "rsi 14", "atr 1", "atr 14",
         "bb 20 2", "bb 5 0.5", "vwap"]


def random_candles(n: int, seed: int = 0, timeframe: str = "1h", level: float = 3000.0,
                   flat_every: int = 0) -> Candles:
    """A random walk around ``level`` with real-looking ranges and volumes (some zero)."""
    rng = np.random.default_rng(seed)
    tf = parse_timeframe(timeframe)
    close = level * np.exp(np.cumsum(rng.normal(0, 0.004, n)))
    open_ = np.concatenate(([level], close[:-1]))
    if flat_every:  # stretches where the price does not move at all
        for i in range(0, n, flat_every):
            close[i:i + 5] = close[i]
            open_[i + 1:i + 5] = close[i]
    spread = np.abs(rng.normal(0, 0.002, n)) * close
    high = np.maximum(open_, close) + spread
    low = np.minimum(open_, close) - spread * rng.uniform(0, 1, n)
    volume = rng.gamma(2.0, 50.0, n)
    volume[rng.uniform(0, 1, n) < 0.05] = 0.0
    ts = 1_700_000_000_000 // tf.ms * tf.ms + np.arange(n, dtype=np.int64) * tf.ms
    return Candles.from_arrays(ts, open_, high, low, close, volume, tf)


# -- the reference: each candle from its definition ---------------------------------------
def ref_sma(close, n):
    return [math.nan if i < n - 1 else math.fsum(close[i - n + 1:i + 1]) / n
            for i in range(len(close))]


def ref_smoothing(x, n, a):
    out, e = [], math.nan
    for i, v in enumerate(x):
        if i < n - 1:
            out.append(math.nan)
            continue
        e = math.fsum(x[:n]) / n if i == n - 1 else a * v + (1 - a) * e
        out.append(e)
    return out


def ref_ema(close, n):
    return ref_smoothing(close, n, 2 / (n + 1))


def ref_atr(high, low, close, n):
    tr = [high[0] - low[0]] + [max(high[i] - low[i], abs(high[i] - close[i - 1]),
                                   abs(low[i] - close[i - 1])) for i in range(1, len(close))]
    return ref_smoothing(tr, n, 1 / n)


def ref_rsi(close, n):
    out, gain, loss = [], math.nan, math.nan
    for i in range(len(close)):
        if i < n:
            out.append(math.nan)
            continue
        if i == n:
            changes = [close[j] - close[j - 1] for j in range(1, n + 1)]
            gain = math.fsum(max(c, 0) for c in changes) / n
            loss = math.fsum(max(-c, 0) for c in changes) / n
        else:
            c = close[i] - close[i - 1]
            gain = (1 / n) * max(c, 0) + (1 - 1 / n) * gain
            loss = (1 / n) * max(-c, 0) + (1 - 1 / n) * loss
        if loss == 0:
            out.append(50.0 if gain == 0 else 100.0)
        else:
            out.append(100 - 100 / (1 + gain / loss))
    return out


def ref_bollinger(close, n, k):
    mid, up, lo = [], [], []
    for i in range(len(close)):
        if i < n - 1:
            mid.append(math.nan), up.append(math.nan), lo.append(math.nan)
            continue
        w = close[i - n + 1:i + 1]
        m = math.fsum(w) / n
        sd = math.sqrt(math.fsum((v - m) ** 2 for v in w) / n)
        mid.append(m), up.append(m + k * sd), lo.append(m - k * sd)
    return {"middle": mid, "upper": up, "lower": lo}


def ref_vwap(ts, high, low, close, volume):
    out, pv, vol, day = [], 0.0, 0.0, None
    parts_pv: list[float] = []
    parts_v: list[float] = []
    for i in range(len(ts)):
        if ts[i] // SESSION_MS != day:
            day, parts_pv, parts_v = ts[i] // SESSION_MS, [], []
        parts_pv.append((high[i] + low[i] + close[i]) / 3 * volume[i])
        parts_v.append(volume[i])
        pv, vol = math.fsum(parts_pv), math.fsum(parts_v)
        out.append(pv / vol if vol > 0 else math.nan)
    return out


def reference(spec: IndicatorSpec, c: Candles) -> dict[str, list[float]]:
    cols = [list(map(float, a)) for a in (c.high, c.low, c.close, c.volume)]
    high, low, close, volume = cols
    kind = spec.kind.value
    if kind == "sma":
        return {"value": ref_sma(close, spec.period)}
    if kind == "ema":
        return {"value": ref_ema(close, spec.period)}
    if kind == "rsi":
        return {"value": ref_rsi(close, spec.period)}
    if kind == "atr":
        return {"value": ref_atr(high, low, close, spec.period)}
    if kind == "bb":
        return ref_bollinger(close, spec.period, spec.width)
    return {"value": ref_vwap([int(t) for t in c.ts], high, low, close, volume)}


def assert_close(got: np.ndarray, want, name: str) -> None:
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, name
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{name}: NaNs differ"
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-9, atol=1e-9, err_msg=name)


@pytest.mark.parametrize("text", SPECS)
def test_equal_to_the_reference(text):
    spec = parse_spec(text)
    c = random_candles(3000, seed=1, flat_every=97)
    got = compute(spec, c)
    for name, want in reference(spec, c).items():
        assert_close(got[name], want, f"{text} {name}")


def test_a_long_series_far_from_its_mean_stays_within_1e_9():
    """Sums run in re-centred blocks: 200k candles that drift from 30000 to a few hundred
    keep the windows' means and deviations as exact as the reference's (compared on the
    last candles, where a running sum would have drifted most)."""
    c = random_candles(200_000, seed=2, level=30_000.0)
    c = Candles.from_arrays(c.ts, c.open * np.linspace(1, 0.02, len(c)),
                            c.high * np.linspace(1, 0.02, len(c)),
                            c.low * np.linspace(1, 0.02, len(c)),
                            c.close * np.linspace(1, 0.02, len(c)), c.volume, c.timeframe,
                            validate=False)
    tail = c.slice(len(c) - 500, len(c))
    for text in ("sma 200", "bb 200 2", "vwap"):
        spec = parse_spec(text)
        got = compute(spec, c)
        # the reference of the last 500 candles alone is the same: their windows lie inside
        want = reference(spec, c.slice(len(c) - 500 - 400, len(c)))
        for name in spec.lines:
            if text == "vwap":  # its session began before the slice: compare whole days
                day0 = int(tail.ts[0] // SESSION_MS + 1) * SESSION_MS
                keep = tail.ts >= day0
                w = np.asarray(reference(spec, tail)[name])[keep]
                assert_close(got[name][-500:][keep], w, f"{text} {name}")
            else:
                assert_close(got[name][-500:], want[name][-500:], f"{text} {name}")


@pytest.mark.parametrize("text", SPECS)
def test_warm_up_is_masked_and_nothing_after(text):
    spec = parse_spec(text)
    c = random_candles(400, seed=3)
    for name, line in compute(spec, c).items():
        if name not in spec.lines:
            continue
        nan = np.isnan(line)
        if spec.kind.value == "vwap":  # NaN only until the session has traded
            assert not nan[c.volume > 0].any()
            continue
        assert nan[:spec.warmup].all(), name
        assert not nan[spec.warmup:].any(), name


@pytest.mark.parametrize("text", SPECS)
def test_causal_perturbing_the_future_changes_nothing_before(text):
    """Each value reads only its own candle and earlier ones: rewrite every candle after t
    and nothing up to t moves."""
    spec = parse_spec(text)
    c = random_candles(600, seed=4)
    base = compute(spec, c)
    for t in (0, 37, 299, 598):
        cut = changed_after(c, int(c.ts[t]), seed=t, drop=0.0)
        moved = compute(spec, cut)
        for name in base:
            np.testing.assert_array_equal(moved[name][:t + 1], base[name][:t + 1],
                                          err_msg=f"{text} {name} at t={t}")
            if t < len(c) - 1 and name in spec.lines and t + 1 >= spec.warmup:
                assert not np.allclose(moved[name][t + 1:], base[name][t + 1:],
                                       equal_nan=True), "the perturbation reached nothing"


@pytest.mark.parametrize("text", SPECS)
def test_tick_by_tick_equals_the_whole_series(text):
    """Ticks of a forming candle (update in place), then its close and the next candle
    (append), as a live feed sends them: the kept values equal a computation from scratch."""
    spec = parse_spec(text)
    full = random_candles(260, seed=6, timeframe="1h")
    rng = np.random.default_rng(7)
    live = full.slice(0, 30)
    values = IndicatorValues(spec)
    values.sync(live)
    for i in range(30, len(full)):
        o, h, l, c, v = (float(full.open[i]), float(full.high[i]), float(full.low[i]),
                         float(full.close[i]), float(full.volume[i]))
        live.append(int(full.ts[i]), o, o, o, o, 0.0, closed=False)
        values.sync(live, changed_from=len(live) - 2)
        for frac in rng.uniform(0, 1, 3):  # the forming candle moves
            price = l + (h - l) * frac
            live.update_last(o, max(o, price), min(o, price), price, v * frac)
            assert values.sync(live, changed_from=len(live) - 1) == len(live) - 1
        live.update_last(o, h, l, c, v, closed=True)
        values.sync(live, changed_from=len(live) - 1)
    want = compute(spec, full)
    for name in values.names:
        assert_close(values.columns()[name], want[name], f"{text} {name}")


def test_a_series_shorter_than_the_window_is_all_warm_up():
    c = random_candles(10, seed=8)
    for text in ("sma 20", "ema 20", "rsi 14", "atr 14", "bb 20 2"):
        for name, line in compute(parse_spec(text), c).items():
            assert len(line) == 10 and np.isnan(line).all(), (text, name)


def test_vwap_starts_again_each_utc_day():
    c = random_candles(72, seed=9, timeframe="1h")
    value = compute(parse_spec("vwap"), c)["value"]
    first = np.flatnonzero(np.diff(c.ts // SESSION_MS) != 0) + 1
    for i in first:
        if c.volume[i] > 0:
            assert value[i] == pytest.approx((c.high[i] + c.low[i] + c.close[i]) / 3,
                                             rel=1e-12)
