"""Training data: features and targets of one series, split by time, held on the device.

Every position of a window is a training example (the model is causal). Windows start every
``stride`` candles, at a random phase each epoch; by default (``auto_stride``) the stride is the
largest, up to ``seq_len`` (no overlap), that gives an epoch ``TrainConfig.batches_per_epoch``
batches, so a short series trains on overlapping windows rather than on a handful of steps.
A batch is one gather of ``starts[:, None] + arange(seq_len)`` from tensors already on the
device: no per-sample Python and no host-to-device copy per step. On the CPU the tensors share
the arrays' memory; a long series' features are memory-mapped from a scratch file
(``feature_store``), so they take memory only for the pages the batches read.

Where the training and validation spans lie is ``split``'s rule; a sampler draws windows from
one span or several (training before and after a validation span carved from the marks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..errors import WorkstationError
from .feature_store import series_features
from .features import FeatureSpec
from .targets import Targets, TargetSpec, make_targets

_CHECK_ROWS = 1 << 18  # rows the finiteness check reads at once


@dataclass
class TrainingData:
    """Features ``float32 [N, feature_spec.n_features]`` and targets of one candle series."""

    features: np.ndarray
    targets: Targets
    feature_spec: FeatureSpec
    target_spec: TargetSpec
    ts: np.ndarray  # open times (int64 ms): the days scores are bootstrapped by

    def __post_init__(self) -> None:
        width = self.feature_spec.n_features
        if self.features.ndim != 2 or self.features.shape[1] != width:
            raise WorkstationError(f"features have shape {self.features.shape}, "
                                   f"expected (N, {width})")
        if len(self.targets) != len(self.features) or len(self.ts) != len(self.features):
            raise WorkstationError(f"{len(self.targets)} targets and {len(self.ts)} times "
                                   f"for {len(self.features)} feature rows")

    def __len__(self) -> int:
        return len(self.features)

    @classmethod
    def from_candles(cls, candles, *, trader=None, feature_spec: FeatureSpec | None = None,
                     target_spec: TargetSpec | None = None, reference=None,
                     levels=None) -> TrainingData:
        """Features and targets of ``candles``; ``trader`` (position and regime labels per
        candle, ``annotations.targets.TraderTargets``) from annotations, or None for masked
        trader heads; ``reference``: the reference asset's candles, if the features use one;
        ``levels``: the market's drawn levels, if they read them."""
        feature_spec = feature_spec or FeatureSpec()
        target_spec = target_spec or TargetSpec()
        return cls(series_features(candles, feature_spec, reference, levels),
                   make_targets(candles, target_spec, trader), feature_spec, target_spec,
                   np.asarray(candles.ts, dtype=np.int64))

    def first_nonfinite_row(self) -> int | None:
        """The first row with a value that is not finite (None: every row is), read a chunk
        at a time (features may be memory-mapped, ``feature_store``)."""
        for start in range(0, len(self.features), _CHECK_ROWS):
            bad = np.flatnonzero(~np.isfinite(self.features[start:start + _CHECK_ROWS])
                                 .all(axis=1))
            if bad.size:
                return start + int(bad[0])
        return None


@dataclass
class WindowBatch:
    """One batch of windows on the device: ``x [B, T, F]``, class targets ``[B, T]`` int64
    (-1 masked), ``ret`` ``[B, T]`` float (0 where ``ret_mask`` is False)."""

    x: torch.Tensor
    candle: torch.Tensor
    trend: torch.Tensor
    position: torch.Tensor
    regime: torch.Tensor
    ret: torch.Tensor
    ret_mask: torch.Tensor

    @property
    def size(self) -> int:
        return self.x.shape[0]


class DeviceSeries:
    """A series' features and targets as tensors on ``device``; batches are gathered."""

    def __init__(self, data: TrainingData, device: torch.device):
        self.device = torch.device(device)
        t = data.targets
        ret_mask = np.isnan(t.next_return_bps)
        self.features = torch.from_numpy(np.ascontiguousarray(data.features)).to(self.device)
        self.candle = torch.from_numpy(t.candle).to(self.device)
        self.trend = torch.from_numpy(t.trend).to(self.device)
        self.position = torch.from_numpy(t.position).to(self.device)
        self.regime = torch.from_numpy(t.regime).to(self.device)
        self.ret = torch.from_numpy(np.where(ret_mask, 0.0, t.next_return_bps)
                                    .astype(np.float32)).to(self.device)
        self.ret_mask = torch.from_numpy(~ret_mask).to(self.device)

    def __len__(self) -> int:
        return self.features.shape[0]

    def gather(self, starts: torch.Tensor, seq_len: int) -> WindowBatch:
        """Windows ``[s, s + seq_len)`` for each start ``s`` (a device tensor)."""
        idx = starts[:, None] + torch.arange(seq_len, device=self.device)
        return WindowBatch(self.features[idx], self.candle[idx], self.trend[idx],
                           self.position[idx], self.regime[idx], self.ret[idx],
                           self.ret_mask[idx])


def auto_stride(spans: tuple[tuple[int, int], ...], seq_len: int, windows: int) -> int:
    """The largest stride, at most ``seq_len`` (windows that do not overlap), that gives at
    least ``windows`` windows over ``spans``, or 1 where even that gives fewer: a series of
    any length then trains for about the same number of steps an epoch."""
    room = sum(max(b - a - seq_len + 1, 0) for a, b in spans)
    return max(1, min(int(seq_len), room // max(int(windows), 1)))


class WindowSampler:
    """Window starts inside ``[start, stop)`` (or inside each of ``spans``): every ``stride``
    candles from a phase that is random per epoch and span (training) or 0 (validation).
    Every epoch has the same number of windows, and an epoch's order depends only on
    ``(seed, epoch)``, so a resumed run sees the same batches."""

    def __init__(self, start: int, stop: int, seq_len: int, stride: int | None = None, *,
                 spans: tuple[tuple[int, int], ...] = ()):
        self.seq_len = int(seq_len)
        self.stride = int(stride or seq_len)
        if self.stride < 1:
            raise WorkstationError(f"window stride must be >= 1, got {self.stride}")
        self.spans = tuple((int(a), int(b)) for a, b in (spans or ((start, stop),)))
        self.phases, counts = [], []
        for a, b in self.spans:
            room = b - a - self.seq_len  # last start offset that fits
            if room < 0:
                raise WorkstationError(f"{b - a} candles hold no window of {self.seq_len}")
            self.phases.append(min(self.stride, room + 1))
            counts.append((room - (self.phases[-1] - 1)) // self.stride + 1)
        self.counts = tuple(counts)
        self.n_windows = sum(counts)

    @classmethod
    def over(cls, spans: tuple[tuple[int, int], ...], seq_len: int,
             stride: int | None = None) -> WindowSampler:
        """Windows drawn from every span of ``spans``."""
        return cls(*spans[0], seq_len, stride, spans=spans)

    def starts(self, epoch: int = 0, *, seed: int = 0, shuffle: bool = True) -> torch.Tensor:
        """CPU int64 tensor of window starts for ``epoch`` (shuffled when ``shuffle``)."""
        g = torch.Generator().manual_seed(int(seed) * 1_000_003 + int(epoch))
        parts = []
        for (a, _), phases, count in zip(self.spans, self.phases, self.counts, strict=True):
            phase = int(torch.randint(phases, (1,), generator=g)) if shuffle else 0
            parts.append(torch.arange(a + phase, a + phase + count * self.stride, self.stride))
        out = parts[0] if len(parts) == 1 else torch.cat(parts)
        return out[torch.randperm(len(out), generator=g)] if shuffle else out
