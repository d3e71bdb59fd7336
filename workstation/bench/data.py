"""``workstation bench data``: CSV import, cache load, live append and forming updates.

Each case runs beside a reference measured in the same run, the way straightforward code does
it: the stdlib ``csv`` module with a float() per field, one SQLite row per candle, and
``np.append`` per new candle. Targets (2-core machine): import + validate < 5 s for 1.74M
candles, load of 1M from the cache < 0.5 s, append and update < 5 µs each.
"""

from __future__ import annotations

import csv
import gzip
import sqlite3
import tempfile
import time
from pathlib import Path

import numpy as np

from ..market.cache import CandleCache
from ..market.candles import Candles
from ..market.csv_io import read_candles_csv, write_candles_csv
from ..market.demo import demo_candles
from ..market.series import SeriesKey
from ..market.timeframes import ONE_MINUTE
from . import report

DEFAULT_FILE = (Path(__file__).resolve().parents[2].parent / "shared" / "data"
                / "ethusdt_1m.csv.gz")
TARGETS = {"import": 5.0, "cache_load_1m": 0.5, "append": 5e-6, "update": 5e-6}


def register(names) -> None:
    parser = names.add_parser("data", help="candle import, cache load, append and update")
    parser.add_argument("--file", type=Path, default=None,
                        help="candle CSV to import (default ../shared/data/ethusdt_1m.csv.gz; "
                             "a generated DEMO file of the same size when it is missing)")
    parser.add_argument("--appends", type=int, default=1_000_000)
    parser.add_argument("--updates", type=int, default=100_000)
    parser.add_argument("--json", action="store_true", help="one JSON object per case")
    parser.set_defaults(func=run)


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _reference_import(path: Path) -> int:
    opener = gzip.open if path.suffix == ".gz" else open
    rows = []
    with opener(path, "rt", newline="") as handle:
        reader = csv.reader(handle)
        next(reader)
        for row in reader:
            rows.append((int(row[0]), float(row[1]), float(row[2]), float(row[3]),
                         float(row[4]), float(row[5])))
    return len(rows)


def _reference_cache(candles: Candles, db_path: Path) -> tuple[float, float]:
    db = sqlite3.connect(db_path)
    db.execute("CREATE TABLE candles (ts INTEGER PRIMARY KEY, o REAL, h REAL, l REAL, c REAL, "
               "v REAL)")
    rows = zip(*(col.tolist() for col in candles.columns()))

    def store():
        db.executemany("INSERT INTO candles VALUES (?,?,?,?,?,?)", rows)
        db.commit()

    store_s, _ = _timed(store)
    load_s, _ = _timed(lambda: np.array(db.execute("SELECT * FROM candles ORDER BY ts").fetchall()))
    db.close()
    return store_s, load_s


def run(args) -> int:
    path = args.file or DEFAULT_FILE
    cases = []
    with tempfile.TemporaryDirectory(prefix="workstation-bench-") as tmp_name:
        tmp = Path(tmp_name)
        source_note = str(path)
        if not path.exists():
            path = tmp / "demo_1m.csv.gz"
            write_candles_csv(demo_candles(1_743_000, ONE_MINUTE, seed=7), path)
            source_note = f"DEMO data (generated; {args.file or DEFAULT_FILE} not found)"

        import_s, candles = _timed(lambda: read_candles_csv(path, ONE_MINUTE))
        ref_import_s, _ = _timed(lambda: _reference_import(path))
        cases.append(dict(case="import+validate", candles=len(candles), seconds=import_s,
                          reference_seconds=ref_import_s, target_seconds=TARGETS["import"],
                          file=source_note))

        key = SeriesKey("bench", "ETH/USDT", ONE_MINUTE)
        with CandleCache(tmp / "cache.sqlite") as cache:
            store_s, _ = _timed(lambda: cache.put(key, candles))
            n_load = min(1_000_000, len(candles))
            since = int(candles.ts[-n_load])
            load_all_s, _ = _timed(lambda: cache.load(key))
            load_s, loaded = _timed(lambda: cache.load(key, since=since))
        newest = candles.slice(len(candles) - n_load, len(candles))
        ref_store_s, ref_load_s = _reference_cache(newest, tmp / "reference.sqlite")
        cases.append(dict(case="cache store", candles=len(candles), seconds=store_s,
                          reference_seconds=ref_store_s * len(candles) / n_load))
        cases.append(dict(case="cache load 1M", candles=len(loaded), seconds=load_s,
                          reference_seconds=ref_load_s, target_seconds=TARGETS["cache_load_1m"],
                          all_candles_seconds=load_all_s))

        o, h, l, c, v = 100.0, 101.0, 99.0, 100.5, 3.0
        series = Candles(ONE_MINUTE)
        append = series.append
        start = time.perf_counter()
        for i in range(args.appends):
            append(i * 60_000, o, h, l, c, v)
        append_s = (time.perf_counter() - start) / args.appends
        ref_n = 20_000
        arr = np.empty((0, 6))
        start = time.perf_counter()
        for i in range(ref_n):
            arr = np.append(arr, [[i * 60_000, o, h, l, c, v]], axis=0)
        ref_append_s = (time.perf_counter() - start) / ref_n
        cases.append(dict(case="append", candles=args.appends, seconds=append_s,
                          reference_seconds=ref_append_s, target_seconds=TARGETS["append"],
                          reference_note=f"np.append per candle, measured over {ref_n}"))

        update = series.update_last
        start = time.perf_counter()
        for i in range(args.updates):
            update(o, h, l, c + (i % 7) * 0.01, v + i)
        update_s = (time.perf_counter() - start) / args.updates
        start = time.perf_counter()
        for i in range(args.updates):
            arr[-1] = (arr[-1, 0], o, h, l, c + (i % 7) * 0.01, v + i)
        ref_update_s = (time.perf_counter() - start) / args.updates
        cases.append(dict(case="forming update", candles=args.updates, seconds=update_s,
                          reference_seconds=ref_update_s, target_seconds=TARGETS["update"],
                          reference_note="row assignment into a 2-D numpy array"))

    for case in cases:
        case["ratio_vs_reference"] = case["reference_seconds"] / case["seconds"]
        if "target_seconds" in case:
            case["meets_target"] = case["seconds"] <= case["target_seconds"]
    return report(cases, args.json, _print_table)


def _human(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def _print_table(cases) -> None:
    print(f"{'case':<16} {'n':>9} {'workstation':>12} {'reference':>12} {'ratio':>8} "
          f"{'target':>10}")
    for case in cases:
        target = case.get("target_seconds")
        verdict = "" if target is None else ("  ok" if case["meets_target"] else "  MISSED")
        print(f"{case['case']:<16} {case['candles']:>9} {_human(case['seconds']):>12} "
              f"{_human(case['reference_seconds']):>12} {case['ratio_vs_reference']:>7.1f}x "
              f"{'' if target is None else '< ' + _human(target):>10}{verdict}")
    print(f"data: {cases[0]['file']}")
