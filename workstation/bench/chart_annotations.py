"""``workstation bench chart-annotations``: 10,000 annotations on a 1M-candle chart.

One worker process (offscreen Qt, a 1920x1080 window, the annotation layer as the main
window hosts it) on demo candles, with trades (70 %), regions (20 %) and point notes (10 %)
spread evenly over the series in a fresh annotations file. Measured, in milliseconds:

- ``load``: the layer loading the series' annotations (store, list, chart) until the chart
  has painted them, against the store's ``list()`` of the same rows alone (median of
  ``--loads``); the target is 200 ms;
- ``pan``: repaints after moving the view 20 candles (panned as ``workstation bench chart``
  pans; wall-clock and CPU time) with the annotations on screen and with them hidden: each
  pan is made both ways back to back from the same start, so the two see the same machine;
  for the newest 500 candles (a few annotations visible), 20,000 candles (about 200) and all
  candles (all of them), the trainer's reviewed band drawn in its lane once it has been
  computed (off the GUI thread, after the loads); the targets are the chart's (``workstation
  bench chart``), judged for the pans with annotations and, beside them, for the chart alone
  in the same run;
- ``add``: one trade written to the store (a durable transaction) until the chart has
  repainted with it, against the store's ``add`` alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import WorkstationError
from . import report
from .chart import TARGETS as CHART_TARGETS
from .chart import WINDOW, PaintClock, median_p95

if TYPE_CHECKING:
    from ..annotations.model import Annotation

LOAD_TARGET_MS = 200.0
VIEWS = {"500": 500, "20k": 20_000, "all": None}
PAN_CANDLES = 20
END_TS = 1_767_225_600_000  # 2026-01-01 UTC
SYMBOL, TIMEFRAME = "ETH/USDT", "1m"


def register(sub) -> None:
    p = sub.add_parser("chart-annotations",
                       help="annotation load time and chart pan speed with 10k annotations",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="one JSON object per case")
    p.add_argument("--candles", type=int, default=1_000_000, help="series length (1000000)")
    p.add_argument("--annotations", type=int, default=10_000, help="annotations (10000)")
    p.add_argument("--reps", type=int, default=30, help="pans per view and mode (30)")
    p.add_argument("--loads", type=int, default=5, help="timed loads (5)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds for the worker")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.candles < 10 * args.annotations or args.annotations < 10:
        raise WorkstationError("use at least 10 annotations and 10 candles per annotation")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_API="pyside6",
               PYQTGRAPH_QT_LIB="PySide6")
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    cmd = [sys.executable, "-m", "workstation.bench.chart_annotations", "--worker",
           "--candles", str(args.candles), "--annotations", str(args.annotations),
           "--reps", str(args.reps), "--loads", str(args.loads)]
    print(f"… {args.annotations:,} annotations on {args.candles:,} candles", file=sys.stderr,
          flush=True)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                              env=env)
    except subprocess.TimeoutExpired:
        raise WorkstationError(f"the benchmark took longer than {args.timeout:.0f} s") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise WorkstationError(f"benchmark worker failed: {' | '.join(tail)}")
    cases = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return report(cases, args.json, lambda c: print(_table(c)))


def _table(cases: list[dict]) -> str:
    lines = [f"times in ms; offscreen {WINDOW[0]}x{WINDOW[1]}, {os.cpu_count()} CPUs"]
    for c in cases:
        held = _verdicts(c["targets"])
        if c["case"] == "load":
            lines.append(
                f"load {c['annotations']:,} annotations: {c['load_ms_median']:.1f} "
                f"(store list alone {c['store_list_ms_median']:.1f}, ratio {c['ratio']:.2f}; "
                f"store {c['store_ms']:.1f} + list {c['list_ms']:.1f} + chart "
                f"{c['chart_ms']:.1f} + paint {c['paint_ms']:.1f}); {held}")
        elif c["case"] == "pan":
            lines.append(
                f"pan, view {c['view']:>3} ({c['visible_annotations']:,} annotations on "
                f"screen): with {c['with_ms_median']:.2f} / p95 {c['with_ms_p95']:.2f}, "
                f"without {c['without_ms_median']:.2f} / p95 {c['without_ms_p95']:.2f}, "
                f"ratio {c['ratio_median']:.2f}; CPU {c['with_cpu_ms_median']:.2f} vs "
                f"{c['without_cpu_ms_median']:.2f}, ratio {c['cpu_ratio_median']:.2f}; {held} "
                f"(the chart alone: {_verdicts(c['chart_alone_targets'])})")
        else:
            lines.append(f"add one trade: {c['add_ms_median']:.2f} (store add alone "
                         f"{c['store_add_ms_median']:.2f}, ratio {c['ratio']:.2f})")
    return "\n".join(lines)


def _verdicts(targets: dict[str, bool]) -> str:
    return ", ".join(f"{k} {'held' if ok else 'MISSED'}" for k, ok in targets.items())


def _pan_targets(median_ms: float, p95_ms: float) -> dict[str, bool]:
    """The chart's pan targets (``workstation bench chart``) for these times."""
    return {"pan_ms_median": median_ms <= CHART_TARGETS["pan_ms_median"],
            "pan_ms_p95": p95_ms <= CHART_TARGETS["pan_ms_p95"]}


# -- the worker -----------------------------------------------------------------------------
def synthetic_annotations(candles, n: int, seed: int = 3) -> list[Annotation]:
    """``n`` annotations of ``SYMBOL`` on ``candles``, one per equal slice of the series:
    trades (70 %), regions (20 %), point notes (10 %), none overlapping another trade. Each
    lies in the first 70 % of its slice (the rest is free for the bench's added trades)."""
    from ..annotations.model import Direction, Point, Region, Trade

    rng = np.random.default_rng(seed)
    slot = len(candles) // n
    ts, close = candles.ts, candles.close
    out: list[Annotation] = []
    for k in range(n):
        i = k * slot + int(rng.integers(0, max(1, slot // 5)))
        j = min(i + int(rng.integers(3, max(4, slot // 2))), len(candles) - 1)
        common: dict[str, Any] = {"symbol": SYMBOL, "timeframe": TIMEFRAME,
                                  "created_at": int(ts[i]),
                                  "notes": "" if k % 4 else "entered on the retest"}
        kind = k % 10
        if kind < 7:
            out.append(Trade(**common, direction=Direction.LONG if kind % 2 else Direction.SHORT,
                             entry_ts=int(ts[i]), entry_price=float(close[i]),
                             exit_ts=int(ts[j]), exit_price=float(close[j])))
        elif kind < 9:
            out.append(Region(**common, start_ts=int(ts[i]), end_ts=int(ts[j]),
                              label=("uptrend", "downtrend", "range")[k % 3]))
        else:
            out.append(Point(**common, ts=int(ts[i]), price=float(close[i])))
    return out


def _measure(n_candles: int, n_annotations: int, reps: int, loads: int) -> list[dict]:
    from PySide6 import QtWidgets

    from ..annotations.model import Direction, Trade
    from ..annotations.store import AnnotationStore
    from ..market.demo import demo_candles
    from ..market.series import SeriesKey
    from ..market.timeframes import parse_timeframe
    from ..paths import app_paths
    from ..ui.annotations.dock import AnnotationLayer
    from ..ui.chart import ChartWidget
    from ..ui.live_data import LiveData
    from ..ui.training.worker import collect_garbage_on_gui_thread

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    collect_garbage_on_gui_thread()  # as the main window's training dock does
    tmp = tempfile.TemporaryDirectory(prefix="workstation-bench-chart-annotations-")
    paths = app_paths(tmp.name).ensure()
    candles = demo_candles(n_candles, parse_timeframe(TIMEFRAME), seed=7, end_ts=END_TS)
    annotations = synthetic_annotations(candles, n_annotations)
    with AnnotationStore(paths.annotations_db) as seed_store:
        seed_store.merge(annotations)

    window = QtWidgets.QMainWindow()
    live = LiveData(paths.candle_cache, window)
    chart = ChartWidget(window)
    window.setCentralWidget(chart)
    layer = AnnotationLayer(paths, live, chart, window)
    window.resize(*WINDOW)
    window.show()
    for _ in range(3):
        app.processEvents()
    clock = PaintClock(app, chart.view.viewport())
    live.candles, live.key = candles, SeriesKey("binance", SYMBOL, parse_timeframe(TIMEFRAME))
    chart.set_candles(candles, live.key)
    chart.price_view.setXRange(n_candles - 500.5, n_candles - 0.5, padding=0)
    app.processEvents()

    cases = []
    load: list[float] = []
    store_list: list[float] = []
    parts: dict[str, list[float]] = {"store": [], "list": [], "chart": [], "paint": []}
    for _ in range(loads):
        t0 = time.perf_counter()
        found = layer.store.list(symbol=SYMBOL, timeframe=TIMEFRAME)
        t1 = time.perf_counter()
        layer.model.set_annotations(found)
        t2 = time.perf_counter()
        layer.graphics.set_annotations(found)
        t3 = time.perf_counter()
        paint = clock.time(lambda: None)
        parts["store"].append((t1 - t0) * 1e3)
        parts["list"].append((t2 - t1) * 1e3)
        parts["chart"].append((t3 - t2) * 1e3)
        parts["paint"].append(paint)
        layer.graphics.set_annotations([])
        layer.model.set_annotations([])
        app.processEvents()
        load.append(clock.time(layer.reload))
        t0 = time.perf_counter()
        layer.store.list(symbol=SYMBOL, timeframe=TIMEFRAME)
        store_list.append((time.perf_counter() - t0) * 1e3)
    assert layer.model.rowCount() == n_annotations, "the layer did not load every annotation"
    while not layer.labels.settled:  # the pans draw the trainer's labels, not wait for them
        app.processEvents()
        time.sleep(0.005)
    assert layer.labels.current is not None, "the trainer's labels were not computed"
    load_ms, store_ms = float(np.median(load)), float(np.median(store_list))
    cases.append({"case": "load", "annotations": n_annotations, "candles": n_candles,
                  "load_ms_median": round(load_ms, 2),
                  "store_list_ms_median": round(store_ms, 2),
                  "ratio": round(load_ms / store_ms, 2),
                  **{f"{k}_ms": round(float(np.median(v)), 2) for k, v in parts.items()},
                  "targets": {f"load_under_{LOAD_TARGET_MS:g}ms": load_ms < LOAD_TARGET_MS}})

    for view, width in VIEWS.items():
        base = ((n_candles - width - 0.5, n_candles - 0.5) if width
                else (40 - 0.5, n_candles - 0.5))
        back = width is not None and base[0] - PAN_CANDLES * reps > 0
        moves = [(base[0] - PAN_CANDLES * k, base[1] - PAN_CANDLES * k) if back else
                 (base[0] + PAN_CANDLES * (k % 2), base[1] + PAN_CANDLES * (k % 2))
                 for k in range(1, reps + 1)]
        samples: dict[str, list[float]] = {"without": [], "with": []}
        cpu: dict[str, list[float]] = {"without": [], "with": []}
        viewport = chart.view.viewport()
        for k, move in enumerate(moves):
            # the same pan with and without, back to back (which goes first alternates), so
            # both see the same machine; each starts from a repainted view at the same place
            start = moves[k - 1] if k else base
            for mode in ("with", "without") if k % 2 else ("without", "with"):
                def reset(s=start, m=mode, v=viewport) -> None:
                    layer.graphics.set_visible(m == "with")
                    chart.price_view.setXRange(*s, padding=0)
                    v.update()

                clock.time(reset)
                samples[mode].append(clock.time(
                    lambda m=move: chart.price_view.setXRange(*m, padding=0)))
                cpu[mode].append(clock.cpu_ms[-1])
        result = {mode: median_p95(values) for mode, values in samples.items()}
        cpu_med = {mode: float(np.median(values)) for mode, values in cpu.items()}
        lo, hi = int(candles.ts[max(int(base[0]), 0)]), int(candles.ts[-1])
        visible = sum(1 for a in annotations if a.span[0] <= hi and a.span[1] >= lo)
        med, p95 = result["with"]
        cases.append({"case": "pan", "view": view, "candles": n_candles,
                      "visible_annotations": visible,
                      "with_ms_median": round(med, 3), "with_ms_p95": round(p95, 3),
                      "without_ms_median": round(result["without"][0], 3),
                      "without_ms_p95": round(result["without"][1], 3),
                      "ratio_median": round(med / result["without"][0], 2),
                      "with_cpu_ms_median": round(cpu_med["with"], 3),
                      "without_cpu_ms_median": round(cpu_med["without"], 3),
                      "cpu_ratio_median": round(cpu_med["with"] / cpu_med["without"], 2),
                      "targets": _pan_targets(med, p95),
                      "chart_alone_targets": _pan_targets(*result["without"])})

    chart.price_view.setXRange(n_candles - 500.5, n_candles - 0.5, padding=0)
    app.processEvents()
    adds: list[float] = []
    store_adds: list[float] = []
    def make(i: int) -> Trade:
        return Trade(symbol=SYMBOL, timeframe=TIMEFRAME, direction=Direction.LONG,
                     entry_ts=int(candles.ts[i]), entry_price=float(candles.close[i]),
                     exit_ts=int(candles.ts[i + 10]), exit_price=float(candles.close[i + 10]))

    slot = n_candles // n_annotations
    for k in range(10):  # in the free tail of one of the newest slots (see synthetic_annotations)
        i = (n_annotations - 1 - k % 4) * slot + slot - 11
        for store, times in ((layer.store, adds), (None, store_adds)):
            trade = make(i)
            if store is None:
                with AnnotationStore(paths.annotations_db) as other:
                    t0 = time.perf_counter()
                    other.add(trade)
                    times.append((time.perf_counter() - t0) * 1e3)
            else:
                times.append(clock.time(lambda s=store, t=trade: s.add(t)))
            layer.store.delete(trade.id)
    add_ms, store_add_ms = float(np.median(adds)), float(np.median(store_adds))
    cases.append({"case": "add", "add_ms_median": round(add_ms, 3),
                  "store_add_ms_median": round(store_add_ms, 3),
                  "ratio": round(add_ms / store_add_ms, 2), "targets": {}})
    layer.close()
    window.close()
    tmp.cleanup()
    return cases


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m workstation.bench.chart_annotations")
    p.add_argument("--worker", action="store_true", required=True)
    p.add_argument("--candles", type=int, required=True)
    p.add_argument("--annotations", type=int, required=True)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--loads", type=int, default=5)
    args = p.parse_args(argv)
    for case in _measure(args.candles, args.annotations, args.reps, args.loads):
        print(json.dumps(case), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
