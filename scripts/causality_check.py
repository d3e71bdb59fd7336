"""Check on real candles that ``workstation predict --at TS`` uses only the data up to TS.

Usage: python scripts/causality_check.py SERIES.csv[.gz] REFERENCE.csv[.gz] [--candles N]

Trains a tiny model on the last N candles of SERIES (default 60,000) with higher timeframes
(15m, 1h, 1d) and REFERENCE as its reference asset, then predicts as of five times with the
data after TS (of both files) present, absent and perturbed (prices scaled, volumes redrawn,
a fifth of the candles dropped), and prints whether the three predictions are bit-identical.
Runs in a temporary WORKSTATION_HOME; exits 1 if any differs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("series")
    p.add_argument("reference")
    p.add_argument("--candles", type=int, default=60_000)
    args = p.parse_args()
    home = tempfile.mkdtemp(prefix="causality-")
    os.environ["WORKSTATION_HOME"] = home
    from workstation.cli import main as cli
    from workstation.market.csv_io import read_candles_csv, write_candles_csv
    from workstation.market.perturb import changed_after
    from workstation.market.timeframes import ONE_MINUTE

    def run(*argv) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = cli(list(argv))
        if code:
            raise SystemExit(f"workstation {' '.join(argv)} failed ({code})")
        return out.getvalue()

    series = read_candles_csv(Path(args.series), ONE_MINUTE)
    series = series.slice(max(0, len(series) - args.candles), len(series))
    reference = read_candles_csv(Path(args.reference), ONE_MINUTE)
    folder = Path(home)
    files = {"eth": write_candles_csv(series, folder / "series.csv"),
             "btc": write_candles_csv(reference, folder / "reference.csv")}
    trained = run("train", "--source", f"csv:{files['eth']}", "--symbol", "ETH/USDT",
                  "--reference", "BTC/USDT", "--reference-source", f"csv:{files['btc']}",
                  "--higher-timeframes", "15m,1h,1d", "--seq-len", "64", "--epochs", "1",
                  "--no-annotations", "--json")
    run_id = json.loads(trained.splitlines()[-1])["run_id"]

    def predict(eth: Path, btc: Path, ts: int) -> dict:
        out = run("predict", "--source", f"csv:{eth}", "--symbol", "ETH/USDT", "--run", run_id,
                  "--reference-source", f"csv:{btc}", "--at", str(ts), "--json")
        return json.loads(out)["prediction"]

    ok = True
    for k, row in enumerate(np.linspace(len(series) // 2, len(series) - 2, 5).astype(int)):
        ts = int(series.ts[row])
        cut = {name: write_candles_csv(c.slice(0, int(np.searchsorted(c.ts, ts, side="right"))),
                                       folder / f"{name}-cut.csv")
               for name, c in (("eth", series), ("btc", reference))}
        moved = {name: write_candles_csv(changed_after(c, ts, 2 * k + i),
                                         folder / f"{name}-moved.csv")
                 for i, (name, c) in enumerate((("eth", series), ("btc", reference)))}
        present = predict(files["eth"], files["btc"], ts)
        same = present == predict(cut["eth"], cut["btc"], ts) == predict(
            moved["eth"], moved["btc"], ts)
        ok &= same
        print(f"TS {ts}: candle probs {[round(p, 6) for p in present['candle_probs']]}: "
              f"{'identical' if same else 'DIFFERENT'} with the future absent / perturbed")
    print(f"{len(series):,} candles of {args.series}; reference {args.reference}; run {run_id}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
