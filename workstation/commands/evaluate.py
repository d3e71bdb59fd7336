"""``workstation evaluate``: walk-forward evaluation of a model on a candle series.

Every fold trains a fresh model on the past, picks its epoch on a validation slice of that
past, and is scored on the next span of time beside the baselines fitted on the past; each
head gets the margin over its best baseline with a 95 % interval (a stationary bootstrap of the
days, its block length chosen from the data and printed, over ``--seeds`` models a fold) and a
verdict ("edge" only when the interval excludes 0 and the margin is worth having); one verdict
is the primary one (``--primary``), every other is Holm-adjusted. Each fold's embargo says
what set it; the trader's labels' look-ahead and a hindsight check are printed at the end.
The position head's entries and exits are scored as events per fold and pooled
(``ml.entry_events``: recall, precision and timing beside random entries at the model's rate),
against every mark and, "vs blind marks", against the trader's blind marks only
(``ml.blind_marks``; "—" without one). ``--backtest`` trades the test spans
(``backtest.walk_forward``: each head that can signal, or ``--backtest-head``) beside the
trader's blind marks, their hindsight marks and buy & hold, and prints the hindsight gap
(hindsight minus blind: return, win rate, mean trade) per test span and over them all.
Progress goes to stderr; ``--json`` prints one JSON object per fold and head on stdout (with
the fold's ``train`` and ``test`` candle ranges; the position head's with ``trade_events``,
its ``blind`` the scores against the blind marks), then one summary object
(``trade_events`` pooled, ``folds_trade_events`` per fold); with ``--backtest`` one object
per signal and one ``hindsight_gap`` object. Every argument is checked before torch is
loaded. Ctrl-C (or SIGTERM) stops after the current batch: exit 130
(143).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import asdict

from ..annotations.origin_filter import MARKS
from ..annotations.suspects import MIN_SHARE, HeldOutProbabilities, SuspectReport
from ..backtest.signals import SIGNAL_HEADS
from ..backtest.walk_forward import WalkForwardSignals, signal_heads
from ..errors import WorkstationError
from ..interrupt import signals_stop
from ..ml.blind_marks import blind_of, describe_blind_events
from ..ml.config import DEFAULT_MAX_EMBARGO, DEFAULT_SEEDS, EvaluationConfig
from ..ml.entry_events import describe_match
from ..ml.epoch_choice import describe_choice
from ..ml.events import (
    BatchEnd,
    EpochEnd,
    EvaluationFinished,
    FoldRetried,
    FoldScored,
    FoldStarted,
)
from ..ml.hindsight import describe_reach
from ..ml.job import TrainingRequest
from ..ml.scoring import EDGE, describe, describe_baselines
from ..ml.targets import CLASS_HEADS, TRADER_HEADS
from ..progress import draw_line, end_open_line, say
from .flags import (
    add_context_flags,
    add_cost_flags,
    add_series_flags,
    add_training_flags,
    context_overrides,
    flagged_series,
    thresholds,
)


def register(sub) -> None:
    p = sub.add_parser("evaluate", help="walk-forward evaluation against simple baselines",
                       description=__doc__.split("\n\n")[0])
    add_evaluation_flags(p)
    p.add_argument("--backtest", action="store_true",
                   help="also backtest the model's signals on the test spans after costs, "
                        "beside the trader's blind and hindsight marks (if any) and "
                        "buy & hold, with the hindsight gap per test span")
    p.add_argument("--backtest-head", choices=SIGNAL_HEADS, default=None,
                   help="only this head signals (default: every head that can: position "
                        "with marks, and candle)")
    add_cost_flags(p)
    p.set_defaults(func=run)


def add_evaluation_flags(p) -> None:
    """The flags of a walk-forward evaluation: the series, the model, training, the folds."""
    add_series_flags(p)
    p.add_argument("--preset", default="tiny", help="model size (default tiny)")
    p.add_argument("--folds", type=int, default=4, help="test spans, oldest first (default 4)")
    add_training_flags(p, epochs="per fold (default 10, as train)")
    p.add_argument("--flat-band", choices=("volatility", "bps"), default=None,
                   help="flat moves: within k trailing volatilities (default) or fixed bps")
    add_context_flags(p)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads (default: cores - 1, at most 2)")
    p.add_argument("--no-annotations", action="store_true",
                   help="ignore the trader's annotations (the trader's heads stay masked)")
    p.add_argument("--marks", choices=MARKS, default=None,
                   help="which of the trader's marks to learn: all (default), or only the "
                        "blind ones made in blind replay")
    p.add_argument("--workers", type=int, default=None,
                   help="train this many folds at once, each in its own process (default: "
                        "as many as the cores hold at --threads each, 1 on a GPU; the "
                        "results are the same); with --ray local, the CPUs of its cluster "
                        "are this many times --threads")
    p.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="train every fold and seed as a task on the Ray cluster at ADDRESS, or "
                        "on one started here (local); the results are the same (needs "
                        "workstation[ray])")
    p.add_argument("--seeds", type=int, default=DEFAULT_SEEDS,
                   help=f"models trained per fold, seeds seed, seed+1, ... (default "
                        f"{DEFAULT_SEEDS}); the margin is their mean, the interval covers "
                        f"their spread")
    p.add_argument("--max-embargo", type=int, default=DEFAULT_MAX_EMBARGO,
                   help=f"cap in candles on how far the longest mark widens the embargo "
                        f"(default {DEFAULT_MAX_EMBARGO:,})")
    p.add_argument("--primary", choices=CLASS_HEADS, default=None,
                   help="the head whose pooled verdict is not adjusted for multiplicity "
                        "(default: position with marks, else candle)")
    p.add_argument("--json", action="store_true", help="JSON objects on stdout")


def plain_json(value):
    return json.loads(json.dumps(value, allow_nan=False))


class Report:
    def __init__(self, as_json: bool):
        self.as_json = as_json
        self.fold_of: dict[str, int] = {}  # trainer run id -> fold (0-based)
        self.lags: dict[str, list[int]] = {}  # head -> the lagged baselines' lags, by fold

    def __call__(self, event) -> None:
        match event:
            case FoldStarted():
                self.fold_of[event.run_id] = event.fold
            case FoldRetried():
                say(f"  fold {event.fold + 1}, seed {event.seed}, failed on Ray "
                    f"({event.message}); running it again (attempt {event.attempt})")
            case BatchEnd():
                draw_line(f"  fold {self.fold_of.get(event.run_id, 0) + 1}: epoch "
                          f"{event.epoch + 1} batch {event.batch}/{event.batches_per_epoch}",
                          40)
            case EpochEnd():
                draw_line(f"  fold {self.fold_of.get(event.run_id, 0) + 1}: epoch "
                          f"{event.epoch + 1} validation loss {event.val.loss:.4f}"
                          f"{describe_choice(event.chosen_loss, event.chosen_by)}"
                          + (" [best]" if event.is_best else ""), 40)
                end_open_line()
            case FoldScored():
                say(f"fold {event.fold + 1}/{event.folds}: trained on candles "
                    f"{event.train[0]}..{event.train[1]}, tested on {event.test[0]}.."
                    f"{event.test[1]} (embargo {event.embargo_words}; epoch "
                    f"{'/'.join(map(str, event.seed_epochs))}); unadjusted:")
                for head in CLASS_HEADS:
                    lags = event.baseline_lags.get(head)
                    if lags is not None:
                        self.lags.setdefault(head, []).append(lags)
                    say(f"  {describe(head, event.heads[head])}")
                    say(f"    {describe_baselines(event.heads[head], lags)}")
                    events = event.trade_events if head == "position" else None
                    if events is not None:
                        for match in (events.entries, events.exits):
                            say(f"    {describe_match(match)}")
                        _say_blind(events)
                    if self.as_json:
                        extra = {} if events is None else {"trade_events": asdict(events)}
                        print(json.dumps(plain_json({"fold": event.fold, "head": head,
                                                 "train": event.train, "test": event.test,
                                                 "baseline_lags": lags,
                                                 "embargo": event.embargo,
                                                 "embargo_words": event.embargo_words,
                                                 "seed_epochs": event.seed_epochs,
                                                 **asdict(event.heads[head]), **extra})),
                              flush=True)
            case EvaluationFinished():
                say(f"all {event.folds} test spans ({event.elapsed_s:.0f} s; primary verdict: "
                    f"{event.primary}):")
                for head in CLASS_HEADS:
                    say(f"  {describe(head, event.summary[head])}")
                    by_fold = "/".join(map(str, self.lags.get(head, [])))
                    say(f"    {describe_baselines(event.summary[head], by_fold)}")
                    if head == "position" and event.trade_events is not None:
                        for match in (event.trade_events.entries, event.trade_events.exits):
                            say(f"    {describe_match(match)}")
                        _say_blind(event.trade_events)
                for k, heads in enumerate(event.fold_heads):
                    verdicts = [f"{head} {heads[head].verdict}" for head in CLASS_HEADS
                                if heads[head].verdict is not None]
                    if verdicts:
                        say(f"fold {k + 1}, adjusted: {'; '.join(verdicts)}")
                for reach in event.labels:
                    say(f"labels: {describe_reach(reach)}")
                if self.as_json:
                    print(json.dumps(plain_json({
                        "summary": True, "folds": event.folds,
                        "elapsed_s": round(event.elapsed_s, 1), "primary": event.primary,
                        "baseline_lags": self.lags,
                        "heads": {h: asdict(s) for h, s in event.summary.items()},
                        "folds_adjusted": [{h: asdict(s) for h, s in heads.items()}
                                           for heads in event.fold_heads],
                        "labels": [asdict(r) for r in event.labels],
                        "trade_events": None if event.trade_events is None else asdict(
                            event.trade_events),
                        "folds_trade_events": [asdict(t) for t in event.fold_trade_events]})),
                          flush=True)


def _say_blind(events) -> None:
    """The entries and exits against the blind marks, where they were scored."""
    scored, blind = blind_of(events)
    if scored:
        for line in describe_blind_events(blind):
            say(f"    {line}")


def register_suspects(actions) -> None:
    """``workstation annotations suspects``: the evaluation's flags and ``--min-share``."""
    p = actions.add_parser(
        "suspects", help="likely label errors: marks the walk-forward's held-out models read "
                         "otherwise with confidence",
        description="Evaluate walk-forward as workstation evaluate does, then list the marks "
                    "whose held-out candles the fold's models read as another class with "
                    "confidence (each class's threshold: its mean probability where it is the "
                    "label), lowest self-confidence first.")
    add_evaluation_flags(p)
    p.add_argument("--min-share", type=float, default=MIN_SHARE,
                   help=f"flag a mark when at least this share of its held-out candles are "
                        f"read otherwise (default {MIN_SHARE})")
    p.set_defaults(func=run_suspects, backtest=False, backtest_head=None)


def run(args) -> int:
    stop = threading.Event()
    # from here on a signal stops at a safe point
    with signals_stop(stop, "stopping after the current batch (folds not scored are "
                            "dropped)...") as request:
        _evaluate(args, stop)
    return request.exit_status or 0


def _evaluate(args, stop: threading.Event, *, suspects: bool = False) -> None:
    """The evaluation ``args`` ask for, then its backtest (``--backtest``) or the likely label
    errors it found (``suspects``)."""
    from ..ml import job
    from ..paths import app_paths

    request = training_request(args)
    if args.folds < 2:
        raise WorkstationError(f"--folds must be at least 2, got {args.folds}")
    check_parallel_flags(args)
    settings = evaluation_settings(args)
    plan = job.plan(request, None)  # every argument checked; torch not loaded
    candles, key = flagged_series(args)
    marks = _marks(args, key) if suspects else []
    reference = job.load_reference(plan.feature_spec, key, args.reference_source)
    from ..ml.evaluation import evaluate
    from ..ml.folds import EvaluationStopped

    workers = parallel_workers(args, plan)
    data, labelled = job.training_data(plan, candles, key, reference=reference,
                                       annotations_db=app_paths().annotations_db)
    signals = WalkForwardSignals(
        len(candles), (args.backtest_head,) if args.backtest_head else
        signal_heads(labelled.annotations > 0),
        thresholds(args.threshold)) if args.backtest else None
    blind = None
    if labelled.annotations:
        from ..ml.blind_marks import market_blind_position

        blind = market_blind_position(app_paths().annotations_db, key, candles,
                                      plan.target_spec)
    held = HeldOutProbabilities(len(data)) if suspects else None
    with cluster(args, workers, plan) as where:
        say(f"{key.provenance}: {len(candles):,} candles, {labelled.annotations} annotations "
            f"of {labelled.market}; {args.folds} walk-forward folds, "
            f"{plan.model_config.seq_len}-candle windows, {plan.train_config.epochs} epochs "
            f"each, {settings.seeds} seed{'s' if settings.seeds != 1 else ''} a fold, {where}")
        try:
            finished = evaluate(
                data, plan.model_config, plan.train_config, folds=args.folds,
                device=plan.device, provenance=key.provenance, on_event=Report(args.json),
                stop=stop, on_test_predictions=signals, workers=workers,
                on_ray=args.ray is not None, settings=settings, blind_position=blind,
                on_held_out=None if held is None else lambda fold, p: held.add(fold.test, p))
        except EvaluationStopped as exc:
            say(f"workstation: {exc}")
            return
    if signals is not None:
        _backtest(args, signals, candles, key)
    if held is not None:
        _say_suspects(job.label_suspects(marks, data, candles.timeframe.ms, held,
                                         min_share=args.min_share), finished, args.json)


def training_request(args) -> TrainingRequest:
    """How each fold trains, as the evaluation flags say."""
    return TrainingRequest(
        preset=args.preset,
        model_overrides={"seq_len": args.seq_len, "linear_lags": args.linear_lags},
        train_overrides={"epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr,
                         "seed": args.seed, "cpu_threads": args.threads, "log_every": 50,
                         "window_stride": args.stride},
        target_overrides={"flat_band": args.flat_band},
        feature_overrides=context_overrides(args), device=args.device,
        use_annotations=not args.no_annotations, marks=args.marks or "all")


def evaluation_settings(args) -> EvaluationConfig:
    return EvaluationConfig(seeds=args.seeds, max_embargo=args.max_embargo,
                            primary=args.primary)


def check_parallel_flags(args) -> None:
    """``--workers`` and ``--ray`` checked (Ray installed) before anything loads."""
    if args.workers is not None and args.workers < 1:
        raise WorkstationError(f"--workers must be at least 1, got {args.workers}")
    if args.ray is not None:
        from ..ml.ray_folds import LOCAL, require_ray

        if args.workers is not None and args.ray != LOCAL:
            raise WorkstationError(f"--workers applies to --ray {LOCAL} only: the cluster at "
                                   f"{args.ray} runs as many folds at once as it has CPUs")
        require_ray()


def parallel_workers(args, plan) -> int:
    """``--workers``, or as many as the cores hold at the plan's threads (1 on a GPU)."""
    from ..ml.device import resolve_device
    from ..ml.parallel_folds import default_workers

    return args.workers or default_workers(resolve_device(plan.device).type,
                                           plan.train_config.cpu_threads)


@contextlib.contextmanager
def cluster(args, workers: int, plan) -> Iterator[str]:
    """Connected to the Ray cluster of ``--ray`` while the block runs (a local one of
    ``workers`` times the threads' CPUs); yields how many folds train at once, in words."""
    if args.ray is None:
        yield f"{workers} at once"
        return
    from ..ml.ray_folds import ray_cluster

    with ray_cluster(args.ray, num_cpus=workers * plan.train_config.cpu_threads) as where:
        yield f"as tasks on {where}"


def _marks(args, key) -> list:
    """The marks the evaluation learns (``--marks``), refused in one line when there are none
    (there is nothing to check)."""
    from ..ml.job import training_marks
    from ..paths import app_paths

    found = training_marks(app_paths().annotations_db, key.market,
                           use_annotations=not args.no_annotations, marks=args.marks or "all")
    if not found:
        raise WorkstationError(f"no marks of {key.market} to check: mark trades or regimes "
                               f"first" + (" (--no-annotations ignores them)"
                                           if args.no_annotations else ""))
    return found


def _say_suspects(report: SuspectReport, finished: EvaluationFinished, as_json: bool) -> None:
    """The ranked suspects, beside the held-out verdicts of the heads that read them."""
    verdicts = {head: finished.summary[head].verdict for head in TRADER_HEADS}
    say("likely label errors (" + "; ".join(
        f"{head} head on the test spans: {verdict or 'not scored'}"
        for head, verdict in verdicts.items()) + "):")
    say(f"  {report.describe()}")
    if verdicts["position"] != EDGE:
        say("  the position head shows no edge on the test spans: where it disagrees with a "
            "trade, that says as much about the model as about the mark")
    for k, suspect in enumerate(report.suspects, 1):
        say(f"  {k}. {suspect.describe()}; fix: {suspect.fix_words} (id {suspect.annotation_id})")
    if as_json:
        print(json.dumps({"likely_label_errors": report.to_dict(), "verdicts": verdicts},
                         allow_nan=False), flush=True)


def run_suspects(args) -> int:
    if not 0 < args.min_share <= 1:
        raise WorkstationError(f"--min-share must be in (0, 1], got {args.min_share}")
    stop = threading.Event()
    with signals_stop(stop, "stopping after the current batch (nothing is flagged)...") \
            as request:
        _evaluate(args, stop, suspects=True)
    return request.exit_status or 0


def _backtest(args, signals: WalkForwardSignals, candles, key) -> None:
    """The test spans backtested (``backtest.walk_forward``), printed as the backtest
    prints, then the hindsight gap per fold; JSON objects on stdout with ``--json``."""
    from ..backtest.costs import costs_for
    from ..backtest.engine import Sizing
    from ..backtest.report import describe, describe_gaps
    from ..backtest.worth import recorded_tick
    from ..paths import app_paths

    paths = app_paths()
    done = signals.backtest(
        candles, key, annotations_db=paths.annotations_db, sizing=Sizing(args.size),
        costs=costs_for(key, fee_bps=args.fee_bps, slippage_bps=args.slippage_bps),
        tick=recorded_tick(paths.candle_cache, key.source, key.symbol))
    say("backtest of the test spans, each traded by the fold's own model:")
    for line in describe(done.results, "all test spans"):
        say(f"  {line}")
    for line in describe_gaps(done.gaps):
        say(f"  {line}")
    if args.json:
        for result in done.results:
            print(json.dumps({"backtest": True, **result.to_dict()}, allow_nan=False),
                  flush=True)
        if done.gaps:
            print(json.dumps({"backtest": True,
                              "hindsight_gap": [g.to_dict() for g in done.gaps]},
                             allow_nan=False), flush=True)
