"""``workstation bench chart``: the live chart's paint speed and memory against references.

Each renderer runs in its own process (offscreen Qt, a 1920x1080 window) on the same demo
candles, for each series length and for two views: the newest 500 candles, and (almost) all of
them. Measured, in milliseconds, from the change to the end of the repaint it causes:

- ``first_paint``: from handing over the data to the first frame;
- ``pan`` and ``zoom``: repaints after moving the view 20 candles, or zooming by 1.1 (median
  and p95 of ``--reps`` each);
- ``jump``: repaints after moving the view to random places (median of 5);
- ``tick``: a forming-candle update followed by its repaint (median and p95 of ``--ticks``);
- ``peak_rss_mb``: the process's peak resident memory (data, Qt and all);
- ``*_cpu_ms_median``: the CPU time of the same repaints, which other work on the machine
  disturbs less than the wall-clock times (``load_avg`` says how busy it was).

The ``indicators`` case is workstation's chart with five indicators shown
(``FIVE_INDICATORS``): its pan and tick medians against the plain chart's in the same run
(``indicator_cost_*``: at most 1.25x) and finplot's.

References: pyqtgraph's documented candlestick example (``examples/customGraphicsItem.py``:
one ``QPicture`` of every candle, rebuilt when the data changes) and finplot, when it can be
imported by ``--finplot-python`` (finplot re-processes the whole series on every update).
The references are slow (the QPicture example takes seconds per frame at 1M candles), so each
of their measurements stops after ``--reference-budget`` seconds (default 15), and from 100k
candles on the QPicture example gets ``--reference-reps`` repetitions (default 3); each case
says how many repetitions it has (``pan_n``, ``zoom_n``, ``tick_n``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..display import measure
from ..errors import WorkstationError
from . import report

SIZES = (10_000, 100_000, 1_000_000)
VIEWS = ("500", "all")
RENDERERS = ("workstation", "indicators", "qpicture", "finplot")
FIVE_INDICATORS = ("ema 20", "sma 50", "bb 20 2", "rsi 14", "vwap")
"""The ``indicators`` renderer: workstation's chart showing these (three over the prices, RSI
in its own pane); at most ``INDICATOR_COST`` times the plain chart's pan and tick medians."""
INDICATOR_COST = 1.25
WINDOW = (1920, 1080)
PAN_CANDLES = 20
ZOOM_FACTOR = 1.1
JUMPS = 5
ALL_TRIM = 40  # the "all" view leaves out this many oldest candles, so it can pan either way
END_TS = 1_767_225_600_000  # 2026-01-01 UTC: the demo series ends here in every run
SLOW_FROM = 100_000  # from this length on, the QPicture reference gets fewer repetitions
TARGETS = {  # at 1M candles, for both views
    "pan_ms_median": 8.0, "pan_ms_p95": 16.7, "zoom_ms_median": 8.0, "zoom_ms_p95": 16.7,
    "tick_ms_median": 4.0, "first_paint_ms": 300.0, "peak_rss_mb": 300.0,
}
SPEEDUP_TARGETS = {"finplot": {"pan_ms_median": 4.0, "zoom_ms_median": 4.0,
                               "tick_ms_median": 25.0}}


# -- the parent: data, workers, report ------------------------------------------------------
def register(sub) -> None:
    p = sub.add_parser("chart", help="chart repaint speed and memory vs pyqtgraph's QPicture "
                                     "candlestick example and finplot",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="one JSON object per case")
    p.add_argument("--sizes", default=",".join(map(str, SIZES)),
                   help="series lengths, comma-separated (default %(default)s)")
    p.add_argument("--renderers", default=",".join(RENDERERS),
                   help="which to run, comma-separated (default %(default)s)")
    p.add_argument("--reps", type=int, default=20, help="pans and zooms per case")
    p.add_argument("--ticks", type=int, default=1000, help="forming-candle updates per case")
    p.add_argument("--reference-reps", type=int, default=3,
                   help="repetitions of each measurement for the QPicture reference from "
                        f"{SLOW_FROM:,} candles on")
    p.add_argument("--reference-budget", type=float, default=15.0,
                   help="seconds per measurement (pans, zooms, jumps, ticks) for a reference, "
                        "at most; it stops after the repetition that crosses it")
    p.add_argument("--finplot-python", default=os.environ.get("WORKSTATION_FINPLOT_PYTHON",
                                                              sys.executable),
                   help="Python that can import finplot (default: this one, or "
                        "$WORKSTATION_FINPLOT_PYTHON)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per worker process")
    p.set_defaults(func=run)


def _parse_list(text: str, allowed=None, kind=str) -> list:
    items = [kind(x.strip()) for x in text.split(",") if x.strip()]
    if not items:
        raise WorkstationError(f"empty list: {text!r}")
    if allowed is not None:
        bad = [x for x in items if x not in allowed]
        if bad:
            raise WorkstationError(f"unknown {', '.join(bad)}; choose from {', '.join(allowed)}")
    return items


def _write_data(folder: Path, n: int) -> Path:
    from ..market.demo import demo_candles
    from ..market.timeframes import ONE_MINUTE

    candles = demo_candles(n, ONE_MINUTE, seed=7, end_ts=END_TS)
    path = folder / f"candles_{n}.npz"
    np.savez(path, ts=candles.ts, open=candles.open, high=candles.high, low=candles.low,
             close=candles.close, volume=candles.volume)
    return path


def _worker_env() -> dict:
    env = dict(os.environ)
    env.update(QT_QPA_PLATFORM="offscreen", QT_API="pyside6", PYQTGRAPH_QT_LIB="PySide6")
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env


def run_worker(python: str, module: str, argv: list[str], timeout: float,
               case: dict) -> list[dict]:
    """The cases a bench worker (``python -m module --worker ...``, in its own process)
    printed as JSON lines; ``case`` (the renderer and what it measured) marked incomplete
    when it ran out of ``timeout``, skipped when it could not import its renderer (exit 3);
    another failure is an error naming the worker's last lines."""
    renderer = case["renderer"]
    try:
        proc = subprocess.run([python, "-m", module, "--worker", renderer, *argv],
                              capture_output=True, text=True, timeout=timeout,
                              env=_worker_env())
    except subprocess.TimeoutExpired:
        return [dict(case, incomplete=f"worker took longer than {timeout:.0f} s: nothing "
                                      f"measured")]
    if proc.returncode == 3:
        return [dict(case, skipped=proc.stdout.strip() or "not installed")]
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise WorkstationError(f"{renderer} worker failed: {' | '.join(tail)}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def _run_worker(python: str, renderer: str, data: Path, view: str, args) -> list[dict]:
    slow = renderer == "qpicture" and args.size >= SLOW_FROM
    argv = [str(data), "--view", view,
            "--reps", str(args.reference_reps if slow else args.reps),
            "--ticks", str(min(args.ticks, args.reference_reps) if slow else args.ticks),
            "--budget", str(1e9 if renderer in ("workstation", "indicators")
                            else args.reference_budget)]
    return run_worker(python, "workstation.bench.chart", argv, args.timeout,
                      {"renderer": renderer, "candles": args.size, "view": view})


def run(args) -> int:
    sizes = _parse_list(args.sizes, kind=int)
    renderers = _parse_list(args.renderers, allowed=RENDERERS)
    cases: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="workstation-bench-chart-") as tmp:
        for n in sizes:
            if n < 1000:
                raise WorkstationError(f"series length {n} is too short; use at least 1000")
            data = _write_data(Path(tmp), n)
            args.size = n
            for view in VIEWS:
                for renderer in renderers:
                    python = args.finplot_python if renderer == "finplot" else sys.executable
                    print(f"… {renderer}, {n:,} candles, view {view}", file=sys.stderr,
                          flush=True)
                    cases.extend(_run_worker(python, renderer, data, view, args))
    _add_ratios(cases)
    return report(cases, args.json, lambda c: print(_table(c)))


def _find(cases, renderer, n, view):
    for c in cases:
        if c["renderer"] == renderer and c["candles"] == n and c.get("view") == view:
            return c
    return None


def _measured(case: dict) -> bool:
    """Whether a case has measurements (a skipped or timed-out worker has none)."""
    return "pan_ms_median" in case


def _add_ratios(cases: list[dict]) -> None:
    """On each reference case: how many times slower than workstation (``*_ratio``); on
    workstation's cases at the largest size: which targets hold."""
    for case in cases:
        if case["renderer"] == "indicators" and _measured(case):
            _indicator_cost(case, _find(cases, "workstation", case["candles"], case["view"]),
                            _find(cases, "finplot", case["candles"], case["view"]))
        if case["renderer"] in ("workstation", "indicators") or not _measured(case):
            continue
        ours = _find(cases, "workstation", case["candles"], case["view"])
        if ours is None:
            continue
        for key in ("first_paint_ms", "pan_ms_median", "zoom_ms_median", "jump_ms_median",
                    "tick_ms_median", "peak_rss_mb"):
            if ours.get(key) and case.get(key) is not None:
                case[key.replace("_ms", "").replace("_mb", "") + "_ratio"] = round(
                    case[key] / ours[key], 1)
    largest = max((c["candles"] for c in cases if c["renderer"] == "workstation"), default=0)
    for case in cases:
        if case["renderer"] != "workstation" or case["candles"] != largest or largest < 1_000_000:
            continue
        held = {key: case[key] <= limit for key, limit in TARGETS.items()}
        for ref, wanted in SPEEDUP_TARGETS.items():
            other = _find(cases, ref, case["candles"], case["view"])
            if other is not None and "incomplete" in other:
                # a reference cut short by its budget or timeout: no ratio target is judged
                case.setdefault("targets_not_judged", []).append(
                    f"{ref}: reference incomplete ({other['incomplete']})")
            elif other is not None and _measured(other):
                for key, factor in wanted.items():
                    held[f"{key}_{factor:g}x_{ref}"] = other[key] >= factor * case[key]
        smaller = _find(cases, "workstation", 100_000, case["view"])
        if smaller is not None:
            for key in ("pan_ms_median", "zoom_ms_median", "tick_ms_median",
                        "pan_cpu_ms_median", "zoom_cpu_ms_median", "tick_cpu_ms_median"):
                held[f"{key}_within_20pct_of_100k"] = case[key] <= 1.2 * smaller[key]
        case["targets"] = held


def _indicator_cost(case: dict, plain: dict | None, finplot: dict | None) -> None:
    """The five indicators' cost: their case's pan and tick medians over the plain chart's
    (``indicator_cost_*``), and whether that holds ``INDICATOR_COST`` and still beats finplot
    (``indicator_targets``)."""
    if plain is None or not _measured(plain):
        return
    held = {}
    for key in ("pan_ms_median", "tick_ms_median", "pan_cpu_ms_median", "tick_cpu_ms_median"):
        if plain.get(key):
            ratio = case[key] / plain[key]
            case[f"indicator_cost_{key}"] = round(ratio, 2)
            if "cpu" not in key:
                held[f"{key}_within_{INDICATOR_COST:g}x_plain"] = ratio <= INDICATOR_COST
    if finplot is not None and _measured(finplot) and "incomplete" not in finplot:
        for key in ("pan_ms_median", "tick_ms_median"):
            held[f"{key}_ahead_of_finplot"] = case[key] < finplot[key]
    case["indicator_targets"] = held


def _table(cases: list[dict]) -> str:
    cols = ("renderer", "candles", "visible", "first", "pan med", "pan p95", "zoom med",
            "zoom p95", "jump", "tick med", "tick p95", "peak MB", "reps", "load")
    rows = []
    skipped = []
    incomplete = []
    for c in cases:
        if "skipped" in c:
            skipped.append(f"{c['renderer']} at {c['candles']:,} candles, view {c['view']}: "
                           f"skipped ({c['skipped']})")
            continue
        if "incomplete" in c:
            incomplete.append(f"{c['renderer']} at {c['candles']:,} candles, view {c['view']}: "
                              f"incomplete ({c['incomplete']})")
        if not _measured(c):
            continue
        rows.append((c["renderer"], f"{c['candles']:,}", f"{c['visible']:,}",
                     measure(c["first_paint_ms"]), measure(c["pan_ms_median"]),
                     measure(c["pan_ms_p95"]), measure(c["zoom_ms_median"]),
                     measure(c["zoom_ms_p95"]),
                     measure(c["jump_ms_median"]), measure(c["tick_ms_median"], 2),
                     measure(c["tick_ms_p95"], 2), measure(c["peak_rss_mb"], 0),
                     f"{c['pan_n']}/{c['tick_n']}", f"{c.get('load_avg', 0):.1f}"))
    widths = [max(len(str(r[i])) for r in rows + [cols]) for i in range(len(cols))]
    loads = [c["load_avg"] for c in cases if "load_avg" in c]
    load_note = f", load average {min(loads):.1f}-{max(loads):.1f}" if loads else ""
    lines = ["times in ms; reps = pans (and zooms) / ticks measured; load = the machine's "
             f"load average when the case began; offscreen {WINDOW[0]}x{WINDOW[1]}, "
             f"{os.cpu_count()} CPUs{load_note}",
             "  ".join(h.rjust(w) for h, w in zip(cols, widths))]
    lines += ["  ".join(str(v).rjust(w) for v, w in zip(r, widths)) for r in rows]
    if incomplete:
        lines += ["", *incomplete]
    if skipped:
        lines += ["", *skipped, "(finplot: install the bench extra, or point --finplot-python or "
                               "$WORKSTATION_FINPLOT_PYTHON at a Python that has it)"]
    ratio_lines = []
    for c in cases:
        if c["renderer"] == "workstation" or not _measured(c) or "pan_median_ratio" not in c:
            continue
        ratio_lines.append(
            f"{c['renderer']} / workstation at {c['candles']:,} candles, view {c['view']}: "
            f"first paint {c.get('first_paint_ratio', '—')}x, pan "
            f"{c.get('pan_median_ratio', '—')}x, zoom {c.get('zoom_median_ratio', '—')}x, jump "
            f"{c.get('jump_median_ratio', '—')}x, tick {c.get('tick_median_ratio', '—')}x "
            f"(times slower); peak memory {c.get('peak_rss_ratio', '—')}x")
    if ratio_lines:
        lines += ["", *ratio_lines]
    for c in cases:
        if "indicator_cost_pan_ms_median" in c:
            lines.append(
                f"five indicators / plain chart at {c['candles']:,} candles, view {c['view']}: "
                f"pan {c['indicator_cost_pan_ms_median']}x, tick "
                f"{c.get('indicator_cost_tick_ms_median', '—')}x (CPU: pan "
                f"{c.get('indicator_cost_pan_cpu_ms_median', '—')}x, tick "
                f"{c.get('indicator_cost_tick_cpu_ms_median', '—')}x)")
        if c.get("indicator_targets"):
            missed = [k for k, ok in c["indicator_targets"].items() if not ok]
            lines.append(f"indicator targets at {c['candles']:,} candles, view {c['view']}: "
                         f"{len(c['indicator_targets']) - len(missed)} held"
                         + (f"; missed: {', '.join(missed)}" if missed else ""))
        if c.get("targets"):
            held = [k for k, ok in c["targets"].items() if ok]
            missed = [k for k, ok in c["targets"].items() if not ok]
            lines.append(f"targets at {c['candles']:,} candles, view {c['view']}: "
                         f"{len(held)} held" + (f"; missed: {', '.join(missed)}" if missed
                                                else ""))
        for note in c.get("targets_not_judged", []):
            lines.append(f"targets at {c['candles']:,} candles, view {c['view']}: not judged "
                         f"against {note}")
    return "\n".join(lines)


# -- the worker: one renderer in its own process ----------------------------------------------
class _Budget:
    def __init__(self, seconds: float):
        self.seconds = seconds

    def start(self) -> None:
        self._until = time.perf_counter() + self.seconds

    def left(self) -> bool:
        return time.perf_counter() < self._until


def median_p95(samples: list[float]) -> tuple[float, float]:
    if not samples:
        return math.nan, math.nan
    a = np.asarray(samples)
    return float(np.median(a)), float(np.percentile(a, 95))


def count_paints(viewport):
    """An event filter installed on ``viewport``; its ``count`` is the paint events so far."""
    from PySide6 import QtCore

    class Counter(QtCore.QObject):
        count = 0

        def eventFilter(self, obj, event):
            if event.type() == QtCore.QEvent.Type.Paint:
                self.count += 1
            return False

    counter = Counter()
    viewport.installEventFilter(counter)
    return counter


class PaintClock:
    """Counts paint events of a view's viewport, to time a change until its repaint ends."""

    def __init__(self, app, viewport):
        self._app = app
        self.cpu_ms: list[float] = []
        self._counter = count_paints(viewport)

    def time(self, change, timeout: float = 120.0) -> float:
        """Milliseconds from calling ``change()`` until the viewport has painted; the CPU
        time this thread spent on it is appended to ``cpu_ms``."""
        before = self._counter.count
        c0 = time.thread_time()
        t0 = time.perf_counter()
        change()
        while self._counter.count == before:
            self._app.processEvents()
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError("no repaint followed the change")
        wall = (time.perf_counter() - t0) * 1000.0
        self.cpu_ms.append((time.thread_time() - c0) * 1000.0)
        return wall


def load_arrays(path: str) -> dict[str, np.ndarray]:
    """The arrays a bench wrote for its worker (``np.savez``)."""
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


class _Workstation:
    name = "workstation"
    indicators: tuple[str, ...] = ()

    def __init__(self, data, candles=None, key=None):
        """The chart of ``data``'s arrays, or of ``candles`` under ``key`` (then ``data``
        holds views of their columns, not copies)."""
        from ..market.candles import Candles
        from ..market.series import SeriesKey
        from ..market.timeframes import ONE_MINUTE
        from ..ui.chart import ChartWidget

        self.candles = candles if candles is not None else Candles.from_arrays(
            data["ts"], data["open"], data["high"], data["low"], data["close"],
            data["volume"], ONE_MINUTE, validate=False)
        self.key = key or SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
        self.window = ChartWidget()
        self.viewport = self.window.view.viewport()

    def load(self, x0, x1) -> None:
        from ..indicators import parse_spec

        self.window.set_candles(self.candles, self.key)
        self.window.indicators.set_specs([parse_spec(t) for t in self.indicators])
        self.set_view(x0, x1)

    def set_view(self, x0, x1) -> None:
        self.window.price_view.setXRange(x0, x1, padding=0)

    def tick(self, o, h, l, c, v) -> None:
        self.candles.update_last(o, h, l, c, v)
        self.window.candles_changed("update")

    def append(self, ts, o, h, l, c, v) -> None:
        self.candles.append(ts, o, h, l, c, v, closed=False)
        self.window.candles_changed("append")


class _WithIndicators(_Workstation):
    name = "indicators"
    indicators = FIVE_INDICATORS


class _QPicture:
    """pyqtgraph's documented candlestick item (examples/customGraphicsItem.py), as written
    there; a data change means building the picture again, the example's only way."""

    name = "qpicture"

    def __init__(self, data):
        import pyqtgraph as pg
        from pyqtgraph import QtCore, QtGui

        class CandlestickItem(pg.GraphicsObject):
            def __init__(self, data):
                pg.GraphicsObject.__init__(self)
                self.data = data  # fields: time, open, close, min, max
                self.generatePicture()

            def generatePicture(self):
                self.picture = QtGui.QPicture()
                p = QtGui.QPainter(self.picture)
                p.setPen(pg.mkPen('w'))
                w = (self.data[1][0] - self.data[0][0]) / 3.
                for (t, open, close, min, max) in self.data:
                    p.drawLine(QtCore.QPointF(t, min), QtCore.QPointF(t, max))
                    if open > close:
                        p.setBrush(pg.mkBrush('r'))
                    else:
                        p.setBrush(pg.mkBrush('g'))
                    p.drawRect(QtCore.QRectF(t - w, open, w * 2, close - open))
                p.end()

            def paint(self, p, *args):
                p.drawPicture(0, 0, self.picture)

            def boundingRect(self):
                return QtCore.QRectF(self.picture.boundingRect())

        self._item_class = CandlestickItem
        self.rows = list(zip(np.arange(len(data["ts"]), dtype=float).tolist(),
                             data["open"].tolist(), data["close"].tolist(),
                             data["low"].tolist(), data["high"].tolist()))
        self._low, self._high = data["low"], data["high"]
        self.window = pg.PlotWidget()
        self.window.disableAutoRange()
        self.viewport = self.window.viewport()
        self.item = None

    def load(self, x0, x1) -> None:
        self.item = self._item_class(self.rows)
        self.window.addItem(self.item)
        self.set_view(x0, x1)

    def set_view(self, x0, x1) -> None:
        i0, i1 = max(0, int(x0 + 0.5)), min(len(self.rows), int(x1 + 0.5) + 1)
        self.window.setRange(xRange=(x0, x1), yRange=(self._low[i0:i1].min(),
                                                      self._high[i0:i1].max()), padding=0.05)

    def tick(self, o, h, l, c, v) -> None:
        self.rows[-1] = (self.rows[-1][0], o, c, l, h)
        assert self.item is not None, "tick before load"
        self.item.generatePicture()
        self.item.update()


class _Finplot:
    """finplot's candlestick and volume plots, updated the way its realtime examples do:
    ``update_data`` with the whole frame."""

    name = "finplot"

    def __init__(self, data):
        import finplot as fplt
        import pandas as pd

        self.fplt = fplt
        self.df = pd.DataFrame({"time": data["ts"], "open": data["open"], "close": data["close"],
                                "high": data["high"], "low": data["low"],
                                "volume": data["volume"]})
        self.ax, self.axv = fplt.create_plot("bench", rows=2, maximize=False)
        self.window = self.ax.vb.win
        self.viewport = self.window.viewport()
        self.plot = self.vplot = None

    def load(self, x0, x1) -> None:
        fplt = self.fplt
        self.plot = fplt.candlestick_ochl(self.df[["time", "open", "close", "high", "low"]],
                                          ax=self.ax)
        self.vplot = fplt.volume_ocv(self.df[["time", "open", "close", "volume"]], ax=self.axv)
        fplt.refresh()
        self.set_view(x0, x1)

    def set_view(self, x0, x1) -> None:
        self.ax.vb.update_y_zoom(x0, x1)

    def tick(self, o, h, l, c, v) -> None:
        last = self.df.index[-1]
        self.df.loc[last, ["open", "close", "high", "low", "volume"]] = (o, c, h, l, v)
        assert self.plot is not None and self.vplot is not None, "tick before load"
        self.plot.update_data(self.df[["time", "open", "close", "high", "low"]])
        self.vplot.update_data(self.df[["time", "open", "close", "volume"]])


def _measure(renderer: str, data_path: str, view: str, reps: int, ticks: int,
             budget_s: float) -> dict:
    from PySide6 import QtWidgets

    load_at_start = os.getloadavg()[0]  # other work on the machine slows every number
    data = load_arrays(data_path)
    QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    renderers: dict[str, type[_Workstation | _QPicture | _Finplot]] = {
        "workstation": _Workstation, "indicators": _WithIndicators, "qpicture": _QPicture,
        "finplot": _Finplot}
    case = measure_chart(renderers[renderer](data), data, view, reps, ticks, budget_s)
    case["load_avg"] = round(load_at_start, 2)
    return case


def measure_chart(target, data, view: str, reps: int, ticks: int, budget_s: float) -> dict:
    """The first paint, pan, zoom, jump, tick (and for workstation append) times of
    ``target``, a chart of the arrays ``data`` in a shown window, in ``view``."""
    from PySide6 import QtWidgets

    n = len(data["ts"])
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    renderer = target.name
    target.window.resize(*WINDOW)
    target.window.show()
    for _ in range(3):
        app.processEvents()
    clock = PaintClock(app, target.viewport)
    budget = _Budget(budget_s)
    rng = np.random.default_rng(1)
    base = (n - 500 - 0.5, n - 0.5) if view == "500" else (ALL_TRIM - 0.5, n - 0.5)
    width = base[1] - base[0]
    first_ms = clock.time(lambda: target.load(*base))

    cpu: dict[str, list[float]] = {}

    def reset() -> None:
        """Back to the first view, untimed (the view may be there already: no repaint)."""
        target.set_view(*base)
        for _ in range(3):
            app.processEvents()

    def series(name, moves) -> list[float]:
        out = []
        budget.start()
        clock.cpu_ms = cpu[name] = []
        for x0, x1 in moves:
            out.append(clock.time(lambda x0=x0, x1=x1: target.set_view(x0, x1)))
            if not budget.left():
                break
        return out

    if view == "500":  # keep panning back in time
        pans = [(base[0] - PAN_CANDLES * k, base[1] - PAN_CANDLES * k) for k in range(1, reps + 1)]
    else:  # nearly everything is visible: pan back and forth
        pans = [(base[0] - PAN_CANDLES * (k % 2), base[1] - PAN_CANDLES * (k % 2))
                for k in range(1, reps + 1)]
    pan = series("pan", pans)
    reset()
    centre = (base[0] + base[1]) / 2
    zooms = []
    w = width
    for k in range(reps):  # in, then back out
        w = w / ZOOM_FACTOR if k < (reps + 1) // 2 else w * ZOOM_FACTOR
        zooms.append((centre - w / 2, centre + w / 2))
    zoom = series("zoom", zooms)
    jumps = []
    for _ in range(min(JUMPS, reps)):
        start = float(rng.uniform(-0.5, max(n - width - 0.5, 0.0)))
        jumps.append((start, start + width))
    jump = series("jump", jumps)
    reset()
    tick = []
    o, h, l, c, v = (float(data[k][-1]) for k in ("open", "high", "low", "close", "volume"))
    budget.start()
    clock.cpu_ms = cpu["tick"] = []
    for _ in range(ticks):
        c = max(c * (1 + rng.normal(0, 2e-4)), 1e-9)
        h, l, v = max(h, c), min(l, c), v + float(rng.uniform(0, 1))
        tick.append(clock.time(lambda h=h, l=l, c=c, v=v: target.tick(o, h, l, c, v)))
        if not budget.left():
            break
    case = {"renderer": renderer, "candles": n, "view": view, "visible": int(round(width)),
            "first_paint_ms": round(first_ms, 2)}
    for name, samples in (("pan", pan), ("zoom", zoom), ("tick", tick)):
        med, p95 = median_p95(samples)
        case[f"{name}_ms_median"] = round(med, 3)
        case[f"{name}_ms_p95"] = round(p95, 3)
        case[f"{name}_n"] = len(samples)
        case[f"{name}_cpu_ms_median"] = round(median_p95(cpu[name])[0], 3)
    case["jump_ms_median"] = round(median_p95(jump)[0], 3)
    if isinstance(target, _Workstation):
        appends = []
        ts = int(data["ts"][-1])
        for _ in range(20):
            ts += 60_000
            appends.append(clock.time(lambda ts=ts: target.append(ts, c, c, c, c, 0.0)))
        case["append_ms_median"] = round(median_p95(appends)[0], 3)
    case["peak_rss_mb"] = round(_peak_rss_mb(), 1)
    return case


def _peak_rss_mb() -> float:
    """This process's peak resident memory. ``VmHWM`` (Linux) counts this program only;
    ``ru_maxrss`` would also count the parent's memory at the fork that started it."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def finplot_importable() -> bool:
    """Whether this interpreter can run the finplot reference (says why not on stdout, which
    the bench that started this worker reads)."""
    try:
        import finplot  # noqa: F401
        import pandas  # noqa: F401
    except ImportError as exc:
        print(f"finplot is not importable by {sys.executable} ({exc.name})")
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m workstation.bench.chart")
    p.add_argument("--worker", required=True, choices=RENDERERS)
    p.add_argument("data")
    p.add_argument("--view", choices=VIEWS, required=True)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--ticks", type=int, default=1000)
    p.add_argument("--budget", type=float, default=1e9)
    args = p.parse_args(argv)
    if args.worker == "finplot" and not finplot_importable():
        return 3
    case = _measure(args.worker, args.data, args.view, args.reps, args.ticks, args.budget)
    print(json.dumps(case), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
