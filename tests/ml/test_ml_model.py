"""TradingTransformer: shapes, causality, config, and gradient checkpointing that works.

The seed system's training died with "modified by an inplace operation" and with checkpoint
recomputation that met a cached mask of another shape; these tests make both impossible.
"""

from __future__ import annotations

import dataclasses
import threading

import pytest
import torch

from workstation.errors import WorkstationError
from workstation.ml.config import (
    DEFAULT_FEATURES,
    LINEAR_LAGS,
    PRESETS,
    TradingTransformerConfig,
    preset_config,
)
from workstation.ml.model import ModelOutput, TradingTransformer, activation_bytes

torch.set_num_threads(1)
pytestmark = pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")


def tiny(**overrides) -> TradingTransformerConfig:
    return preset_config("tiny", **dict(dict(seq_len=64), **overrides))


def loss_of(out: ModelOutput) -> torch.Tensor:
    return (out.candle_logits.logsumexp(-1).sum() + out.trend_logits[..., 0].sum()
            + out.position_logits.square().sum() + out.regime_logits.square().sum()
            + out.return_mean.square().sum()
            + out.return_logvar.sum())


def grads_of(config: TradingTransformerConfig, inputs: list[torch.Tensor], seed: int = 0,
             dropout_seed: int = 1):
    """Gradients of one model (weights from ``seed``) after a forward/backward per input, with
    dropout drawn from ``dropout_seed``."""
    torch.manual_seed(seed)
    model = TradingTransformer(config).train()
    torch.manual_seed(dropout_seed)
    total = sum(loss_of(model(x)) for x in inputs)
    total.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters()}, total.item()


def test_output_shapes():
    config = tiny()
    model = TradingTransformer(config)
    for t in (64, 17, 1):
        out = model(torch.randn(3, t, DEFAULT_FEATURES))
        assert out.candle_logits.shape == (3, t, 3)
        assert out.trend_logits.shape == (3, t, 3)
        assert out.position_logits.shape == out.regime_logits.shape == (3, t, 3)
        assert out.return_mean.shape == (3, t)
        assert out.return_logvar.shape == (3, t)
    plain = TradingTransformer(tiny(use_uncertainty_estimation=False))
    assert plain(torch.randn(2, 8, DEFAULT_FEATURES)).return_logvar is None


def test_bad_inputs_are_clear_errors():
    model = TradingTransformer(tiny())
    with pytest.raises(ValueError, match="longer than seq_len 64"):
        model(torch.randn(1, 65, DEFAULT_FEATURES))
    with pytest.raises(ValueError, match="expected features"):
        model(torch.randn(1, 10, DEFAULT_FEATURES + 1))


def test_model_is_causal():
    model = TradingTransformer(tiny()).eval()
    x = torch.randn(2, 64, DEFAULT_FEATURES)
    y = x.clone()
    y[:, 40:] = torch.randn(2, 24, DEFAULT_FEATURES) * 5
    with torch.no_grad():
        a, b = model(x), model(y)
    torch.testing.assert_close(a.candle_logits[:, :40], b.candle_logits[:, :40])
    torch.testing.assert_close(a.return_mean[:, :40], b.return_mean[:, :40])
    assert not torch.allclose(a.candle_logits[:, 40:], b.candle_logits[:, 40:])


def test_the_linear_readout_reads_the_last_linear_lags_candles_and_nothing_later():
    """The lagged linear readout (``linear_lags``) adds a linear function of candles
    t - L + 1 .. t to every class head's logits at t: the lagged logistic regression the
    model is compared with, inside the model. A fresh model starts with it at zero."""
    lags = 8
    model = TradingTransformer(tiny(linear_lags=lags)).eval()
    assert model.lags is not None and not model.lags.weight.any()
    with torch.no_grad():
        for head in (model.candle_head, model.trend_head, model.position_head,
                     model.regime_head):  # the transformer's part silenced: the readout alone
            head.weight.zero_()
            head.bias.zero_()
        model.lags.weight.normal_(generator=torch.Generator().manual_seed(2))
    x = torch.randn(1, 64, DEFAULT_FEATURES, generator=torch.Generator().manual_seed(3))
    t = 40

    def logits_at_t(changed_at: int) -> torch.Tensor:
        y = x.clone()
        y[:, changed_at] += 3.0
        with torch.no_grad():
            out = model(y)
        return torch.cat([out.candle_logits[0, t], out.position_logits[0, t]])

    unchanged = logits_at_t(t + 1)  # later candles: nothing
    assert torch.equal(unchanged, logits_at_t(t - lags))  # older than the readout: nothing
    assert not torch.equal(unchanged, logits_at_t(t - lags + 1))
    assert not torch.equal(unchanged, logits_at_t(t))


def test_presets_read_60_lags_and_settings_from_before_the_readout_read_none():
    assert all(config.linear_lags == LINEAR_LAGS == 60 for config in PRESETS.values())
    assert preset_config("tiny", seq_len=32).linear_lags == 32  # at most a window
    assert preset_config("tiny", seq_len=32, linear_lags=0).linear_lags == 0
    old = PRESETS["tiny"].to_dict()
    del old["linear_lags"]  # a checkpoint written before the readout existed
    config = TradingTransformerConfig.from_dict(old)
    assert config.linear_lags == 0
    model = TradingTransformer(config)
    assert model.lags is None and not any(name.startswith("lags") for name in
                                          model.state_dict())
    with pytest.raises(WorkstationError, match="linear_lags must be a candle count from 0 to "
                                               "seq_len \\(32\\), got 40"):
        TradingTransformerConfig(seq_len=32, linear_lags=40)


def test_config_defaults_round_trip_and_presets():
    default = TradingTransformerConfig()  # every field has a default
    assert default.n_features == DEFAULT_FEATURES and default.seq_len == 200
    assert (default.n_candle_classes, default.n_trend_classes, default.n_position_classes,
            default.n_regime_classes) == (3, 3, 3, 3)
    for config in PRESETS.values():
        assert TradingTransformerConfig.from_dict(config.to_dict()) == config
    assert (PRESETS["base"].d_model, PRESETS["base"].n_layers) == (512, 6)
    assert (PRESETS["large"].d_model, PRESETS["large"].n_layers) == (1024, 8)
    assert PRESETS["tiny"].d_model == 32 and PRESETS["tiny"].n_layers == 2
    config = preset_config("small", seq_len=100, dropout=None)
    assert config.seq_len == 100 and config.dropout == PRESETS["small"].dropout
    with pytest.raises(WorkstationError, match="unknown model preset 'huge'"):
        preset_config("huge")
    with pytest.raises(WorkstationError, match="not divisible"):
        TradingTransformerConfig(d_model=30, n_heads=4)
    with pytest.raises(WorkstationError, match="unknown model settings: mask"):
        TradingTransformerConfig.from_dict({"mask": 1})


@pytest.mark.parametrize("preset", ["tiny", "small"])
def test_gradient_checkpointing_gives_the_same_gradients_with_dropout(preset):
    config = preset_config(preset, seq_len=48, dropout=0.2)
    x = torch.randn(4, 48, DEFAULT_FEATURES, generator=torch.Generator().manual_seed(5))
    plain, loss_plain = grads_of(config, [x])
    ckpt, loss_ckpt = grads_of(dataclasses.replace(config, use_gradient_checkpointing=True), [x])
    assert loss_plain == loss_ckpt
    worst = max((plain[n] - ckpt[n]).abs().max().item() for n in plain)
    assert worst <= 1e-6, f"max abs gradient difference {worst}"
    # dropout really is on: another RNG state gives other gradients
    other, _ = grads_of(config, [x], dropout_seed=9)
    assert any(not torch.equal(plain[n], other[n]) for n in plain)


def test_checkpointing_across_calls_of_different_lengths():
    """The seed's CheckpointError: a mask cached on a module by a later call of another
    shape met the recomputation of an earlier call. Two calls of different lengths before
    one backward, under anomaly detection (which also flags in-place writes to saved
    tensors), give exactly the plain model's gradients."""
    config = tiny(dropout=0.1)
    g = torch.Generator().manual_seed(2)
    inputs = [torch.randn(2, 64, DEFAULT_FEATURES, generator=g),
              torch.randn(3, 20, DEFAULT_FEATURES, generator=g)]
    with torch.autograd.detect_anomaly():
        plain, _ = grads_of(config, inputs)
        ckpt, _ = grads_of(dataclasses.replace(config, use_gradient_checkpointing=True), inputs)
    assert max((plain[n] - ckpt[n]).abs().max().item() for n in plain) <= 1e-6


def test_modules_cache_no_tensors_between_calls():
    model = TradingTransformer(tiny(use_gradient_checkpointing=True, dropout=0.1))
    before = {n: p.data_ptr() for n, p in model.named_parameters()}
    for t in (64, 10):
        loss_of(model(torch.randn(2, t, DEFAULT_FEATURES))).backward()
    assert list(model.buffers()) == []
    for name, module in model.named_modules():
        for attr, value in vars(module).items():
            if attr in ("_parameters", "_buffers", "_modules"):
                continue
            assert not isinstance(value, torch.Tensor), f"{name}.{attr} holds a tensor"
    assert {n: p.data_ptr() for n, p in model.named_parameters()} == before


def test_in_place_write_to_a_saved_tensor_is_caught_and_the_model_does_none():
    """Autograd's version counter is what raised the seed's in-place error; show it is armed
    (a deliberate in-place write fails) and that a full train step of ours passes it."""
    x = torch.randn(4, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)  # sigmoid saved its output
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    model = TradingTransformer(tiny(dropout=0.1, use_gradient_checkpointing=True)).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with torch.autograd.detect_anomaly():
        for t in (64, 33):
            loss_of(model(torch.randn(2, t, DEFAULT_FEATURES))).backward()
            opt.step()
            opt.zero_grad()


def test_checkpointing_cuts_activation_memory():
    config = tiny(n_layers=4, dropout=0.1, seq_len=128)
    x = torch.randn(8, 128, DEFAULT_FEATURES)
    plain = activation_bytes(TradingTransformer(config).train(), x)
    ckpt = activation_bytes(
        TradingTransformer(dataclasses.replace(config, use_gradient_checkpointing=True)).train(), x)
    block_input = 8 * 128 * config.d_model * 4
    assert ckpt >= 4 * block_input  # the checkpointed blocks' inputs are counted
    assert ckpt < plain / 4, f"checkpointing kept {ckpt} bytes, plain {plain}"
    # no checkpointing in eval or without grad: nothing to save
    with torch.no_grad():
        assert activation_bytes(TradingTransformer(config).train(), x) == 0


def test_forward_in_another_thread_with_its_own_grad_mode():
    model = TradingTransformer(tiny(use_gradient_checkpointing=True))
    result = {}

    def worker():
        torch.set_grad_enabled(True)
        loss_of(model(torch.randn(1, 16, DEFAULT_FEATURES))).backward()
        result["grad"] = model.embed.weight.grad is not None

    with torch.no_grad():  # the calling thread's grad mode does not leak into the worker
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert result["grad"]
