"""What training and live mode report, as typed events (plain data, safe to pass between
threads; importing them does not import torch, so the window dispatches on their types).

A run emits ``RunStarted``, then ``BatchEnd`` every ``log_every`` steps, ``EpochEnd`` and
``CheckpointSaved`` after each epoch, and ends with exactly one ``Finished`` or ``Failed``.
Live mode (``live.LiveSession``) emits ``LiveReady``, a ``LiveStep`` per processed candle (with
the rolling ``LiveAccuracy`` of each market head beside its baselines), ``LiveWaiting`` when a
step waits for the reference asset's candle, ``LiveSaved`` if it trained, and ends with
``LiveEnded`` or ``Failed``. A metric that has no data is ``None`` (shown as "—"), never 0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    run_id: str

    @property
    def kind(self) -> str:
        return type(self).__name__

    def to_dict(self) -> dict:
        """JSON-able, with ``event`` naming the type."""
        return {"event": self.kind, **asdict(self)}


@dataclass(frozen=True)
class Transitions:
    """How the position head finds the trader's entries and exits (changes of position):
    ``hits`` of the ``true`` changes have a predicted change to the same position within
    ``window`` candles, ``timing_error`` candles off on average (None without hits)."""

    true: int
    hits: int
    window: int
    timing_error: float | None

    @property
    def hit_rate(self) -> float | None:
        return self.hits / self.true if self.true else None


@dataclass(frozen=True)
class MarkCount:
    """The trader's marks on the candles a trader head was scored on: ``marks`` trades
    (position) or regions (regime), ``kind`` says which, on ``labelled`` labelled candles;
    fewer than ``min_marks`` or ``min_labelled`` (``scoring.MIN_MARKS``, ``MIN_LABELLED``)
    are too few to score."""

    kind: str
    marks: int
    labelled: int
    min_marks: int
    min_labelled: int

    @property
    def too_few(self) -> bool:
        return self.marks < self.min_marks or self.labelled < self.min_labelled


@dataclass(frozen=True)
class HeadScore:
    """One head's accuracy on ``n`` targets beside simple baselines scored on the same targets
    (``baselines``: name -> accuracy; ``majority`` always, on validation and test spans also
    ``volatility``, ``logistic`` and ``persistence``, for position ``hour_of_day``; on the
    trader heads' validation spans and the test spans of a walk-forward evaluation also
    ``lagged_logistic`` and ``boosted_trees``). ``margin`` is the accuracy minus the best
    baseline's, ``interval`` its 95 % day-block bootstrap interval and ``verdict``
    (``scoring.VERDICTS``): "edge" only when that interval excludes 0 and the margin is at
    least half a point.
    ``marks`` (trader heads): the marks on the scored candles; when they are too few
    (``too_few``) there is no accuracy, no baseline accuracy, no margin and no verdict, only
    ``n``, ``confusion`` and ``transitions``.
    ``direction_accuracy``: on candles whose truth and prediction are both up or down, how
    often they agree (market heads). ``confusion[truth][prediction]`` counts. A value without
    data is None (shown as "—").
    In a walk-forward evaluation (``ml.scoring``): ``accuracy`` and ``margin`` are means over
    the fold's training seeds, ``seed_margins`` each seed's margin, and ``confusion``,
    ``direction_accuracy`` and ``transitions`` the first seed's model; ``block_days`` is the
    bootstrap's mean block length in days (chosen from the data), ``p_value`` its one-sided
    p-value of margin <= 0, ``adjusted_p`` Holm's, and ``multiplicity`` says which the
    verdict used ("primary", or "adjusted (Holm, N verdicts)")."""

    accuracy: float | None
    n: int
    baselines: dict[str, float | None] = field(default_factory=dict)
    best_baseline: str | None = None
    margin: float | None = None
    interval: tuple[float, float] | None = None
    verdict: str | None = None
    direction_accuracy: float | None = None
    confusion: tuple[tuple[int, ...], ...] | None = None
    transitions: Transitions | None = None
    block_days: float | None = None
    p_value: float | None = None
    seed_margins: tuple[float, ...] | None = None
    adjusted_p: float | None = None
    multiplicity: str | None = None
    marks: MarkCount | None = None

    @property
    def best_baseline_accuracy(self) -> float | None:
        return self.baselines.get(self.best_baseline) if self.best_baseline else None

    @property
    def too_few(self) -> bool:
        """Too few marks to score (see ``marks``)."""
        return self.marks is not None and self.marks.too_few


@dataclass(frozen=True)
class SplitMetrics:
    """Metrics over ``batches`` batches of one split: the loss, per-head losses (keyed by
    ``workstation.ml.targets.HEADS``) and a ``HeadScore`` per class head."""

    loss: float | None
    head_losses: dict[str, float | None]
    heads: dict[str, HeadScore]
    examples: int  # positions with a candle target
    batches: int = 0

    def accuracy(self, head: str) -> float | None:
        score = self.heads.get(head)
        return score.accuracy if score is not None else None


@dataclass(frozen=True)
class MemoryStats:
    """Memory in MiB (``device.memory_stats`` samples it). On CUDA: allocated/reserved/peak by
    the torch allocator, total of the GPU. On CPU: allocated is the process RSS, peak the
    process peak RSS, total the RAM; there is no reserved pool (None)."""

    device: str
    allocated_mb: float
    reserved_mb: float | None
    peak_mb: float | None
    total_mb: float

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RunStarted(Event):
    provenance: str
    device: str
    model_config: dict
    train_config: dict
    features: dict
    targets: dict
    n_params: int
    candles: int
    train_windows: int
    val_windows: int
    steps_per_epoch: int
    total_steps: int
    start_step: int = 0      # > 0 when resumed
    resumed_from: str | None = None
    # where the spans lie (``split``): name -> {"span", "first_ts", "last_ts", "trades",
    # "regions", "reviewed"}, the rule that placed validation, and warnings that stay shown
    spans: dict = field(default_factory=dict)
    split_rule: str = ""
    warnings: tuple[str, ...] = ()
    stride: int | None = None  # candles between training windows (None: not recorded)


@dataclass(frozen=True)
class BatchEnd(Event):
    """Training metrics averaged over the ``batches`` steps since the previous BatchEnd."""

    epoch: int            # 0-based
    step: int             # optimizer steps done in the run
    batch: int            # batches done in this epoch
    batches_per_epoch: int
    batches: int
    metrics: SplitMetrics
    lr: float
    grad_norm: float      # mean pre-clipping norm over those steps
    samples_per_s: float  # windows per second
    memory: MemoryStats


@dataclass(frozen=True)
class EpochEnd(Event):
    """``train`` covers ``train.batches`` of the epoch's ``batches_per_epoch`` (fewer when
    the run was resumed inside this epoch); ``val`` scores every validation candle."""

    epoch: int
    step: int
    batches_per_epoch: int
    train: SplitMetrics
    val: SplitMetrics
    lr: float
    elapsed_s: float
    memory: MemoryStats
    is_best: bool         # lowest ``chosen_loss`` so far: the epoch the run keeps
    chosen_loss: float | None = None  # the validation loss epochs are compared by
    chosen_by: str = ""   # its name ("position loss", "total loss": ``epoch_choice``)


@dataclass(frozen=True)
class CheckpointSaved(Event):
    path: str
    step: int
    epoch: int
    reason: str           # "epoch" or "stopped"
    is_best: bool


@dataclass(frozen=True)
class Finished(Event):
    status: str           # "completed" or "stopped"
    step: int
    epoch: int
    elapsed_s: float
    best_val_loss: float | None
    checkpoint: str | None = None
    chosen_by: str = "total loss"  # what ``best_val_loss`` is the loss of (``epoch_choice``)

    @property
    def ok(self) -> bool:
        return True


@dataclass(frozen=True)
class Failed(Event):
    """The run stopped on an error. ``nonfinite`` names the heads (and/or ``grad_norm``)
    that went NaN/inf, when that was the cause; ``step``/``batch`` locate it."""

    message: str
    traceback: str
    step: int
    epoch: int
    batch: int | None
    nonfinite: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return False


# -- live mode ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LiveReady:
    """The online learner is built: ``history`` closed candles before the newest unprocessed
    one are all it needs to see. ``verdicts``: each trader head's verdict in the validation
    of the checkpoint it loaded (``head_verdicts.trader_verdicts``, None: never evaluated),
    ``verdict_source`` which validation that was (None: none)."""

    source_run: str | None
    device: str
    train: bool
    history: int
    seq_len: int
    trend_horizon: int
    reference: str | None = None  # the reference asset the model reads, whose candles to offer
    verdicts: dict[str, str | None] = field(default_factory=dict)
    verdict_source: str | None = None
    levels: bool = False  # the model reads the drawn levels: offer them with the candles


@dataclass(frozen=True)
class LiveWaiting:
    """The candle ``ts`` closed but the reference asset's candle at ``ts`` has not arrived:
    the step waits for it, at most ``wait_s`` once the reference is offered (then it is
    masked, as a missing candle always is); ``offered``: whether any was offered yet."""

    generation: int
    ts: int
    reference: str
    wait_s: float
    offered: bool


@dataclass(frozen=True)
class LiveAccuracy:
    """One market head's live score: of its last ``n`` matured predictions on the series shown
    (at most ``window``), the share the model got right (``accuracy``), beside two baselines
    scored on the same outcomes: ``majority``, always calling the class most common among them
    (``majority_class``, chosen in hindsight: the best constant call), and ``persistence``,
    calling the move that had just completed when each prediction was made (the previous
    candle's direction; the trend of the last H candles), as training's baselines do. The
    persistence call of a prediction is the outcome of the one made a move earlier, so it
    scores the ``persistence_n`` of the ``n`` whose earlier move was settled too (all but the
    first one or H). A value without data is None (shown as "—")."""

    head: str
    window: int
    n: int
    accuracy: float | None = None
    majority: float | None = None
    majority_class: str | None = None
    persistence: float | None = None
    persistence_n: int = 0

    @property
    def best_baseline(self) -> str | None:
        """``majority`` or ``persistence``, whichever scored higher (None without data)."""
        scored = [(v, name) for name, v in (("majority", self.majority),
                                            ("persistence", self.persistence)) if v is not None]
        return max(scored)[1] if scored else None

    @property
    def best_baseline_accuracy(self) -> float | None:
        name = self.best_baseline
        return getattr(self, name) if name else None

    @property
    def margin(self) -> float | None:
        """The accuracy minus the best baseline's (None without data)."""
        best = self.best_baseline_accuracy
        return None if self.accuracy is None or best is None else self.accuracy - best


@dataclass(frozen=True)
class LiveStep:
    """One ``online.OnlineStep`` of the learner, on the series of ``generation``, with the
    session's rolling ``accuracy`` after it (head -> ``LiveAccuracy``, for ``candle`` and
    ``trend``; ``live.RollingAccuracy`` scores it, in both live modes)."""

    generation: int
    step: Any
    accuracy: dict[str, LiveAccuracy] = field(default_factory=dict)


@dataclass(frozen=True)
class LiveSaved:
    """The per-candle-trained model was saved as run ``run_id``."""

    run_id: str
    path: str
    steps: int


@dataclass(frozen=True)
class LiveEnded:
    """Live mode ended at a stop; ``accuracy`` is the rolling accuracy of its last step
    (empty without one)."""

    steps: int
    predictions: int
    accuracy: dict[str, LiveAccuracy] = field(default_factory=dict)


@dataclass(frozen=True)
class Compiling(Event):
    """The training forward is being compiled (``torch.compile`` with ``backend``): the
    first steps take longer."""

    backend: str


# -- walk-forward evaluation --------------------------------------------------------------------
@dataclass(frozen=True)
class FoldStarted:
    """Fold ``fold`` (0-based, of ``folds``) starts training as run ``run_id``: the trainer
    events of that run id are this fold's (folds trained at once interleave them)."""

    fold: int
    folds: int
    run_id: str


@dataclass(frozen=True)
class FoldRetried:
    """Fold ``fold`` (0-based, of ``folds``) with ``seed`` failed as a Ray task (``message``)
    and runs again: its ``attempt``-th run (``ray_folds``)."""

    fold: int
    folds: int
    seed: int
    attempt: int
    message: str


@dataclass(frozen=True)
class EventMatch:
    """How the position head's ``kind`` events ("entries" or "exits") meet the trader's on
    held-out candles (``ml.entry_events``): ``true`` trader's events, ``predicted`` model's;
    ``found`` of the trader's have a model event of the same side within ``window`` candles
    (``recall``), ``made`` of the model's have a trader's one (``precision``); ``timing`` and
    ``abs_timing``: the median signed (model minus trader) and absolute offset in candles of
    the found ones. ``random_*``: the expected rates of random events at the model's rate,
    ``*_margin`` the model's minus them with a 95 % day-bootstrap ``*_interval`` (mean block
    ``block_days``). Fewer than ``entry_events.MIN_EVENTS`` trader's events: only the counts
    ``true`` and ``predicted``, the rest None."""

    kind: str
    window: int
    true: int
    predicted: int
    found: int | None = None
    made: int | None = None
    recall: float | None = None
    precision: float | None = None
    timing: float | None = None
    abs_timing: float | None = None
    random_recall: float | None = None
    random_precision: float | None = None
    recall_margin: float | None = None
    precision_margin: float | None = None
    recall_interval: tuple[float, float] | None = None
    precision_interval: tuple[float, float] | None = None
    block_days: float | None = None


@dataclass(frozen=True)
class TradeEvents:
    """The position head's ``entries`` and ``exits`` scored as events on held-out candles."""

    entries: EventMatch
    exits: EventMatch


@dataclass(frozen=True)
class FoldScored:
    """Fold ``fold`` (0-based, of ``folds``) trained on candles ``train``, was tested on
    ``test`` after an ``embargo``, with the weights of epoch ``epoch`` (the best on its own
    validation slice); ``heads`` scores each class head on the test span (unadjusted: the
    run's end adjusts them, ``EvaluationFinished.fold_heads``). ``embargo_words`` says what
    set the embargo; ``seed_epochs``: the epoch tested of each seed's model;
    ``baseline_lags``: per head, the lag count the lagged baselines chose on validation;
    ``trade_events``: the position head's entries and exits on the test span."""

    fold: int
    folds: int
    train: tuple[int, int]
    test: tuple[int, int]
    embargo: int
    epoch: int
    heads: dict[str, HeadScore]
    embargo_words: str = ""
    seed_epochs: tuple[int, ...] = ()
    baseline_lags: dict[str, int] = field(default_factory=dict)
    trade_events: TradeEvents | None = None


@dataclass(frozen=True)
class EvaluationFinished:
    """Every fold's test span pooled: one score per class head; ``primary`` is the head whose
    pooled verdict is unadjusted, every other verdict (``summary`` and ``fold_heads``, each
    fold's scores) is Holm-adjusted; ``labels``: how far the trader's labels read ahead;
    ``trade_events``: the position head's entries and exits pooled over the test spans,
    ``fold_trade_events`` each fold's."""

    folds: int
    summary: dict[str, HeadScore]
    elapsed_s: float
    primary: str = "candle"
    fold_heads: tuple[dict[str, HeadScore], ...] = ()
    labels: tuple[LabelReach, ...] = ()
    trade_events: TradeEvents | None = None
    fold_trade_events: tuple[TradeEvents, ...] = ()


@dataclass(frozen=True)
class LabelReach:
    """How far the labels of one trader head read ahead (``ml.hindsight``): over the
    ``candles`` labelled by one of ``marks`` marks (runs of one label), the distance in
    candles to the mark's end (a trade's exit, a region's last candle): ``median``, ``p95``
    and ``longest``. For the position head also the hindsight check: of ``entries`` entries,
    ``extremes`` are the lowest close (long) / highest (short) of the next ``window`` candles,
    against ``chance`` for any candle of the series; ``p_value`` one-sided binomial;
    ``hindsight``: far more often than chance."""

    head: str
    marks: int
    candles: int
    median: float
    p95: float
    longest: int
    window: int | None = None
    entries: int = 0
    extremes: int = 0
    chance: float | None = None
    p_value: float | None = None
    hindsight: bool = False

    @property
    def extreme_rate(self) -> float | None:
        return self.extremes / self.entries if self.entries else None
