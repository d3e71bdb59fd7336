"""``runs list`` and ``runs export RUN``: training runs as their histories tell them.

Every batch-trained run keeps its metrics in ``history.jsonl`` beside its checkpoints
(``workstation.ml.history``). ``runs list`` shows each run, newest first: when it started,
its state (running, completed, stopped, failed, or unknown: killed), data, preset, steps,
best validation loss and the last known verdicts; a run whose history is damaged shows why,
and one whose checkpoint fails the store's check is "damaged: ..." (as in ``checkpoints list``).
``runs export`` writes a run's curves as TensorBoard event files and/or a CSV file.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..display import NO_DATA, number
from ..errors import WorkstationError
from ..timeparse import format_ms


def register(sub) -> None:
    runs = sub.add_parser("runs", help="training runs and their recorded curves",
                          description=__doc__.split("\n\n")[0])
    what = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    listing = what.add_parser("list", help="one line per run, newest first")
    listing.add_argument("--json", action="store_true", help="one JSON object per run")
    listing.set_defaults(func=run_list)
    export = what.add_parser("export", help="a run's recorded metrics as TensorBoard files "
                                            "or CSV")
    export.add_argument("run", metavar="RUN")
    export.add_argument("--tensorboard", metavar="DIR",
                        help="write TensorBoard event files into DIR/RUN/")
    export.add_argument("--csv", metavar="FILE",
                        help="write one row per recorded batch and epoch to FILE")
    export.add_argument("--for-cluster", metavar="DIR",
                        help="pack the run's manifest, candles and marks into DIR with a "
                             "train.sh that starts it under torchrun")
    export.add_argument("--source", help="with --for-cluster: where the run's candles are "
                                         "(default: the source it trained on; csv:FILE for a "
                                         "file)")
    export.add_argument("--reference-source", metavar="SOURCE",
                        help="with --for-cluster: where the run's reference asset's candles "
                             "are, if it read one (default: where it had them)")
    export.set_defaults(func=run_export)


def _stores():
    from ..ml.checkpoints import model_stores

    return model_stores()


def run_list(args) -> int:
    from ..ml.history.listing import list_runs

    runs = [summary for store in _stores() for summary in list_runs(store)]
    runs.sort(key=lambda r: r.run_id, reverse=True)  # run ids sort by their start
    if args.json:
        for r in runs:
            print(json.dumps(r.to_dict(), allow_nan=False), flush=True)
        return 0
    if not runs:
        print("no training runs (train one with `workstation train`)")
        return 0
    header = ("model", "run", "started", "state", "preset", "steps", "best val loss",
              "verdict", "data")
    table = [header]
    for r in runs:
        verdict = f"{r.verdict_source}: {r.verdict}" if r.verdict else NO_DATA
        data = str(r.provenance or NO_DATA)
        if r.problem:
            data = f"{data}; {r.problem}" if r.provenance else r.problem
        if r.damaged:
            data = f"{data}; damaged: {r.damaged}"
        table.append((r.model, r.run_id,
                      format_ms(r.started) if r.started is not None else NO_DATA, r.state,
                      r.preset or NO_DATA, number(r.steps, "d"), number(r.best_val_loss), verdict,
                      data))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    print(f"{len(runs)} run(s)")
    return 0


def _run_dir(run_id: str) -> Path:
    from ..ml.checkpoints import CheckpointError, CheckpointStore

    for store in _stores():
        if run_id in store.run_ids():
            return store.run_dir(run_id)
    raise CheckpointError(CheckpointStore().root / str(run_id),
                          "no such run (see `workstation runs list`)")


def _cannot_write(what: str, where: str, exc: OSError) -> WorkstationError:
    reason = exc.strerror or type(exc).__name__
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        reason = "a file is in the way"
    return WorkstationError(f"cannot write {what} to {where}: {reason}")


def _for_cluster(args) -> None:
    from ..market.sources import load_series
    from ..ml.handoff import SCRIPT_FILE, pack_for_cluster
    from ..ml.job import manifest_reference, market_annotations
    from ..ml.manifest import read_manifest, series_of
    from ..paths import app_paths

    run_dir = _run_dir(args.run)
    manifest = read_manifest(run_dir)
    series = series_of(manifest)
    candles, _key = load_series(args.source or series.source, series.symbol, series.timeframe)
    reference = manifest_reference(manifest, args.reference_source)
    marks = (market_annotations(app_paths().annotations_db, series.market)
             if manifest["labels"].get("sha256") else [])
    try:
        packed = pack_for_cluster(run_dir, Path(args.for_cluster), candles, marks,
                                  reference.candles if reference is not None else None)
    except OSError as exc:
        raise _cannot_write("the packed run", args.for_cluster, exc) from None
    print(f"packed run {args.run} into {packed.folder}: {packed.candles:,} candles, "
          f"{packed.marks} marks, its manifest and {SCRIPT_FILE}. On the cluster, in that "
          f"folder (NNODES, NPROC and RDZV set as needed): sh {SCRIPT_FILE}, which runs:\n"
          f"  {packed.command}")


def run_export(args) -> int:
    from ..ml.history.export import export_csv
    from ..ml.history.reader import read_history

    if not args.tensorboard and not args.csv and not args.for_cluster:
        raise WorkstationError("say where to export: --tensorboard DIR, --csv FILE and/or "
                               "--for-cluster DIR")
    if args.for_cluster:
        _for_cluster(args)
        if not args.tensorboard and not args.csv:
            return 0
    history = read_history(_run_dir(args.run))  # a damaged history: the error names the line
    if args.csv:
        try:
            rows = export_csv(history, args.csv)
        except OSError as exc:
            raise _cannot_write("the CSV file", args.csv, exc) from None
        print(f"wrote {rows} rows ({len(history.batches)} batches, {len(history.epochs)} "
              f"epochs) of run {args.run} to {args.csv}")
    if args.tensorboard:
        from ..ml.history.export import export_tensorboard

        try:
            path = export_tensorboard(history, args.tensorboard)
        except OSError as exc:
            raise _cannot_write("TensorBoard files", args.tensorboard, exc) from None
        print(f"wrote the TensorBoard events of run {args.run} to {path} (view with "
              f"`tensorboard --logdir {args.tensorboard}`)")
    return 0
