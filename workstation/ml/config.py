"""Model and training settings as plain values: no torch here, so that the window and the
command line can build and check them (and reject a bad one) before torch is loaded.

``TradingTransformerConfig`` and its ``PRESETS`` (tiny, small, base, large), ``TrainConfig``,
``EvaluationConfig`` (walk-forward seeds, embargo cap, primary head) and ``CPU_THREADS``,
the intra-op thread count training uses on the CPU.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, replace

from ..errors import WorkstationError
from .candle_columns import FEATURE_NAMES
from .epoch_choice import check_choice
from .settings import settings_from_dict
from .targets import CLASSES
from .trend_columns import TREND_WINDOWS, trend_names

DEFAULT_FEATURES = len(FEATURE_NAMES + trend_names(TREND_WINDOWS))  # the default inputs' width

# Training leaves a core to the GUI: 16 intra-op threads pushed GUI jitter p99 to 4.5 ms, two
# gave 0.26 ms; on a 2-core machine one thread is also 2-6x faster under load than two.
CPU_THREADS = max(1, min(2, (os.cpu_count() or 2) - 1))
MAX_PARAMETERS = 20_000_000_000  # 80 GB of fp32 weights: far above any preset (large: 0.1 B)
MAX_SEQ_LEN = 65_536


@dataclass(frozen=True)
class TradingTransformerConfig:
    d_model: int = 256
    n_heads: int = 8
    n_layers: int = 4
    d_ff: int = 1024
    seq_len: int = 200
    n_features: int = DEFAULT_FEATURES
    dropout: float = 0.1
    use_gradient_checkpointing: bool = False
    use_uncertainty_estimation: bool = True
    n_candle_classes: int = 3
    n_trend_classes: int = 3
    n_position_classes: int = len(CLASSES["position"])
    n_regime_classes: int = len(CLASSES["regime"])
    linear_lags: int = 0  # candles a linear readout of the inputs sees (0: none; ``model``)

    def __post_init__(self) -> None:
        for name in ("d_model", "n_heads", "n_layers", "d_ff", "seq_len", "n_features",
                     "n_candle_classes", "n_trend_classes", "n_position_classes",
                     "n_regime_classes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise WorkstationError(f"model setting {name} must be a positive integer, "
                                       f"got {value!r}")
        if self.d_model % self.n_heads:
            raise WorkstationError(f"d_model {self.d_model} is not divisible by n_heads "
                                   f"{self.n_heads}")
        if not isinstance(self.linear_lags, int) or not 0 <= self.linear_lags <= self.seq_len:
            raise WorkstationError(f"model setting linear_lags must be a candle count from 0 to "
                                   f"seq_len ({self.seq_len}), got {self.linear_lags!r}")
        if not (isinstance(self.dropout, (int, float)) and 0.0 <= self.dropout < 1.0):
            raise WorkstationError(f"dropout must be in [0, 1), got {self.dropout!r}")
        if self.seq_len > MAX_SEQ_LEN:
            raise WorkstationError(f"model setting seq_len {self.seq_len} is over the most this "
                                   f"Workstation builds ({MAX_SEQ_LEN})")
        if self.parameters_estimate() > MAX_PARAMETERS:
            raise WorkstationError(
                f"a model of d_model {self.d_model}, d_ff {self.d_ff} and {self.n_layers} layers "
                f"has about {self.parameters_estimate() / 1e9:.1f} billion parameters, over the "
                f"{MAX_PARAMETERS / 1e9:.0f} billion this Workstation builds")

    def parameters_estimate(self) -> int:
        """Weights of the model this config builds, roughly (bounds a config before torch
        allocates anything)."""
        per_layer = 4 * self.d_model * self.d_model + 2 * self.d_model * self.d_ff
        return self.n_layers * per_layer + self.seq_len * self.d_model

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TradingTransformerConfig:
        return settings_from_dict(cls, data, "model settings")


# Every preset reads its inputs' last 60 candles linearly too (``model``), as many as the lagged
# logistic baseline may choose: the model holds the linear model it is compared with.
LINEAR_LAGS = 60
# ``tiny`` runs without dropout: on CPU, dropout in attention forces the unfused math kernel
# and costs 3.3x the step time (measured, 2 cores), and a model this small does not overfit.
PRESETS: dict[str, TradingTransformerConfig] = {
    "tiny": TradingTransformerConfig(d_model=32, n_heads=2, n_layers=2, d_ff=64, dropout=0.0,
                                     linear_lags=LINEAR_LAGS),
    "small": TradingTransformerConfig(d_model=128, n_heads=4, n_layers=4, d_ff=512,
                                      linear_lags=LINEAR_LAGS),
    "base": TradingTransformerConfig(d_model=512, n_heads=8, n_layers=6, d_ff=2048,
                                     linear_lags=LINEAR_LAGS),
    "large": TradingTransformerConfig(d_model=1024, n_heads=16, n_layers=8, d_ff=4096,
                                      linear_lags=LINEAR_LAGS),
}


# The peak learning rate a run of each preset takes unless told (``TrainConfig.lr`` is the
# fallback): tiny learns the positive controls' rules at 3e-3 and barely moves at 3e-4
# (docs/evaluation.md, "What holds the position head back"); larger models want less.
PRESET_LR = {"tiny": 3e-3, "small": 1e-3, "base": 3e-4, "large": 3e-4}


def preset_config(name: str, **overrides) -> TradingTransformerConfig:
    """A preset with some fields replaced (``None`` values are ignored); a shorter ``seq_len``
    also shortens the preset's ``linear_lags`` to it."""
    if name not in PRESETS:
        raise WorkstationError(f"unknown model preset {name!r}; use one of {', '.join(PRESETS)}")
    given = {k: v for k, v in overrides.items() if v is not None}
    preset = PRESETS[name]
    if "linear_lags" not in given and isinstance(given.get("seq_len"), int):
        given["linear_lags"] = min(preset.linear_lags, max(given["seq_len"], 0))
    return replace(preset, **given)


COMPILE_CHOICES = ("auto", "on", "off")


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 10
    batch_size: int = 64
    lr: float = 3e-4
    min_lr_ratio: float = 0.1       # cosine decays to lr * min_lr_ratio
    warmup_steps: int = 100
    weight_decay: float = 0.01
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0
    val_fraction: float = 0.1
    window_stride: int | None = None  # None: ``dataset.auto_stride`` for batches_per_epoch
    batches_per_epoch: int = 50  # what the automatic stride aims at (at least, if it can)
    log_every: int = 20
    seed: int = 0
    cpu_threads: int = CPU_THREADS
    mixed_precision: bool = True  # bf16 autocast on CUDA (the CPU always trains in fp32)
    compile: str = "auto"  # torch.compile the training forward: on, off, or auto (on CUDA)
    compile_backend: str = "inductor"  # torch.compile's backend ("aot_eager": no compiler)
    train_until: int | None = None  # open time (ms) of the last candle used; later: held out
    choose_epoch_by: str = "auto"  # the validation loss the best epoch has (``epoch_choice``)

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "log_every", "batches_per_epoch"):
            if int(getattr(self, name)) < 1:
                raise WorkstationError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise WorkstationError(f"learning rate must be a positive number, got {self.lr!r}")
        if self.warmup_steps < 0 or not self.grad_clip > 0:
            raise WorkstationError("warmup_steps must be >= 0 and grad_clip > 0")
        check_choice(self.choose_epoch_by)
        if self.compile not in COMPILE_CHOICES:
            raise WorkstationError(f"compile must be one of {', '.join(COMPILE_CHOICES)}, got "
                                   f"{self.compile!r}")

    def compiles_on(self, device_type: str) -> bool:
        """Whether the training forward is compiled on a device of ``device_type``."""
        return self.compile == "on" or (self.compile == "auto" and device_type == "cuda")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TrainConfig:
        return settings_from_dict(cls, data, "training settings")


DEFAULT_SEEDS = 3            # models trained per walk-forward fold (seed, seed + 1, ...)
DEFAULT_MAX_EMBARGO = 2_000  # candles: the longest mark the embargo follows


@dataclass(frozen=True)
class EvaluationConfig:
    """Settings of a walk-forward evaluation beyond the training's: ``seeds`` models per fold,
    the cap ``max_embargo`` (candles) on how far a mark may push the embargo, and the
    ``primary`` head whose verdict is not adjusted for multiplicity (None: position when
    there are marks, else candle)."""

    seeds: int = DEFAULT_SEEDS
    max_embargo: int = DEFAULT_MAX_EMBARGO
    primary: str | None = None

    def __post_init__(self) -> None:
        if self.seeds < 1:
            raise WorkstationError(f"--seeds must be at least 1, got {self.seeds}")
        if self.max_embargo < 0:
            raise WorkstationError(f"--max-embargo must be at least 0, got {self.max_embargo}")
        if self.primary is not None and self.primary not in CLASSES:
            raise WorkstationError(f"--primary must be one of {', '.join(CLASSES)}, got "
                                   f"{self.primary!r}")
