"""``workstation annotations consistency``: the trader's fresh blind marks of stretches already
labelled against the old marks (``ml.consistency``), and ``--plan N``: the stretches a check
asks to mark again (``annotations.consistency_plan``), which the window's consistency check
(Shift+F9) replays blind with the old marks hidden."""

from __future__ import annotations

import json

from ..annotations.consistency_plan import DEFAULT_COUNT, DEFAULT_LENGTH, remarked
from ..errors import WorkstationError
from ..ml.entry_events import EVENT_WINDOW
from ..progress import say
from ..timeparse import format_minute
from .flags import add_series_flags, flagged_series


def register_consistency(actions) -> None:
    p = actions.add_parser(
        "consistency", help="your fresh blind marks of stretches you labelled before against "
                            "the old marks: agreement, chance and Cohen's kappa",
        description="Compare the blind marks of consistency checks (the window's Shift+F9 "
                    "replays stretches you labelled, the old marks hidden, and keeps the fresh "
                    "marks apart) with your old marks of the same candles: position agreement "
                    "per candle beside chance, Cohen's kappa, and entries matched within "
                    "±WINDOW candles beside random entries. --plan N draws the stretches a "
                    "check asks for.")
    add_series_flags(p)
    p.add_argument("--plan", type=int, metavar="N",
                   help=f"draw N stretches (e.g. {DEFAULT_COUNT}) to mark again, replacing this "
                        f"series' plan; the window's consistency check replays them")
    p.add_argument("--length", type=int, default=DEFAULT_LENGTH,
                   help=f"candles a stretch of a new plan (default {DEFAULT_LENGTH})")
    p.add_argument("--seed", type=int, help="the draw's seed (default: a random one, kept)")
    p.add_argument("--window", type=int, default=EVENT_WINDOW,
                   help=f"candles an entry may be off and still match (default {EVENT_WINDOW})")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run_consistency)


def run_consistency(args) -> int:
    from ..annotations.consistency_plan import ConsistencyPlans, make_plan, series_name
    from ..ml.consistency import consistency
    from ..ml.job import market_annotations
    from ..paths import app_paths

    if args.window < 0:
        raise WorkstationError(f"--window must be at least 0, got {args.window}")
    paths = app_paths()
    candles, key = flagged_series(args)
    candles = candles.slice(0, candles.n_closed)
    tf = key.timeframe.name
    old = market_annotations(paths.annotations_db, key.market)
    fresh = market_annotations(paths.consistency_db, key.market)
    plans = ConsistencyPlans(paths.consistency_plan)
    if args.plan is not None:
        plans.put(make_plan(key.market, tf, [a for a in old if a.timeframe == tf], fresh,
                            candles.ts, candles.timeframe, count=args.plan, length=args.length,
                            seed=args.seed))
    plan = plans.get(series_name(key.market, tf))
    done = [] if plan is None else [remarked(fresh, s) for s in plan.stretches]
    if plan is None:
        say(f"no consistency plan for {key.provenance}: --plan N draws one")
    else:
        say(f"consistency plan of {key.provenance} (seed {plan.seed}): {sum(done)} of "
            f"{len(done)} stretches of {plan.length} candles marked again; Shift+F9 in the "
            f"window replays the next, blind, with your old marks hidden")
        for k, (s, d) in enumerate(zip(plan.stretches, done, strict=True), 1):
            say(f"  {k}. {format_minute(s.start_ts)} .. {format_minute(s.end_ts)}"
                f"{' (done)' if d else ''}")
    report = consistency(key.provenance, old, fresh, candles.ts, candles.timeframe,
                         window=args.window)
    for line in report.lines():
        say(line)
    if args.json:
        print(json.dumps({**report.to_dict(), "plan": None if plan is None else {
            **plan.to_dict(), "done": done}}, allow_nan=False), flush=True)
    return 0
