"""``Trainer``: trains a ``TradingTransformer`` on one series and reports typed events.

``Trainer.run()`` blocks; the GUI runs it on a QThread, the CLI on a worker thread. It owns
the model it builds (no other thread may touch it) and:

- keeps the data on the device and gathers batches there;
- uses AdamW (fused on CUDA), linear warm-up then cosine decay, gradient clipping, bf16
  autocast on CUDA (fp32 on CPU);
- never syncs with the host per step: metrics and non-finite checks accumulate in device
  tensors and are read every ``log_every`` steps (and before every checkpoint);
- honours ``stop`` (a ``threading.Event``) within one batch, saves a checkpoint and finishes
  as ``stopped``;
- ends a run whose loss or gradient went non-finite as ``Failed``, naming the step, the batch
  and the heads (or ``grad_norm``) at fault, and ends any other exception as ``Failed`` with
  its traceback.

Error policy: ``run()`` does not raise for a failed run; it logs the error, emits ``Failed``
and returns it. It raises only if ``on_event`` itself fails while reporting a failure (then
the original error is chained), and it lets ``BaseException`` (KeyboardInterrupt,
SystemExit) through untouched.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import WorkstationError
from ..market.series import SeriesKey
from .baselines import fit_baselines
from .config import TradingTransformerConfig, TrainConfig
from .dataset import DeviceSeries, TrainingData, WindowBatch, WindowSampler, auto_stride
from .device import describe, memory_stats, prepare_thread, resolve_device
from .distributed import World, any_rank, join, leave, shard, summed
from .epoch_choice import choice_loss
from .events import (
    BatchEnd,
    CheckpointSaved,
    Compiling,
    EpochEnd,
    Event,
    Failed,
    Finished,
    HeadScore,
    RunStarted,
    SplitMetrics,
)
from .history.writer import RunHistory
from .model import ModelOutput, TradingTransformer
from .ownership import ModelClaim, claim
from .scoring import day_blocks, score_head
from .split import TimeSplit, run_spans, spans_record
from .targets import CLASS_HEADS, HEADS, TRADER_HEADS, TargetSpec

log = logging.getLogger(__name__)


# -- loss -------------------------------------------------------------------------------------
# One step's numbers as one device vector, so a log needs a single host sync:
# [total, head loss x H, head present x H, correct x C (class heads), count x H, grad norm]
_H, _C = len(HEADS), len(CLASS_HEADS)
_TOTAL, _HEAD, _PRESENT = 0, 1, 1 + _H
_CORRECT = 1 + 2 * _H
_COUNT = _CORRECT + _C
_GNORM = _COUNT + _H
_STATS = _GNORM + 1


@dataclass
class LossTerms:
    total: torch.Tensor    # scalar, weighted sum of the heads that have targets
    heads: torch.Tensor    # [H] mean loss per head (0 where the head has no target)
    counts: torch.Tensor   # [H] targets per head
    correct: torch.Tensor  # [C] correct argmax predictions of the class heads

    def stats(self) -> torch.Tensor:
        """The ``_STATS`` vector without the grad norm (float64, detached)."""
        with torch.no_grad():
            return torch.cat([self.total.reshape(1), self.heads,
                              (self.counts > 0).to(self.heads.dtype), self.correct, self.counts,
                              self.total.new_zeros(1)]).double()


def _class_terms(logits: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None):
    """Summed (class-weighted) cross-entropy, its normaliser, target count and correct."""
    flat = target.reshape(-1)
    logits = logits.reshape(flat.shape[0], -1)
    valid = flat >= 0
    summed = F.cross_entropy(logits, flat, weight=weight, ignore_index=-1, reduction="sum")
    norm = valid.sum().to(torch.float32) if weight is None else \
        torch.where(valid, weight[flat.clamp(min=0)], torch.zeros_like(weight[:1])).sum()
    correct = ((logits.argmax(-1) == flat) & valid).sum()
    return summed, norm, valid.sum(), correct


def head_weights(spec: TargetSpec, device: torch.device | str) -> torch.Tensor:
    """The loss weights of ``HEADS`` as a tensor on ``device`` (make it once, not per step:
    a host-to-device copy would sync)."""
    return torch.tensor([spec.weight(h) for h in HEADS], dtype=torch.float32, device=device)


def class_weights(data: TrainingData, train: tuple[int, int], device: torch.device | str
                  ) -> dict[str, torch.Tensor] | None:
    """Inverse-frequency class weights of each class head over the training span, when the
    target settings ask for them (``class_weights``); else None (every target counts 1)."""
    if not data.target_spec.class_weights:
        return None
    return {head: torch.tensor(data.targets.class_weights(head, *train), dtype=torch.float32,
                               device=device) for head in CLASS_HEADS}


def head_logits(out: ModelOutput) -> dict[str, torch.Tensor]:
    """The class heads' logits by head name."""
    return {"candle": out.candle_logits, "trend": out.trend_logits,
            "position": out.position_logits, "regime": out.regime_logits}


def compute_loss(out: ModelOutput, batch: WindowBatch, weights: torch.Tensor,
                 classes: dict[str, torch.Tensor] | None = None) -> LossTerms:
    """Per-head losses, each the mean over that head's own targets (class-weighted with
    ``classes``): cross-entropy for the class heads, Gaussian negative log-likelihood (or
    squared error without uncertainty) for the return; ``total`` weights them with
    ``weights`` (see ``head_weights``). A head with no target in the batch adds nothing."""
    sums, norms, counts, correct = [], [], [], []
    for head, logits in head_logits(out).items():
        s, z, n, c = _class_terms(logits, getattr(batch, head),
                                  classes[head] if classes else None)
        sums.append(s)
        norms.append(z)
        counts.append(n)
        correct.append(c)
    err = batch.ret - out.return_mean
    if out.return_logvar is not None:
        per = 0.5 * (out.return_logvar + err * err * torch.exp(-out.return_logvar))
    else:
        per = err * err
    sums.append(torch.where(batch.ret_mask, per, torch.zeros_like(per)).sum())
    counts.append(batch.ret_mask.sum())
    norms.append(counts[-1].to(torch.float32))
    count = torch.stack(counts).to(torch.float32)
    heads = torch.stack(sums) / torch.stack(norms).clamp(min=1e-12)
    heads = torch.where(count > 0, heads, torch.zeros_like(heads))
    return LossTerms(total=(heads * weights).sum(), heads=heads, counts=count,
                     correct=torch.stack(correct).to(torch.float32))


def _metrics(vec: list[float], batches: int, majority: dict[str, float | None]
             ) -> SplitMetrics:
    """SplitMetrics from a summed ``_STATS`` vector over ``batches`` steps; accuracies stand
    beside the majority class of the split (the full baselines are scored on validation)."""
    head_losses = {}
    for i, head in enumerate(HEADS):
        present = vec[_PRESENT + i]
        head_losses[head] = vec[_HEAD + i] / present if present else None
    heads = {}
    for i, head in enumerate(CLASS_HEADS):
        count = int(vec[_COUNT + i])
        heads[head] = HeadScore(vec[_CORRECT + i] / count if count else None, count,
                                {"majority": majority[head]},
                                "majority" if majority[head] is not None else None)
    return SplitMetrics(loss=vec[_TOTAL] / batches if batches else None,
                        head_losses=head_losses, heads=heads, examples=int(vec[_COUNT]),
                        batches=batches)


def scoring_windows(span: tuple[int, int], seq_len: int) -> np.ndarray:
    """``[W, 3]`` rows ``(window start, first scored candle, scored stop)`` covering ``span``.

    A candle is scored at a position with at least ``seq_len // 2`` candles of history in its
    window, as live prediction sees it: windows overlap by that warm-up and reach back before
    ``span`` for context (inputs only; the gap before a test span is at least a window). Only
    at the very start of a series is the warm-up shorter.
    """
    start, stop = span
    step = seq_len - seq_len // 2
    ends = np.minimum(np.arange(start + step, stop + step, step), stop)
    firsts = np.concatenate(([start], ends[:-1]))
    starts = np.maximum(ends - seq_len, 0)
    return np.stack([starts, firsts, ends], axis=1)


def predict_span(model: TradingTransformer, series: DeviceSeries, span: tuple[int, int],
                 seq_len: int, batch_size: int, device: torch.device, *,
                 autocast=contextlib.nullcontext, should_stop: Callable[[], bool] = bool,
                 on_batch: Callable[[ModelOutput, WindowBatch], None] | None = None,
                 confidence: np.ndarray | None = None,
                 probabilities: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """Each class head's predicted class ``[C, stop - start]`` at every candle of ``span``
    (each scored once, with a warm context: ``scoring_windows``), from a model in eval mode;
    ``on_batch(out, batch)`` sees every batch with targets on the scored candles only (the
    validation loss is the loss on ``span``). ``confidence`` (float ``[C, stop - start]``),
    if given, receives each prediction's probability; ``probabilities`` (head name to float
    ``[classes, stop - start]``), each named head's probability of every class."""
    start, stop = span
    windows = torch.from_numpy(scoring_windows(span, seq_len)).to(device)
    predicted = torch.full((_C, stop - start), -1, dtype=torch.int64, device=device)
    offsets = torch.arange(seq_len, device=device)
    for i in range(0, len(windows), batch_size):
        if should_stop():
            raise Stopped
        chunk = windows[i:i + batch_size]
        batch = series.gather(chunk[:, 0], seq_len)
        candle = chunk[:, :1] + offsets
        scored = (candle >= chunk[:, 1:2]) & (candle < chunk[:, 2:3])
        with autocast():
            out = model(batch.x)
        if on_batch is not None:
            on_batch(out, _only(batch, scored))
        where = candle[scored] - start
        for h, (head, logits) in enumerate(head_logits(out).items()):
            predicted[h, where] = logits.argmax(-1)[scored]
            if confidence is None and (probabilities is None or head not in probabilities):
                continue
            probs = torch.softmax(logits[scored].float(), -1).cpu().numpy()
            at = where.cpu().numpy()
            if confidence is not None:
                confidence[h, at] = probs.max(-1)
            if probabilities is not None and head in probabilities:
                probabilities[head][:, at] = probs.T
    return predicted.cpu().numpy()


def _only(batch: WindowBatch, scored: torch.Tensor) -> WindowBatch:
    """``batch`` with every target outside ``scored`` masked."""
    unscored = torch.full_like(batch.candle, -1)
    return replace(batch, candle=torch.where(scored, batch.candle, unscored),
                   trend=torch.where(scored, batch.trend, unscored),
                   position=torch.where(scored, batch.position, unscored),
                   regime=torch.where(scored, batch.regime, unscored),
                   ret_mask=batch.ret_mask & scored)


def lr_factor(step: int, warmup: int, total: int, min_ratio: float) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine from 1 down to ``min_ratio``."""
    if step < warmup:
        return (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


class NonFiniteError(WorkstationError):
    """``step`` and ``batch`` number the step that went non-finite as ``BatchEnd`` does
    (the first step of a run is 1, the first batch of an epoch is 1)."""

    def __init__(self, what: str, heads: tuple[str, ...], step: int, epoch: int, batch: int):
        self.heads, self.step, self.epoch, self.batch = heads, step, epoch, batch
        super().__init__(f"{what} went non-finite at step {step} (epoch {epoch + 1}, batch "
                         f"{batch}): {', '.join(heads) or 'no head'}")


class Stopped(Exception):
    """Raised inside a loop (training, ``predict_span``) when it is asked to stop; ends a run
    as ``stopped``."""


# -- the trainer ------------------------------------------------------------------------------
class Trainer:
    """See the module docstring. ``series`` is the series the data is (its key and its
    ``provenance`` text go into every checkpoint; data that is not a named series gives a
    ``provenance`` text instead). ``checkpoints`` is a ``CheckpointStore`` (or None: nothing
    is saved); ``resume_from`` a ``LoadedCheckpoint`` of the same model, features, targets and
    series, from which the run continues at the same step, epoch, batch, learning rate and
    RNG state. Its spans follow ``split``'s rule; a run whose training span holds none of
    the trades there are is refused, unless not ``strict_marks`` (a walk-forward fold: it
    then trains on, saying so in ``RunStarted.warnings``). Its validation scores stand beside
    baselines fitted on its training span, unless not ``val_baselines`` (a walk-forward fold,
    whose test span is scored beside them: fitting them for validation too cost 10-20 s a
    fold and seed, shown nowhere)."""

    def __init__(self, model_config: TradingTransformerConfig, train_config: TrainConfig,
                 data: TrainingData, device: torch.device | str, *,
                 on_event: Callable[[Event], None], stop: threading.Event,
                 checkpoints=None, run_id: str | None = None, series: SeriesKey | None = None,
                 provenance: str | None = None, resume_from=None,
                 manifest: dict | None = None, world: World | None = None,
                 strict_marks: bool = True, val_baselines: bool = True):
        if model_config.n_features != data.features.shape[1]:
            raise WorkstationError(f"model expects {model_config.n_features} features, data "
                                   f"has {data.features.shape[1]}")
        provenance = series.provenance if series is not None else provenance
        if not provenance or not str(provenance).strip():
            raise WorkstationError("training data needs a provenance (where the candles came "
                                   "from)")
        self.world = world or World()
        if not self.world.leader:
            checkpoints = None  # only rank 0 writes: checkpoints, history, events
        self.series_key = series
        self.model_config = model_config
        self.train_config = train_config
        self.data = data
        self.device = resolve_device(device)
        self.on_event = on_event
        self.stop = stop
        self.checkpoints = checkpoints
        self.provenance = str(provenance)
        self.resume_from = resume_from
        if resume_from is not None:
            self._check_resumable(resume_from)
            run_id = run_id or resume_from.meta.get("run_id")
        if run_id is None:
            run_id = (checkpoints.new_run_id() if checkpoints is not None
                      else f"unsaved-{uuid.uuid4().hex[:8]}")
        self.run_id = run_id
        self.manifest = dict(manifest, run_id=run_id) if manifest is not None else None
        self.model: TradingTransformer | None = None  # built by run(), on its thread
        self._ddp = None  # its DistributedDataParallel copy under torchrun (``distributed``)
        # what a training step calls: the model, its DDP or compiled copy (set up by _setup)
        self._forward: Callable[[torch.Tensor], ModelOutput] | None = None
        self._claim: ModelClaim | None = None
        spans = run_spans(data.targets, data.ts, model_config.seq_len,
                          data.target_spec.horizon, train_config.val_fraction,
                          train_config.train_until, strict=strict_marks)
        self.split: TimeSplit = spans.split
        self.marks, self.warnings = spans.marks, spans.warnings
        self.stride = train_config.window_stride or auto_stride(
            self.split.train_spans, model_config.seq_len,
            train_config.batches_per_epoch * train_config.batch_size)
        self._train_windows = WindowSampler.over(self.split.train_spans, model_config.seq_len,
                                                 self.stride)
        t = data.targets
        self._majority = {
            name: {head: t.majority_baseline(head, *rng) for head in CLASS_HEADS}
            for name, rng in (("train", self.split.train), ("val", self.split.val))
        }
        self._val_baselines: dict[str, dict[str, np.ndarray]] = {}  # fitted by _setup
        self._fit_val_baselines = val_baselines
        self.steps_per_epoch = math.ceil(self._train_windows.n_windows / train_config.batch_size)
        self.total_steps = self.steps_per_epoch * train_config.epochs
        self.step = 0
        self.epoch = 0
        self.batch = 0
        self.best_val_loss: float | None = None  # of the best epoch, by ``chosen_by``
        self.chosen_by: str | None = None  # the loss epochs are compared by (``epoch_choice``)
        self.start_step = 0
        self._log_batches = 0
        self._last_checkpoint: str | None = None
        self._history: RunHistory | None = None  # the run's history.jsonl, while run() runs

    def _check_resumable(self, loaded) -> None:
        from .checkpoints import config_differences

        meta = loaded.meta
        problems = config_differences(meta.get("config") or {}, self.model_config.to_dict())
        if meta.get("features") != self.data.feature_spec.to_dict():
            problems.append("feature settings differ")
        if meta.get("targets") != self.data.target_spec.to_dict():
            problems.append("target settings differ")
        saved_series = meta.get("series")
        if self.series_key is not None and saved_series is not None:
            if saved_series != self.series_key.to_dict():
                problems.append(f"data: {meta.get('provenance')!r} -> {self.provenance!r}")
        elif meta.get("provenance") != self.provenance:
            problems.append(f"data: {meta.get('provenance')!r} -> {self.provenance!r}")
        if "resume" not in meta:
            problems.append("the checkpoint has no resume position")
        if problems:
            raise WorkstationError(f"cannot resume run {meta.get('run_id')}: "
                                   + "; ".join(problems))

    # -- public ------------------------------------------------------------------------------
    def run(self) -> Finished | Failed:
        """Train to the end, until ``stop`` is set, or until an error; see the module docstring."""
        started = time.monotonic()
        self._claim = None
        lock = self.checkpoints.lock(self.run_id) if self.checkpoints is not None else None
        try:
            if lock is not None:
                lock.acquire()  # one writer per run: a second trainer is refused here
                # every event is recorded beside the checkpoints, under the same lock
                self._history = RunHistory(self.checkpoints.run_dir(self.run_id),
                                           on_create=self._write_manifest)
            prepare_thread(self.device, self.train_config.cpu_threads)
            self._setup()
            self._train()
            return self._emit_final(Finished(self.run_id, "completed", self.step, self.epoch,
                                             time.monotonic() - started, self.best_val_loss,
                                             self._last_checkpoint,
                                             self.chosen_by or "total loss"))
        except Stopped:
            return self._finish_stopped(started)
        except Exception as exc:  # noqa: BLE001 - every error ends the run as Failed
            return self._fail(exc)
        finally:
            if self._claim is not None:
                self._claim.release()
            self._close_history()
            if lock is not None:
                lock.release()
            if self._ddp is not None:
                leave()

    def _write_manifest(self) -> None:
        """``run.json`` beside the new run's history (``ml.manifest``); a resumed run keeps
        the one it has."""
        if self.manifest is not None and self.checkpoints is not None:
            from .manifest import write_manifest

            write_manifest(self.checkpoints.run_dir(self.run_id), self.manifest)

    def _close_history(self) -> None:
        history, self._history = self._history, None
        if history is not None:
            try:
                history.close()
            except (OSError, WorkstationError) as exc:  # a full disk, say: the final event
                # is reported already; say it, loudly
                log.error("run %s: its history %s could not be closed: %s", self.run_id,
                          history.path, exc)

    # -- setup ---------------------------------------------------------------------------------
    def _net(self) -> TradingTransformer:
        """The model ``_setup`` built (this run's, on this thread)."""
        if self.model is None:
            raise WorkstationError("the trainer has no model before run() builds it")
        return self.model

    def _setup(self) -> None:
        bad = self.data.first_nonfinite_row()
        if bad is not None:
            raise WorkstationError(f"features of candle {bad} are not finite; the candle data "
                                   f"is broken there")
        tc, device = self.train_config, self.device
        torch.manual_seed(tc.seed)
        self.model = model = TradingTransformer(self.model_config).to(device)
        self._claim = claim(model, "Trainer")  # one owner per model: this thread, this run
        self._claim.check()
        model.train()
        if self.world.distributed:
            from torch.nn.parallel import DistributedDataParallel

            join(self.world, device)
            self._ddp = DistributedDataParallel(
                model, device_ids=[device.index] if device.type == "cuda" else None)
        decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and n != "pos"]
        no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 or n == "pos"]
        groups = [{"params": decay, "weight_decay": tc.weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        fused = {"fused": True} if device.type == "cuda" else {"foreach": True}
        self.optimizer = torch.optim.AdamW(groups, lr=tc.lr, betas=(tc.beta1, tc.beta2),
                                           **fused)
        # a short run warms up over at most a tenth of its steps
        warmup = min(tc.warmup_steps, max(1, self.total_steps // 10))
        total, ratio = self.total_steps, tc.min_lr_ratio
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda step: lr_factor(step, warmup, total, ratio))
        self.series = DeviceSeries(self.data, device)
        self._weights = head_weights(self.data.target_spec, device)
        self._classes = class_weights(self.data, self.split.train, device)
        self._val_baselines = {head: {} for head in CLASS_HEADS}
        if self._fit_val_baselines:
            fitted = fit_baselines(self.data, self.split.train,
                                   max_lags=self.model_config.seq_len, gap=self.split.gap,
                                   lagged_heads=TRADER_HEADS)
            self._val_baselines = {head: fitted.predict(head, *self.split.val)
                                   for head in CLASS_HEADS}
        self._params = list(model.parameters())
        if self.resume_from is not None:
            self._restore(self.resume_from)
        else:
            returns = self.data.targets.next_return_bps[slice(*self.split.train)]
            returns = returns[np.isfinite(returns)]
            if returns.size:
                model.init_return_scale(float(np.var(returns)))
        self.start_step = self.step
        self._emit(RunStarted(
            self.run_id, provenance=self.provenance, device=describe(device),
            model_config=self.model_config.to_dict(), train_config=tc.to_dict(),
            features=self.data.feature_spec.to_dict(), targets=self.data.target_spec.to_dict(),
            n_params=model.n_params(), candles=len(self.data),
            train_windows=self._train_windows.n_windows, stride=self.stride,
            val_windows=len(scoring_windows(self.split.val, self.model_config.seq_len)),
            steps_per_epoch=self.steps_per_epoch,
            total_steps=self.total_steps, start_step=self.step,
            resumed_from=str(self.resume_from.path) if self.resume_from is not None else None,
            spans=spans_record(self.split, self.marks, self.data.ts),
            split_rule=self.split.rule, warnings=self.warnings))
        self._forward = self._ddp or model
        if tc.compiles_on(device.type):
            self._forward = torch.compile(self._forward, backend=tc.compile_backend)
            self._emit(Compiling(self.run_id, backend=tc.compile_backend))

    def _restore(self, loaded) -> None:
        from .checkpoints import apply_weights

        apply_weights(self._net(), loaded)
        if loaded.optimizer_state is None or loaded.scheduler_state is None:
            raise WorkstationError(f"checkpoint {loaded.path} has no optimizer or scheduler "
                                   f"state to resume from")
        self.optimizer.load_state_dict(loaded.optimizer_state)
        self.scheduler.load_state_dict(loaded.scheduler_state)
        meta = loaded.meta
        self.step = int(meta["step"])
        self.epoch = int(meta["resume"]["epoch"])
        self.batch = int(meta["resume"]["batch"])
        metrics = meta.get("metrics", {})
        self.chosen_by = metrics.get("chosen_by", "total loss")  # before the rule: the total
        self.best_val_loss = metrics.get("best_val_loss")
        loaded.restore_rng()

    # -- the loop ------------------------------------------------------------------------------
    def _autocast(self):
        if self.device.type == "cuda" and self.train_config.mixed_precision:
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _train(self) -> None:
        tc, seq_len = self.train_config, self.model_config.seq_len
        dev = self.device
        self.begin_steps()
        while self.epoch < tc.epochs:
            epoch_started = time.monotonic()
            starts = self._train_windows.starts(self.epoch, seed=tc.seed).to(dev)
            self._epoch_start_step = self.step - self.batch
            self._epoch_acc = [0.0] * _STATS
            self._epoch_batches = 0
            self._log_batches, self._log_time = 0, time.monotonic()
            bs = tc.batch_size
            while self.batch < self.steps_per_epoch:
                if self._stop_asked():
                    raise Stopped
                chosen = starts[self.batch * bs:(self.batch + 1) * bs]
                share = 1.0
                if self._ddp is not None:  # this rank's share of the global batch, weighed
                    mine = shard(chosen, self.world)  # so the ranks' mean is the batch's
                    share = len(mine) * self.world.size / len(chosen)
                    chosen = mine
                batch = self.series.gather(chosen, seq_len)
                self._train_step(batch, share)
                self.batch += 1
                self.step += 1
                self._log_batches += 1
                if self._log_batches >= tc.log_every:
                    self._log()
            if self._log_batches:
                self._log()
            train = _metrics(self._epoch_acc, self._epoch_batches, self._majority["train"])
            val = self._evaluate()
            loss, chosen_by = choice_loss(val, tc.choose_epoch_by)
            if chosen_by != self.chosen_by:  # a run resumed from before the rule: start over
                self.best_val_loss, self.chosen_by = None, chosen_by
            is_best = loss is not None and (self.best_val_loss is None
                                            or loss < self.best_val_loss)
            if is_best:
                self.best_val_loss = loss
            epoch = self.epoch
            self.epoch += 1
            self.batch = 0
            self._emit(EpochEnd(self.run_id, epoch=epoch, step=self.step,
                                batches_per_epoch=self.steps_per_epoch, train=train, val=val,
                                lr=self.scheduler.get_last_lr()[0],
                                elapsed_s=time.monotonic() - epoch_started,
                                memory=memory_stats(dev), is_best=is_best,
                                chosen_loss=loss, chosen_by=chosen_by))
            self._save("epoch", is_best=is_best, metrics={"train": asdict(train),
                                                          "val": asdict(val)})

    def begin_steps(self) -> None:
        """The device-side tallies that training steps add to (after ``_setup``)."""
        dev = self.device
        self._acc = torch.zeros(_STATS, dtype=torch.float64, device=dev)
        self._bad_step = torch.full((1,), -1, dtype=torch.int64, device=dev)
        self._bad_flags = torch.zeros(len(HEADS) + 1, dtype=torch.bool, device=dev)
        self._step_t = torch.full((1,), self.step, dtype=torch.int64, device=dev)

    def _stop_asked(self) -> bool:
        """``stop`` is set (on any rank: they stop at the same batch)."""
        if self._ddp is None:
            return self.stop.is_set()
        return any_rank(self.stop.is_set(), self.device)

    def _train_step(self, batch: WindowBatch, share: float = 1.0) -> None:
        with self._autocast():
            assert self._forward is not None
            out = self._forward(batch.x)
        terms = compute_loss(out, batch, self._weights, self._classes)
        (terms.total * share if share != 1.0 else terms.total).backward()
        gnorm = torch.nn.utils.clip_grad_norm_(self._params, self.train_config.grad_clip,
                                               foreach=True)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        stats = terms.stats()
        stats[_TOTAL] *= share
        stats[_GNORM] = gnorm.double()
        self._acc += stats
        flags = torch.cat([~torch.isfinite(terms.heads), ~torch.isfinite(gnorm).reshape(1)])
        first = (self._bad_step < 0) & flags.any()
        self._bad_step = torch.where(first, self._step_t, self._bad_step)
        self._bad_flags = torch.where(first, flags, self._bad_flags)
        self._step_t = self._step_t + 1

    def _check_finite(self) -> None:
        """Raise ``NonFiniteError`` for the first non-finite step since the run began (syncs)."""
        bad_step = int(self._bad_step.item())
        if bad_step < 0:
            return
        flags = self._bad_flags.tolist()
        names = tuple(h for h, f in zip(HEADS + ("grad_norm",), flags) if f)
        what = "loss" if any(flags[:len(HEADS)]) else "gradient"
        raise NonFiniteError(what, names, bad_step + 1, self.epoch,
                             bad_step - self._epoch_start_step + 1)

    def _log(self) -> None:
        self._check_finite()
        if self._ddp is not None:  # every rank's numbers: means averaged, counts summed
            summed(self._acc)
            self._acc[_TOTAL] /= self.world.size
            self._acc[_GNORM] /= self.world.size
        vec = self._acc.tolist()  # the one host sync of this interval
        self._acc.zero_()
        now = time.monotonic()
        n = self._log_batches
        bs = self.train_config.batch_size
        windows = min(self.batch * bs, self._train_windows.n_windows) - (self.batch - n) * bs
        self._epoch_acc = [a + b for a, b in zip(self._epoch_acc, vec)]
        self._epoch_batches += n
        self._emit(BatchEnd(
            self.run_id, epoch=self.epoch, step=self.step, batch=self.batch,
            batches_per_epoch=self.steps_per_epoch, batches=n,
            metrics=_metrics(vec, n, self._majority["train"]),
            lr=self.scheduler.get_last_lr()[0], grad_norm=vec[_GNORM] / n,
            samples_per_s=windows / max(now - self._log_time, 1e-9),
            memory=memory_stats(self.device)))
        self._log_batches, self._log_time = 0, time.monotonic()

    def _evaluate(self) -> SplitMetrics:
        """Validation loss and, per class head, the model's prediction at every validation
        candle scored beside the baselines fitted on the training span (``scoring``)."""
        model = self._net()
        val_start, val_stop = self.split.val
        acc = torch.zeros(_STATS, dtype=torch.float64, device=self.device)
        batches = 0

        def add_loss(out: ModelOutput, batch: WindowBatch) -> None:
            nonlocal acc, batches
            acc += compute_loss(out, batch, self._weights, self._classes).stats()
            batches += 1

        model.eval()
        try:
            with torch.no_grad():
                predicted = predict_span(model, self.series, self.split.val,
                                         self.model_config.seq_len, self.train_config.batch_size,
                                         self.device, autocast=self._autocast,
                                         should_stop=self.stop.is_set, on_batch=add_loss)
        finally:
            model.train()
        vec = acc.tolist()
        if not all(math.isfinite(v) for v in vec):
            bad = tuple(h for i, h in enumerate(HEADS) if not math.isfinite(vec[_HEAD + i]))
            raise NonFiniteError("validation loss", bad, self.step, self.epoch, self.batch)
        metrics = _metrics(vec, batches, self._majority["val"])
        days = day_blocks(self.data.ts[val_start:val_stop])
        heads = {head: score_head(head, self.data.targets.classes(head)[val_start:val_stop],
                                  predicted[h], self._val_baselines[head], days,
                                  seed=self.train_config.seed)
                 for h, head in enumerate(CLASS_HEADS)}
        return replace(metrics, heads=heads)

    # -- checkpoints and endings -----------------------------------------------------------------
    def _save(self, reason: str, *, is_best: bool = False, metrics: dict | None = None) -> None:
        if self.checkpoints is None:
            return
        meta = {
            "config": self.model_config.to_dict(),
            "train_config": self.train_config.to_dict(),
            "features": self.data.feature_spec.to_dict(),
            "targets": self.data.target_spec.to_dict(),
            "provenance": self.provenance,
            "series": self.series_key.to_dict() if self.series_key is not None else None,
            "metrics": dict(metrics or {}, best_val_loss=self.best_val_loss,
                            chosen_by=self.chosen_by),
            "step": self.step,
            "epoch": self.epoch,  # completed epochs
            "resume": {"epoch": self.epoch, "batch": self.batch},
            "reason": reason,
            "data": self._data_record(),
        }
        path = self.checkpoints.save(self.run_id, self._net(), self.optimizer, self.scheduler,
                                     meta, is_best=is_best)
        self._last_checkpoint = str(path)
        self._emit(CheckpointSaved(self.run_id, path=str(path), step=self.step,
                                   epoch=self.epoch, reason=reason, is_best=is_best))

    def _data_record(self) -> dict:
        """Where the run's spans lie, as its checkpoints record them: ``first_ts`` and
        ``last_ts`` the open times of the first and last candle it saw (trained or validated
        on); ``held_out_first_ts`` where the held-out span begins (``train_until``): a
        backtest from there (or after ``last_ts`` without it) is out of sample."""
        split, ts = self.split, self.data.ts
        record = {"candles": len(self.data), "train": list(split.train),
                  "val": list(split.val), "gap": split.gap, "rule": split.rule,
                  "after": list(split.after) if split.after is not None else None,
                  "held_out": list(split.held_out) if split.held_out is not None else None,
                  "first_ts": int(ts[0]), "last_ts": int(ts[split.used - 1])}
        if split.held_out is not None:
            record["held_out_first_ts"] = int(ts[split.held_out[0]])
        return record

    def _finish_stopped(self, started: float) -> Finished | Failed:
        try:
            if self._log_batches:
                self._log()
            if self.step > self.start_step:
                self._save("stopped")
            return self._emit_final(Finished(self.run_id, "stopped", self.step, self.epoch,
                                             time.monotonic() - started, self.best_val_loss,
                                             self._last_checkpoint,
                                             self.chosen_by or "total loss"))
        except Exception as exc:  # noqa: BLE001
            return self._fail(exc)

    def _fail(self, exc: Exception) -> Failed:
        tb = "".join(traceback.format_exception(exc))
        log.error("training run %s failed: %s\n%s", self.run_id, exc, tb)
        if isinstance(exc, NonFiniteError):
            event = Failed(self.run_id, str(exc), tb, exc.step, exc.epoch, exc.batch, exc.heads)
        else:
            message = str(exc) if isinstance(exc, WorkstationError) else \
                f"{type(exc).__name__}: {exc}"
            if self._ddp is not None and not isinstance(exc, WorkstationError):
                message = (f"rank {self.world.rank} of {self.world.size} lost the other "
                           f"processes (one failed, hung or was stopped): {message}")
            event = Failed(self.run_id, message, tb, self.step, self.epoch,
                           self.batch if self.model is not None else None)
        if self._history is not None:
            try:
                self._history.append(event)
            except (OSError, WorkstationError) as history_error:  # e.g. the disk is full
                log.error("run %s: the failure could not be recorded in its history: %s",
                          self.run_id, history_error)
        try:
            if self.world.leader:
                self.on_event(event)
        except Exception as report_error:
            raise report_error from exc
        return event

    def _emit(self, event: Event) -> None:
        if not self.world.leader:
            return
        if self._history is not None:
            self._history.append(event)  # recorded before it is reported
        self.on_event(event)

    def _emit_final(self, event: Finished) -> Finished:
        self._emit(event)
        return event
