"""``workstation train``: train the transformer on a candle series without the window.

A one-line progress report goes to stderr; ``--json`` also prints every training event as
one JSON object per line on stdout. Every argument is checked before torch is loaded or any
candle is read. Ctrl-C (or SIGTERM) stops the run after the current batch and saves a
"stopped" checkpoint. Exit status: 0 completed, 130 stopped by Ctrl-C, 143 by SIGTERM,
1 failed.

Every run writes ``run.json`` beside its checkpoints (``ml.manifest``); ``--config run.json``
trains that run again, with its settings and seed, on its data (``--source`` may name where
the same candles live here; they must hash the same, and the marks must give the same labels).
"""

from __future__ import annotations

import json
import sys
import threading

from ..annotations.origin_filter import MARKS
from ..display import number, percent
from ..errors import WorkstationError
from ..interrupt import signals_stop
from ..ml.epoch_choice import describe_choice
from ..ml.events import (
    BatchEnd,
    CheckpointSaved,
    Compiling,
    EpochEnd,
    Failed,
    Finished,
    RunStarted,
)
from ..ml.job import TrainingRequest
from ..ml.manifest import check_candles, check_labels, read_manifest, series_of
from ..ml.scoring import describe
from ..ml.split import describe_spans
from ..ml.targets import CLASS_HEADS
from ..progress import draw_line, say
from ..timeparse import parse_time_ms
from .flags import add_context_flags, add_series_flags, add_training_flags, context_overrides

_PROGRESS_LINE = 118


def register(sub) -> None:
    p = sub.add_parser("train", help="train the transformer on candles (headless)",
                       description=__doc__.split("\n\n")[0])
    add_series_flags(p)
    p.set_defaults(source=None, timeframe=None)  # demo and 1m, unless --config says otherwise
    p.add_argument("--config", metavar="RUN_JSON",
                   help="train the run this manifest records (a run's run.json, or its "
                        "folder): its settings, seed and data; other setting flags are refused")
    p.add_argument("--preset", default=None,
                   help="model size: tiny (CPU), small, base or large (default tiny)")
    add_training_flags(p, epochs="default 10")
    p.add_argument("--val-fraction", type=float, default=None, help="default 0.1")
    p.add_argument("--train-until", metavar="TS", default=None,
                   help="train and validate on candles up to this time (ISO date or datetime, "
                        "UTC, or epoch ms); the later ones are held out, never trained or "
                        "validated on (a backtest of the run may use them out of sample)")
    p.add_argument("--log-every", type=int, default=None, help="steps per progress report")
    p.add_argument("--dropout", type=float, default=None)
    p.add_argument("--grad-checkpointing", action="store_true",
                   help="recompute block activations in backward (less memory, more compute)")
    p.add_argument("--flat-band", choices=("volatility", "bps"), default=None,
                   help="a move is flat within k trailing volatilities (default) or within "
                        "fixed bps")
    p.add_argument("--flat-k", type=float, default=None,
                   help="k of the volatility band, next candle and trend (default 0.4)")
    p.add_argument("--flat-bps", type=float, default=None,
                   help="next-candle moves within +-this many bps are 'flat' (bps band; "
                        "default 2)")
    p.add_argument("--trend-horizon", type=int, default=None, help="candles ahead (default 10)")
    p.add_argument("--trend-flat-bps", type=float, default=None, help="bps band (default 6)")
    p.add_argument("--class-weights", action="store_true",
                   help="weigh each class by the inverse of its share (rare classes count)")
    p.add_argument("--review-margin", type=int, default=None,
                   help="candles around each trade that count as reviewed (default 10)")
    add_context_flags(p)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    p.add_argument("--compile", choices=("auto", "on", "off"), default=None,
                   help="torch.compile the training step (default auto: on CUDA only)")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads (default: cores - 1, at most 2)")
    p.add_argument("--resume", metavar="RUN",
                   help="continue run RUN from its latest checkpoint (its settings apply; "
                        "--epochs may raise the total)")
    p.add_argument("--no-annotations", action="store_true",
                   help="ignore the trader's annotations (the action head stays masked)")
    p.add_argument("--marks", choices=MARKS, default=None,
                   help="which of the trader's marks to learn: all (default), or only the "
                        "blind ones made in blind replay")
    p.add_argument("--no-save", action="store_true", help="save no checkpoints")
    p.add_argument("--json", action="store_true", help="print each event as JSON on stdout")
    p.add_argument("--show-spans", action="store_true",
                   help="print where the run's spans would lie and the trades, regions and "
                        "reviewed candles each would hold, then stop (nothing is trained)")
    p.set_defaults(func=run)


def _accuracies(m) -> str:
    return "; ".join(describe(head, m.heads.get(head)) for head in CLASS_HEADS)


class _Report:
    """Turns events into the stderr progress line and, with --json, JSON lines on stdout."""

    def __init__(self, as_json: bool, epochs: int):
        self.as_json = as_json
        self.epochs = epochs

    @staticmethod
    def _line(text: str) -> None:
        draw_line(text[:_PROGRESS_LINE], _PROGRESS_LINE)

    def __call__(self, event) -> None:
        if self.as_json:
            print(json.dumps(event.to_dict(), allow_nan=False), flush=True)
        match event:
            case RunStarted():
                say(f"run {event.run_id}: {event.provenance}; {event.candles} candles, "
                            f"{event.train_windows} training / {event.val_windows} validation "
                            f"windows per epoch, {event.n_params:,} parameters on "
                            f"{event.device}")
                for line in describe_spans(event.spans):
                    say(f"  {line}")
                if event.split_rule:
                    say(f"  ({event.split_rule})")
                for warning in event.warnings:
                    say(f"warning: {warning}")
            case BatchEnd(metrics=m, memory=mem):
                self._line(f"epoch {event.epoch + 1}/{self.epochs} batch {event.batch}/"
                           f"{event.batches_per_epoch} loss {number(m.loss)} candle "
                           f"{percent(m.accuracy('candle'))} trend {percent(m.accuracy('trend'))} "
                           f"position {percent(m.accuracy('position'))} lr {event.lr:.2e} "
                           f"{event.samples_per_s:.0f} win/s mem {mem.allocated_mb:.0f} MB")
            case EpochEnd():
                covered = (f" over {event.train.batches} of {event.batches_per_epoch} batches "
                           f"(resumed mid-epoch)" if event.train.batches
                           < event.batches_per_epoch else "")
                say(f"epoch {event.epoch + 1}/{self.epochs} ({event.elapsed_s:.1f} s): "
                            f"train loss {number(event.train.loss)}{covered}, "
                            f"{_accuracies(event.train)}")
                say(f"  validation loss {number(event.val.loss)}"
                    f"{describe_choice(event.chosen_loss, event.chosen_by)}, "
                    f"{_accuracies(event.val)}" + (" [best]" if event.is_best else ""))
            case Compiling():
                say(f"compiling the training step (torch.compile, {event.backend}): the "
                    f"first steps take longer")
            case CheckpointSaved():
                say(f"  checkpoint ({event.reason}): {event.path}")
            case Finished():
                say(f"{event.status} after {event.step} steps in {event.elapsed_s:.1f} "
                            f"s; best validation {event.chosen_by} "
                            f"{number(event.best_val_loss)}")
            case Failed():
                say(f"training failed at step {event.step}: {event.message}")


def _flat_band(args) -> str | None:
    """``--flat-band``; bps bands given alone ask for the bps band."""
    in_bps = args.flat_bps is not None or args.trend_flat_bps is not None
    if in_bps and args.flat_band == "volatility":
        raise WorkstationError("--flat-bps / --trend-flat-bps set a bps band: use them with "
                               "--flat-band bps (or --flat-k with the volatility band)")
    return args.flat_band or ("bps" if in_bps else None)


_SETTING_FLAGS = ("preset", "epochs", "batch_size", "seq_len", "lr", "stride", "val_fraction",
                  "log_every", "train_until", "dropout", "flat_band", "flat_k", "flat_bps",
                  "trend_horizon", "trend_flat_bps", "review_margin", "seed", "threads",
                  "resume", "max_candles", "compile", "higher_timeframes", "reference",
                  "trend_windows", "indicators", "linear_lags", "marks")
_SETTING_SWITCHES = ("grad_checkpointing", "class_weights", "no_annotations", "levels")


def _request(args) -> TrainingRequest:
    """The flags as a ``TrainingRequest`` (checked by ``ml.job.plan``, without torch)."""
    return TrainingRequest(
        preset=args.preset or "tiny",
        model_overrides={"seq_len": args.seq_len, "linear_lags": args.linear_lags,
                         "dropout": args.dropout,
                         "use_gradient_checkpointing": args.grad_checkpointing or None},
        train_overrides={"epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr,
                         "window_stride": args.stride, "val_fraction": args.val_fraction,
                         "log_every": args.log_every, "seed": args.seed,
                         "cpu_threads": args.threads, "compile": args.compile,
                         "train_until": parse_time_ms(args.train_until)
                         if args.train_until is not None else None},
        target_overrides={"flat_band": _flat_band(args), "candle_flat_k": args.flat_k,
                          "trend_flat_k": args.flat_k, "candle_flat_bps": args.flat_bps,
                          "trend_horizon": args.trend_horizon,
                          "trend_flat_bps": args.trend_flat_bps,
                          "class_weights": args.class_weights or None,
                          "review_margin": args.review_margin},
        feature_overrides=context_overrides(args),
        device=args.device, resume_run=args.resume, use_annotations=not args.no_annotations,
        marks=args.marks or "all")


def run(args) -> int:
    if args.show_spans:
        return _show_spans(args)
    stop = threading.Event()
    with signals_stop(stop) as request:
        final = _train(args, stop)
    if not final.ok:
        if getattr(args, "debug", False):
            print(final.traceback, file=sys.stderr)
        raise WorkstationError(f"training failed: {final.message}")
    return request.exit_status or 0


def _manifest(args) -> dict | None:
    """The manifest ``--config`` names (None without it); setting flags beside it refused."""
    if args.config is None:
        return None
    given = [f"--{name.replace('_', '-')}" for name in _SETTING_FLAGS
             if getattr(args, name) is not None]
    given += [f"--{name.replace('_', '-')}" for name in _SETTING_SWITCHES if getattr(args, name)]
    if given:
        raise WorkstationError(f"--config takes every setting from the run's manifest; drop "
                               f"{', '.join(given)}")
    return read_manifest(args.config)


def _show_spans(args) -> int:
    """``--show-spans``: the spans a run of these flags would have (``ml.job.preview_spans``),
    without training."""
    from ..market.sources import load_series
    from ..market.timeframes import parse_timeframe
    from ..ml import job
    from ..paths import app_paths

    if args.config is not None or args.resume is not None:
        raise WorkstationError("--show-spans previews a new run: drop --config and --resume")
    request = _request(args)
    job.plan(request, None)  # every argument checked first
    candles, key = load_series(args.source or "demo", args.symbol,
                               parse_timeframe(args.timeframe or "1m"),
                               max_candles=args.max_candles)
    preview = job.preview_spans(request, candles, key,
                                annotations_db=app_paths().annotations_db)
    if preview.refused is not None:
        raise WorkstationError(f"a run would be refused: {preview.refused}")
    print(f"a run on {len(candles):,} candles of {key.provenance} would have:")
    for line in preview.lines:
        print(f"  {line}")
    for warning in preview.warnings:
        print(f"warning: {warning}")
    return 0


def _train(args, stop: threading.Event):
    from ..market.sources import load_series
    from ..market.timeframes import parse_timeframe
    from ..ml import job
    from ..ml.checkpoints import CheckpointStore
    from ..paths import app_paths

    store = CheckpointStore() if not args.no_save or args.resume is not None else None
    manifest = _manifest(args)
    if manifest is not None:
        training = job.plan_of(manifest, None if args.device == "auto" else args.device)
        series = series_of(manifest)
        candles, key = load_series(args.source or series.source, args.symbol or series.symbol,
                                   parse_timeframe(args.timeframe) if args.timeframe
                                   else series.timeframe)
        candles = check_candles(manifest, candles)  # the very candles the run had
        reference = job.manifest_reference(manifest, args.reference_source)
        print(f"training again the run {manifest.get('run_id')} records: its settings, seed "
              f"and {len(candles):,} candles of {key.provenance}", file=sys.stderr)
    else:
        training = job.plan(_request(args), store)  # every argument checked; no torch yet
        if training.resume is not None:
            print(f"resuming run {args.resume} at step {training.resume.step}: model, "
                  f"feature, target and training settings come from its checkpoint",
                  file=sys.stderr)
        candles, key = load_series(args.source or "demo", args.symbol,
                                   parse_timeframe(args.timeframe or "1m"),
                                   max_candles=args.max_candles)
        reference = job.load_reference(training.feature_spec, key, args.reference_source)
    if reference is not None:
        print(f"reference asset: {len(reference.candles):,} candles of "
              f"{reference.key.provenance}", file=sys.stderr)
    prepared = job.build(training, candles, key, store=store, save=not args.no_save,
                         reference=reference,
                         annotations_db=app_paths().annotations_db,
                         on_event=_Report(args.json, training.train_config.epochs), stop=stop)
    if manifest is not None:
        new_manifest = prepared.trainer.manifest
        assert new_manifest is not None  # job.build gives its trainer one
        check_labels(manifest, new_manifest["labels"]["sha256"])
    if prepared.annotations:
        print(f"{prepared.annotations} annotations of {prepared.market} give the trader's "
              f"targets", file=sys.stderr)
    result: dict[str, Finished | Failed] = {}
    worker = threading.Thread(target=lambda: result.update(final=prepared.trainer.run()),
                              name="trainer")
    worker.start()
    while worker.is_alive():
        worker.join(0.2)  # a signal only sets ``stop``: the trainer ends at a safe point
    final = result.get("final")
    if final is None:
        raise WorkstationError("the training thread ended without a result (see the log)")
    return final
