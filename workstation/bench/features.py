"""``workstation bench features``: ``make_features`` on a long series of demo candles.

The reference, measured in the same run, computes the same rows the straightforward way: a
Python loop over the candles with a ``deque`` per trailing window. It runs on the first
``--reference-candles`` candles only; its work per candle is constant (the windows are fixed),
so its time scales linearly to the full series. Its rows are also compared with ours
(``max_abs_diff``). Target (2-core machine): 1M candles in < 5 s.
"""

from __future__ import annotations

import math
import time
from collections import deque

import numpy as np

from ..market.demo import demo_candles
from ..market.timeframes import ONE_MINUTE
from ..ml.features import FeatureSpec, make_features
from ..ml.trend_columns import CHANNEL_CLIP
from . import report

TARGET_S_PER_MILLION = 5.0
END_TS = 1_700_000_000_000
_DAY_MS = 86_400_000


def register(names) -> None:
    parser = names.add_parser("features", help="model features of 1M candles, vs. a plain loop")
    parser.add_argument("--candles", type=int, default=1_000_000)
    parser.add_argument("--reference-candles", type=int, default=20_000,
                        help="candles the per-candle reference loop runs on (scaled up)")
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs of ours")
    parser.add_argument("--json", action="store_true", help="one JSON object per case")
    parser.set_defaults(func=run)


def reference_features(candles, spec: FeatureSpec) -> np.ndarray:
    """The rows of ``make_features`` (candle and trend columns), one candle at a time."""
    ts, o, h, l, c, v = (col.tolist() for col in candles.columns())
    out = np.empty((len(ts), spec.n_features), dtype=np.float32)
    windows = spec.trend_windows
    closes: dict[int, deque[float]] = {k: deque(maxlen=k) for k in windows}
    highs: dict[int, deque[float]] = {k: deque(maxlen=k) for k in windows}  # the k before t
    lows: dict[int, deque[float]] = {k: deque(maxlen=k) for k in windows}
    floor = (spec.min_volatility_bps * 1e-4) ** 2
    long_sq: deque[float] = deque(maxlen=spec.volatility_window)
    short_sq: deque[float] = deque(maxlen=spec.regime_window)
    volumes: deque[float] = deque(maxlen=spec.volume_window)
    prev = math.log(o[0]) if ts else 0.0

    def clip(x: float) -> float:
        return min(max(x, -spec.clip), spec.clip)

    for t in range(len(ts)):
        lo, lh, ll, lc = math.log(o[t]), math.log(h[t]), math.log(l[t]), math.log(c[t])
        rets = (lo - prev, lh - prev, ll - prev, lc - prev, lh - ll)
        prev = lc
        long_sq.append(rets[3] ** 2)
        short_sq.append(rets[3] ** 2)
        volumes.append(v[t])
        long_ms = sum(long_sq) / len(long_sq) + floor
        short_ms = sum(short_sq) / len(short_sq) + floor
        volatility = math.sqrt(long_ms)
        mean_volume = sum(volumes) / len(volumes)
        ratio = v[t] / mean_volume if mean_volume > 0 else 0.0
        angle = (ts[t] % _DAY_MS) * (2.0 * math.pi / _DAY_MS)
        trends, breakouts = [], []
        for k in windows:
            closes[k].append(c[t])
            trends.append(clip(math.log(c[t] / (sum(closes[k]) / len(closes[k]))) / volatility))
            top, bottom = (max(highs[k]), min(lows[k])) if t else (h[0], l[0])
            place = 2 * (c[t] - bottom) / (top - bottom) - 1 if top > bottom else 0.0
            breakouts.append(min(max(place, -CHANNEL_CLIP), CHANNEL_CLIP))
            highs[k].append(h[t])
            lows[k].append(l[t])
        out[t] = [*(clip(r / volatility) for r in rets), math.log1p(ratio) - math.log(2.0),
                  clip(0.5 * math.log(short_ms / long_ms)), math.sin(angle), math.cos(angle),
                  *trends, *breakouts]
    return out


def run(args) -> int:
    spec = FeatureSpec()
    candles = demo_candles(args.candles, ONE_MINUTE, seed=7, end_ts=END_TS)
    times = []
    for _ in range(max(1, args.runs)):
        start = time.perf_counter()
        features = make_features(candles, spec)
        times.append(time.perf_counter() - start)

    n_ref = min(args.reference_candles, len(candles))
    subset = candles.slice(0, n_ref)
    start = time.perf_counter()
    reference = reference_features(subset, spec)
    ref_s = time.perf_counter() - start
    seconds = min(times)
    case = dict(case="make_features", candles=len(candles), seconds=seconds,
                reference_seconds=ref_s * len(candles) / n_ref,
                target_seconds=TARGET_S_PER_MILLION * len(candles) / 1_000_000,
                finite=bool(np.isfinite(features).all()),
                max_abs_diff=float(np.abs(features[:n_ref] - reference).max()),
                reference_note=f"per-candle Python loop over {n_ref} candles, scaled linearly")
    case["ratio_vs_reference"] = case["reference_seconds"] / seconds
    case["meets_target"] = seconds <= case["target_seconds"]
    return report([case], args.json, _print_table)


def _print_table(cases) -> None:
    print(f"{'case':<14} {'candles':>9} {'workstation':>12} {'reference':>12} {'ratio':>8} "
          f"{'target':>9}")
    for case in cases:
        verdict = "  ok" if case["meets_target"] else "  MISSED"
        print(f"{case['case']:<14} {case['candles']:>9} {case['seconds']:>10.3f} s "
              f"{case['reference_seconds']:>10.2f} s {case['ratio_vs_reference']:>7.0f}x "
              f"{'< ' + format(case['target_seconds'], '.1f') + ' s':>9}{verdict}")
        print(f"reference: {case['reference_note']}; max |ours - reference| = "
              f"{case['max_abs_diff']:.2g}; all finite: {case['finite']}")
