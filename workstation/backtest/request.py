"""One backtest as the trader asks for it (``BacktestRequest``): which signals, which head and
confidence levels, costs, sizing and fills; ``run_request`` turns it into results beside buy &
hold. The command line and the window's Backtest view both ask through it, so the rules (what
is out of sample, what is refused) are the same in both.

Signals are ``annotations`` (the market's marked trades, over every candle) or ``run:RUN`` (a
saved run's predictions, out of sample only: its held-out span (from ``train_until`` and a
gap on), or else the candles after the last one it was trained on, as its checkpoint records;
``in_sample`` allows the span it saw, and then every result says IN-SAMPLE). The trader's
marks are two samples, their blind and their hindsight marks (``signals.marks_signals``),
each backtested on the same span, costs and fills as a run's signals, beside them wherever
the market has a marked trade on these candles.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import WorkstationError
from ..market.candles import Candles
from ..market.series import SeriesKey
from .costs import costs_for
from .engine import NEXT_OPEN, Costs, Sizing
from .report import IN_SAMPLE, OUT_OF_SAMPLE, BacktestResult, backtest_signals, marks_columns
from .signals import SIGNAL_HEADS, market_marks_signals, model_signal
from .worth import recorded_tick

ANNOTATIONS = "annotations"
RUN_PREFIX = "run:"


@dataclass(frozen=True)
class BacktestRequest:
    """``signals``: ``annotations`` or ``run:RUN``; ``head`` and ``thresholds`` for a run's
    signals (one result per confidence level); ``fee_bps`` / ``slippage_bps`` ``None`` for the
    exchange's fee (else the default) and the default slippage."""

    signals: str = ANNOTATIONS
    head: str = "position"
    thresholds: tuple[float, ...] = (0.5,)
    fee_bps: float | None = None
    slippage_bps: float | None = None
    size: float = 1.0
    fill: str = NEXT_OPEN
    cash: float = 10_000.0
    in_sample: bool = False
    reference_source: str | None = None  # a run's reference asset's candles (default: key's)

    def __post_init__(self):
        source = self.signals.strip()
        if source != ANNOTATIONS and not (source.startswith(RUN_PREFIX) and source[4:]):
            raise WorkstationError(f"signals must be annotations or run:RUN, got {source!r}")
        if self.head not in SIGNAL_HEADS:
            raise WorkstationError(f"the signalling head must be one of {SIGNAL_HEADS}, got "
                                   f"{self.head!r}")
        Sizing(size=self.size)  # each checks its own numbers, before any candle is read
        if self.fee_bps is not None:
            Costs(self.fee_bps / 10_000, self.slippage_bps or 0.0)
        if not self.thresholds or any(not 0 <= t <= 1 for t in self.thresholds):
            raise WorkstationError("each confidence threshold must be between 0 and 1, got "
                                   f"{', '.join(f'{t:g}' for t in self.thresholds) or 'none'}")

    @property
    def run_id(self) -> str | None:
        return self.signals[4:] if self.signals.startswith(RUN_PREFIX) else None


def signal_name(base: str, threshold: float, several: bool) -> str:
    """A model signal's column name; with several thresholds, each names its own."""
    return f"{base} >= {threshold:g}" if several else base


def closed_candles(candles: Candles) -> Candles:
    """The closed candles only: a forming candle is never traded on."""
    return candles.slice(0, candles.n_closed)


def run_request(request: BacktestRequest, candles: Candles, key: SeriesKey, *,
                annotations_db: Path | None, store=None, device: str = "auto",
                should_stop: Callable[[], bool] = bool,
                candle_cache: Path | None = None) -> list[BacktestResult]:
    """``request`` backtested on the closed ``candles`` of ``key``, buy & hold last.
    ``store``: the ``CheckpointStore`` a run is read from (default: the app's);
    ``candle_cache``: the cache that may hold the exchange's price tick for the market."""
    candles = closed_candles(candles)
    costs = costs_for(key, fee_bps=request.fee_bps, slippage_bps=request.slippage_bps)
    marks = market_marks_signals(candles, key, annotations_db)
    marked = any(signal.any() for signal in marks.values())
    if request.run_id is None:
        if not marked:
            raise WorkstationError(f"no marked trade of {key.market} falls on these "
                                   f"{len(candles):,} candles of {key.provenance}")
        signals, span = marks_columns(marks), (0, len(candles))
    else:
        signals, span = _run_signals(request, candles, key, store, device, should_stop,
                                     annotations_db)
        if marked:  # the trader as a baseline, on the same span
            signals.update(marks_columns(marks))
    return backtest_signals(candles, signals, series=key.provenance, costs=costs,
                            sizing=Sizing(size=request.size), fill=request.fill,
                            cash=request.cash, span=span,
                            tick=recorded_tick(candle_cache, key.source, key.symbol))


def out_of_sample_span(run_id: str, data: dict, candles: Candles, in_sample: bool
                       ) -> tuple[tuple[int, int], str]:
    """The span a run's signals may be backtested on, and its sample label (see the module
    docstring): from the run's held-out span (``held_out_first_ts``, where it trained until
    a date) or after the last candle it saw (``last_ts``), as its checkpoint's ``data``
    records; a span that cannot be shown to be out of sample is refused in words."""
    if in_sample:
        return (0, len(candles)), IN_SAMPLE
    trained_last_ts = data.get("last_ts")
    if trained_last_ts is None:
        raise WorkstationError(f"run {run_id} does not record the candles it was trained on, "
                               "so no span can be shown to be out of sample; allow in-sample "
                               "to backtest it anyway (labelled IN-SAMPLE)")
    first_unseen = int(np.searchsorted(candles.ts, int(trained_last_ts), side="right"))
    held_out = data.get("held_out_first_ts")
    if held_out is not None:
        first_unseen = max(first_unseen, int(np.searchsorted(candles.ts, int(held_out))))
    if first_unseen >= len(candles) - 1:
        raise WorkstationError(f"run {run_id} was trained on candles up to "
                               f"{_when(int(trained_last_ts))}: none of these "
                               f"{len(candles):,} candles comes after them (fetch newer ones, "
                               "or allow in-sample)")
    return (first_unseen, len(candles)), OUT_OF_SAMPLE


def _run_signals(request: BacktestRequest, candles: Candles, key: SeriesKey, store, device: str,
                 should_stop: Callable[[], bool], annotations_db: Path | None):
    from ..ml.checkpoints import CheckpointStore, read_meta
    from ..ml.device import resolve_device
    from ..ml.job import load_reference
    from ..ml.level_columns import levels_for
    from ..ml.online import Predictor
    from ..ml.span_predictions import predict_span_probabilities

    run_id = request.run_id
    assert run_id is not None
    store = store or CheckpointStore()
    which = "best" if store.has_checkpoint(run_id, "best") else "latest"
    meta = read_meta(store.snapshot_dir(run_id, which))
    span, sample = out_of_sample_span(run_id, meta.get("data") or {}, candles,
                                      request.in_sample)
    predictor = Predictor.from_checkpoint(store.load(run_id, which), resolve_device(device))
    reference = load_reference(predictor.feature_spec, key, request.reference_source)
    predicted = predict_span_probabilities(
        predictor, candles, span, should_stop=should_stop,
        reference=reference.candles if reference is not None else None,
        levels=levels_for(predictor.feature_spec, annotations_db, key.market))
    several = len(request.thresholds) > 1
    signals = {}
    for level in request.thresholds:
        signal = np.zeros(len(candles), dtype=np.int8)
        signal[span[0]:span[1]] = model_signal(request.head, predicted.classes[request.head],
                                               predicted.confidence[request.head], level)
        signals[signal_name(f"run {run_id} {request.head}", level, several)] = (signal, sample)
    return signals, span


def _when(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
