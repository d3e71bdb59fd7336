"""``checkpoints list|delete RUN|clear`` and ``predict``: saved runs, and what one predicts."""

from __future__ import annotations

import json
import sys

from ..display import NO_DATA, file_size, number
from ..errors import WorkstationError
from ..timeparse import format_ms, parse_time_ms
from .flags import add_reference_source_flag, add_series_flags


def register(sub) -> None:
    ck = sub.add_parser("checkpoints", help="list, delete or clear saved training runs")
    what = ck.add_subparsers(dest="checkpoints_command", metavar="ACTION", required=True)
    listing = what.add_parser("list", help="one line per run, newest last; a run whose files "
                                           "fail a check (sizes, headers, settings) is damaged")
    listing.add_argument("--verify", action="store_true",
                         help="also read every file: SHA-256 against meta.json, every tensor "
                              "finite, the training state loadable")
    listing.set_defaults(func=run_list)
    delete = what.add_parser("delete", help="delete one run and all its checkpoints")
    delete.add_argument("run", metavar="RUN")
    delete.set_defaults(func=run_delete)
    clear = what.add_parser("clear", help="delete every run")
    clear.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    clear.set_defaults(func=run_clear)

    predict = sub.add_parser("predict", help="the model's prediction for the next candle of a "
                                             "series")
    add_series_flags(predict, max_candles=False)
    predict.add_argument("--run", metavar="RUN", help="default: the newest run")
    predict.add_argument("--checkpoint", choices=("best", "latest"),
                         help="default: best if the run has one, else latest")
    predict.add_argument("--at", metavar="TS",
                         help="predict as of the candle that opens at TS (ISO time or epoch "
                              "ms), from the data up to it only (default: the newest closed)")
    add_reference_source_flag(predict)
    predict.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N | auto")
    predict.add_argument("--json", action="store_true", help="print one JSON object")
    predict.set_defaults(func=run_predict)


def _stores():
    from ..ml.checkpoints import model_stores

    return model_stores()


def _val_loss(metrics: dict):
    val = metrics.get("val")
    loss = val.get("loss") if isinstance(val, dict) else None
    return metrics.get("best_val_loss") if loss is None else loss


def run_list(args) -> int:
    runs = [info for store in _stores() for info in store.list_runs(check=True,
                                                                     verify=args.verify)]
    if not runs:
        print("no saved runs (train one with `workstation train`)")
        return 0
    header = ("model", "run", "created", "step", "epoch", "val loss", "best", "size", "data")
    table = [header]
    for r in runs:
        data = f"damaged: {r.error}" if r.error else str(r.provenance or NO_DATA)
        table.append((r.model, r.run_id, r.created.replace("T", " ").replace("+00:00", " UTC"),
                      number(r.step, "d"), number(r.epoch, "d"), number(_val_loss(r.metrics)),
                      "yes" if r.has_best else "no", file_size(r.size_bytes), data))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    total = sum(r.size_bytes for r in runs)
    damaged = sum(1 for r in runs if r.error)
    print(f"{len(runs)} run(s), {file_size(total)}" + (f", {damaged} damaged" if damaged else "")
          + ("; every file hashed and read" if args.verify else ""))
    return 0


def _store_of(run_id: str):
    from ..ml.checkpoints import CheckpointError, CheckpointStore

    for store in _stores():
        if run_id in store.run_ids():
            return store
    where = CheckpointStore().root
    raise CheckpointError(where / str(run_id), "no such run (see `workstation checkpoints "
                                               "list`)")


def run_delete(args) -> int:
    store = _store_of(args.run)
    freed = store.delete_run(args.run)
    print(f"deleted run {args.run} ({store.model}): freed {file_size(freed)}")
    return 0


def run_clear(args) -> int:
    from ..ml.checkpoints import CheckpointStore

    stores = _stores()
    infos = [info for store in stores for info in store.list_runs()]
    if not infos:
        print("no saved runs to clear")
        return 0
    size = sum(i.size_bytes for i in infos)
    what = f"{len(infos)} run(s), {file_size(size)} under {CheckpointStore().root}"
    if not args.yes:
        if not sys.stdin or not sys.stdin.isatty():
            raise WorkstationError(f"refusing to delete {what} without confirmation: run "
                                   f"`workstation checkpoints clear --yes`")
        sys.stderr.write(f"delete {what}? [y/N] ")
        sys.stderr.flush()
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            print("nothing deleted")
            return 1
    runs = freed = 0
    for store in stores:
        n, b = store.clear()
        runs += n
        freed += b
    print(f"cleared {runs} run(s): freed {file_size(freed)}")
    return 0


def run_predict(args) -> int:
    from ..market.sources import load_series
    from ..market.timeframes import parse_timeframe
    from ..ml.checkpoints import CheckpointStore
    from ..ml.context import as_of, check_base, window_candles
    from ..ml.device import check_device_spec
    from ..ml.job import load_reference

    device = check_device_spec(args.device)
    if args.run:
        store = _store_of(args.run)
        run_id = args.run
    else:
        store = next((s for s in _stores() if s.latest_run_id()), None)
        run_id = store.latest_run_id() if store else None
        if run_id is None:
            raise WorkstationError(f"no saved run under {CheckpointStore().root}; train one "
                                   f"with `workstation train` (or give --run)")
    which = args.checkpoint or ("best" if store.has_checkpoint(run_id, "best") else "latest")
    model_config, feature_spec, _ = store.settings(run_id, which)  # no torch yet
    at = parse_time_ms(args.at) if args.at is not None else None
    tf = parse_timeframe(args.timeframe)
    need = window_candles(feature_spec, tf, model_config.seq_len)
    candles, key = load_series(args.source, args.symbol, tf,
                               max_candles=None if at is not None else need)
    check_base(feature_spec, candles.timeframe)
    loaded_reference = load_reference(feature_spec, key, args.reference_source)
    reference = loaded_reference.candles if loaded_reference is not None else None
    if at is not None:
        candles, reference = as_of(candles, at, reference)  # nothing after TS goes further
    # Every argument is checked and the candles are read: now load torch and the model.
    from ..ml.device import resolve_device
    from ..ml.online import Predictor

    loaded = store.load(run_id, which)
    predictor = Predictor.from_checkpoint(loaded, resolve_device(device))
    from ..ml.level_columns import levels_for
    from ..paths import app_paths

    prediction = predictor.predict(candles, reference=reference, levels=levels_for(
        predictor.feature_spec, app_paths().annotations_db, key.market))
    window = min(candles.n_closed, predictor.config.seq_len)
    trained_on = loaded.meta.get("provenance") or "unknown data"
    if args.json:
        print(json.dumps({"series": key.provenance, "demo": key.is_demo, "run": run_id,
                          "reference": loaded_reference.key.provenance
                          if loaded_reference is not None else None,
                          "checkpoint": which, "step": loaded.step, "trained_on": trained_on,
                          "window": window, "prediction": prediction.to_dict()},
                         allow_nan=False))
        return 0
    p = prediction

    def probs(values) -> str:
        return "  ".join(f"{name} {v * 100:5.1f}%" for name, v in zip(("down", "flat", "up"),
                                                                      values))

    std = "" if p.return_std_bps is None else f" ± {p.return_std_bps:.2f}"
    print(f"{key.provenance}: prediction for the candle of {format_ms(p.target_ts)}")
    print(f"  after the candle of {format_ms(p.ts)} (close {p.close:.6g}); window of "
          f"{window} of {predictor.config.seq_len} candles")
    print(f"  model: run {run_id} ({which}, step {loaded.step}), trained on {trained_on}")
    if feature_spec.has_context:
        context = [f"higher timeframes {', '.join(feature_spec.higher_timeframes)}"] \
            if feature_spec.higher_timeframes else []
        if loaded_reference is not None:
            context.append(f"reference {loaded_reference.key.provenance}")
        print(f"  also reads: {'; '.join(context)}")
    print(f"  next candle:            {probs(p.candle_probs)}  -> {p.candle_label} "
          f"(confidence {p.confidence * 100:.1f}%)")
    print(f"  trend over {p.trend_horizon:>2} candles:  {probs(p.trend_probs)}  -> "
          f"{p.trend_label}")
    g = p.ghost
    print(f"  expected return: {p.return_bps:+.2f}{std} bps (close ≈ {g.close:.6g}, range "
          f"{g.low:.6g} .. {g.high:.6g})")
    return 0
