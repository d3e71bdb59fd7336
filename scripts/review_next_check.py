"""Does marking what "review next" ranks first pay more than marking at random? A simulated
trader who marks what a causal rule does, on the stretches they are given.

Usage: python scripts/review_next_check.py CANDLES.csv[.gz] [--candles N] [--held-out 0.25]
       [--counts 4,8,16] [--random-draws 2] [--length 48] [--seq-len 64] [--epochs 5]

The last N candles (default 4,000) of CANDLES and the ma-agree rule's trades on them
(``control-marks``). The newest ``--held-out`` share is a span no step chooses anything on: it
carries the rule's marks and one reviewed region in every arm, and each run is scored there
(``workstation report``: the position head's accuracy, its margin over the best baseline and
the 95 % interval). Before it the trader starts with the first tenth of the candles reviewed
and marked; a run trained on that (``train --train-until`` the held-out span) ranks the
unreviewed stretches of ``--length`` candles (``annotations review-next``). For each count K,
the trader then marks K stretches more: the K ranked first ("review next"), or K drawn at
random from the same unreviewed stretches ("random", ``--random-draws`` draws): every rule
trade that touches a stretch, and a reviewed region over the stretch. A fresh run of the same
settings and seed trains on each and is scored. Runs in temporary WORKSTATION_HOMEs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import sys
import tempfile
import uuid
from pathlib import Path


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("candles")
    p.add_argument("--symbol", default="ETH/USDT")
    p.add_argument("--candles", dest="count", type=int, default=4_000)
    p.add_argument("--held-out", type=float, default=0.25)
    p.add_argument("--counts", default="4,8,16")
    p.add_argument("--random-draws", type=int, default=2)
    p.add_argument("--length", type=int, default=48)
    p.add_argument("--seq-len", default="64")
    p.add_argument("--epochs", default="5")
    p.add_argument("--seed", default="7")
    args = p.parse_args()
    from workstation.cli import main as cli
    from workstation.market.csv_io import read_candles_csv, write_candles_csv

    def run(*argv) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = cli(list(argv))
        if code:
            raise SystemExit(f"workstation {' '.join(argv)} failed ({code})")
        return out.getvalue()

    work = Path(tempfile.mkdtemp(prefix="review-next-check-"))
    os.environ["WORKSTATION_HOME"] = str(work / "rule")
    candles = read_candles_csv(Path(args.candles))
    candles = candles.slice(max(0, len(candles) - args.count), len(candles))
    ts, tf = [int(t) for t in candles.ts], candles.timeframe
    cut = int(len(candles) * (1 - args.held_out))
    source = f"csv:{write_candles_csv(candles, work / 'candles.csv')}"
    series = ["--source", source, "--symbol", args.symbol, "--timeframe", tf.name]
    model = ["--seq-len", args.seq_len, "--epochs", args.epochs, "--seed", args.seed]
    run("control-marks", *series, "--rule", "ma-agree", "--out", str(work / "rule.json"))
    rule = json.loads((work / "rule.json").read_text())
    trades = [a for a in rule["annotations"] if a["kind"] == "trade"]
    template = next(a for a in rule["annotations"] if a["kind"] == "region")

    def reviewed(first: int, last: int) -> dict:
        return {**template, "id": str(uuid.uuid4()), "start_ts": ts[first], "end_ts": ts[last]}

    def marks_on(stretches: list[tuple[int, int]]) -> list[dict]:
        """The rule's trades touching the stretches (candle ranges), and a reviewed region
        over each."""
        chosen = [t for t in trades if any(ts[a] <= t["exit_ts"] and t["entry_ts"] <= ts[b - 1]
                                           for a, b in stretches)]
        return chosen + [reviewed(a, b - 1) for a, b in stretches]

    start = [(0, cut // 10), (cut, len(candles))]  # the first tenth, and the held-out span

    def scored(name: str, stretches: list[tuple[int, int]]) -> tuple:
        os.environ["WORKSTATION_HOME"] = str(work / name)
        marks = {k: v for k, v in rule.items() if k != "annotations"}
        marks["annotations"] = marks_on(start + stretches)
        (work / f"{name}.json").write_text(json.dumps(marks))
        run("annotations", "import", str(work / f"{name}.json"))
        run("train", *series, *model, "--train-until", str(ts[cut]))
        report = json.loads(run("report", "--source", source, "--json").splitlines()[-1])
        score = report["heads"]["position"]
        before = sum(1 for t in marks["annotations"] if t["kind"] == "trade"
                     and t["entry_ts"] < ts[cut])
        return name, before, score["accuracy"], score["margin"], score["interval"], \
            score["verdict"]

    rows = [scored("start", [])]
    ranked = json.loads(run("annotations", "review-next", "--source", source, "--length",
                            str(args.length), "--top", "100000", "--json").splitlines()[-1])
    every = [(s["start"], s["stop"]) for s in ranked["review_next"] if s["stop"] <= cut]
    for k in (int(c) for c in args.counts.split(",")):
        rows.append(scored(f"review-next-{k}", every[:k]))
        for draw in range(args.random_draws):
            rows.append(scored(f"random-{k}-{draw}", random.Random(draw).sample(every, k)))
    print(f"{len(candles):,} candles of {args.candles}, the newest {args.held_out:.0%} held out; "
          f"the ma-agree rule's marks; {len(every)} unreviewed stretches of {args.length} "
          f"candles before it; {args.seq_len}-candle windows, {args.epochs} epochs, seed "
          f"{args.seed}")
    print("marks | trades before the held-out span | held-out position accuracy | margin "
          "[95 % interval] | verdict")
    for name, n, accuracy, margin, interval, verdict in rows:
        bar = "—" if interval is None else \
            f"[{interval[0] * 100:+.1f}, {interval[1] * 100:+.1f}] pp"
        shown = "—" if accuracy is None else f"{accuracy:.1%}"
        gap = "—" if margin is None else f"{margin * 100:+.1f} pp"
        print(f"{name} | {n} | {shown} | {gap} {bar} | {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
