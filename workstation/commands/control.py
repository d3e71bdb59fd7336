"""``workstation control-marks``: trades made by a simple causal rule on a series, written as
an annotations file (JSON, or CSV) to import: the positive control of ``workstation evaluate``
(the marks follow the rule, the position head should learn them) or, with ``--shuffle``, the
negative one (the same trades at times the rule does not explain: no edge should show). See
``ml.controls``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..annotations.io import file_format, write_csv, write_json
from ..errors import WorkstationError
from .flags import add_series_flags, flagged_series


def register(sub) -> None:
    p = sub.add_parser("control-marks", help="write rule-made control trades for a series",
                       description=__doc__.split("\n\n")[0])
    add_series_flags(p)
    p.add_argument("--rule", choices=("ma-cross",), default="ma-cross",
                   help="ma-cross: long while the fast average of closes is above the slow "
                        "one, short while below")
    p.add_argument("--fast", type=int, default=10, help="fast average, candles (default 10)")
    p.add_argument("--slow", type=int, default=40, help="slow average, candles (default 40)")
    p.add_argument("--shuffle", action="store_true",
                   help="the same trades in a random order that keeps the order of "
                        "directions, end to end (the negative control)")
    p.add_argument("--seed", type=int, default=0, help="of --shuffle (default 0)")
    p.add_argument("--out", required=True, help="FILE.json or FILE.csv")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..ml.controls import check_windows, ma_cross_marks, shuffled_marks

    check_windows(args.fast, args.slow)
    out = Path(args.out)
    as_json = file_format(out) == "json"
    candles, key = flagged_series(args)
    trades = ma_cross_marks(candles, key.market, fast=args.fast, slow=args.slow)
    if not trades:
        raise WorkstationError(f"{len(candles)} candles of {key.provenance} hold no completed "
                               f"{args.fast}/{args.slow} cross regime")
    if args.shuffle:
        trades = shuffled_marks(trades, candles, seed=args.seed)
    (write_json if as_json else write_csv)(trades, out)
    length = np.array([t.holding_ms for t in trades]) / candles.timeframe.ms
    longs = length[[t.direction.sign > 0 for t in trades]].sum() / length.sum()
    print(f"wrote {len(trades):,} {'shuffled ' * args.shuffle}{args.fast}/{args.slow} "
          f"cross trades of {key.market} {candles.timeframe.name} to {out}: "
          f"{int(length.sum()):,} candles held end to end, median {np.median(length):g} and "
          f"mean {length.mean():.1f} candles a trade, {longs:.1%} of them long; import them "
          f"with `workstation annotations import {out}`")
    return 0
