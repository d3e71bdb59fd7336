"""``workstation bench multichart``: four linked charts against finplot, in the same run.

The window's chart area (offscreen, 1920x1080, layout 2x2) shows demo 1m candles on chart 1
and their resamples to 15m, 1h and 1d (``TimeframeStack``) on the others, linked by time.
Measured, in milliseconds, from the change until all four charts have repainted:

- ``pan``: chart 1 moves 20 candles back (the others follow it by time): median and p95 of
  ``--reps``, starting in the middle of the history so that every chart can follow, until
  every chart the pan changes on screen has repainted (the 1d chart follows 20 minutes by
  less than a pixel: it is not redrawn, as finplot's windows whose view stays);
- ``tick``: a forming-candle update of chart 1 (every chart's forming candle changes), at the
  live edge: median and p95 of ``--ticks``;
- ``peak_rss_mb``: the process's peak resident memory.

The reference is finplot (in its own process, on PySide6; ``--finplot-python``): the same
four series in four windows of the same size, each set to the time range our chart showed
at every step (ranges recorded by our run; finplot snaps edges to whole candles, so a pan
waits only for the windows whose view changed), ticks by ``update_data`` as its realtime
examples do. Each reference measurement stops after ``--reference-budget`` seconds and is
then reported as incomplete. Both run ``--repeats`` times, alternately; ranges are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import WorkstationError
from . import report
from .chart import (
    END_TS,
    _peak_rss_mb,
    count_paints,
    finplot_importable,
    load_arrays,
    median_p95,
    run_worker,
)

TIMEFRAMES = ("1m", "15m", "1h", "1d")
WINDOW = (1920, 1080)
PAN_CANDLES = 20
START_VISIBLE = (500, 150, 150, 150)  # candles on screen per chart at the start
TARGETS = {"pan_ms_median": 12.0, "pan_ms_p95": 16.7, "tick_ms_median": 6.0,
           "peak_rss_mb": 400.0}


def register(sub) -> None:
    p = sub.add_parser("multichart", help="four linked charts (1m and its resamples) vs "
                                          "finplot", description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="one JSON object per case")
    p.add_argument("--candles", type=int, default=1_000_000, help="1m candles on chart 1")
    p.add_argument("--reps", type=int, default=40, help="pans per run")
    p.add_argument("--ticks", type=int, default=300, help="forming-candle updates per run")
    p.add_argument("--repeats", type=int, default=3, help="runs of each, alternately")
    p.add_argument("--reference-budget", type=float, default=20.0,
                   help="seconds per reference measurement (pans, ticks), at most")
    p.add_argument("--renderers", default="workstation,finplot",
                   help="which to run, comma-separated (default %(default)s)")
    p.add_argument("--finplot-python", default=os.environ.get("WORKSTATION_FINPLOT_PYTHON",
                                                              sys.executable),
                   help="Python that can import finplot (default: this one, or "
                        "$WORKSTATION_FINPLOT_PYTHON)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per worker process")
    p.set_defaults(func=run)


# -- the parent -----------------------------------------------------------------------------
def run(args) -> int:
    from ..market.demo import demo_candles
    from ..market.timeframes import ONE_MINUTE

    renderers = [r.strip() for r in args.renderers.split(",") if r.strip()]
    if not renderers or set(renderers) - {"workstation", "finplot"}:
        raise WorkstationError(f"renderers are workstation and finplot, not {args.renderers!r}")
    if args.candles < 100_000:
        raise WorkstationError("use at least 100,000 candles: the 1d chart needs some days")
    cases: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="workstation-bench-multichart-") as tmp:
        data = Path(tmp) / "candles.npz"
        c = demo_candles(args.candles, ONE_MINUTE, seed=7, end_ts=END_TS)
        np.savez(data, ts=c.ts, open=c.open, high=c.high, low=c.low, close=c.close,
                 volume=c.volume)
        plan = Path(tmp) / "plan.json"
        for k in range(args.repeats):
            if "workstation" in renderers or not plan.exists():
                case = _run_worker(sys.executable, "workstation", data, plan, args)
                if "workstation" in renderers:
                    cases.append(case | {"run": k + 1})
            if "finplot" in renderers:
                case = _run_worker(args.finplot_python, "finplot", data, plan, args)
                cases.append(case | {"run": k + 1})
    summary = _summary(cases)
    return report([*cases, summary], args.json, lambda _cases: print(_table(cases, summary)))


def _run_worker(python: str, renderer: str, data: Path, plan: Path, args) -> dict:
    print(f"… {renderer}", file=sys.stderr, flush=True)
    argv = [str(data), str(plan), "--reps", str(args.reps), "--ticks", str(args.ticks),
            "--budget", str(1e9 if renderer == "workstation" else args.reference_budget)]
    return run_worker(python, "workstation.bench.multichart", argv, args.timeout,
                      {"renderer": renderer})[0]


RATIOS = {"pan_ms_median": "pan_ratio", "tick_ms_median": "tick_ratio",
          "peak_rss_mb": "peak_rss_ratio"}  # finplot / workstation, per measurement
KEYS = ("pan_ms_median", "pan_ms_p95", "tick_ms_median", "tick_ms_p95", "first_paint_ms",
        "peak_rss_mb")


def _summary(cases: list[dict]) -> dict:
    """Ranges over the runs, the ratios finplot / workstation (medians of the runs) and which
    targets held in every run."""
    out: dict = {"summary": True, "cpus": os.cpu_count()}
    for renderer in ("workstation", "finplot"):
        runs = [c for c in cases if c["renderer"] == renderer and "pan_ms_median" in c]
        for key in KEYS:
            values = [c[key] for c in runs if c.get(key) is not None]
            if values:
                out[f"{renderer}_{key}_range"] = [min(values), max(values)]
                out[f"{renderer}_{key}_median"] = float(np.median(values))
        out[f"{renderer}_incomplete"] = [c["incomplete"] for c in cases
                                         if c["renderer"] == renderer and "incomplete" in c]
        out[f"{renderer}_skipped"] = [c["skipped"] for c in cases
                                      if c["renderer"] == renderer and "skipped" in c]
    for key, name in RATIOS.items():
        ours, theirs = out.get(f"workstation_{key}_median"), out.get(f"finplot_{key}_median")
        if ours and theirs is not None:
            out[name] = round(theirs / ours, 1)
    ours = [c for c in cases if c["renderer"] == "workstation" and "pan_ms_median" in c]
    if ours:
        out["targets"] = {key: all(c[key] <= limit for c in ours)
                          for key, limit in TARGETS.items()}
        out["targets_held_in_runs"] = {key: sum(c[key] <= limit for c in ours)
                                       for key, limit in TARGETS.items()}
        out["runs"] = len(ours)
    loads = [c["load_avg"] for c in cases if "load_avg" in c]
    if loads:
        out["load_avg_range"] = [min(loads), max(loads)]
    return out


def _fmt_range(summary: dict, renderer: str, key: str) -> str:
    r = summary.get(f"{renderer}_{key}_range")
    if r is None:
        return "—"
    return f"{r[0]:,.1f}" if r[0] == r[1] else f"{r[0]:,.1f}-{r[1]:,.1f}"


def _table(cases: list[dict], summary: dict) -> str:
    load = summary.get("load_avg_range")
    lines = [f"ms until every chart the change moves on screen has repainted; ranges over "
             f"the runs; offscreen "
             f"{WINDOW[0]}x{WINDOW[1]} (2x2), {summary['cpus']} CPUs"
             + (f", load average {load[0]:.1f}-{load[1]:.1f}" if load else "")]
    cols = ("renderer", "pan med", "pan p95", "tick med", "tick p95", "first paint", "peak MB")
    rows: list[tuple[str, ...]] = [cols]
    for renderer in ("workstation", "finplot"):
        if any(f"{renderer}_{k}_range" in summary for k in KEYS):
            rows.append((renderer, *(_fmt_range(summary, renderer, k) for k in
                                     ("pan_ms_median", "pan_ms_p95", "tick_ms_median",
                                      "tick_ms_p95", "first_paint_ms", "peak_rss_mb"))))
    widths = [max(len(r[i]) for r in rows) for i in range(len(cols))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in rows]
    for c in cases:
        if c["renderer"] == "finplot" and c.get("pan_n") is not None:
            lines.append(f"finplot run {c['run']}: {c['pan_n']} pans, {c['tick_n']} ticks "
                         f"measured")
    for renderer in ("workstation", "finplot"):
        for note in summary.get(f"{renderer}_incomplete", []):
            lines.append(f"{renderer}: incomplete ({note})")
        for note in summary.get(f"{renderer}_skipped", []):
            lines.append(f"{renderer}: skipped ({note}; point --finplot-python at a Python "
                         f"that has finplot)")
    if "pan_ratio" in summary:
        lines.append(f"finplot / workstation (medians of the runs): pan "
                     f"{summary['pan_ratio']}x, tick {summary.get('tick_ratio', '—')}x slower; "
                     f"peak memory {summary.get('peak_rss_ratio', '—')}x")
    if "targets" in summary:
        held = [k for k, ok in summary["targets"].items() if ok]
        missed = [k for k, ok in summary["targets"].items() if not ok]
        lines.append(f"targets (every run): {len(held)} held"
                     + (f"; missed: {', '.join(missed)}" if missed else ""))
        if missed:
            runs, held_in = summary["runs"], summary["targets_held_in_runs"]
            lines.append("held in: " + ", ".join(f"{k} {held_in[k]} of {runs} runs"
                                                 for k in missed))
    return "\n".join(lines)


# -- the workers ----------------------------------------------------------------------------
class PaintsClock:
    """Counts paint events of several viewports, to time a change until all have painted."""

    def __init__(self, app, viewports):
        self._app = app
        self._counters = [count_paints(viewport) for viewport in viewports]

    def time(self, change, timeout: float = 120.0, moved=None) -> float:
        """Milliseconds from ``change()`` until every viewport has painted (each that
        ``moved()``, called after the change, says changed, when given)."""
        before = [c.count for c in self._counters]
        t0 = time.perf_counter()
        change()
        waiting = [True] * len(before) if moved is None else moved()
        while any(w and c.count == b for c, b, w in zip(self._counters, before, waiting)):
            self._app.processEvents()
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError("not every chart repainted after the change")
        return (time.perf_counter() - t0) * 1000.0


class _Workstation:
    def __init__(self, data):
        from PySide6 import QtWidgets

        from ..market.candles import Candles
        from ..market.series import SeriesKey
        from ..market.timeframes import ONE_MINUTE
        from ..ui.chart import ChartWidget
        from ..ui.chart_area import ChartArea

        self.base = Candles.from_arrays(data["ts"], data["open"], data["high"], data["low"],
                                        data["close"], data["volume"], ONE_MINUTE,
                                        validate=False)
        self.base.last_closed = False
        self.key = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
        self.window = QtWidgets.QMainWindow()
        self.area = ChartArea(ChartWidget(self.window), None, None, self.window)
        self.window.setCentralWidget(self.area)
        self.area.set_layout("four")
        self.viewports = [c.view.viewport() for c in self.area.charts]

    def load(self) -> None:
        self.area.set_base(self.base, self.key)

    def start(self, centre: int) -> None:
        """Each chart ``START_VISIBLE`` candles wide, chart 1 centred on ``centre``."""
        for chart, width in zip(self.area.charts, START_VISIBLE):
            x = chart.view_model.time_map.x_of(centre)
            chart.view_model.show_x_range(x - width / 2, x + width / 2)

    def pan(self) -> None:
        self._before = self._on_screen()
        self.area.primary.pan(-PAN_CANDLES)
        self.area.group.flush()  # the others follow now (the window does it before painting)

    def moved(self) -> list[bool]:
        """Which charts the last pan changes on screen, so repaints: chart 1, and each chart
        that moved or whose marks moved by a pixel (a 1d chart following a 20-minute
        pan does neither)."""
        return [a != b for a, b in zip(self._before, self._on_screen())]

    def _on_screen(self) -> list:
        return [(c.time_range(), c.link_marks.pixels) for c in self.area.charts]

    def go_live(self) -> None:
        self.area.primary.go_live()

    def ranges(self) -> list[tuple[int, int]]:
        return [c.time_range() for c in self.area.charts]

    def tick(self, o, h, l, c, v) -> None:
        self.base.update_last(o, h, l, c, v)
        self.area.base_changed("update")


class _Finplot:
    """Four finplot windows (candles and volume), set to the times our charts showed."""

    def __init__(self, data):
        import finplot as fplt
        import pandas as pd

        from ..market.candles import Candles
        from ..market.timeframes import ONE_MINUTE, parse_timeframe

        self.fplt = fplt
        base = Candles.from_arrays(data["ts"], data["open"], data["high"], data["low"],
                                   data["close"], data["volume"], ONE_MINUTE, validate=False)
        self.frames, self.plots, self.axes, self.windows, self.ts = [], [], [], [], []
        for tf in TIMEFRAMES:
            c = base if tf == "1m" else base.resample(parse_timeframe(tf))
            self.ts.append((c.ts, c.timeframe.ms))
            self.frames.append(pd.DataFrame({"time": c.ts, "open": c.open, "close": c.close,
                                             "high": c.high, "low": c.low,
                                             "volume": c.volume}))
            ax, axv = fplt.create_plot(f"bench {tf}", rows=2, maximize=False)
            self.axes.append((ax, axv))
            self.windows.append(ax.vb.win)
        self.viewports = [w.viewport() for w in self.windows]

    def load(self) -> None:
        fplt = self.fplt
        for df, (ax, axv) in zip(self.frames, self.axes):
            candles = fplt.candlestick_ochl(df[["time", "open", "close", "high", "low"]], ax=ax)
            volume = fplt.volume_ocv(df[["time", "open", "close", "volume"]], ax=axv)
            self.plots.append((candles, volume))
        fplt.refresh()

    def show_ranges(self, ranges) -> list[bool]:
        """Set each window to its time range; returns which of them changed (finplot snaps
        a view's edges to whole candles, so a small pan may leave a higher timeframe's)."""
        changed = []
        for (ax, _), (ts, tf), (t0, t1) in zip(self.axes, self.ts, ranges):
            before = ax.vb.viewRect()
            ax.vb.update_y_zoom(_x_of(ts, tf, t0), _x_of(ts, tf, t1))
            changed.append(ax.vb.viewRect() != before)
        return changed

    def time_ranges(self, clock: PaintsClock, ranges) -> float:
        moved: list[bool] = []
        return clock.time(lambda: moved.extend(self.show_ranges(ranges)), moved=lambda: moved)

    def tick(self, o, h, l, c, v) -> None:
        for df, (candles, volume) in zip(self.frames, self.plots):
            last = df.index[-1]
            row = df.loc[last]
            df.loc[last, ["high", "low", "close", "volume"]] = (
                max(row["high"], h), min(row["low"], l), c, row["volume"] + 1e-3)
            candles.update_data(df[["time", "open", "close", "high", "low"]])
            volume.update_data(df[["time", "open", "close", "volume"]])


def _x_of(ts: np.ndarray, tf: int, t: int) -> float:
    """The x of time ``t`` on an index axis (candle ``i`` from ``i - 0.5`` to ``i + 0.5``),
    as ``TimeMap.x_of`` (without the core, which finplot's Python need not import)."""
    i = max(int(np.searchsorted(ts, t, side="right")) - 1, 0)
    return i - 0.5 + (t - int(ts[i])) / tf


def _measure(renderer: str, data_path: str, plan_path: str, reps: int, ticks: int,
             budget_s: float) -> dict:
    from PySide6 import QtWidgets

    load_at_start = os.getloadavg()[0]
    data = load_arrays(data_path)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    target = _Workstation(data) if renderer == "workstation" else _Finplot(data)
    if isinstance(target, _Workstation):
        target.window.resize(*WINDOW)
        target.window.show()
    else:
        for k, window in enumerate(target.windows):
            window.resize(WINDOW[0] // 2, WINDOW[1] // 2)
            window.move((k % 2) * WINDOW[0] // 2, (k // 2) * WINDOW[1] // 2)
            window.show()
    for _ in range(3):
        app.processEvents()
    clock = PaintsClock(app, target.viewports)
    first_ms = clock.time(target.load)
    pan: list[float] = []
    tick: list[float] = []
    plan: dict[str, Any]
    if isinstance(target, _Workstation):
        ts = data["ts"]
        target.start(int(ts[len(ts) // 2]))
        for _ in range(5):
            app.processEvents()
        plan = {"start": target.ranges(), "pans": []}
        for _ in range(reps):
            pan.append(clock.time(target.pan, moved=target.moved))
            plan["pans"].append(target.ranges())
        clock.time(target.go_live)
        plan["live"] = target.ranges()
        Path(plan_path).write_text(json.dumps(plan))
    else:
        plan = json.loads(Path(plan_path).read_text())
        target.time_ranges(clock, plan["start"])
        until = time.perf_counter() + budget_s
        for ranges in plan["pans"][:reps]:
            pan.append(target.time_ranges(clock, ranges))
            if time.perf_counter() > until:
                break
        target.time_ranges(clock, plan["live"])
    rng = np.random.default_rng(1)
    o, h, l, c, v = (float(data[k][-1]) for k in ("open", "high", "low", "close", "volume"))
    until = time.perf_counter() + budget_s
    for _ in range(ticks):
        c = max(c * (1 + rng.normal(0, 2e-4)), 1e-9)
        h, l, v = max(h, c), min(l, c), v + float(rng.uniform(0, 1))
        tick.append(clock.time(lambda h=h, l=l, c=c, v=v: target.tick(o, h, l, c, v)))
        if time.perf_counter() > until:
            break
    case: dict[str, Any] = {"renderer": renderer, "candles": len(data["ts"]),
                            "timeframes": list(TIMEFRAMES),
                            "first_paint_ms": round(first_ms, 2),
                            "load_avg": round(load_at_start, 2)}
    for name, samples in (("pan", pan), ("tick", tick)):
        med, p95 = median_p95(samples)
        case[f"{name}_ms_median"] = round(med, 3)
        case[f"{name}_ms_p95"] = round(p95, 3)
        case[f"{name}_n"] = len(samples)
    wanted = {"pan": reps, "tick": ticks}
    short = [f"{name} {case[f'{name}_n']} of {n}" for name, n in wanted.items()
             if case[f"{name}_n"] < n]
    if short:
        case["incomplete"] = f"stopped by the {budget_s:g} s budget: " + ", ".join(short)
    case["peak_rss_mb"] = round(_peak_rss_mb(), 1)
    return case


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m workstation.bench.multichart")
    p.add_argument("--worker", required=True, choices=("workstation", "finplot"))
    p.add_argument("data")
    p.add_argument("plan")
    p.add_argument("--reps", type=int, default=40)
    p.add_argument("--ticks", type=int, default=300)
    p.add_argument("--budget", type=float, default=1e9)
    args = p.parse_args(argv)
    if args.worker == "finplot" and not finplot_importable():
        return 3
    case = _measure(args.worker, args.data, args.plan, args.reps, args.ticks, args.budget)
    print(json.dumps(case), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
