"""Do the likely label errors find wrong marks, and does fixing them pay? Marks of a causal
rule with some turned round on purpose, then ``workstation annotations suspects``, scored
against the ones turned; with ``--retrain``, the position head trained on the marks as they
are, with the suspects fixed, and on the rule's own marks, each scored on a held-out span.

Usage: python scripts/label_errors_check.py CANDLES.csv[.gz] [--candles N] [--flip 0.2]
       [--noise-seeds 7,8,9] [--folds 3] [--seq-len 64] [--epochs 5] [--seeds 1]
       [--retrain [--held-out 0.25]]

For each noise seed: the last N candles (default 4,000) of CANDLES, the ma-agree rule's trades
on them (``control-marks``: long while the 10/50 and 20/100 averages both point up, short
while both point down, under one reviewed region), ``--flip`` of the trades turned round (the
trader's slips; drawn with the seed), then the walk-forward of ``annotations suspects``. A
trade counts as tested when one of its held candles lies in a test span (the ranges the JSON
gives); of the tested trades, how many were turned, how many are flagged, and how many of the
flagged were turned (precision, beside the share turned: what flagging at random would give)
and how many of the turned are flagged (recall). Runs in a temporary WORKSTATION_HOME.

``--retrain``: the newest ``--held-out`` share of the candles (default a quarter) is a span no
step sees before the score. Only trades entered before it are turned; the suspects come from a
walk-forward of the candles before it; then four runs train (``train --train-until`` its
start, the same settings and seed) on the marks before it as they are ("left"), with every
suspect fixed as Shift+F fixes it ("fixed": turned round, or deleted where the model reads
flat), with each suspect looked at as a trader who knows the rule would (the turned ones put
back, the others kept: "looked at"), and with no mark turned ("clean"). In the held-out span
every run has the rule's own marks, so ``workstation report`` scores each against what the
rule did there: the position head's accuracy and its margin over the best baseline, with the
95 % interval.
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
    p.add_argument("--retrain", action="store_true")
    p.add_argument("--held-out", type=float, default=0.25)
    args = p.parse_args()
    from workstation.annotations.io import from_json_record, to_json_record
    from workstation.annotations.model import Trade
    from workstation.annotations.suspects import Suspect, fixed
    from workstation.cli import main as cli
    from workstation.market.csv_io import read_candles_csv, write_candles_csv

    def run(*argv) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = cli(list(argv))
        if code:
            raise SystemExit(f"workstation {' '.join(argv)} failed ({code})")
        return out.getvalue()

    model = ["--seq-len", args.seq_len, "--epochs", args.epochs]
    rows, scores = [], []
    for noise in (int(s) for s in args.noise_seeds.split(",")):
        home = Path(tempfile.mkdtemp(prefix="label-errors-"))
        os.environ["WORKSTATION_HOME"] = str(home)
        candles = read_candles_csv(Path(args.candles))
        candles = candles.slice(max(0, len(candles) - args.count), len(candles))
        cut = int(len(candles) * (1 - args.held_out)) if args.retrain else len(candles)
        held_out_ts = int(candles.ts[cut]) if cut < len(candles) else None
        source = f"csv:{write_candles_csv(candles, home / 'candles.csv')}"
        before = f"csv:{write_candles_csv(candles.slice(0, cut), home / 'before.csv')}"
        series = ["--symbol", args.symbol, "--timeframe", candles.timeframe.name]
        run("control-marks", "--source", source, *series, "--rule", "ma-agree", "--out",
            str(home / "rule.json"))
        marks = json.loads((home / "rule.json").read_text())
        clean = json.loads(json.dumps(marks))
        trades = [a for a in marks["annotations"] if a["kind"] == "trade"
                  and (held_out_ts is None or a["entry_ts"] < held_out_ts)]
        turned = {a["id"] for a in random.Random(noise).sample(trades,
                                                                round(args.flip * len(trades)))}
        for a in trades:
            if a["id"] in turned:
                a["direction"] = "short" if a["direction"] == "long" else "long"
        (home / "noisy.json").write_text(json.dumps(marks))
        run("annotations", "import", str(home / "noisy.json"))
        out = run("annotations", "suspects", "--source", before, *series, "--folds",
                  args.folds, *model, "--seeds", args.seeds, "--json")
        objects = [json.loads(line) for line in out.splitlines()]
        spans = {tuple(o["test"]) for o in objects if "fold" in o}
        (found,) = [o for o in objects if "likely_label_errors" in o]
        suspects = found["likely_label_errors"]["suspects"]
        flagged = {s["annotation_id"] for s in suspects}
        index = {int(t): i for i, t in enumerate(candles.ts)}
        tested = set()
        for a in trades:  # held from the entry candle's close to the exit candle's close
            held = (index[a["entry_ts"]] + 1, index[a["exit_ts"]] + 1)
            if any(max(held[0], a0) < min(held[1], b0) for a0, b0 in spans):
                tested.add(a["id"])
        flagged &= tested
        rows.append((noise, len(trades), len(tested), len(turned & tested), len(flagged),
                     len(flagged & turned), found["verdicts"]["position"]))
        if args.retrain:
            by_id = {a["id"]: a for a in marks["annotations"]}
            repaired = []
            for s in suspects:
                mark = from_json_record(by_id[s["annotation_id"]], marks["version"])
                assert isinstance(mark, Trade) or s["head"] == "regime"
                repaired.append((s["annotation_id"], fixed(mark, Suspect(**{
                    k: v for k, v in s.items() if k != "share_off"}))))
            fixed_marks = {**marks, "annotations": [
                a for a in marks["annotations"] if a["id"] not in dict(repaired)]
                + [to_json_record(new) for _, new in repaired if new is not None]}
            original = {a["id"]: a for a in clean["annotations"]}
            looked = {**marks, "annotations": [  # a look at each suspect: the slips put back
                original[a["id"]] if a["id"] in flagged & turned else a
                for a in marks["annotations"]]}
            until = str(held_out_ts)
            for name, chosen in (("left", marks), ("fixed", fixed_marks),
                                 ("looked at", looked), ("clean", clean)):
                arm = Path(tempfile.mkdtemp(prefix=f"label-errors-{name}-"))
                os.environ["WORKSTATION_HOME"] = str(arm)
                (arm / "marks.json").write_text(json.dumps(chosen))
                run("annotations", "import", str(arm / "marks.json"))
                run("train", "--source", source, *series, *model, "--train-until", until,
                    "--seed", str(noise))
                report = json.loads(run("report", "--source", source,
                                        "--json").splitlines()[-1])
                score = report["heads"]["position"]
                scores.append((noise, name, score["accuracy"], score["best_baseline"],
                               score["margin"], score["interval"], score["verdict"]))
    print(f"{args.count:,} candles of {args.candles}; {args.flip:.0%} of the rule's trades turned "
          f"round; {args.folds} folds, {args.seq_len}-candle windows, {args.epochs} epochs, "
          f"{args.seeds} seed(s) a fold" + (f"; the newest {args.held_out:.0%} held out"
                                              if args.retrain else ""))
    print("noise seed | trades | tested | turned (tested) | flagged | flagged and turned | "
          "precision (share turned) | recall | position head")
    for noise, n, t, bad, flag, hit, verdict in rows:
        precision = f"{hit / flag:.0%}" if flag else "—"
        recall = f"{hit / bad:.0%}" if bad else "—"
        print(f"{noise} | {n} | {t} | {bad} | {flag} | {hit} | {precision} ({bad / t:.0%}) | "
              f"{recall} | {verdict}")
    if scores:
        print("noise seed | marks | held-out position accuracy | best baseline | margin "
              "[95 % interval] | verdict")
        for noise, name, accuracy, baseline, margin, interval, verdict in scores:
            bar = "—" if interval is None else \
                f"[{interval[0] * 100:+.1f}, {interval[1] * 100:+.1f}] pp"
            shown = "—" if accuracy is None else f"{accuracy:.1%}"
            gap = "—" if margin is None else f"{margin * 100:+.1f} pp"
            print(f"{noise} | {name} | {shown} | {baseline} | {gap} {bar} | {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
