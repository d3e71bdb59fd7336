"""``workstation bench backtest``: the engine and its metrics on 1.74M candles of model-like
signals (long / flat / short runs of random length, as a position head gives them).

The reference, measured in the same run, is the same accounting the plain way: a Python loop
over the candles that opens, closes and marks one position at a time. It runs on the first
``--reference-candles`` candles (its work per candle is constant, so its time scales linearly)
and its equity is compared with the engine's (``max_rel_diff``). Target (2-core machine): all
candles, metrics included, in < 1 s.
"""

from __future__ import annotations

import time

import numpy as np

from ..backtest.engine import Costs, Sizing, run_backtest
from ..backtest.metrics import compute_metrics
from ..market.demo import demo_candles
from ..market.timeframes import ONE_MINUTE
from . import report

TARGET_S = 1.0
END_TS = 1_700_000_000_000
FEE, SLIPPAGE_BPS, SIZE = 0.001, 1.0, 0.5


def register(names) -> None:
    parser = names.add_parser("backtest", help="backtest 1.74M candles of signals, vs. a loop")
    parser.add_argument("--candles", type=int, default=1_743_000)
    parser.add_argument("--reference-candles", type=int, default=100_000,
                        help="candles the per-candle reference loop runs on (scaled up)")
    parser.add_argument("--runs", type=int, default=5, help="best and median of this many runs")
    parser.add_argument("--json", action="store_true", help="one JSON object per case")
    parser.set_defaults(func=run)


def model_like_signal(n: int, seed: int = 0, mean_run: int = 30) -> np.ndarray:
    """Runs of long / flat / short with geometric lengths (mean ``mean_run`` candles)."""
    rng = np.random.default_rng(seed)
    changes = np.flatnonzero(rng.random(n) < 1 / mean_run)
    values = rng.integers(-1, 2, len(changes) + 1).astype(np.int8)
    return values[np.searchsorted(changes, np.arange(n), side="right")]


def reference_equity(open_, close, signal, cash: float) -> np.ndarray:
    """The engine's accounting (next-open fills, fee and slippage per side, ``SIZE`` of
    equity a trade), one candle at a time."""
    o, c, s = open_.tolist(), close.tolist(), signal.tolist()
    slip = SLIPPAGE_BPS / 10_000
    equity = np.empty(len(c))
    held, units, entry = 0, 0.0, 0.0
    for i in range(len(c)):
        want = s[i - 1] if i > 0 else 0
        if want != held:
            if held:
                exit_price = o[i] * (1 - slip * held)
                cash += units * (held * (exit_price - entry) - FEE * exit_price)
                held = 0
            if want:
                entry = o[i] * (1 + slip * want)
                units = SIZE * cash / (entry * (1 + FEE))
                cash -= units * entry * FEE
                held = want
        equity[i] = cash + (units * held * (c[i] - entry) if held else 0.0)
    if held:  # closed at the last close, as the engine does
        exit_price = c[-1] * (1 - slip * held)
        equity[-1] = cash + units * (held * (exit_price - entry) - FEE * exit_price)
    return equity


def run(args) -> int:
    candles = demo_candles(args.candles, ONE_MINUTE, seed=11, end_ts=END_TS)
    signal = model_like_signal(len(candles))
    costs, sizing = Costs(FEE, SLIPPAGE_BPS), Sizing(size=SIZE)
    times = []
    for _ in range(max(1, args.runs)):
        start = time.perf_counter()
        result = run_backtest(candles.open, candles.close, signal, costs=costs, sizing=sizing)
        metrics = compute_metrics(result, candles.ts, candles.close, candles.timeframe.ms)
        times.append(time.perf_counter() - start)
    n_ref = min(args.reference_candles, len(candles))
    start = time.perf_counter()
    ref = reference_equity(candles.open[:n_ref], candles.close[:n_ref], signal[:n_ref], 10_000.0)
    ref_s = (time.perf_counter() - start) * len(candles) / n_ref
    part = run_backtest(candles.open[:n_ref], candles.close[:n_ref], signal[:n_ref],
                        costs=costs, sizing=sizing)
    seconds = min(times)
    case = dict(case="backtest + metrics", candles=len(candles), trades=len(result.trades),
                seconds=seconds, median_seconds=float(np.median(times)),
                reference_seconds=ref_s, target_seconds=TARGET_S,
                ratio_vs_reference=ref_s / seconds, meets_target=seconds <= TARGET_S,
                max_rel_diff=float(np.max(np.abs(part.equity - ref) / ref)),
                sharpe=metrics["Sharpe Ratio"],
                reference_note=f"per-candle Python loop over {n_ref:,} candles, scaled linearly")
    return report([case], args.json, _print_table)


def _print_table(cases) -> None:
    for case in cases:
        verdict = "ok" if case["meets_target"] else "MISSED"
        print(f"{case['case']}: {case['candles']:,} candles, {case['trades']:,} trades: "
              f"best {case['seconds']:.3f} s, median {case['median_seconds']:.3f} s "
              f"(target < {case['target_seconds']:.0f} s: {verdict}); reference "
              f"{case['reference_seconds']:.1f} s, {case['ratio_vs_reference']:.0f}x")
        print(f"reference: {case['reference_note']}; max relative equity difference "
              f"{case['max_rel_diff']:.2g}")
