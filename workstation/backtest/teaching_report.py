"""Did it learn my marks? One saved run's teaching report, the same in ``workstation report``
and the window.

The run is rebuilt from its manifest on the very candles it had and the marks it learned
(refused in one line when either changed) and its model is its best checkpoint (else its
latest). The report says:

1. **marks used and where**: per span (train / validation / held out) the trades, regions
   and reviewed candles and the dates, the split rule and its warnings, as the run's history
   recorded them at its start (``ml.split.describe_spans``);
2. **per trader head** (position, regime) on the scored span: the run's held-out span, or
   without one its validation span, said loudly (``NO_HELD_OUT``: its epoch was chosen
   there, so it is not out of sample): the model's accuracy beside every baseline fitted on
   the run's training span (the lagged ones on up to ``seq_len`` lags, purged by the run's
   gap), the margin over the best with its interval and verdict, or "too few marks (n)"
   (``ml.scoring``);
3. **the position head's entries and exits** as events on that span (``ml.entry_events``),
   against all the trader's marks and against their blind marks only (``ml.blind_marks``);
4. with a held-out span, **its backtest** after costs: the position head's signal beside the
   trader's blind marks, their hindsight marks and buy & hold on that span
   (``report.backtest_signals``), and the hindsight gap there (``report.HindsightGap``).

``find_run`` reads what the run recorded (no torch); ``teaching_report`` predicts and scores.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..errors import WorkstationError
from ..market.candles import Candles
from ..market.series import SeriesKey
from ..ml.blind_marks import blind_trade_events, describe_blind_events, market_blind_position
from ..ml.checkpoints import CheckpointStore, model_stores, read_meta
from ..ml.entry_events import describe_match, span_tallies, trade_events
from ..ml.events import HeadScore, TradeEvents
from ..ml.history.reader import read_history
from ..ml.manifest import (
    MANIFEST_NAME,
    ManifestError,
    check_candles,
    check_labels,
    read_manifest,
    series_of,
)
from ..ml.scoring import day_blocks, describe, describe_baselines, scored_head
from ..ml.split import describe_spans
from ..ml.targets import CLASS_HEADS, TRADER_HEADS
from ..timeparse import format_minute
from .costs import costs_for
from .engine import Sizing
from .report import (
    OUT_OF_SAMPLE,
    BacktestResult,
    HindsightGap,
    backtest_signals,
    hindsight_gap,
    marks_columns,
)
from .report import describe as describe_backtest
from .request import signal_name
from .signals import DEFAULT_THRESHOLD, market_marks_signals, model_signal
from .worth import recorded_tick

HELD_OUT, VALIDATION = "held out", "validation"
NO_HELD_OUT = ("no held-out span: train with Train until (Ctrl+U) or --train-until to test "
               "out of sample")
MODEL_SIGNAL = "model position"


@dataclass(frozen=True)
class RunRecord:
    """What a saved run recorded: its manifest, the history's last start (or resume) record
    (``started``: spans, split rule, warnings), its checkpoint's ``data`` record (candle
    ranges of its spans, ``gap``) and which checkpoint the report reads (best or latest)."""

    run_id: str
    store: CheckpointStore
    manifest: dict
    started: dict
    data: dict
    checkpoint: str


def find_run(run_id: str | None = None, root: str | Path | None = None) -> RunRecord:
    """The run ``run_id`` (default: the newest run with a checkpoint) of the checkpoint
    stores under ``root`` (default: the app's); anything missing is one line."""
    stores = model_stores(root)
    if run_id is None:
        newest = [(found, store) for store in stores
                  if (found := store.newest_with_checkpoint()) is not None]
        if not newest:
            raise WorkstationError("no saved run to report on (train one with "
                                   "`workstation train`)")
        run_id, store = max(newest, key=lambda pair: pair[0])
    else:
        holding = next((s for s in stores if run_id in s.run_ids()), None)
        if holding is None:
            raise WorkstationError(f"no run {run_id} (see `workstation runs list`)")
        store = holding
    run_dir = store.run_dir(run_id)
    if not (run_dir / MANIFEST_NAME).is_file():
        raise WorkstationError(f"run {run_id} has no manifest ({MANIFEST_NAME}), so its data "
                               f"cannot be rebuilt: train it again to report on it")
    manifest = read_manifest(run_dir)
    started = [m for m in read_history(run_dir).markers
               if m.get("type") in ("start", "resume") and "spans" in m]
    if not started:
        raise WorkstationError(f"run {run_id}'s history records no spans (a run of an older "
                               f"Workstation): train it again to report on it")
    checkpoint = "best" if store.has_checkpoint(run_id, "best") else "latest"
    if not store.has_checkpoint(run_id, checkpoint):
        raise WorkstationError(f"run {run_id} has no checkpoint to predict with")
    data = read_meta(store.snapshot_dir(run_id, checkpoint)).get("data") or {}
    if "train" not in data or "val" not in data:
        raise WorkstationError(f"run {run_id}'s checkpoint records no spans: train it again "
                               f"to report on it")
    return RunRecord(run_id, store, manifest, started[-1], data, checkpoint)


@dataclass(frozen=True)
class TeachingReport:
    """A run's teaching report (see the module docstring). ``scored_on`` names the scored
    span (``HELD_OUT`` or ``VALIDATION``), ``span`` its candles and ``period`` its first and
    last open times; ``blind_events``: the entries and exits against the blind marks only
    (None: no blind mark labels a candle of the span); ``backtest`` is empty and
    ``hindsight_gap`` None without a held-out span."""

    run_id: str
    checkpoint: str
    series: str
    candles: int
    spans: dict
    split_rule: str
    warnings: tuple[str, ...]
    scored_on: str
    span: tuple[int, int]
    period: tuple[int, int]
    heads: dict[str, HeadScore]
    baseline_lags: dict[str, int]
    trade_events: TradeEvents
    backtest: tuple[BacktestResult, ...]
    blind_events: TradeEvents | None = None
    hindsight_gap: HindsightGap | None = None

    @property
    def out_of_sample(self) -> bool:
        return self.scored_on == HELD_OUT

    def lines(self) -> list[str]:
        """The report as text, one screen."""
        out = [f"run {self.run_id} ({self.checkpoint} checkpoint): {self.series}, "
               f"{self.candles:,} candles"]
        if not self.out_of_sample:
            out.append(f"WARNING: {NO_HELD_OUT}")
        out.append("marks used and where:")
        out += [f"  {line}" for line in describe_spans(self.spans)]
        if self.split_rule:
            out.append(f"  ({self.split_rule})")
        out += [f"  warning: {warning}" for warning in self.warnings]
        when = f"{format_minute(self.period[0])} to {format_minute(self.period[1])}"
        count = f"{self.span[1] - self.span[0]:,} candles"
        out.append(f"scored on the held-out span, {when} ({count}, never trained or validated "
                   f"on):" if self.out_of_sample else
                   f"scored on the validation span, {when} ({count}; its epoch was chosen "
                   f"there: NOT out of sample):")
        for head, score in self.heads.items():
            out.append(f"  {describe(head, score)}")
            out.append(f"    {describe_baselines(score, self.baseline_lags.get(head))}")
        out.append("the position head's entries and exits there:")
        out += [f"  {describe_match(m)}" for m in (self.trade_events.entries,
                                                   self.trade_events.exits)]
        out += [f"  {line}" for line in describe_blind_events(self.blind_events)]
        if not self.backtest:
            out.append("held-out backtest: none (no held-out span)")
            return out
        out.append("held-out backtest of the position head after costs, beside the trader's "
                   "blind and hindsight marks and buy & hold:")
        out += [f"  {line}" for line in describe_backtest(list(self.backtest), HELD_OUT)]
        return out

    def to_dict(self) -> dict:
        """Everything as plain data (``json.dumps(..., allow_nan=False)`` safe)."""
        return json.loads(json.dumps({
            "run_id": self.run_id, "checkpoint": self.checkpoint, "series": self.series,
            "candles": self.candles, "spans": self.spans, "split_rule": self.split_rule,
            "warnings": list(self.warnings),
            "scored_on": {"name": self.scored_on, "span": list(self.span),
                          "first_ts": self.period[0], "last_ts": self.period[1],
                          "out_of_sample": self.out_of_sample},
            "no_held_out": None if self.out_of_sample else NO_HELD_OUT,
            "heads": {head: dict(asdict(score), baseline_lags=self.baseline_lags.get(head))
                      for head, score in self.heads.items()},
            "trade_events": asdict(self.trade_events),
            "blind_trade_events": (None if self.blind_events is None
                                   else asdict(self.blind_events)),
            "backtest": [r.to_dict() for r in self.backtest] if self.backtest else None,
            "hindsight_gap": (None if self.hindsight_gap is None
                              else self.hindsight_gap.to_dict()),
        }, allow_nan=False))


def teaching_report(record: RunRecord, *, annotations_db: Path | None,
                    candle_cache: Path | None = None,
                    source: str | None = None, reference_source: str | None = None,
                    device: str = "auto", thresholds: tuple[float, ...] = (DEFAULT_THRESHOLD,),
                    fee_bps: float | None = None, slippage_bps: float | None = None,
                    size: float = 1.0, should_stop: Callable[[], bool] = bool,
                    shown: tuple[Candles, SeriesKey] | None = None) -> TeachingReport:
    """``record``'s report (see the module docstring); its candles from ``source`` (default:
    where it had them) or, when they are of the run's series, the candles ``shown`` (the
    window's: a file the run only names); ``candle_cache``: where the exchange's price tick
    may be recorded; imports torch. ``thresholds``: the confidence the
    position head's backtest signal needs (one column each); costs and sizing as ``workstation
    backtest``."""
    from ..market.sources import load_series
    from ..ml.job import manifest_reference, plan_of, training_data

    run_id, manifest = record.run_id, record.manifest
    sizing = Sizing(size=size)  # checked before any candle is read
    series = series_of(manifest)
    try:
        if shown is not None and source is None and shown[1] == series:
            candles, key = shown
        else:
            candles, key = load_series(source or series.source, series.symbol,
                                       series.timeframe)
    except WorkstationError as exc:
        raise WorkstationError(f"run {run_id}'s candles ({source or series.source}) cannot be "
                               f"read: {exc}; name where they are with --source") from None
    try:
        candles = check_candles(manifest, candles)
    except ManifestError as exc:
        raise WorkstationError(f"the candles of {key.provenance} changed since run {run_id}: "
                               f"{exc}") from None
    plan = plan_of(manifest, device)
    data, labelled = training_data(plan, candles, key, annotations_db=annotations_db,
                                   reference=manifest_reference(manifest, reference_source))
    try:
        check_labels(manifest, labelled.labels_sha256)
    except ManifestError as exc:
        raise WorkstationError(f"the marks of {key.market} changed since run {run_id}: "
                               f"{exc}") from None
    spans = record.data
    held_out = spans.get("held_out")
    scored_on = HELD_OUT if held_out is not None else VALIDATION
    span = (int(held_out[0]), int(held_out[1])) if held_out is not None else \
        (int(spans["val"][0]), int(spans["val"][1]))
    classes, confidence = _predict(record, data, span, plan.device, should_stop)
    seed = plan.train_config.seed
    fitted = _baselines(data, spans, plan.model_config.seq_len)
    days = day_blocks(data.ts[slice(*span)])
    heads = {}
    for head in TRADER_HEADS:
        h = CLASS_HEADS.index(head)
        truth = data.targets.classes(head)[slice(*span)]
        heads[head] = scored_head(head, truth, classes[h], fitted.predict(head, *span), days,
                                  seed=seed)[0]
    position = CLASS_HEADS.index("position")
    events = trade_events([span_tallies(data.targets.position[slice(*span)], classes[position],
                                        data.ts[slice(*span)], seed=seed)], seed)
    blind = market_blind_position(annotations_db, key, candles, plan.target_spec)
    blind_events = blind_trade_events([(blind[slice(*span)], classes[position],
                                        data.ts[slice(*span)])], seed)
    results: tuple[BacktestResult, ...] = ()
    gap = None
    if held_out is not None:
        signals = {}
        for level in thresholds:
            signal = np.zeros(len(candles), dtype=np.int8)
            signal[span[0]:span[1]] = model_signal("position", classes[position],
                                                   confidence[position], level)
            signals[signal_name(MODEL_SIGNAL, level, len(thresholds) > 1)] = \
                (signal, OUT_OF_SAMPLE)
        signals.update(marks_columns(market_marks_signals(candles, key, annotations_db)))
        results = tuple(backtest_signals(
            candles, signals, series=key.provenance, span=span, sizing=sizing,
            costs=costs_for(key, fee_bps=fee_bps, slippage_bps=slippage_bps),
            tick=recorded_tick(candle_cache, key.source, key.symbol)))
        gap = hindsight_gap(list(results), HELD_OUT)
    started = record.started
    return TeachingReport(
        run_id, record.checkpoint, key.provenance, len(candles), dict(started["spans"]),
        str(started.get("split_rule") or ""), tuple(started.get("warnings") or ()),
        scored_on, span, (int(data.ts[span[0]]), int(data.ts[span[1] - 1])), heads,
        {head: lags for head, lags in fitted.lags.items() if head in TRADER_HEADS}, events,
        results, blind_events, gap)


def _baselines(data, spans: dict, seq_len: int):
    """The trader heads' baselines fitted on the run's training span, as its trainer fits
    them (the lagged ones purged by the run's gap)."""
    from ..ml.baselines import fit_baselines

    train = (int(spans["train"][0]), int(spans["train"][1]))
    gap = int(spans.get("gap") or seq_len)
    return fit_baselines(data, train, max_lags=seq_len, gap=gap, lagged_heads=TRADER_HEADS)


def _predict(record: RunRecord, data, span: tuple[int, int], device: str,
             should_stop: Callable[[], bool]) -> tuple[np.ndarray, np.ndarray]:
    """The run's model's classes and confidences ``[C, candles]`` on ``span`` of ``data``."""
    import torch

    from ..ml.dataset import DeviceSeries
    from ..ml.device import resolve_device
    from ..ml.online import Predictor
    from ..ml.trainer import predict_span

    where = resolve_device(device)
    predictor = Predictor.from_checkpoint(record.store.load(record.run_id, record.checkpoint),
                                          where)
    confidence = np.zeros((len(CLASS_HEADS), span[1] - span[0]))
    with torch.no_grad():
        classes = predict_span(predictor.model, DeviceSeries(data, where), span,
                               predictor.config.seq_len, 256, where, confidence=confidence,
                               should_stop=should_stop)
    return classes, confidence
