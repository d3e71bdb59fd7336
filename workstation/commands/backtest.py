"""``workstation backtest``: what the trader's marks or a run's signals would have earned after
costs, beside buy & hold, with every assumption printed and what each edge is worth (the mean
trade in bps and ticks, the break-even cost per side, a placebo of 200 copies shifted in time,
how often the next open is the close).

A run's signals are backtested out of sample only: on the candles after the last one it was
trained on (recorded in its checkpoint); ``--in-sample`` allows the span it saw, and then every
line says IN-SAMPLE. Fills at the next candle's open; ``--fill same-close`` is the optimistic
option, labelled as such. The trader's marks are two samples, their blind marks and their
hindsight marks, on the same span and costs as a run's signals (where the market has marked
trades), with the hindsight gap between them (hindsight minus blind: return, win rate and mean
trade; "—" where either has no trade). ``--json`` prints one object per signal, its ``worth``
with it, then with both marks samples one ``hindsight_gap`` object.
"""

from __future__ import annotations

import json

from .flags import (
    add_cost_flags,
    add_reference_source_flag,
    add_series_flags,
    flagged_series,
    thresholds,
)


def register(sub) -> None:
    p = sub.add_parser("backtest", help="backtest marks or a run's signals after costs",
                       description=__doc__.split("\n\n")[0])
    add_series_flags(p)
    p.add_argument("--signals", default="annotations", metavar="annotations|run:RUN",
                   help="the trader's marked trades (default) or a saved run's predictions")
    p.add_argument("--head", choices=("position", "candle"), default="position",
                   help="the run's head that signals (default position)")
    add_cost_flags(p)
    add_reference_source_flag(p)
    p.add_argument("--cash", type=float, default=10_000.0, help="starting cash (default 10,000)")
    p.add_argument("--fill", choices=("next-open", "same-close"), default="next-open")
    p.add_argument("--in-sample", action="store_true",
                   help="allow a run's signals on candles it was trained on (labelled IN-SAMPLE)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per signal on stdout, then the hindsight gap's")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..backtest.engine import NEXT_OPEN, SAME_CLOSE
    from ..backtest.report import WHOLE_SPAN, describe, hindsight_gap
    from ..backtest.request import BacktestRequest, run_request
    from ..paths import app_paths

    request = BacktestRequest(
        signals=args.signals.strip(), head=args.head, thresholds=thresholds(args.threshold),
        fee_bps=args.fee_bps, slippage_bps=args.slippage_bps, size=args.size,
        fill=NEXT_OPEN if args.fill == "next-open" else SAME_CLOSE, cash=args.cash,
        in_sample=args.in_sample, reference_source=args.reference_source)
    candles, key = flagged_series(args)
    paths = app_paths()
    results = run_request(request, candles, key, annotations_db=paths.annotations_db,
                          candle_cache=paths.candle_cache)
    if args.json:
        for result in results:
            print(json.dumps(result.to_dict(), allow_nan=False))
        gap = hindsight_gap(results, WHOLE_SPAN)
        if gap is not None:
            print(json.dumps({"hindsight_gap": [gap.to_dict()]}, allow_nan=False))
    else:
        print("\n".join(describe(results)))
    return 0
