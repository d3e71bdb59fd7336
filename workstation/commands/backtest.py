"""``workstation backtest``: what the trader's marks or a run's signals would have earned after
costs, beside buy & hold, with every assumption printed.

A run's signals are backtested out of sample only: on the candles after the last one it was
trained on (recorded in its checkpoint); ``--in-sample`` allows the span it saw, and then every
line says IN-SAMPLE. Fills at the next candle's open; ``--fill same-close`` is the optimistic
option, labelled as such. ``--json`` prints one object per signal.
"""

from __future__ import annotations

import json

import numpy as np

from ..errors import WorkstationError
from .flags import add_cost_flags, add_series_flags, signal_name, thresholds


def register(sub) -> None:
    p = sub.add_parser("backtest", help="backtest marks or a run's signals after costs",
                       description=__doc__.split("\n\n")[0])
    add_series_flags(p)
    p.add_argument("--signals", default="annotations", metavar="annotations|run:RUN",
                   help="the trader's marked trades (default) or a saved run's predictions")
    p.add_argument("--head", choices=("position", "candle"), default="position",
                   help="the run's head that signals (default position)")
    add_cost_flags(p)
    p.add_argument("--cash", type=float, default=10_000.0, help="starting cash (default 10,000)")
    p.add_argument("--fill", choices=("next-open", "same-close"), default="next-open")
    p.add_argument("--in-sample", action="store_true",
                   help="allow a run's signals on candles it was trained on (labelled IN-SAMPLE)")
    p.add_argument("--json", action="store_true", help="one JSON object per signal on stdout")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..backtest.costs import costs_for
    from ..backtest.engine import NEXT_OPEN, SAME_CLOSE, Sizing
    from ..backtest.report import backtest_signals, describe
    from ..market.sources import load_series

    sizing = Sizing(size=args.size)
    fill = NEXT_OPEN if args.fill == "next-open" else SAME_CLOSE
    levels = thresholds(args.threshold)
    source = args.signals.strip()
    if source != "annotations" and not source.startswith("run:"):
        raise WorkstationError(f"--signals must be annotations or run:RUN, got {source!r}")
    candles, key = load_series(args.source, args.symbol, args.timeframe,
                               max_candles=args.max_candles)
    n = len(candles) if candles.last_closed else len(candles) - 1
    candles = candles.slice(0, n)
    costs = costs_for(key, fee_bps=args.fee_bps, slippage_bps=args.slippage_bps)
    if source == "annotations":
        signals, span = _annotation_signal(candles, key)
    else:
        signals, span = _run_signals(source[4:], candles, key, args, levels)
    results = backtest_signals(candles, signals, series=key.provenance, costs=costs,
                               sizing=sizing, fill=fill, cash=args.cash, span=span)
    if args.json:
        for result in results:
            print(json.dumps(result.to_dict(), allow_nan=False))
    else:
        print("\n".join(describe(results)))
    return 0


def _annotation_signal(candles, key):
    from ..backtest.report import MARKS
    from ..backtest.signals import market_marks_signal
    from ..paths import app_paths

    signal = market_marks_signal(candles, key, app_paths().annotations_db)
    if not signal.any():
        raise WorkstationError(f"no marked trade of {key.market} falls on these "
                               f"{len(candles):,} candles of {key.provenance}")
    return {"trader's marks": (signal, MARKS)}, (0, len(candles))


def _run_signals(run_id: str, candles, key, args, levels: tuple[float, ...]):
    from ..backtest.report import IN_SAMPLE, OUT_OF_SAMPLE
    from ..ml.checkpoints import CheckpointStore, read_meta

    store = CheckpointStore()
    which = "best" if store.has_checkpoint(run_id, "best") else "latest"
    meta = read_meta(store.snapshot_dir(run_id, which))
    trained = (meta.get("data") or {}).get("last_ts")
    if trained is None and not args.in_sample:
        raise WorkstationError(f"run {run_id} does not record the candles it was trained on, "
                               "so no span can be shown to be out of sample; pass --in-sample "
                               "to backtest it anyway (labelled IN-SAMPLE)")
    first_unseen = (int(np.searchsorted(candles.ts, int(trained), side="right"))
                    if trained is not None else 0)
    if args.in_sample:
        span, sample = (0, len(candles)), IN_SAMPLE
    elif first_unseen >= len(candles) - 1:
        raise WorkstationError(f"run {run_id} was trained on candles up to "
                               f"{_when(int(trained))}: none of these {len(candles):,} candles "
                               "comes after them (fetch newer ones, or pass --in-sample)")
    else:
        span, sample = (first_unseen, len(candles)), OUT_OF_SAMPLE
    from ..backtest.signals import model_signal
    from ..ml.device import resolve_device
    from ..ml.online import Predictor
    from ..ml.span_predictions import predict_span_probabilities

    predictor = Predictor.from_checkpoint(store.load(run_id, which), resolve_device("auto"))
    predicted = predict_span_probabilities(predictor, candles, span)
    signals = {}
    for level in levels:
        signal = np.zeros(len(candles), dtype=np.int8)
        signal[span[0]:span[1]] = model_signal(args.head, predicted.classes[args.head],
                                               predicted.confidence[args.head], level)
        name = signal_name(f"run {run_id} {args.head}", level, len(levels) > 1)
        signals[name] = (signal, sample)
    return signals, span


def _when(ms: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
