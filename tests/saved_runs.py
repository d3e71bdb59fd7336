"""A saved run of a tiny model in a checkpoint store, as the checkpoint tests make them."""

from __future__ import annotations

import torch

from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.config import preset_config
from workstation.ml.features import FeatureSpec
from workstation.ml.model import TradingTransformer
from workstation.ml.targets import TargetSpec

CONFIG = preset_config("tiny", seq_len=48)
DEMO = "DEMO (simulated market) DEMO/USDT 1m"


def save_run(store: CheckpointStore, seed: int, *, best: bool = True, val_loss: float = 1.25,
             provenance: str = DEMO) -> str:
    torch.manual_seed(seed)
    model = TradingTransformer(CONFIG)
    run = store.new_run_id()
    meta = {"config": CONFIG.to_dict(), "features": FeatureSpec().to_dict(),
            "targets": TargetSpec(trend_horizon=4).to_dict(), "provenance": provenance,
            "metrics": {"val": {"loss": val_loss}, "best_val_loss": val_loss},
            "step": 40 + seed, "epoch": 2}
    store.save(run, model, None, None, meta, is_best=best)
    return run
