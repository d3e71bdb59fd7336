"""``workstation bench scale``: a year of one-second candles on a desktop.

For each length (default 1M, 10M and 31.5M one-second candles, a generated random walk, and
the real ETH/USDT 1m file when it is there), each measurement in a fresh process:

- ``import``: the window's ``csv:FILE`` import (``open_candle_file``: parse, validate, store
  in the candle cache), its peak memory, and the cache's size on disk;
- ``reopen``: opening the imported file again (read from the cache) to the chart's first
  frame, the process's resident memory with the chart open (bytes a candle), and the chart's
  pan, zoom and tick medians and p95 (``bench chart``'s measurements) with the newest 500
  candles and with all of them visible; the reference is ``np.load`` of the same six
  columns from ``.npy`` files, the fastest read there is;
- ``batch``: the training data of the series (features and targets) and the time to gather
  one batch of 64 windows of 200 candles, with the process's resident memory after;
- ``train`` and ``evaluate``: the peak memory of ``workstation train --epochs 1`` and of
  ``workstation evaluate --folds 4`` (tiny model) on the file.

Every measurement is repeated ``--repeats`` times (ranges are reported) with the load average
at its start. The chart's figures at each length stand beside the 1M case of the same run
(``*_vs_1m``), the targets beside the longest: reopen < 2 s, < 60 bytes a candle resident,
chart within 1.2x of 1M, import < 90 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..errors import WorkstationError
from ..paths import HOME_ENV
from . import report
from .chart import _peak_rss_mb, _worker_env, measure_chart
from .data import DEFAULT_FILE

SIZES = (1_000_000, 10_000_000, 31_536_000)
YEAR = 31_536_000
SYMBOL = "GEN/USDT"
TARGETS = {"reopen_s": 2.0, "bytes_per_candle": 60.0, "chart_vs_1m": 1.2, "import_s": 90.0,
           # memory that grows no more than the candles do (their six 8-byte columns)
           "train_growth": 48.0, "evaluate_growth": 48.0}
CHART_FIELDS = ("pan_ms_median", "pan_ms_p95", "zoom_ms_median", "zoom_ms_p95",
                "tick_ms_median", "tick_ms_p95")


def register(sub) -> None:
    p = sub.add_parser("scale", help="a year of 1s candles: import, cache, reopen, memory, "
                                     "chart speed, training memory",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1M,10M,31.5M",
                   help="series lengths of generated 1s candles (k, M allowed; default "
                        "%(default)s)")
    p.add_argument("--file", type=Path, default=DEFAULT_FILE,
                   help="a real candle CSV measured too (default ../shared/data/"
                        "ethusdt_1m.csv.gz; left out when missing)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--reps", type=int, default=20, help="pans and zooms per chart case")
    p.add_argument("--ticks", type=int, default=200, help="ticks per chart case")
    p.add_argument("--training-sizes", default="1M",
                   help="the lengths (of --sizes) whose batch, train and evaluate are measured "
                        "too (default %(default)s: evaluate takes about 2 min a million "
                        "candles on 2 cores; 'none' for none)")
    p.add_argument("--work", type=Path, default=None,
                   help="folder for the generated files, kept and reused by a later run "
                        "(default: a temporary folder, removed)")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per worker process")
    p.add_argument("--json", action="store_true", help="one JSON object per case")
    p.set_defaults(func=run)


def parse_size(text: str) -> int:
    """``"31.5M"`` -> 31_500_000 (``"year"``: 31,536,000, 365 days of seconds)."""
    t = text.strip().lower()
    if t == "year":
        return YEAR
    scale = {"k": 1_000, "m": 1_000_000}.get(t[-1:], 1)
    try:
        n = int(round(float(t[:-1] if scale > 1 else t) * scale))
    except ValueError:
        raise WorkstationError(f"not a series length: {text!r} (e.g. 1M, 31.5M)") from None
    if n < 10_000:
        raise WorkstationError(f"series length {text!r} is below 10,000 candles")
    return n


def generated_candles(n: int):
    """``n`` one-second candles of a seeded random walk ending on 2026-01-01."""
    from ..market.candles import Candles
    from ..market.timeframes import parse_timeframe

    rng = np.random.default_rng(11)
    ts = 1_767_225_600_000 - (n - np.arange(n, dtype=np.int64)) * 1000
    close = 2000.0 * np.exp(np.cumsum(rng.normal(0.0, 2e-4, n)))
    open_ = np.concatenate(([close[0]], close[:-1]))
    high = np.maximum(open_, close) * (1 + rng.uniform(0, 1e-4, n))
    low = np.minimum(open_, close) * (1 - rng.uniform(0, 1e-4, n))
    volume = rng.uniform(0.0, 5.0, n).round(4)
    return Candles.from_arrays(ts, open_, high, low, close, volume, parse_timeframe("1s"))


def _prepare(folder: Path, n: int | None, real: Path | None) -> dict:
    """The CSV file of the case (generated unless ``real``) and the six ``.npy`` columns of
    its candles (the reference read); reused when already there."""
    from ..market.csv_io import read_candles_csv, write_candles_csv
    from ..market.timeframes import ALL

    name = real.name if real else f"gen_1s_{n}.csv"
    csv = real if real else folder / name
    npy = folder / f"{name}.columns"
    made = 0.0
    if not (npy / "done").exists() or not csv.exists():
        start = time.perf_counter()
        candles = read_candles_csv(csv) if real else generated_candles(int(n or 0))
        if not real:
            write_candles_csv(candles, csv)
        npy.mkdir(parents=True, exist_ok=True)
        for field, column in zip(("ts", "open", "high", "low", "close", "volume"),
                                 candles.columns()):
            np.save(npy / f"{field}.npy", column)
        (npy / "done").write_text(str(len(candles)))
        made = time.perf_counter() - start
    step = np.diff(np.load(npy / "ts.npy", mmap_mode="r")[:2])[0]
    timeframe = next(tf.name for tf in ALL if tf.ms == step)
    return {"csv": csv, "npy": npy, "candles": int((npy / "done").read_text()),
            "timeframe": timeframe,
            "prepare_s": round(made, 1), "data": str(real) if real else "generated 1s"}


def _worker(mode: str, argv: list[str], timeout: float) -> dict:
    """What ``python -m workstation.bench.scale --worker MODE`` printed (its last JSON line);
    an error naming its last lines if it failed, ``incomplete`` if it ran out of time."""
    try:
        proc = subprocess.run([sys.executable, "-m", "workstation.bench.scale", "--worker", mode,
                               *argv], capture_output=True, text=True, timeout=timeout,
                              env=_worker_env())
    except subprocess.TimeoutExpired:
        return {"incomplete": f"{mode} took longer than {timeout:.0f} s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-4:]
        raise WorkstationError(f"bench scale {mode} worker failed: {' | '.join(tail)}")
    return json.loads(lines[-1])


def run(args) -> int:
    if args.repeats < 1:
        raise WorkstationError(f"--repeats must be at least 1, got {args.repeats}")
    sizes = [parse_size(t) for t in args.sizes.split(",") if t.strip()]
    training = set() if args.training_sizes.strip() == "none" else {
        parse_size(t) for t in args.training_sizes.split(",") if t.strip()}
    work = args.work or Path(tempfile.mkdtemp(prefix="workstation-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        cases = [_case(_prepare(work, n, None), work, args, training) for n in sizes]
        if args.file and args.file.exists():
            cases.append(_case(_prepare(work, None, args.file), work, args, training))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    _compare(cases)
    return report(cases, args.json, _print_table)


def _case(prepared: dict, work: Path, args, training: set[int]) -> dict:
    n, csv = prepared["candles"], str(prepared["csv"])
    case: dict = {"candles": n, "data": prepared["data"], "prepare_s": prepared["prepare_s"]}
    home = work / f"home_{Path(csv).name}"
    runs: dict[str, list[dict]] = {}
    for _ in range(args.repeats):
        shutil.rmtree(home, ignore_errors=True)
        runs.setdefault("import", []).append(_worker("import", [csv, str(home)], args.timeout))
        for view in ("500", "all"):
            runs.setdefault(f"reopen_{view}", []).append(_worker(
                "reopen", [csv, str(home), str(prepared["npy"]), "--view", view, "--reps",
                           str(args.reps), "--ticks", str(args.ticks)], args.timeout))
        if n in training:
            runs.setdefault("batch", []).append(_worker("batch", [csv, str(home)], args.timeout))
            for mode in ("train", "evaluate"):
                runs.setdefault(mode, []).append(_worker(
                    mode, [csv, str(home), "--timeframe", prepared["timeframe"],
                           "--timeout", str(args.timeout)], args.timeout + 60))
    shutil.rmtree(home, ignore_errors=True)
    for mode, results in runs.items():
        done = [r for r in results if "incomplete" not in r]
        if len(done) < len(results):
            case[f"{mode}_incomplete"] = results[-1].get("incomplete") or "see repeats"
        for field in sorted({k for r in done for k in r}):
            values = [r[field] for r in done if isinstance(r.get(field), (int, float))
                      and not isinstance(r.get(field), bool)]
            if values:
                prefix = "all_" if mode == "reopen_all" else ""
                case[f"{prefix}{field}"] = round(statistics.median(values), 3)
                case[f"{prefix}{field}_range"] = [round(min(values), 3), round(max(values), 3)]
    return case


def _compare(cases: list[dict]) -> None:
    """Chart figures against the run's 1M case, and the targets beside the longest series."""
    base = next((c for c in cases if c["candles"] == 1_000_000), None)
    for case in cases:
        if base is not None and case is not base:
            for field in CHART_FIELDS + tuple(f"all_{f}" for f in CHART_FIELDS):
                if case.get(field) and base.get(field):
                    case[f"{field}_vs_1m"] = round(case[field] / base[field], 2)
    generated = sorted((c for c in cases if c["data"] == "generated 1s"),
                       key=lambda c: c["candles"])
    if not generated:
        return
    longest = generated[-1]
    _growth(generated)
    met = {"reopen_s": longest.get("reopen_s", 1e9) < TARGETS["reopen_s"],
           "bytes_per_candle": longest.get("bytes_per_candle", 1e9)
           < TARGETS["bytes_per_candle"],
           "import_s": longest.get("import_s", 1e9) < TARGETS["import_s"]}
    ratios = [v for k, v in longest.items() if k.endswith("_median_vs_1m")]
    if ratios:
        met["chart_vs_1m"] = max(ratios) <= TARGETS["chart_vs_1m"]
    for mode in ("train", "evaluate"):
        growth = longest.get(f"{mode}_growth_bytes_per_candle")
        if growth is not None:
            met[f"{mode}_growth"] = growth <= TARGETS[f"{mode}_growth"]
    longest["targets"] = {k: {"target": TARGETS[k], "met": v} for k, v in met.items()}


def _growth(generated: list[dict]) -> None:
    """Bytes of anonymous peak memory each candle adds to ``train`` and ``evaluate``, from
    the shortest to each longer generated series measured (the candles alone are 48)."""
    for mode in ("train", "evaluate"):
        field = f"{mode}_anon_peak_mb"
        measured = [c for c in generated if c.get(field)]
        for case in measured[1:]:
            added = case["candles"] - measured[0]["candles"]
            case[f"{mode}_growth_bytes_per_candle"] = round(
                (case[field] - measured[0][field]) * 2**20 / added, 1)


def _print_table(cases: list[dict]) -> None:
    def cell(case, field, fmt="{:.2f}"):
        v = case.get(field)
        if v is None:
            return "—"
        r = case.get(f"{field}_range")
        return fmt.format(v) + (f" [{fmt.format(r[0])}–{fmt.format(r[1])}]" if r and
                                r[0] != r[1] else "")

    rows = [("import s", "import_s", "{:.1f}"), ("import peak MB", "import_peak_mb", "{:.0f}"),
            ("cache MB on disk", "cache_mb", "{:.0f}"), ("reopen to chart s", "reopen_s",
                                                          "{:.2f}"),
            ("  of which cache read s", "open_s", "{:.2f}"),
            ("  np.load reference s", "reference_s", "{:.2f}"),
            ("resident MB, chart open", "rss_mb", "{:.0f}"),
            ("bytes a candle", "bytes_per_candle", "{:.1f}"),
            ("pan ms median (500)", "pan_ms_median", "{:.2f}"),
            ("pan ms p95 (500)", "pan_ms_p95", "{:.2f}"),
            ("zoom ms median (500)", "zoom_ms_median", "{:.2f}"),
            ("tick ms median", "tick_ms_median", "{:.2f}"), ("tick ms p95", "tick_ms_p95",
                                                             "{:.2f}"),
            ("pan ms median (all)", "all_pan_ms_median", "{:.2f}"),
            ("pan ms p95 (all)", "all_pan_ms_p95", "{:.2f}"),
            ("features s", "features_s", "{:.1f}"), ("one batch ms", "batch_ms", "{:.1f}"),
            ("resident MB, training data", "batch_rss_mb", "{:.0f}"),
            ("  of which anonymous MB", "batch_anon_mb", "{:.0f}"),
            ("train epoch peak MB", "train_peak_mb", "{:.0f}"),
            ("  anonymous peak MB", "train_anon_peak_mb", "{:.0f}"),
            ("  bytes an added candle", "train_growth_bytes_per_candle", "{:.0f}"),
            ("evaluate --folds 4 peak MB", "evaluate_peak_mb", "{:.0f}"),
            ("  anonymous peak MB", "evaluate_anon_peak_mb", "{:.0f}"),
            ("  bytes an added candle", "evaluate_growth_bytes_per_candle", "{:.0f}"),
            ("load average", "load_avg", "{:.1f}")]
    names = [f"{c['candles']:,}" + ("" if c["data"] == "generated 1s" else " (file)")
             for c in cases]
    width = max(28, *(len(cell(c, f, fmt)) + 2 for c in cases for _, f, fmt in rows))
    print(f"{'':<30}" + "".join(f"{n:>{width}}" for n in names))
    for label, field, fmt in rows:
        print(f"{label:<30}" + "".join(f"{cell(c, field, fmt):>{width}}" for c in cases))
    for c in cases:
        for name, t in c.get("targets", {}).items():
            print(f"target {name} < {t['target']} at {c['candles']:,}: "
                  f"{'met' if t['met'] else 'MISSED'}")
        for k, v in c.items():
            if k.endswith("_incomplete"):
                print(f"{c['candles']:,}: {k[:-11]} incomplete: {v}")


# -- the workers: one measurement in a fresh process --------------------------------------
def _rss_mb() -> float:
    return _status_mb("self", "VmRSS")


def _opened(csv: str, home: str):
    from ..market.sources import open_candle_file
    from ..paths import app_paths, use_home

    use_home(home)
    return open_candle_file(csv, SYMBOL, None, cache_path=app_paths().candle_cache,
                            symbol_ok=True)


def _import(csv: str, home: str) -> dict:
    start = time.perf_counter()
    opened = _opened(csv, home)
    seconds = time.perf_counter() - start
    from ..paths import app_paths

    size = app_paths().candle_cache.stat().st_size
    return {"import_s": seconds, "import_peak_mb": _peak_rss_mb(), "imported": opened.imported,
            "cache_mb": size / 2**20, "cache_bytes_per_candle": size / len(opened.candles)}


def _reopen(csv: str, home: str, npy: str, view: str, reps: int, ticks: int) -> dict:
    from PySide6 import QtWidgets

    from .chart import _Workstation

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    load = os.getloadavg()[0]
    start = time.perf_counter()
    opened = _opened(csv, home)
    open_s = time.perf_counter() - start
    if opened.imported:
        raise WorkstationError(f"{csv} was imported again instead of read from the cache")
    candles = opened.candles
    data = dict(zip(("ts", "open", "high", "low", "close", "volume"), candles.columns()))
    target = _Workstation(data, candles, opened.key)
    case = measure_chart(target, data, view, reps, ticks, 1e9)
    app.processEvents()
    rss = _rss_mb()
    start = time.perf_counter()
    columns = [np.load(Path(npy) / f"{f}.npy") for f in data]
    reference_s = time.perf_counter() - start
    del columns
    return {"open_s": open_s, "reopen_s": open_s + case["first_paint_ms"] / 1000.0,
            "reference_s": reference_s, "rss_mb": rss,
            "bytes_per_candle": rss * 2**20 / len(candles), "load_avg": load,
            **{k: case[k] for k in CHART_FIELDS}}


def _batch(csv: str, home: str) -> dict:
    import torch

    from ..ml.dataset import DeviceSeries, TrainingData

    candles = _opened(csv, home).candles
    start = time.perf_counter()
    data = TrainingData.from_candles(candles)
    features_s = time.perf_counter() - start
    series = DeviceSeries(data, torch.device("cpu"))
    rng = np.random.default_rng(0)
    times = []
    for _ in range(20):
        starts = torch.from_numpy(rng.integers(0, len(series) - 200, 64))
        t0 = time.perf_counter()
        series.gather(starts, 200)
        times.append((time.perf_counter() - t0) * 1000.0)
    return {"features_s": features_s, "batch_ms": statistics.median(times),
            "batch_rss_mb": _rss_mb(), "batch_anon_mb": _status_mb("self", "RssAnon"),
            "batch_bytes_per_candle": _rss_mb() * 2**20 / len(data)}


def _command(mode: str, csv: str, home: str, timeframe: str, timeout: float) -> dict:
    """Peak memory of ``workstation train`` (one epoch) or ``evaluate --folds 4`` (one
    epoch, one seed) on the file, each in a process of its own: resident (``ru_maxrss``) and
    anonymous (``RssAnon``, sampled every 20 ms: what the kernel cannot drop, unlike the
    pages of a memory-mapped file)."""
    common = ["--source", f"csv:{csv}", "--symbol", SYMBOL, "--timeframe", timeframe,
              "--preset", "tiny", "--epochs", "1", "--no-annotations", "--threads", "1"]
    argv = (["train", *common, "--no-save"] if mode == "train"
            else ["evaluate", *common, "--folds", "4", "--seeds", "1", "--workers", "1"])
    env = dict(_worker_env(), **{HOME_ENV: home})
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-m", "workstation", *argv], env=env,
                                stdout=subprocess.DEVNULL, stderr=err, text=True)
        anon = 0.0
        while proc.poll() is None:
            if time.perf_counter() - start > timeout:
                proc.kill()
                proc.wait()
                return {"incomplete": f"{mode} took longer than {timeout:.0f} s"}
            anon = max(anon, _status_mb(proc.pid, "RssAnon"))
            time.sleep(0.02)
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            err.seek(0)
            raise WorkstationError(f"workstation {mode} exited with {proc.returncode}: "
                                   f"{err.read().strip().splitlines()[-1:]}")
    return {f"{mode}_s": seconds, f"{mode}_peak_mb": _child_peak_mb(),
            f"{mode}_anon_peak_mb": anon}


def _status_mb(pid: int | str, field: str) -> float:
    """``field`` (``VmRSS``, ``RssAnon``) of process ``pid`` in MB (0 once it has gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def _child_peak_mb() -> float:
    """The peak resident memory of the largest child this process has waited for (each
    training command runs alone, after the bench's other workers have ended)."""
    import resource

    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale / 2**20


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m workstation.bench.scale")
    p.add_argument("--worker", required=True,
                   choices=("import", "reopen", "batch", "train", "evaluate"))
    p.add_argument("csv")
    p.add_argument("home")
    p.add_argument("npy", nargs="?")
    p.add_argument("--view", default="500")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--ticks", type=int, default=200)
    p.add_argument("--timeframe", default="1s")
    p.add_argument("--timeout", type=float, default=1800.0)
    args = p.parse_args(argv)
    if args.worker == "import":
        out = _import(args.csv, args.home)
    elif args.worker == "reopen":
        out = _reopen(args.csv, args.home, args.npy, args.view, args.reps, args.ticks)
    elif args.worker == "batch":
        out = _batch(args.csv, args.home)
    else:
        out = _command(args.worker, args.csv, args.home, args.timeframe, args.timeout)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
