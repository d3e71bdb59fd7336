"""``workstation bench startup``: how fast the window comes up and opens a big candle file.

- ``window``: seconds from a fresh interpreter to the main window shown with demo candles on
  the chart (torch still loading in the background, "preparing device"), beside a bare
  PySide6 window as the reference, each the median of a few fresh processes. Target: under
  2 s on a 2-core machine.
- ``csv``: a candle file (default ``../shared/data/ethusdt_1m.csv.gz``, 1.74M candles; a
  generated DEMO file of the same size when it is missing) opened in the window as
  ``csv:FILE``: the first opening in a fresh data folder imports it into the candle cache, the
  second (a new process on the same folder) reads the cache. Each is timed from the request
  to the chart repainted with every candle, once the device has warmed up; the reference,
  measured in the same window just before, is opening the demo market.
  Target for the second opening: under 1.5 s.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from .data import DEFAULT_FILE

TARGET_S = 2.0
CSV_SECOND_TARGET_S = 1.5
CASES = ("window", "csv")

_WORKSTATION = r"""
import time
start = time.perf_counter()
import argparse, asyncio
import qasync
from workstation.ui.app import qt_app, run_window

async def shown(window):
    while not len(window.live.candles):
        await asyncio.sleep(0.005)
    window.chart.repaint()
    print(time.perf_counter() - start, window.training.state, flush=True)
    return 0

qt_app()
args = argparse.Namespace(source="demo", symbol=None, timeframe="1m", speed=1.0)
qasync.run(run_window(args, on_shown=shown))
"""

_BARE = r"""
import time
start = time.perf_counter()
from PySide6.QtWidgets import QApplication, QLabel
app = QApplication([])
label = QLabel("hello")
label.show()
label.repaint()
print(time.perf_counter() - start, "-", flush=True)
"""

_OPEN_FILE = r"""
import argparse, asyncio, json, sys, time
import qasync
from workstation.ui.app import qt_app, run_window

path, symbol = sys.argv[1], sys.argv[2]

async def opened(window, source, symbol):
    resets = []
    window.live.candles_changed.connect(lambda kind: resets.append(kind))
    start = time.perf_counter()
    await window.open_source(source, symbol, "1m")
    while (window.live.state not in ("live", "static", "failed")
           or window.chart.candles is not window.live.candles or "reset" not in resets):
        await asyncio.sleep(0.002)
    window.chart.repaint()
    return time.perf_counter() - start

async def shown(window):
    while window.training.state == "preparing":  # torch loads and warms up first
        await asyncio.sleep(0.02)
    demo_s = await opened(window, "demo", None)
    demo_n = len(window.chart.candles)
    file_s = await opened(window, "csv:" + path, symbol)
    print(json.dumps(dict(seconds=file_s, demo_seconds=demo_s, demo_candles=demo_n,
                          candles=len(window.chart.candles), imported=window.live.last_import,
                          state=window.live.state, detail=window.live.detail)), flush=True)
    return 0

qt_app()
args = argparse.Namespace(source="demo", symbol=None, timeframe="1m", speed=1.0)
qasync.run(run_window(args, on_shown=shown))
"""


def register(names) -> None:
    parser = names.add_parser("startup", help="time to the main window, vs. a bare Qt window; "
                                              "first and second opening of a big candle file")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES),
                        help=f"comma-separated, of {', '.join(CASES)} (default: all)")
    parser.add_argument("--csv", type=Path, default=None,
                        help="candle file for the csv case (default ../shared/data/"
                             "ethusdt_1m.csv.gz; a generated DEMO file of the same size when "
                             "it is missing)")
    parser.add_argument("--symbol", default="ETH/USDT", help="its symbol (default ETH/USDT)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)


def _env(home: str) -> dict:
    return dict(os.environ, QT_QPA_PLATFORM="offscreen", WORKSTATION_HOME=home)


def _measure(code: str, runs: int) -> tuple[float, str]:
    times, state = [], ""
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="workstation-bench-startup-") as home:
            out = subprocess.run([sys.executable, "-c", code], env=_env(home),
                                 capture_output=True, text=True, timeout=300,
                                 check=True).stdout.split()
        times.append(float(out[0]))
        state = out[1]
    return statistics.median(times), state


def _open_file(home: str, path: Path, symbol: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _OPEN_FILE, str(path), symbol],
                          env=_env(home), capture_output=True, text=True, timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        raise RuntimeError(f"the csv opening failed (exit {done.returncode}): "
                           f"{done.stderr.strip()[-2000:]}")
    return json.loads(lines[-1])


def _load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def window_case(runs: int) -> dict:
    window_s, state = _measure(_WORKSTATION, runs)
    bare_s, _ = _measure(_BARE, runs)
    return dict(case="startup", seconds=round(window_s, 3), reference_seconds=round(bare_s, 3),
                ratio_vs_reference=round(window_s / bare_s, 2), target_seconds=TARGET_S,
                meets_target=window_s < TARGET_S, training_state_when_shown=state, runs=runs)


def csv_case(runs: int, path: Path | None, symbol: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="workstation-bench-csv-") as tmp:
        note = str(path or DEFAULT_FILE)
        if path is None:
            path = DEFAULT_FILE
            if not path.exists():
                from ..market.csv_io import write_candles_csv
                from ..market.demo import demo_candles
                from ..market.timeframes import ONE_MINUTE

                path = write_candles_csv(demo_candles(1_743_000, ONE_MINUTE, seed=7),
                                         Path(tmp) / "demo_1m.csv.gz")
                note = f"DEMO data (generated; {DEFAULT_FILE} not found)"
        first, second, load = [], [], []
        for run in range(runs):
            home = str(Path(tmp) / f"home{run}")
            load.append(_load_average())
            first.append(_open_file(home, path, symbol))
            second.append(_open_file(home, path, symbol))
            load.append(_load_average())
    for opened, imported in ((first, True), (second, False)):
        for one in opened:
            if one["state"] != "static" or one["imported"] is not imported:
                raise RuntimeError(f"the csv opening did not do what it should: {one}")
    first_s = statistics.median(o["seconds"] for o in first)
    second_s = statistics.median(o["seconds"] for o in second)
    reference_s = statistics.median(o["demo_seconds"] for o in first + second)
    return dict(case="csv open", file=note, candles=first[0]["candles"], runs=runs,
                first_seconds=round(first_s, 3), second_seconds=round(second_s, 3),
                first_range=[round(min(o["seconds"] for o in first), 3),
                             round(max(o["seconds"] for o in first), 3)],
                second_range=[round(min(o["seconds"] for o in second), 3),
                              round(max(o["seconds"] for o in second), 3)],
                reference_seconds=round(reference_s, 3),
                reference=f"opening the demo market ({first[0]['demo_candles']:,} candles) in "
                          f"the same window",
                target_seconds=CSV_SECOND_TARGET_S,
                meets_target=second_s < CSV_SECOND_TARGET_S,
                load_average=[x for x in load if x is not None])


def run(args) -> int:
    wanted = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(wanted) - set(CASES))
    if unknown:
        raise SystemExit(f"bench startup: unknown case {', '.join(unknown)}; "
                         f"use {', '.join(CASES)}")
    cases = []
    if "window" in wanted:
        cases.append(window_case(args.runs))
    if "csv" in wanted:
        cases.append(csv_case(args.runs, args.csv, args.symbol))
    for case in cases:
        if args.json:
            print(json.dumps(case))
        elif case["case"] == "startup":
            print(f"main window with demo candles: {case['seconds']:.2f} s (median of "
                  f"{args.runs}); bare Qt window: {case['reference_seconds']:.2f} s; ratio "
                  f"{case['ratio_vs_reference']}x; target < {TARGET_S:.0f} s: "
                  f"{'ok' if case['meets_target'] else 'MISSED'}; training panel was "
                  f"{case['training_state_when_shown']!r} when the window showed")
        else:
            lo1, hi1 = case["first_range"]
            lo2, hi2 = case["second_range"]
            print(f"{case['file']} ({case['candles']:,} candles), median of {args.runs}: first "
                  f"opening (imports into the cache) {case['first_seconds']:.2f} s "
                  f"({lo1:.2f}-{hi1:.2f}); second opening (from the cache) "
                  f"{case['second_seconds']:.2f} s ({lo2:.2f}-{hi2:.2f}), target < "
                  f"{CSV_SECOND_TARGET_S} s: {'ok' if case['meets_target'] else 'MISSED'}; "
                  f"reference, {case['reference']}: {case['reference_seconds']:.2f} s; load "
                  f"average {case['load_average']}")
    return 0
