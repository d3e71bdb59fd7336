"""``workstation sweep --grid FILE``: the walk-forward evaluation of each combination of a few
training settings, scored as ``evaluate`` scores it, the best chosen on validation alone.

The grid is a JSON or TOML object of settings to lists of values, e.g. ``{"lr": [0.001,
0.0003], "preset": ["tiny", "small"]}``: every combination is evaluated in turn on the same
candles with the same folds and seeds, each (fold, seed) a job of its own (sequential, in
``--workers`` processes or as ``--ray`` tasks, as ``evaluate``). The best combination is the
one with the lowest mean validation loss: the loss each fold's trainer chose its epoch by, on
the validation slice inside its training span, never the test spans. Beside it every
combination's test-span scores are printed as ``evaluate`` prints them (accuracy beside the
best baseline, margin, interval, verdict); they are reported, not chosen by. ``--json``
prints one object per combination, then one naming the best.
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import tomllib
from dataclasses import asdict
from pathlib import Path

from ..errors import WorkstationError
from ..interrupt import signals_stop
from ..ml.events import EvaluationFinished, Finished, FoldScored
from ..ml.scoring import describe
from ..ml.targets import CLASS_HEADS
from ..progress import say
from .evaluate import (
    Report,
    add_evaluation_flags,
    check_parallel_flags,
    cluster,
    evaluation_settings,
    parallel_workers,
    plain_json,
    training_request,
)
from .flags import flagged_series

# the settings a grid may vary (their evaluate flags, "-" as "_"), and their kind
SETTINGS: dict[str, type] = {"preset": str, "lr": float, "epochs": int, "batch_size": int,
                             "seq_len": int, "stride": int, "linear_lags": int}
_KIND_WORDS = {str: "a name", float: "a number", int: "a whole number"}
MAX_COMBINATIONS = 64
CHOSEN_BY = ("mean validation loss (each fold's validation slice inside its training span; "
             "the test spans chose nothing)")


def register(sub) -> None:
    p = sub.add_parser("sweep", help="walk-forward evaluation of each combination of a grid of "
                                     "training settings, the best chosen on validation",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--grid", type=Path, required=True, metavar="FILE",
                   help="JSON or TOML object of settings to lists of values; settings: "
                        + ", ".join(SETTINGS))
    add_evaluation_flags(p)
    p.set_defaults(func=run, preset=None)  # a preset given both ways is refused


def read_grid(path: Path) -> list[dict]:
    """Every combination of the grid in ``path`` (a setting to its value), refused in one
    line naming the file and the key."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkstationError(f"{path}: cannot read the grid: "
                               f"{getattr(exc, 'strerror', None) or exc}") from None
    try:
        grid = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        kind = "TOML" if path.suffix == ".toml" else "JSON"
        raise WorkstationError(f"{path}: not valid {kind}: {exc}") from None
    if not isinstance(grid, dict) or not grid:
        raise WorkstationError(f'{path}: a grid is an object of settings to lists of values, '
                               f'e.g. {{"lr": [0.001, 0.0003]}}')
    for key, values in grid.items():
        if key not in SETTINGS:
            raise WorkstationError(f"{path}: unknown setting {key!r}; a sweep varies "
                                   + ", ".join(SETTINGS))
        if not isinstance(values, list) or not values:
            raise WorkstationError(f"{path}: {key}: a list of one value or more, got "
                                   f"{values!r}")
        for value in values:
            if not _of_kind(value, SETTINGS[key]):
                raise WorkstationError(f"{path}: {key}: {value!r} is not "
                                       f"{_KIND_WORDS[SETTINGS[key]]}")
        if len(set(map(str, values))) < len(values):
            raise WorkstationError(f"{path}: {key}: a value is given twice")
    combinations = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    if len(combinations) > MAX_COMBINATIONS:
        raise WorkstationError(f"{path}: {len(combinations)} combinations; a sweep runs at "
                               f"most {MAX_COMBINATIONS}")
    return combinations


def _of_kind(value, kind: type) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float)) if kind is float else isinstance(value, kind)


def words(combination: dict) -> str:
    return " ".join(f"{key}={value}" for key, value in combination.items())


class _Progress:
    """Passes the trainers' progress to ``evaluate``'s report, says when a fold is scored,
    and keeps the validation loss each run chose its epoch by (run id to loss)."""

    def __init__(self, label: str, report: Report):
        self.label = label
        self.report = report
        self.validation: dict[str, float] = {}
        self.chosen_by = ""

    def __call__(self, event) -> None:
        match event:
            case Finished() if event.status == "completed" and event.best_val_loss is not None:
                self.validation[event.run_id] = event.best_val_loss
                self.chosen_by = event.chosen_by
            case FoldScored():
                say(f"{self.label}: fold {event.fold + 1}/{event.folds} scored")
            case EvaluationFinished():
                pass
            case _:
                self.report(event)


def run(args) -> int:
    stop = threading.Event()
    with signals_stop(stop, "stopping after the current batch (combinations not scored are "
                            "dropped)...") as request:
        _sweep(args, stop)
    return request.exit_status or 0


def _sweep(args, stop: threading.Event) -> None:
    from ..ml import job
    from ..paths import app_paths

    combinations = read_grid(args.grid)
    for key in combinations[0]:
        if getattr(args, key) is not None:
            raise WorkstationError(f"{args.grid}: {key} is in the grid and given as "
                                   f"--{key.replace('_', '-')}: vary it in one place")
    if args.folds < 2:
        raise WorkstationError(f"--folds must be at least 2, got {args.folds}")
    check_parallel_flags(args)
    settings = evaluation_settings(args)
    plans = []
    for combination in combinations:  # every combination checked before torch is loaded
        given = argparse.Namespace(**{**vars(args), "preset": args.preset or "tiny",
                                      **combination})
        try:
            plans.append(job.plan(training_request(given), None))
        except WorkstationError as exc:
            raise WorkstationError(f"{args.grid}: {words(combination)}: {exc}") from None
    candles, key = flagged_series(args)
    reference = job.load_reference(plans[0].feature_spec, key, args.reference_source)
    from ..ml.evaluation import evaluate
    from ..ml.folds import EvaluationStopped

    workers = parallel_workers(args, plans[0])
    rows = []
    with cluster(args, workers, plans[0]) as where:
        say(f"{key.provenance}: {len(candles):,} candles; {len(combinations)} combinations of "
            f"{', '.join(combinations[0])}, each {args.folds} walk-forward folds × "
            f"{settings.seeds} seed{'s' if settings.seeds != 1 else ''}, {where}")
        for k, (combination, plan) in enumerate(zip(combinations, plans), 1):
            data, _ = job.training_data(plan, candles, key, reference=reference,
                                        annotations_db=app_paths().annotations_db)
            progress = _Progress(f"combination {k}/{len(combinations)} "
                                 f"({words(combination)})", Report(False))
            try:
                finished = evaluate(data, plan.model_config, plan.train_config,
                                    folds=args.folds, device=plan.device,
                                    provenance=key.provenance, on_event=progress, stop=stop,
                                    workers=workers, on_ray=args.ray is not None,
                                    settings=settings)
            except EvaluationStopped as exc:
                say(f"workstation: {exc}")
                break
            losses = list(progress.validation.values())
            rows.append((combination, sum(losses) / len(losses), len(losses),
                         progress.chosen_by, finished))
    if rows:
        _say_table(rows, args.json)


def _say_table(rows: list, as_json: bool) -> None:
    """Each combination's validation loss and test-span scores, the best by validation
    marked; one JSON object per combination and one naming the best with ``as_json``."""
    best = min(range(len(rows)), key=lambda r: rows[r][1])
    say(f"the combinations (best: the lowest {CHOSEN_BY}):")
    for r, (combination, loss, runs, chosen_by, finished) in enumerate(rows):
        say(f"  {words(combination)}: validation {chosen_by} {loss:.4f} (mean of {runs} "
            f"runs){'  [best by validation]' if r == best else ''}; on the test spans "
            f"(primary {finished.primary}):")
        for head in CLASS_HEADS:
            say(f"    {describe(head, finished.summary[head])}")
        if as_json:
            print(json.dumps(plain_json({
                "sweep": True, "settings": combination, "validation_loss": loss,
                "validation_runs": runs, "chosen_by": chosen_by, "best": r == best,
                "primary": finished.primary,
                "heads": {h: asdict(s) for h, s in finished.summary.items()}})), flush=True)
    say(f"best by validation: {words(rows[best][0])}; its test-span scores are out of sample "
        f"(the test spans chose nothing), the others' are shown beside it, not to choose by")
    if as_json:
        print(json.dumps({"sweep_best": rows[best][0], "chosen_by": CHOSEN_BY}), flush=True)
