"""``TradingTransformer``: a pre-LayerNorm causal transformer over per-candle features.

Every position ``t`` of a window predicts, from candles ``<= t`` only: the next candle's
direction, the trend over the next H candles, the position the trader would hold and the
regime the trader would see at ``t``, and the mean and log-variance of the next log return
(in basis points).

Built so that gradient checkpointing is exact: each block is a pure function of its input
(attention masking is ``is_causal=True`` inside ``F.scaled_dot_product_attention``; no mask or
other tensor is cached on a module between calls), nothing writes in place into a tensor
autograd saved, and blocks are checkpointed with ``use_reentrant=False,
preserve_rng_state=True`` so that dropout draws the same masks when recomputed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from .config import TradingTransformerConfig

LOGVAR_MIN, LOGVAR_MAX = -12.0, 16.0  # bps^2: from 0.0025 bps to 55 % standard deviation


@dataclass
class ModelOutput:
    """Per-position predictions; ``return_logvar`` is None without uncertainty estimation."""

    candle_logits: torch.Tensor   # [B, T, n_candle_classes]
    trend_logits: torch.Tensor    # [B, T, n_trend_classes]
    position_logits: torch.Tensor  # [B, T, n_position_classes]: flat, long, short
    regime_logits: torch.Tensor   # [B, T, n_regime_classes]: uptrend, downtrend, range
    return_mean: torch.Tensor     # [B, T], bps of log return
    return_logvar: torch.Tensor | None  # [B, T], log of the variance in bps^2


class CausalSelfAttention(nn.Module):
    def __init__(self, config: TradingTransformerConfig):
        super().__init__()
        self.n_heads = config.n_heads
        self.dropout = config.dropout
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model)
        self.proj = nn.Linear(config.d_model, config.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, d // self.n_heads).unbind(2)
        y = self.attend(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        return self.proj(y.transpose(1, 2).reshape(b, t, d))

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Causal attention of ``[B, heads, T, head_dim]`` tensors."""
        return F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0)


class Block(nn.Module):
    """``x + attn(ln(x))`` then ``x + mlp(ln(x))``; a pure function of ``x``."""

    def __init__(self, config: TradingTransformerConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.d_model)
        self.attn = CausalSelfAttention(config)
        self.ln2 = nn.LayerNorm(config.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(config.d_model, config.d_ff),
            nn.GELU(),
            nn.Linear(config.d_ff, config.d_model),
        )
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.drop(self.attn(self.ln1(x)))
        return x + self.drop(self.mlp(self.ln2(x)))


class TradingTransformer(nn.Module):
    def __init__(self, config: TradingTransformerConfig | None = None):
        super().__init__()
        self.config = config = config or TradingTransformerConfig()
        self.embed = nn.Linear(config.n_features, config.d_model)
        self.pos = nn.Parameter(torch.zeros(config.seq_len, config.d_model))
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.ln_f = nn.LayerNorm(config.d_model)
        self.candle_head = nn.Linear(config.d_model, config.n_candle_classes)
        self.trend_head = nn.Linear(config.d_model, config.n_trend_classes)
        self.position_head = nn.Linear(config.d_model, config.n_position_classes)
        self.regime_head = nn.Linear(config.d_model, config.n_regime_classes)
        self.return_head = nn.Linear(config.d_model,
                                     2 if config.use_uncertainty_estimation else 1)
        self.classes = (config.n_candle_classes, config.n_trend_classes,
                        config.n_position_classes, config.n_regime_classes)
        # the lagged linear readout: a causal convolution of the last ``linear_lags`` candles'
        # features straight into every class head's logits (zero at the start)
        self.lags = (nn.Conv1d(config.n_features, sum(self.classes), config.linear_lags)
                     if config.linear_lags else None)
        self._init_weights()

    def _init_weights(self) -> None:
        nn.init.normal_(self.pos, std=0.02)
        for name, p in self.named_parameters():
            if p.dim() == 2 and name != "pos":
                nn.init.normal_(p, std=0.02)
            elif name.endswith("bias"):
                nn.init.zeros_(p)
        # residual projections scaled down with depth (GPT-2)
        for block in self.blocks:
            std = 0.02 / math.sqrt(2 * self.config.n_layers)
            nn.init.normal_(block.attn.proj.weight, std=std)
            nn.init.normal_(block.mlp[2].weight, std=std)
        if self.lags is not None:
            nn.init.zeros_(self.lags.weight)

    def init_return_scale(self, variance_bps2: float) -> None:
        """Start the log-variance output at the data's return variance (bps^2), so the first
        steps' Gaussian likelihood is of the same order as the class heads' losses."""
        if self.config.use_uncertainty_estimation and variance_bps2 > 0:
            with torch.no_grad():
                self.return_head.bias[1] = min(max(math.log(variance_bps2), LOGVAR_MIN),
                                               LOGVAR_MAX)

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, x: torch.Tensor) -> ModelOutput:
        """``x``: features ``[B, T, n_features]`` with ``T <= seq_len``."""
        if x.dim() != 3 or x.shape[-1] != self.config.n_features:
            raise ValueError(f"expected features [B, T, {self.config.n_features}], "
                             f"got {tuple(x.shape)}")
        t = x.shape[1]
        if t > self.config.seq_len:
            raise ValueError(f"window of {t} candles is longer than seq_len "
                             f"{self.config.seq_len}")
        h = self.drop(self.embed(x) + self.pos[:t])
        use_checkpoint = (self.config.use_gradient_checkpointing and self.training
                          and torch.is_grad_enabled())
        for block in self.blocks:
            if use_checkpoint:
                h = checkpoint(block, h, use_reentrant=False, preserve_rng_state=True)
            else:
                h = block(h)
        h = self.ln_f(h)
        ret = self.return_head(h).float()
        logvar = None
        if self.config.use_uncertainty_estimation:
            logvar = ret[..., 1].clamp(LOGVAR_MIN, LOGVAR_MAX)
        logits = [head(h).float() for head in (self.candle_head, self.trend_head,
                                                self.position_head, self.regime_head)]
        if self.lags is not None:
            linear = self.lags(F.pad(x.transpose(1, 2), (self.lags.kernel_size[0] - 1, 0)))
            logits = [a + b for a, b in zip(logits, linear.transpose(1, 2).float()
                                            .split(self.classes, dim=-1), strict=True)]
        return ModelOutput(
            candle_logits=logits[0],
            trend_logits=logits[1],
            position_logits=logits[2],
            regime_logits=logits[3],
            return_mean=ret[..., 0],
            return_logvar=logvar,
        )


def activation_bytes(model: TradingTransformer, x: torch.Tensor) -> int:
    """Bytes of non-weight tensors one training forward pass keeps alive for backward: what
    autograd saves, plus the input of every block (which a checkpointed block keeps to
    recompute from). Run it under the autocast the training uses."""
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    kept: dict[int, int] = {}

    def note(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in weights:
            kept[storage.data_ptr()] = storage.nbytes()
        return t

    def note_input(_module, args) -> None:
        for a in args:
            if a.requires_grad:
                note(a)

    hooks = [block.register_forward_pre_hook(note_input) for block in model.blocks]
    try:
        with torch.autograd.graph.saved_tensors_hooks(note, lambda t: t):
            model(x)
    finally:
        for hook in hooks:
            hook.remove()
    return sum(kept.values())
