"""Do the likely label errors find wrong marks? Marks of a causal rule with some turned round
on purpose, then ``workstation annotations suspects``, scored against the ones turned.

Usage: python scripts/label_errors_check.py CANDLES.csv[.gz] [--candles N] [--flip 0.2]
       [--noise-seeds 7,8,9] [--folds 3] [--seq-len 64] [--epochs 5] [--seeds 1]

For each noise seed: the last N candles (default 4,000) of CANDLES, the ma-agree rule's trades
on them (``control-marks``: long while the 10/50 and 20/100 averages both point up, short
while both point down, under one reviewed region), ``--flip`` of the trades turned round (the
trader's slips; drawn with the seed), then the walk-forward of ``annotations suspects``. A
trade counts as tested when one of its held candles lies in a test span (the ranges the JSON
gives); of the tested trades, how many were turned, how many are flagged, and how many of the
flagged were turned (precision, beside the share turned: what flagging at random would give)
and how many of the turned are flagged (recall). Runs in a temporary WORKSTATION_HOME.
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
from pathlib import Path


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("candles")
    p.add_argument("--symbol", default="ETH/USDT")
    p.add_argument("--candles", dest="count", type=int, default=4_000)
    p.add_argument("--flip", type=float, default=0.2)
    p.add_argument("--noise-seeds", default="7,8,9")
    p.add_argument("--folds", default="3")
    p.add_argument("--seq-len", default="64")
    p.add_argument("--epochs", default="5")
    p.add_argument("--seeds", default="1")
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

    rows = []
    for noise in (int(s) for s in args.noise_seeds.split(",")):
        home = Path(tempfile.mkdtemp(prefix="label-errors-"))
        os.environ["WORKSTATION_HOME"] = str(home)
        candles = read_candles_csv(Path(args.candles))
        candles = candles.slice(max(0, len(candles) - args.count), len(candles))
        source = f"csv:{write_candles_csv(candles, home / 'candles.csv')}"
        series = ["--source", source, "--symbol", args.symbol,
                  "--timeframe", candles.timeframe.name]
        run("control-marks", *series, "--rule", "ma-agree", "--out", str(home / "rule.json"))
        marks = json.loads((home / "rule.json").read_text())
        trades = [a for a in marks["annotations"] if a["kind"] == "trade"]
        turned = {a["id"] for a in random.Random(noise).sample(trades,
                                                                round(args.flip * len(trades)))}
        for a in trades:
            if a["id"] in turned:
                a["direction"] = "short" if a["direction"] == "long" else "long"
        (home / "noisy.json").write_text(json.dumps(marks))
        run("annotations", "import", str(home / "noisy.json"))
        out = run("annotations", "suspects", *series, "--folds", args.folds, "--seq-len",
                  args.seq_len, "--epochs", args.epochs, "--seeds", args.seeds, "--json")
        objects = [json.loads(line) for line in out.splitlines()]
        spans = {tuple(o["test"]) for o in objects if "fold" in o}
        (found,) = [o for o in objects if "likely_label_errors" in o]
        flagged = {s["annotation_id"] for s in found["likely_label_errors"]["suspects"]}
        index = {int(t): i for i, t in enumerate(candles.ts)}
        tested = set()
        for a in trades:  # held from the entry candle's close to the exit candle's close
            held = (index[a["entry_ts"]] + 1, index[a["exit_ts"]] + 1)
            if any(max(held[0], a0) < min(held[1], b0) for a0, b0 in spans):
                tested.add(a["id"])
        flagged &= tested
        rows.append((noise, len(trades), len(tested), len(turned & tested), len(flagged),
                     len(flagged & turned), found["verdicts"]["position"]))
    print(f"{args.count:,} candles of {args.candles}; {args.flip:.0%} of the rule's trades turned "
          f"round; {args.folds} folds, {args.seq_len}-candle windows, {args.epochs} epochs, "
          f"{args.seeds} seed(s) a fold")
    print("noise seed | trades | tested | turned (tested) | flagged | flagged and turned | "
          "precision (share turned) | recall | position head")
    for noise, n, t, bad, flag, hit, verdict in rows:
        precision = f"{hit / flag:.0%}" if flag else "—"
        recall = f"{hit / bad:.0%}" if bad else "—"
        print(f"{noise} | {n} | {t} | {bad} | {flag} | {hit} | {precision} ({bad / t:.0%}) | "
              f"{recall} | {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
