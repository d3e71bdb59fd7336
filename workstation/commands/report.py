"""``workstation report [RUN]``: did it learn my marks? A saved run on one screen.

Marks used and where (per span: trades, regions, reviewed candles, dates; the split rule and
its warnings), per trader head the accuracy beside every baseline with the margin over the
best, its interval and verdict, the position head's entries and exits as events, and the
held-out backtest of the position head after costs beside the trader's marks and buy & hold:
on the run's held-out span (``train --train-until``), else on its validation span, said
loudly. The run is rebuilt from its manifest on the very candles and marks it had (refused in
one line when they changed). ``--json`` prints it all as one object.
"""

from __future__ import annotations

import json

from .flags import add_cost_flags, add_reference_source_flag, thresholds


def register(sub) -> None:
    p = sub.add_parser("report", help="did it learn my marks? a run's marks, scores, events "
                                      "and held-out backtest", description=__doc__.split("\n\n")[0])
    p.add_argument("run", nargs="?", metavar="RUN", help="the run (default: the newest)")
    p.add_argument("--source", help="where the run's candles are now (default: where it had "
                                    "them; csv:FILE for a file); they must hash the same")
    add_reference_source_flag(p)
    add_cost_flags(p)
    p.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..backtest.teaching_report import find_run, teaching_report
    from ..paths import app_paths

    levels = thresholds(args.threshold)
    record = find_run(args.run)
    paths = app_paths()
    report = teaching_report(record, annotations_db=paths.annotations_db,
                             candle_cache=paths.candle_cache, source=args.source,
                             reference_source=args.reference_source,
                             device=args.device, thresholds=levels, fee_bps=args.fee_bps,
                             slippage_bps=args.slippage_bps, size=args.size)
    if args.json:
        print(json.dumps(report.to_dict(), allow_nan=False))
    else:
        print("\n".join(report.lines()))
    return 0
