"""The one way a training run is put together, for the command line and the window alike.

``TrainingRequest`` says how to train as plain values: a preset and overrides, the device,
or a run to resume. ``plan`` checks it and settles every setting without importing torch, so
a bad argument is refused at once, before any data is read: an unknown preset or setting, a
device name that is not one, a run that cannot be resumed ("already trained N epochs").
``build`` then turns the plan and a series' candles (named by its ``SeriesKey``) into the
dataset, the model's ``Trainer`` and the provenance the checkpoints record: the action
targets come from the annotations of exactly the series' market (a demo series trains on the
demo marks of its symbol, a real series on the real ones, never the other's), and a market
whose trades overlap is refused with one message naming every pair. The caller runs
``PreparedRun.trainer.run()`` on the thread it likes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..annotations.model import Annotation
from ..annotations.overlap import check_no_overlaps
from ..annotations.suspects import (
    MIN_SHARE,
    HeldOutProbabilities,
    SuspectReport,
    likely_label_errors,
)
from ..annotations.targets import TraderTargets, trader_targets
from ..errors import WorkstationError
from ..market.candles import Candles
from ..market.series import MarketKey, SeriesKey
from .checkpoints import CheckpointStore, ResumePoint, read_meta
from .config import PRESET_LR, TradingTransformerConfig, TrainConfig, preset_config
from .context import reference_span
from .device import check_device_spec
from .distributed import World
from .feature_store import series_features
from .features import FeatureSpec
from .level_columns import levels_for
from .manifest import labels_sha256, make_manifest
from .targets import TRADER_HEADS, Targets, TargetSpec, make_targets

if TYPE_CHECKING:
    from .dataset import TrainingData
    from .trainer import Trainer


@dataclass(frozen=True)
class TrainingRequest:
    """How to train (see the module docstring). ``model_overrides`` and ``target_overrides``
    replace fields of the preset's model and of the default targets, ``train_overrides``
    fields of ``TrainConfig`` and ``feature_overrides`` those of ``FeatureSpec`` (higher
    timeframes, a reference asset; None values are ignored). With ``resume_run`` the run's
    own settings apply and only ``epochs`` (the new total) is taken from ``train_overrides``."""

    preset: str = "tiny"
    model_overrides: dict = field(default_factory=dict)
    train_overrides: dict = field(default_factory=dict)
    target_overrides: dict = field(default_factory=dict)
    feature_overrides: dict = field(default_factory=dict)
    device: str = "auto"
    resume_run: str | None = None
    use_annotations: bool = True
    marks: str = "all"  # which of the trader's marks: all, or blind ones only


@dataclass(frozen=True)
class TrainingPlan:
    """Every setting of a run, checked; ``resume`` is where a resumed run continues."""

    request: TrainingRequest
    model_config: TradingTransformerConfig
    train_config: TrainConfig
    feature_spec: FeatureSpec
    target_spec: TargetSpec
    device: str
    resume: ResumePoint | None = None


@dataclass
class PreparedRun:
    """A run ready to start: ``trainer.run()`` trains it. ``annotations`` is how many of the
    market's annotations gave the action targets (0: the action head is masked)."""

    plan: TrainingPlan
    trainer: Trainer
    data: TrainingData
    annotations: int
    market: MarketKey


def _given(values: dict) -> dict:
    return {k: v for k, v in values.items() if v is not None}


def plan(request: TrainingRequest, store: CheckpointStore | None) -> TrainingPlan:
    """Check ``request`` and settle its settings (no torch); see the module docstring."""
    from ..annotations.origin_filter import check_marks

    check_marks(request.marks)
    device = check_device_spec(request.device)
    train_overrides = _given(request.train_overrides)
    if request.resume_run is not None:
        if store is None:
            raise WorkstationError("resuming a run needs its checkpoint store")
        point = store.check_resumable(request.resume_run, train_overrides.get("epochs"))
        model, features, targets = store.settings(request.resume_run)
        meta = read_meta(store.snapshot_dir(request.resume_run))
        train = TrainConfig.from_dict(dict(
            meta["train_config"], epochs=train_overrides.get("epochs", point.total_epochs)))
        return TrainingPlan(request, model, train, features, targets, device, point)
    features = FeatureSpec(**_given(request.feature_overrides))
    model = preset_config(request.preset, **_given(request.model_overrides),
                          n_features=features.n_features)
    train_overrides.setdefault("lr", PRESET_LR.get(request.preset, TrainConfig.lr))
    return TrainingPlan(request, model, TrainConfig(**train_overrides), features,
                        TargetSpec(**_given(request.target_overrides)), device)


def plan_of(manifest: dict, device: str | None = None) -> TrainingPlan:
    """The plan of the run a manifest (``ml.manifest.read_manifest``) records, on its own
    device or on ``device``: the same settings and seed, checked as ``plan`` checks them."""
    from .manifest import ManifestError

    try:
        model = TradingTransformerConfig.from_dict(manifest["model"])
        train = TrainConfig.from_dict(manifest["training"])
        features = FeatureSpec.from_dict(manifest["features"])
        targets = TargetSpec.from_dict(manifest["targets"])
    except (KeyError, TypeError, ValueError, WorkstationError) as exc:
        raise ManifestError(f"the run manifest's settings cannot be used: {exc}") from None
    device = check_device_spec(device or manifest.get("device") or "auto")
    request = TrainingRequest(device=device,
                              use_annotations=bool(manifest.get("use_annotations", True)),
                              marks=str((manifest.get("labels") or {}).get("marks", "all")))
    return TrainingPlan(request, model, train, features, targets, device)


def market_annotations(db: Path | None, market: MarketKey) -> list[Annotation]:
    """The annotations of ``market`` (every timeframe) in the store file ``db``; none if the
    file does not exist yet."""
    if db is None or not Path(db).is_file():
        return []
    from ..annotations.store import AnnotationStore

    with AnnotationStore(db) as store:
        return store.list(market=market)


def trader_labels(annotations: list[Annotation], candles: Candles, spec: TargetSpec
                  ) -> TraderTargets | None:
    """The trader's position, regime and reviewed labels for ``candles`` from a market's
    annotations (None: none); the market's trades must not overlap anywhere
    (``annotations.overlap``)."""
    if not annotations:
        return None
    check_no_overlaps(annotations, "training refuses this market: trades overlap")
    return trader_targets(annotations, candles.ts, candles.timeframe,
                          review_margin=spec.review_margin)


@dataclass(frozen=True)
class LabelledSeries:
    """Every target of a series as the trainer learns it, and where the trader's came from:
    ``annotations`` of ``market`` (0: the trader's heads are masked); ``reviewed`` per candle."""

    targets: Targets
    reviewed: np.ndarray
    annotations: int
    market: MarketKey
    labels_sha256: str | None = None  # of the trader's labels (``ml.manifest``); None: none


def label_series(candles: Candles, series: SeriesKey, spec: TargetSpec, *,
                 annotations_db: Path | None, use_annotations: bool = True,
                 marks: str = "all") -> LabelledSeries:
    """The targets of ``candles`` (closed candles of ``series``): the market's from the candles,
    the trader's from the annotations of exactly the series' market, all of them or the blind
    ones (``marks``; no torch)."""
    market = series.market
    annotations = training_marks(annotations_db, market, use_annotations=use_annotations,
                                 marks=marks)
    trader = trader_labels(annotations, candles, spec)
    reviewed = trader.reviewed if trader is not None else np.zeros(len(candles), dtype=bool)
    labels = (labels_sha256(trader.position, trader.regime, trader.reviewed)
              if trader is not None else None)
    return LabelledSeries(make_targets(candles, spec, trader), reviewed, len(annotations),
                          market, labels)


def training_marks(db: Path | None, market: MarketKey, *, use_annotations: bool = True,
                   marks: str = "all") -> list[Annotation]:
    """The marks of ``market`` that training learns: all of them or the blind ones
    (``marks``), none without ``use_annotations``."""
    from ..annotations.origin_filter import marks_used

    return marks_used(market_annotations(db, market), marks) if use_annotations else []


def label_suspects(marks: list[Annotation], data: TrainingData, timeframe_ms: int,
                   held: HeldOutProbabilities, *, min_share: float = MIN_SHARE
                   ) -> SuspectReport:
    """The likely label errors among ``marks`` (``annotations.suspects``): ``data``'s trader
    labels read by the held-out probabilities an evaluation of it handed to ``held``."""
    return likely_label_errors(marks, data.ts + timeframe_ms, held.heads(
        {head: data.targets.classes(head) for head in TRADER_HEADS}), min_share=min_share)


@dataclass(frozen=True)
class Reference:
    """A reference asset's candles (``key``: where they come from) for features that use one."""

    candles: Candles
    key: SeriesKey


def load_reference(features: FeatureSpec, series: SeriesKey, source: str | None = None,
                   loader=None) -> Reference | None:
    """The reference asset's candles the features ask for (None: they use none), on the
    series' timeframe, from ``source``; by default from the series' own source where it has
    them (the demo market's from the demo market), else from the candle cache under whatever
    source they were stored (an import, a fetch). ``loader`` is
    ``market.sources.load_series``'s signature."""
    if not features.reference:
        return None
    if loader is None:
        from ..market.sources import load_series as loader
    if source is not None or series.is_demo:
        candles, key = loader(source or series.source, features.reference, series.timeframe)
        return Reference(candles, key)
    if not series.source.startswith("csv:"):  # a file read directly has no cached candles
        try:
            candles, key = loader(series.source, features.reference, series.timeframe)
            return Reference(candles, key)
        except WorkstationError:
            pass  # not under the series' own source: anywhere in the cache
    try:
        candles, key = loader("cache", features.reference, series.timeframe)
    except WorkstationError as exc:
        raise WorkstationError(f"the features use {features.reference} as a reference asset: "
                               f"{exc}; or name where its candles are with "
                               f"--reference-source csv:FILE (or cache:NAME)") from None
    return Reference(candles, key)


def manifest_reference(manifest: dict, source: str | None = None) -> Reference | None:
    """The reference candles a manifest's run used (None: it used none), read from
    ``source`` or where the run had them, refused unless they hash the same."""
    from ..market.sources import load_series
    from .manifest import check_candles, series_of

    if not manifest.get("reference"):
        return None
    series = series_of(manifest, "reference")
    candles, key = load_series(source or series.source, series.symbol, series.timeframe)
    return Reference(check_candles(manifest, candles, "reference"), key)


def training_data(training: TrainingPlan, candles: Candles, series: SeriesKey, *,
                  annotations_db: Path | None, reference: Reference | None = None
                  ) -> tuple[TrainingData, LabelledSeries]:
    """Features and every target of ``candles`` (closed candles of ``series``) as the plan's
    settings make them: what ``build`` trains on and what ``ml.evaluation`` evaluates."""
    from .dataset import TrainingData

    check_reference(training.feature_spec, reference)
    labelled = label_series(candles, series, training.target_spec,
                            annotations_db=annotations_db,
                            use_annotations=training.request.use_annotations,
                            marks=training.request.marks)
    data = TrainingData(series_features(candles, training.feature_spec,
                                        reference.candles if reference else None,
                                        levels_for(training.feature_spec, annotations_db,
                                                   series.market)),
                        labelled.targets,
                        training.feature_spec, training.target_spec,
                        np.asarray(candles.ts, dtype=np.int64))
    return data, labelled


def check_reference(features: FeatureSpec, reference: Reference | None) -> None:
    """Refuse a reference the features do not use, or no reference where they use one."""
    if features.reference and reference is None:
        raise WorkstationError(f"the features use {features.reference} as a reference asset, "
                               f"but its candles were not loaded")
    if reference is not None and reference.key.symbol != features.reference:
        raise WorkstationError(f"the reference candles are {reference.key.symbol}, the features "
                               f"use {features.reference or 'none'}")


def build(training: TrainingPlan, candles: Candles, series: SeriesKey, *,
          store: CheckpointStore | None, annotations_db: Path | None, on_event: Callable,
          stop: threading.Event, run_id: str | None = None, save: bool = True,
          reference: Reference | None = None) -> PreparedRun:
    """The dataset, the trainer and the provenance of a planned run on ``candles`` (closed
    candles of ``series``); imports torch. Checkpoints go to ``store`` unless ``save`` is
    False (or there is no store); a resumed run is read from it."""
    from .device import resolve_device
    from .trainer import Trainer

    request = training.request
    device = resolve_device(training.device)
    loaded = None
    if training.resume is not None:
        if store is None:
            raise WorkstationError("resuming a run needs its checkpoint store")
        loaded = store.load(training.resume.run_id)
    data, labelled = training_data(training, candles, series, annotations_db=annotations_db,
                                   reference=reference)
    world = World.from_environment()  # torchrun's, else one process
    manifest = make_manifest(world_size=world.size,
        run_id=None, model=training.model_config.to_dict(),
        training=training.train_config.to_dict(), features=training.feature_spec.to_dict(),
        targets=training.target_spec.to_dict(), use_annotations=request.use_annotations,
        device=training.device, series=series, candles=candles,
        labels=labelled.labels_sha256, annotations=labelled.annotations, marks=request.marks,
        reference=(reference.key, reference_span(reference.candles, candles,
                                                 training.feature_spec))
        if reference is not None else None)
    trainer = Trainer(training.model_config, training.train_config, data, device,
                      on_event=on_event, stop=stop, checkpoints=store if save else None,
                      run_id=request.resume_run or run_id, series=series,
                      resume_from=loaded, manifest=manifest, world=world)
    return PreparedRun(training, trainer, data, labelled.annotations, labelled.market)


@dataclass(frozen=True)
class SpansPreview:
    """What a run would hold where, before it starts: ``lines`` (each span's dates, trades,
    regions and reviewed candles, then the rule), its ``warnings``, or why it would be
    ``refused``."""

    lines: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    refused: str | None = None


def preview_spans(request: TrainingRequest, candles: Candles, series: SeriesKey, *,
                  annotations_db: Path | None) -> SpansPreview:
    """The spans a new run of ``request`` on ``candles`` of ``series`` would have, by the
    trainer's own rule (``split.run_spans``), and what each holds of the market's marks;
    no torch."""
    from .split import describe_spans, run_spans

    ts = np.asarray(candles.ts, dtype=np.int64)
    try:
        training = plan(replace(request, resume_run=None), None)
        labelled = label_series(candles, series, training.target_spec,
                                annotations_db=annotations_db,
                                use_annotations=request.use_annotations, marks=request.marks)
        spans = run_spans(labelled.targets, ts, training.model_config.seq_len,
                          training.target_spec.horizon, training.train_config.val_fraction,
                          training.train_config.train_until)
    except WorkstationError as exc:
        return SpansPreview(refused=str(exc))
    return SpansPreview((*describe_spans(spans.record(ts)), f"({spans.split.rule})"),
                        spans.warnings)
