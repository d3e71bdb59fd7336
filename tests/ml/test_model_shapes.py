"""``model_shapes.weight_shapes`` says exactly what ``TradingTransformer`` holds: every
tensor's name and shape, for every preset and option (built on the meta device: nothing is
allocated)."""

from __future__ import annotations

import pytest
import torch

from workstation.ml.config import PRESETS, preset_config
from workstation.ml.model import TradingTransformer
from workstation.ml.model_shapes import weight_shapes

CONFIGS = [preset_config(name) for name in PRESETS] + [
    preset_config("tiny", use_uncertainty_estimation=False),
    preset_config("tiny", linear_lags=0),
    preset_config("tiny", n_layers=1, seq_len=7, n_features=13, d_ff=40, n_heads=4,
                  n_candle_classes=2, n_trend_classes=5, n_position_classes=4,
                  n_regime_classes=6),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.d_model}x{c.n_layers}"
                                                          f"-u{int(c.use_uncertainty_estimation)}")
def test_the_shapes_are_the_models_own(config):
    with torch.device("meta"):
        model = TradingTransformer(config)
    held = {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}
    assert weight_shapes(config) == held
