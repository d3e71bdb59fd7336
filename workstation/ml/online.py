"""Live inference and per-candle training: ``Predictor`` and ``OnlineLearner``.

``Predictor`` holds an inference-only model and turns the newest window of a candle series
into a :class:`Prediction` for the next candle (class probabilities, expected return and its
spread, a ghost candle for the chart). ``workstation predict`` uses it on a checkpoint.

``OnlineLearner`` is the "live inference + per-candle training" loop. On each call with a
series whose newest candle is closed it

1. settles earlier predictions whose outcome is now known: candle direction one candle later,
   trend ``trend_horizon`` candles later (right or wrong, with running accuracies beside the
   majority-class baseline of the same outcomes);
2. if training, takes one optimizer step on the newest sample whose targets have matured (the
   window ending ``trend_horizon`` candles ago) plus a replay batch of recent matured windows;
   every position of a window is supervised, with the trainer's loss;
3. copies the trained weights into its inference model (a separate object: a safe point,
   between steps) and predicts the next candle from the newest window.

Several new closed candles in one call (the caller fell behind) are coalesced: one step, one
prediction from the newest window; the skipped samples stay in the replay range.

One owner: the learner claims its models (``workstation.ml.ownership``), binds them to the
first thread that calls it and refuses calls from any other thread; it refuses to adopt a model
that someone else (a ``Trainer``) holds. A non-finite loss or gradient raises
:class:`OnlineTrainingError` before the weights change, and the learner stays failed.
"""

from __future__ import annotations

import contextlib
import math
from collections import deque
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from ..errors import WorkstationError
from .checkpoints import (
    META_FILE,
    LoadedCheckpoint,
    RunSettings,
    apply_weights,
    config_differences,
    settings_from_meta,
    weight_problems,
)
from .config import TradingTransformerConfig
from .context import reference_has, window_start
from .dataset import DeviceSeries, TrainingData
from .features import FeatureSpec, make_features
from .model import TradingTransformer
from .ownership import claim
from .targets import (
    CANDLE_CLASSES,
    HEADS,
    POSITION_CLASSES,
    REGIME_CLASSES,
    TREND_CLASSES,
    TargetSpec,
    direction,
    flat_bands_at,
)
from .trainer import compute_loss, head_weights

_BPS = 1e-4


class OnlineTrainingError(WorkstationError):
    """Per-candle training cannot go on (a non-finite loss, a broken series)."""


# -- what comes out --------------------------------------------------------------------------
@dataclass(frozen=True)
class GhostCandle:
    """The predicted next candle for the chart: opens at the last close, closes at the
    expected return, high and low one standard deviation beyond open and close."""

    ts: int
    open: float
    high: float
    low: float
    close: float


@dataclass(frozen=True)
class Prediction:
    """A prediction made on the closed candle ``ts`` for the candle ``target_ts`` after it."""

    ts: int
    target_ts: int
    close: float                        # close of candle ts
    candle_probs: tuple[float, ...]     # down, flat, up of the next candle
    trend_probs: tuple[float, ...]      # down, flat, up over the next trend_horizon candles
    trend_horizon: int
    return_bps: float                   # expected log return of the next candle
    return_std_bps: float | None        # its standard deviation (None without uncertainty)
    ghost: GhostCandle
    confidence: float                   # probability of the predicted candle direction
    position_probs: tuple[float, ...]   # flat, long, short: what the trader would hold
    regime_probs: tuple[float, ...]     # uptrend, downtrend, range: what the trader would see
    candle_band_bps: float              # the flat bands the outcomes will be judged by
    trend_band_bps: float

    @property
    def candle_class(self) -> int:
        return int(np.argmax(self.candle_probs))

    @property
    def trend_class(self) -> int:
        return int(np.argmax(self.trend_probs))

    @property
    def candle_label(self) -> str:
        return CANDLE_CLASSES[self.candle_class]

    @property
    def trend_label(self) -> str:
        return TREND_CLASSES[self.trend_class]

    @property
    def position_label(self) -> str:
        """The suggested position (flat / long / short)."""
        return POSITION_CLASSES[int(np.argmax(self.position_probs))]

    @property
    def position_confidence(self) -> float:
        return float(max(self.position_probs))

    @property
    def regime_label(self) -> str:
        return REGIME_CLASSES[int(np.argmax(self.regime_probs))]

    def to_dict(self) -> dict:
        return dict(asdict(self), candle=self.candle_label, trend=self.trend_label,
                    position=self.position_label, regime=self.regime_label)


@dataclass(frozen=True)
class Outcome:
    """A prediction settled: ``head`` is ``candle`` or ``trend``; ``return_bps`` is the log
    return that decided it (from the close of ``ts`` to the close of ``matured_ts``)."""

    head: str
    ts: int
    matured_ts: int
    predicted: int
    actual: int
    probability: float  # what the prediction gave the class it chose
    return_bps: float

    @property
    def correct(self) -> bool:
        return self.predicted == self.actual


@dataclass(frozen=True)
class TrainReport:
    """One per-candle training step, measured before the update (like a training batch)."""

    loss: float
    head_losses: dict[str, float | None]
    candle_acc: float | None
    trend_acc: float | None
    windows: int       # the new sample and the replayed ones
    positions: int     # supervised positions (candle targets) in them
    grad_norm: float
    sample_ts: int     # the candle the newest matured sample ends on


@dataclass(frozen=True)
class RunningAverages:
    """Means over the last ``window`` steps and settled outcomes; None where there is none."""

    window: int
    steps: int
    train_loss: float | None
    train_candle_acc: float | None
    train_trend_acc: float | None
    live_candle_acc: float | None
    live_candle_baseline: float | None
    live_candle_n: int
    live_trend_acc: float | None
    live_trend_baseline: float | None
    live_trend_n: int


@dataclass(frozen=True)
class OnlineStep:
    """What one call of ``OnlineLearner.on_closed_candle`` did."""

    ts: int                          # the newest closed candle
    new_candles: int                 # closed candles since the previous call
    coalesced: int                   # of those, how many got no prediction or step of their own
    prediction: Prediction
    outcomes: tuple[Outcome, ...]
    train: TrainReport | None        # None: no step (not training, or nothing matured yet)
    averages: RunningAverages
    reference_present: bool | None = None  # the reference candle at ts was read (False:
    # missing, masked); None: the model reads no reference asset


# -- inference -------------------------------------------------------------------------------
class Predictor:
    """An inference-only ``TradingTransformer`` and the settings its inputs are made with."""

    def __init__(self, config: TradingTransformerConfig, feature_spec: FeatureSpec,
                 target_spec: TargetSpec, device: torch.device | str = "cpu"):
        self.config = config
        self.feature_spec = feature_spec
        self.target_spec = target_spec
        self.device = torch.device(device)
        self.model = TradingTransformer(config).to(self.device).eval()
        self.model.requires_grad_(False)

    @classmethod
    def from_checkpoint(cls, loaded: LoadedCheckpoint, device: torch.device | str = "cpu"
                        ) -> Predictor:
        """A predictor with the model, features and targets a checkpoint was trained with."""
        config, features, targets = settings_of(loaded)
        predictor = cls(config, features, targets, device)
        apply_weights(predictor.model, loaded)
        return predictor

    def predict(self, candles, n_closed: int | None = None, reference=None,
                levels=None) -> Prediction:
        """The prediction for the candle after the newest closed one (or after row
        ``n_closed - 1``), from a window of at most ``seq_len`` candles; ``reference``: the
        reference asset's candles when the features use one (only those up to that candle's
        open time count); ``levels``: the market's drawn levels when they read them."""
        n = candles.n_closed if n_closed is None else int(n_closed)
        if n < 1:
            raise WorkstationError("no closed candle to predict from")
        seq_len = self.config.seq_len
        start = window_start(candles.ts, n, self.feature_spec, seq_len)
        feats = make_features(candles.slice(start, n), self.feature_spec,
                              reference, levels)[-seq_len:]
        x = torch.from_numpy(np.ascontiguousarray(feats))[None].to(self.device)
        bf16 = torch.autocast("cuda", dtype=torch.bfloat16) if self.device.type == "cuda" \
            else contextlib.nullcontext()  # bf16 on CUDA, as training; fp32 on the CPU
        with torch.no_grad(), bf16:
            out = self.model(x)
            candle = torch.softmax(out.candle_logits[0, -1], -1).double().cpu().numpy()
            trend = torch.softmax(out.trend_logits[0, -1], -1).double().cpu().numpy()
            position = torch.softmax(out.position_logits[0, -1], -1).double().cpu().numpy()
            regime = torch.softmax(out.regime_logits[0, -1], -1).double().cpu().numpy()
            mean = float(out.return_mean[0, -1])
            std = (math.exp(0.5 * float(out.return_logvar[0, -1]))
                   if out.return_logvar is not None else None)
        ts = int(candles.ts[n - 1])
        close = float(candles.close[n - 1])
        bands = flat_bands_at(self.target_spec, candles.close, n - 1)
        next_close = close * math.exp(mean * _BPS)
        spread = math.exp((std or 0.0) * _BPS)
        target_ts = ts + candles.timeframe.ms
        ghost = GhostCandle(target_ts, close, max(close, next_close) * spread,
                            min(close, next_close) / spread, next_close)
        return Prediction(ts=ts, target_ts=target_ts, close=close,
                          candle_probs=tuple(float(p) for p in candle),
                          trend_probs=tuple(float(p) for p in trend),
                          trend_horizon=self.target_spec.horizon, return_bps=mean,
                          return_std_bps=std, ghost=ghost, confidence=float(candle.max()),
                          position_probs=tuple(float(p) for p in position),
                          regime_probs=tuple(float(p) for p in regime),
                          candle_band_bps=bands[0], trend_band_bps=bands[1])


def settings_of(loaded: LoadedCheckpoint) -> RunSettings:
    """Model config, feature and target settings recorded in a loaded checkpoint."""
    return settings_from_meta(loaded.meta, loaded.path / META_FILE)


# -- the online learner ----------------------------------------------------------------------
@dataclass
class _Pending:
    prediction: Prediction
    candle_done: bool = False


@dataclass
class _Window:
    """Rolling values of the last ``size`` entries."""

    size: int
    values: deque = field(default_factory=deque)

    def add(self, value) -> None:
        self.values.append(value)
        if len(self.values) > self.size:
            self.values.popleft()

    def mean(self, key=lambda v: v) -> float | None:
        picked = [key(v) for v in self.values]
        picked = [v for v in picked if v is not None]
        return float(np.mean(picked)) if picked else None


class OnlineLearner:
    """See the module docstring.

    ``weights`` is a ``LoadedCheckpoint`` (its model, feature and target settings must match
    the ones given; ``config``/``target_spec``/``feature_spec`` default to the checkpoint's)
    or a state dict; ``model`` instead adopts a ``TradingTransformer`` object that nobody
    else holds. With neither, the model starts from a fresh initialisation.
    """

    def __init__(self, config: TradingTransformerConfig | None = None,
                 target_spec: TargetSpec | None = None, *,
                 feature_spec: FeatureSpec | None = None,
                 weights: LoadedCheckpoint | dict[str, torch.Tensor] | None = None,
                 model: TradingTransformer | None = None,
                 device: torch.device | str = "cpu", lr: float = 1e-4,
                 weight_decay: float = 0.01, grad_clip: float = 1.0, replay_size: int = 15,
                 replay_window: int = 512, train: bool = True, average_window: int = 100,
                 seed: int = 0):
        if weights is not None and model is not None:
            raise WorkstationError("give the online learner weights or a model, not both")
        if isinstance(weights, LoadedCheckpoint):
            saved = settings_of(weights)
            config = config or saved[0]
            feature_spec = feature_spec or saved[1]
            target_spec = target_spec or saved[2]
            self._check_fits(weights, config, feature_spec, target_spec, saved)
        if model is not None:
            config = config or model.config
            if model.config != config:
                raise WorkstationError("the model to adopt has another config than the one "
                                       "given: " + "; ".join(config_differences(
                                           model.config.to_dict(), config.to_dict(), ())))
        if config is None:
            raise WorkstationError("the online learner needs a model config, a checkpoint or "
                                   "a model")
        if not (lr > 0 and math.isfinite(lr)) or replay_size < 0 or replay_window < 1:
            raise WorkstationError(f"bad online settings: lr={lr!r}, replay_size={replay_size!r},"
                                   f" replay_window={replay_window!r}")
        self.config = config
        self.feature_spec = feature_spec or FeatureSpec()
        self.target_spec = target_spec or TargetSpec()
        if config.n_features != self.feature_spec.n_features:
            raise WorkstationError(f"model takes {config.n_features} features, the feature "
                                   f"settings make {self.feature_spec.n_features}")
        self.device = torch.device(device)
        self.training = bool(train)
        self.replay_size, self.replay_window = int(replay_size), int(replay_window)
        self.grad_clip = float(grad_clip)
        self._rng = np.random.default_rng(seed)

        if model is not None:
            self._claim = claim(model, "OnlineLearner")  # fails while a Trainer holds it
            self.model = model.to(self.device)
        else:
            torch.manual_seed(seed)
            self.model = TradingTransformer(config).to(self.device)
            if isinstance(weights, LoadedCheckpoint):
                apply_weights(self.model, weights)
            elif weights is not None:
                problems = weight_problems(self.model, weights)
                if problems:
                    raise WorkstationError("the weights do not fit the online learner's model: "
                                           + ", ".join(problems))
                with torch.no_grad():
                    self.model.load_state_dict(weights)
            self._claim = claim(self.model, "OnlineLearner")
        self.predictor = Predictor(config, self.feature_spec, self.target_spec, self.device)
        self._predictor_claim = claim(self.predictor.model, "OnlineLearner (inference copy)")
        self._refresh_inference()
        self._fresh = weights is None and model is None
        if self.training:
            self.model.train()
            self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr,
                                               weight_decay=weight_decay)
            self._head_weights = head_weights(self.target_spec, self.device)
        else:
            self.model.eval()
            self.optimizer = None

        self.steps = 0
        self.failed: str | None = None
        self._last_ts: int | None = None
        self._pending: dict[int, _Pending] = {}
        self._prediction: Prediction | None = None
        self._train_log = _Window(average_window)
        self._candle_log = _Window(average_window)
        self._trend_log = _Window(average_window)

    @staticmethod
    def _check_fits(loaded, config, feature_spec, target_spec, saved) -> None:
        from .checkpoints import META_FILE, CheckpointError

        problems = config_differences(saved[0].to_dict(), config.to_dict())
        if feature_spec != saved[1]:
            problems.append(f"features {saved[1].to_dict()} -> {feature_spec.to_dict()}")
        if target_spec != saved[2]:
            problems.append(f"targets {saved[2].to_dict()} -> {target_spec.to_dict()}")
        if problems:
            raise CheckpointError(loaded.path / META_FILE,
                                  "does not fit the online learner: " + "; ".join(problems))

    # -- public ------------------------------------------------------------------------------
    def on_closed_candle(self, candles, reference=None, levels=None) -> OnlineStep:
        """Settle, train and predict for the newest closed candle of ``candles`` (the whole
        series so far; a forming last candle is ignored). ``reference``: the reference asset's
        candles when the features read one (its closed candles up to each row's time count;
        a missing one is masked); ``levels``: the market's drawn levels when they read them
        (each row counts those known by its close)."""
        self._claim.check()
        self._predictor_claim.check()
        if self.failed:
            raise OnlineTrainingError(f"the online learner failed earlier: {self.failed}")
        spec = self.feature_spec
        if spec.reference and reference is None:
            raise WorkstationError(f"this model also reads {spec.reference}: its candles are "
                                   f"needed with the series'")
        if not spec.reference:
            reference = None
        n = candles.n_closed
        if n < 1:
            raise WorkstationError("the online learner needs at least one closed candle")
        ts = candles.ts[:n]
        newest = int(ts[-1])
        if self._last_ts is None:
            new = 1
        elif newest == self._last_ts and self._prediction is not None:
            return OnlineStep(newest, 0, 0, self._prediction, (), None, self.averages())
        else:
            at = int(np.searchsorted(ts, self._last_ts))
            if newest < self._last_ts or at >= n or int(ts[at]) != self._last_ts:
                raise OnlineTrainingError(
                    f"the series no longer continues from candle {self._last_ts} (newest is "
                    f"{newest}); call reset() when switching series")
            new = n - 1 - at
        outcomes = self._settle(candles, n)
        report = None
        if self.training:
            try:
                report = self._train_step(candles, n, reference, levels)
            except Exception as exc:
                self.failed = str(exc) if isinstance(exc, WorkstationError) else \
                    f"{type(exc).__name__}: {exc}"
                raise
        prediction = self.predictor.predict(candles, n, reference, levels)
        self._pending[prediction.ts] = _Pending(prediction)
        self._prediction = prediction
        self._last_ts = newest
        present = None if reference is None else reference_has(reference, newest)
        return OnlineStep(newest, new, new - 1, prediction, tuple(outcomes), report,
                          self.averages(), present)

    def reset(self) -> None:
        """Forget the series (pending predictions, position); keep weights and averages. A
        failed learner stays failed: make a new one."""
        self._claim.check()
        self._pending.clear()
        self._last_ts = None
        self._prediction = None

    def close(self) -> None:
        """Give up the models (a ``Trainer`` may then claim an adopted one); the learner can
        no longer be used."""
        self._claim.release()
        self._predictor_claim.release()

    def averages(self) -> RunningAverages:
        def live(log: _Window):
            if not log.values:
                return None, None, 0
            actual = np.bincount([a for _, a in log.values], minlength=3)
            acc = float(np.mean([c for c, _ in log.values]))
            return acc, float(actual.max() / actual.sum()), len(log.values)

        candle, trend = live(self._candle_log), live(self._trend_log)
        return RunningAverages(
            window=self._train_log.size, steps=self.steps,
            train_loss=self._train_log.mean(lambda r: r.loss),
            train_candle_acc=self._train_log.mean(lambda r: r.candle_acc),
            train_trend_acc=self._train_log.mean(lambda r: r.trend_acc),
            live_candle_acc=candle[0], live_candle_baseline=candle[1], live_candle_n=candle[2],
            live_trend_acc=trend[0], live_trend_baseline=trend[1], live_trend_n=trend[2])

    def save(self, store, provenance: str, run_id: str | None = None):
        """Save the online model as a checkpoint run of ``store`` (a new run unless
        ``run_id``); returns the snapshot folder."""
        self._claim.check()
        averages = asdict(self.averages())
        meta = {"config": self.config.to_dict(), "features": self.feature_spec.to_dict(),
                "targets": self.target_spec.to_dict(), "provenance": str(provenance),
                "metrics": {"online": averages}, "step": self.steps, "epoch": None,
                "reason": "online"}
        return store.save(run_id or store.new_run_id(), self.model, self.optimizer, None, meta)

    # -- steps -------------------------------------------------------------------------------
    def _settle(self, candles, n: int) -> list[Outcome]:
        """Outcomes of pending predictions whose next candle / horizon has closed."""
        ts, close = candles.ts[:n], candles.close[:n]
        horizon = self.target_spec.horizon
        out: list[Outcome] = []
        for made_at in sorted(self._pending):
            pending = self._pending[made_at]
            i = int(np.searchsorted(ts, made_at))
            if i >= n or int(ts[i]) != made_at:
                del self._pending[made_at]  # the series lost that candle: nothing to settle
                continue
            p = pending.prediction
            if not pending.candle_done and i + 1 < n:
                out.append(self._outcome("candle", p, i, i + 1, ts, close, p.candle_band_bps,
                                         p.candle_class, p.candle_probs))
                pending.candle_done = True
            if i + horizon < n:
                out.append(self._outcome("trend", p, i, i + horizon, ts, close,
                                         p.trend_band_bps, p.trend_class, p.trend_probs))
                del self._pending[made_at]
        for o in out:
            (self._candle_log if o.head == "candle" else self._trend_log).add(
                (o.correct, o.actual))
        return out

    @staticmethod
    def _outcome(head, p, i, j, ts, close, flat_bps, predicted, probs) -> Outcome:
        bps = math.log(close[j] / close[i]) / _BPS
        actual = int(direction(np.array([bps]), flat_bps)[0])
        return Outcome(head, p.ts, int(ts[j]), predicted, actual, float(probs[predicted]), bps)

    def _train_step(self, candles, n: int, reference=None, levels=None) -> TrainReport | None:
        """One step on the newest matured window plus replayed ones, or None if none."""
        horizon, seq_len = self.target_spec.horizon, self.config.seq_len
        newest_sample = n - 1 - horizon  # its targets look at candles up to n - 1
        rows = seq_len + self.replay_window + horizon + 1
        start = window_start(candles.ts, n, self.feature_spec, rows)
        valid = n - rows if start > 0 else 0  # rows whose features equal full history's
        if newest_sample < valid:
            return None
        length = min(seq_len, newest_sample - valid + 1)
        first = max(valid + length - 1, newest_sample - self.replay_window)
        pool = np.arange(first, newest_sample)
        replay = self._rng.choice(pool, size=min(self.replay_size, len(pool)), replace=False)
        ends = np.concatenate(([newest_sample], np.sort(replay))) - start

        tail = candles.slice(start, n)
        data = TrainingData.from_candles(tail, feature_spec=self.feature_spec,
                                         target_spec=self.target_spec, reference=reference,
                                         levels=levels)
        if self._fresh:
            self._init_return_scale(data)
        series = DeviceSeries(data, self.device)
        starts = torch.from_numpy(ends - length + 1).to(self.device)
        batch = series.gather(starts, length)

        self.model.train()
        autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if self.device.type == "cuda"
                    else contextlib.nullcontext())
        with autocast:
            out = self.model(batch.x)
        terms = compute_loss(out, batch, self._head_weights)
        heads = terms.heads.detach().cpu().tolist()
        loss = float(terms.total.detach())
        sample_ts = int(candles.ts[newest_sample])
        if not math.isfinite(loss):
            bad = [h for h, v in zip(HEADS, heads) if not math.isfinite(v)]
            self.optimizer.zero_grad(set_to_none=True)
            raise OnlineTrainingError(f"per-candle training loss is {loss} (heads: "
                                      f"{', '.join(bad) or 'total'}) on the window ending at "
                                      f"candle {sample_ts}; the model was not updated")
        terms.total.backward()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(),
                                                         self.grad_clip))
        if not math.isfinite(grad_norm):
            self.optimizer.zero_grad(set_to_none=True)
            raise OnlineTrainingError(f"per-candle training gradient is {grad_norm} on the "
                                      f"window ending at candle {sample_ts}; the model was "
                                      f"not updated")
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.steps += 1
        self._refresh_inference()

        counts = terms.counts.cpu().tolist()
        correct = terms.correct.cpu().tolist()
        report = TrainReport(
            loss=loss,
            head_losses={h: (v if counts[i] else None) for i, (h, v) in enumerate(zip(HEADS,
                                                                                   heads))},
            candle_acc=correct[0] / counts[0] if counts[0] else None,
            trend_acc=correct[1] / counts[1] if counts[1] else None,
            windows=len(ends), positions=int(counts[0]), grad_norm=grad_norm,
            sample_ts=sample_ts)
        self._train_log.add(report)
        return report

    def _init_return_scale(self, data: TrainingData) -> None:
        """A fresh model starts its return head at the scale of the returns it sees."""
        returns = data.targets.next_return_bps
        returns = returns[np.isfinite(returns)]
        if returns.size > 1:
            self.model.init_return_scale(float(np.var(returns)))
            self._fresh = False

    def _refresh_inference(self) -> None:
        """Copy the trained weights into the inference model (called between steps)."""
        with torch.no_grad():
            self.predictor.model.load_state_dict(self.model.state_dict())
