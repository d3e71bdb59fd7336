"""How many marks does the position head need? Train on N rule-made trades, test on a held-out
month of the same rule's trades, for several N.

Usage: python scripts/marks_needed.py SERIES.csv[.gz] [--symbol ETH/USDT] [--candles 240000]
       [--held-out-days 30] [--counts 10,30,100,300,1000] [--rule ma-agree] [--json]

For each N, in a fresh WORKSTATION_HOME: the rule's trades (``workstation control-marks``'s,
``ml.controls``) are cut at the start of the held-out span (the newest ``--held-out-days`` of
the last ``--candles`` candles); the N trades that end last before it are the trader's marks
to learn from (reviewed coverage: their stretch only), and every trade inside the held-out
span is there to score on (for a rule with flat gaps, such as the default ma-agree, the
Teach-a-rule rule, each of the two stretches gets its reviewed region). ``workstation train
--train-until`` (the candle before the held-out span, every other setting the default) trains
a tiny model; ``workstation report`` scores its position head on the held-out span beside
every baseline fitted on the training span, with the margin over the best, its 95 % interval
and the verdict. A count the trainer refuses (too few trades left to train on once validation
and its gap are carved out) is a line with the trainer's message. One line per N; the
README's table "How many marks does it need?" is this output.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

DAY_MS = 86_400_000


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("series")
    p.add_argument("--symbol", default="ETH/USDT")
    p.add_argument("--candles", type=int, default=240_000)
    p.add_argument("--held-out-days", type=float, default=30.0)
    p.add_argument("--counts", default="10,30,100,300,1000")
    p.add_argument("--rule", default="ma-agree")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    source = f"csv:{Path(args.series).resolve()}"
    for n in counts:
        row = _one(source, args, n)
        print(json.dumps(row) if args.json else _line(row), flush=True)
    return 0


def _one(source: str, args, count: int) -> dict:
    os.environ["WORKSTATION_HOME"] = tempfile.mkdtemp(prefix=f"marks-{count}-")
    from workstation.annotations.io import write_json
    from workstation.cli import main as cli
    from workstation.market.sources import load_series
    from workstation.market.timeframes import ONE_MINUTE
    from workstation.ml.controls import ControlRule, control_marks, review_region
    from workstation.timeparse import format_minute

    candles, key = load_series(source, args.symbol, ONE_MINUTE, max_candles=args.candles)
    first_held = int(candles.ts[-1] - args.held_out_days * DAY_MS)
    rule = ControlRule.of(args.rule)
    trades = control_marks(candles, key.market, rule)
    before = [t for t in trades if t.exit_ts < first_held]
    learn, score = before[-count:], [t for t in trades if t.entry_ts >= first_held]
    if len(learn) < count:
        raise SystemExit(f"only {len(learn)} trades before the held-out span")
    marks = Path(os.environ["WORKSTATION_HOME"]) / "marks.json"
    regions = [review_region(part, rule) for part in (learn, score)] if rule.flat_gaps else []
    write_json([*learn, *score, *regions], marks)
    series = ["--source", source, "--symbol", args.symbol, "--max-candles", str(args.candles)]
    _cli(cli, "annotations", "import", str(marks))
    started = time.monotonic()
    until = format_minute(first_held - 60_000)
    try:
        _cli(cli, "train", *series, "--train-until", until, "--json")
    except Refused as exc:
        return {"trades": count, "first_mark": format_minute(learn[0].entry_ts),
                "train_until": until, "held_out_trades": len(score), "refused": str(exc)}
    report = json.loads(_cli(cli, "report", "--source", source, "--json").splitlines()[-1])
    position = report["heads"]["position"]
    return {"trades": count, "first_mark": format_minute(learn[0].entry_ts),
            "train_until": until, "held_out_trades": len(score),
            "scored_on": report["scored_on"], "accuracy": position["accuracy"],
            "best_baseline": position["best_baseline"], "baselines": position["baselines"],
            "margin": position["margin"], "interval": position["interval"],
            "verdict": position["verdict"], "marks": position["marks"],
            "seconds": round(time.monotonic() - started, 1)}


class Refused(Exception):
    """A command exited with an error: its message."""


def _cli(cli, *argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(list(argv))
    if code != 0:
        lines = [line for line in err.getvalue().splitlines() if "error:" in line]
        raise Refused(lines[-1].split("error: ", 1)[1] if lines else
                      f"workstation {' '.join(argv)} exited {code}")
    return out.getvalue()


def _line(row: dict) -> str:
    def pct(x):
        return "—" if x is None else f"{100 * x:.2f} %"

    if "refused" in row:
        return (f"{row['trades']:>5} trades from {row['first_mark']}: refused: "
                f"{row['refused']}")
    best = row["best_baseline"]
    margin = "—" if row["margin"] is None else (
        f"{100 * row['margin']:+.2f} pp [{100 * row['interval'][0]:+.2f}, "
        f"{100 * row['interval'][1]:+.2f}]" if row["interval"] else
        f"{100 * row['margin']:+.2f} pp")
    return (f"{row['trades']:>5} trades from {row['first_mark']}: model {pct(row['accuracy'])}, "
            f"best baseline {best} {pct(row['baselines'].get(best) if best else None)}, "
            f"margin {margin}, {row['verdict'] or 'no verdict'} "
            f"({row['held_out_trades']} held-out trades, {row['seconds']:.0f} s)")


if __name__ == "__main__":
    sys.exit(main())
