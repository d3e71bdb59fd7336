"""``workstation bench startup``: seconds from a fresh interpreter to the main window shown
with demo candles on the chart (torch still loading in the background, "preparing device"),
beside a bare PySide6 window as the reference, each the median of a few fresh processes.
Target: under 2 s on a 2-core machine."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

TARGET_S = 2.0

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


def register(names) -> None:
    parser = names.add_parser("startup", help="time to the main window, vs. a bare Qt window")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=run)


def _measure(code: str, runs: int) -> tuple[float, str]:
    times, state = [], ""
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="workstation-bench-startup-") as home:
            env = dict(os.environ, QT_QPA_PLATFORM="offscreen", WORKSTATION_HOME=home)
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, timeout=300, check=True).stdout.split()
        times.append(float(out[0]))
        state = out[1]
    return statistics.median(times), state


def run(args) -> int:
    window_s, state = _measure(_WORKSTATION, args.runs)
    bare_s, _ = _measure(_BARE, args.runs)
    case = dict(case="startup", seconds=round(window_s, 3), reference_seconds=round(bare_s, 3),
                ratio_vs_reference=round(window_s / bare_s, 2), target_seconds=TARGET_S,
                meets_target=window_s < TARGET_S, training_state_when_shown=state,
                runs=args.runs)
    if args.json:
        print(json.dumps(case))
    else:
        print(f"main window with demo candles: {window_s:.2f} s (median of {args.runs}); "
              f"bare Qt window: {bare_s:.2f} s; ratio {case['ratio_vs_reference']}x; "
              f"target < {TARGET_S:.0f} s: {'ok' if case['meets_target'] else 'MISSED'}; "
              f"training panel was {state!r} when the window showed")
    return 0
