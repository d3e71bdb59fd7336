"""``workstation annotations review-next``: the stretches of candles to review next, ranked by a
saved run's model (``ml.review_next``: its rule and why), each with the command that opens it
in blind replay at its start."""

from __future__ import annotations

import json

from ..errors import WorkstationError
from ..ml.review_next import DEFAULT_LENGTH, DEFAULT_TOP, RULE
from ..progress import say


def register_review_next(actions) -> None:
    p = actions.add_parser(
        "review-next", help="the unreviewed stretches a saved run's model would learn most "
                            "from, each with the blind replay that opens it",
        description="Rank the stretches of candles you have not reviewed by what the model "
                    f"of a saved run would learn most from: {RULE}. Each comes with the command "
                    "that opens it in blind replay at its start.")
    p.add_argument("run", nargs="?",
                   help="the run whose model ranks (default: the newest with a checkpoint)")
    p.add_argument("--source", help="where the run's candles are (default: where it had them)")
    p.add_argument("--reference-source", help="where its reference asset's candles are")
    p.add_argument("--length", type=int, default=DEFAULT_LENGTH,
                   help=f"candles a stretch (default {DEFAULT_LENGTH})")
    p.add_argument("--top", type=int, default=DEFAULT_TOP,
                   help=f"stretches listed (default {DEFAULT_TOP})")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run_review_next)


def run_review_next(args) -> int:
    for name in ("length", "top"):
        if getattr(args, name) < 1:
            raise WorkstationError(f"--{name} must be at least 1, got {getattr(args, name)}")
    from ..backtest.teaching_report import find_run
    from ..market.sources import load_series
    from ..ml.manifest import series_of
    from ..ml.review_next import rank_review_next
    from ..paths import app_paths

    record = find_run(args.run)
    series = series_of(record.manifest)
    try:
        candles, key = load_series(args.source or series.source, series.symbol,
                                   series.timeframe)
    except WorkstationError as exc:
        raise WorkstationError(f"run {record.run_id}'s candles ({args.source or series.source})"
                               f" cannot be read: {exc}; name where they are with --source"
                               ) from None
    queue = rank_review_next(record.run_id, record.store, record.checkpoint, record.manifest,
                             candles, key, annotations_db=app_paths().annotations_db,
                             reference_source=args.reference_source, device=args.device,
                             length=args.length, top=args.top)
    say(f"{queue.heading()}:")
    if not queue.stretches:
        say(f"  no unreviewed stretch of {args.length} candles: everything is reviewed, or "
            f"the gaps are shorter (try --length)")
    for k, stretch in enumerate(queue.stretches, 1):
        say(f"  {k}. {stretch.describe()}; blind replay: {queue.replay_command(stretch)}")
    if args.json:
        print(json.dumps({"review_next": [s.to_dict() for s in queue.stretches], "rule": RULE,
                          "run": record.run_id, "series": key.provenance,
                          "reviewed_candles": queue.reviewed,
                          "replay": [queue.replay_command(s) for s in queue.stretches]},
                         allow_nan=False), flush=True)
    return 0
