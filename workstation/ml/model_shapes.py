"""The name and shape of every tensor ``TradingTransformer`` holds, from its settings alone.

No torch here, so a checkpoint's weights are checked against the settings its meta.json
records (``checkpoints.check_snapshot``) before torch is loaded: ``checkpoints list`` over many
runs, or a resume refused at once. ``tests/ml/test_model_shapes.py`` keeps this equal to the
model's ``state_dict()`` for every preset and option: a change to the model's layers is a
change here too.
"""

from __future__ import annotations

from .config import TradingTransformerConfig


def weight_shapes(config: TradingTransformerConfig) -> dict[str, tuple[int, ...]]:
    """Each tensor name of ``TradingTransformer(config).state_dict()`` and its shape."""
    d = config.d_model
    shapes = {"pos": (config.seq_len, d), **_linear("embed", config.n_features, d)}
    for i in range(config.n_layers):
        block = f"blocks.{i}"
        shapes |= {**_norm(f"{block}.ln1", d), **_linear(f"{block}.attn.qkv", d, 3 * d),
                   **_linear(f"{block}.attn.proj", d, d), **_norm(f"{block}.ln2", d),
                   **_linear(f"{block}.mlp.0", d, config.d_ff),
                   **_linear(f"{block}.mlp.2", config.d_ff, d)}
    shapes |= _norm("ln_f", d)
    for head, classes in (("candle_head", config.n_candle_classes),
                          ("trend_head", config.n_trend_classes),
                          ("position_head", config.n_position_classes),
                          ("regime_head", config.n_regime_classes),
                          ("return_head", 2 if config.use_uncertainty_estimation else 1)):
        shapes |= _linear(head, d, classes)
    if config.linear_lags:
        classes = (config.n_candle_classes + config.n_trend_classes
                   + config.n_position_classes + config.n_regime_classes)
        shapes |= {"lags.weight": (classes, config.n_features, config.linear_lags),
                   "lags.bias": (classes,)}
    return shapes


def _linear(name: str, n_in: int, n_out: int) -> dict[str, tuple[int, ...]]:
    return {f"{name}.weight": (n_out, n_in), f"{name}.bias": (n_out,)}


def _norm(name: str, n: int) -> dict[str, tuple[int, ...]]:
    return {f"{name}.weight": (n,), f"{name}.bias": (n,)}
