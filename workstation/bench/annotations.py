"""``workstation bench annotations``: how long the store takes to load and to add annotations.

Cases, each against a reference measured in the same run on the same file:
- ``load``: ``AnnotationStore.list()`` of N annotations (a third each trades, regions, points,
  with tags) vs. fetching the same rows and tags with plain sqlite3;
- ``open``: opening the store (checks, pragmas, migrations) vs. a plain sqlite3 connect;
- ``add``: one durable ``add`` (a transaction, fsynced) vs. a plain sqlite3 INSERT + COMMIT
  with the same pragmas.
The file is made in a temporary folder in the data dir, on the disk the real store uses.
"""

from __future__ import annotations

import json
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ..annotations.model import Annotation, Direction, Point, Region, Trade
from ..annotations.store import AnnotationStore
from ..paths import app_paths

_T0 = 1_700_000_000_000


def register(bench_sub) -> None:
    parser = bench_sub.add_parser("annotations", help="load and add time of the annotation store")
    parser.add_argument("--n", type=int, default=10_000, help="annotations to load (10000)")
    parser.add_argument("--repeat", type=int, default=5, help="timed repeats per case (5)")
    parser.add_argument("--json", action="store_true", help="one JSON object per case")
    parser.set_defaults(func=run)


def synthetic(n: int, seed: int = 0, first: int = 0) -> list[Annotation]:
    """``n`` valid annotations on ETH/USDT 1m, one every 10 minutes from slot ``first``:
    trades (none overlapping another), regions and points in turn."""
    rng = random.Random(seed)
    out: list[Annotation] = []
    for i in range(first, first + n):
        t = _T0 + i * 600_000
        common: dict[str, Any] = {"symbol": "ETH/USDT", "timeframe": "1m", "created_at": t,
                                  "updated_at": t}
        if i % 3 == 0:
            out.append(Trade(**common, direction=Direction(rng.choice(("long", "short"))),
                             entry_ts=t, entry_price=100 + rng.random(), exit_ts=t + 300_000,
                             exit_price=100 + rng.random(), tags=("scalp", "breakout"),
                             notes="entered on the retest"))
        elif i % 3 == 1:
            out.append(Region(**common, start_ts=t, end_ts=t + 60_000, label="range"))
        else:
            out.append(Point(**common, ts=t, price=101.5, notes="news"))
    return out


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _raw_fetch(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("SELECT * FROM annotations ORDER BY start_ts, id").fetchall()
    conn.execute("SELECT annotation_id, tag FROM annotation_tags "
                 "ORDER BY annotation_id, position").fetchall()
    conn.close()


def run(args) -> int:
    cases = []
    data_dir = app_paths().ensure().data_dir  # the file system the real store lives on
    with tempfile.TemporaryDirectory(prefix="bench-annotations-", dir=data_dir) as tmp:
        path = Path(tmp) / "annotations.sqlite"
        with AnnotationStore(path) as store:
            store.merge(synthetic(args.n))
        with AnnotationStore(path) as store:
            load = _median_ms(store.list, args.repeat)
            count = len(store.list())
        cases.append(("load", count, load, "sqlite3 fetchall of the rows", _median_ms(
            lambda: _raw_fetch(path), args.repeat)))
        cases.append(("open", count, _median_ms(lambda: AnnotationStore(path).close(), args.repeat),
                      "sqlite3 connect", _median_ms(lambda: sqlite3.connect(path).close(),
                                                    args.repeat)))
        extra = iter(synthetic(args.repeat * 2, seed=1, first=args.n))
        with AnnotationStore(path) as store:
            add = _median_ms(lambda: store.add(next(extra)), args.repeat)
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA synchronous = FULL")
        ids = iter(range(args.repeat))

        def raw_insert() -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO annotations (id, kind, symbol, timeframe, source, start_ts, "
                         "end_ts, notes, created_at, updated_at) VALUES (?, 'point', 'ETH/USDT', "
                         "'1m', 'human', 0, 0, '', 0, 0)",
                         (f"00000000-0000-4000-8000-{next(ids):012d}",))
            conn.execute("COMMIT")

        cases.append(("add", 1, add, "sqlite3 INSERT + COMMIT",
                      _median_ms(raw_insert, args.repeat)))
        conn.close()
    for name, n, ms, reference, ref_ms in cases:
        ratio = ms / ref_ms if ref_ms > 0 else float("inf")
        if args.json:
            print(json.dumps({"case": name, "n": n, "ms": round(ms, 3), "reference": reference,
                              "reference_ms": round(ref_ms, 3), "ratio": round(ratio, 2)}))
        else:
            print(f"{name:5s} n={n:<6d} {ms:9.2f} ms   {reference}: {ref_ms:8.2f} ms   "
                  f"ratio {ratio:6.2f}")
    return 0
