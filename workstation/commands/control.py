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
from ..ml.controls import (
    RULES,
    ControlRule,
    control_marks,
    pivot_levels,
    review_region,
    shuffled_marks,
)
from .flags import add_series_flags, flagged_series


def register(sub) -> None:
    p = sub.add_parser("control-marks", help="write rule-made control trades for a series",
                       description=__doc__.split("\n\n")[0])
    add_series_flags(p)
    p.add_argument("--rule", choices=RULES, default="ma-cross",
                   help="ma-cross / ema-cross: long while the fast simple / exponential "
                        "average of closes is above the slow one, short while below; "
                        "donchian: long from a close above the highest high of the previous "
                        "--window candles, short from one below their lowest low; "
                        "rsi: long while the --window-candle RSI is above 50, short while "
                        "below; levels: the swing highs and lows (--window candles either "
                        "side) as drawn levels, long while the close is within one volatility "
                        "above the nearest below, short while within one under the nearest "
                        "above, flat else (JSON: the levels and a reviewed region go with the "
                        "trades); "
                        "ma-agree: long while every --pairs fast average is above its slow "
                        "one, short while every one is below, flat else (with a reviewed "
                        "region over the trades, so the flat candles are labels)")
    p.add_argument("--fast", type=int, help="fast average of the crosses, candles (default "
                                            "10 for ma-cross, 20 for ema-cross)")
    p.add_argument("--slow", type=int, help="slow average of the crosses, candles (default "
                                            "40 for ma-cross, 50 for ema-cross)")
    p.add_argument("--window", type=int, help="donchian's channel (default 20), rsi's "
                                              "period (default 14) or the levels' swing "
                                              "(default 10 either side), candles")
    p.add_argument("--pairs", help="ma-agree's averages, FAST/SLOW,FAST/SLOW candles (default "
                                   "10/50,20/100)")
    p.add_argument("--shuffle", action="store_true",
                   help="the same trades in a random order that keeps the order of "
                        "directions, and the flat gaps between them shuffled too (the "
                        "negative control)")
    p.add_argument("--seed", type=int, default=0, help="of --shuffle (default 0)")
    p.add_argument("--out", required=True, help="FILE.json or FILE.csv (ma-agree: JSON, for "
                                                "its reviewed region)")
    p.set_defaults(func=run)


def run(args) -> int:
    rule = ControlRule.of(args.rule, fast=args.fast, slow=args.slow, window=args.window,
                          pairs=args.pairs)
    out = Path(args.out)
    as_json = file_format(out) == "json"
    if rule.flat_gaps and not as_json:
        raise WorkstationError(f"{rule.name} marks come with a reviewed region, which a CSV "
                               f"of trades cannot hold: write {out.with_suffix('.json').name}")
    candles, key = flagged_series(args)
    trades = control_marks(candles, key.market, rule)
    if not trades:
        raise WorkstationError(f"{len(candles)} candles of {key.provenance} hold no completed "
                               f"{rule.summary} regime")
    if args.shuffle:
        trades = shuffled_marks(trades, candles, seed=args.seed)
    region = [review_region(trades, rule)] if rule.flat_gaps else []
    levels = pivot_levels(candles, key.market, rule.windows[0]) if rule.name == "levels" \
        else []
    if as_json:
        write_json([*trades, *region], out, levels)
    else:  # never with a region: refused above
        write_csv(trades, out)
    length = np.array([t.holding_ms for t in trades]) / candles.timeframe.ms
    longs = length[[t.direction.sign > 0 for t in trades]].sum() / length.sum()
    span = (trades[-1].exit_ts - trades[0].entry_ts) / candles.timeframe.ms
    held = (f"{int(length.sum()):,} of the {int(span):,} candles they span held, and a "
            f"reviewed region over them" if region else
            f"{int(length.sum()):,} candles held end to end")
    print(f"wrote {len(trades):,} {'shuffled ' * args.shuffle}{rule.summary} trades of "
          f"{key.market} {candles.timeframe.name} to {out}: {held}, median "
          f"{np.median(length):g} and mean {length.mean():.1f} candles a trade, {longs:.1%} "
          f"of them long" + (f", with {len(levels):,} swing levels" if levels else "")
          + f"; import them with `workstation annotations import {out}`")
    return 0
