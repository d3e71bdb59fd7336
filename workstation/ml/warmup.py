"""Warming up the training stack off the GUI thread (``ui.training.device_warmup`` runs it).

``warm_up`` imports torch and the training stack and takes one step on the default device:
the first CUDA call stalls its thread for 30-200 ms and the first AdamW imports
``torch._dynamo`` (about a second), which must not happen while a run starts. Importing this
module does not import torch: its functions import torch, the model and the training stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import preset_config
from .device import DeviceChoice, list_devices, prepare_thread, synchronize

if TYPE_CHECKING:
    import torch


def training_step(device: torch.device) -> None:
    """One optimizer step of a tiny model on ``device``, the way the trainer takes it."""
    import torch

    from .model import TradingTransformer

    prepare_thread(device)
    model = TradingTransformer(preset_config("tiny", seq_len=16)).to(device)
    fused = {"fused": True} if device.type == "cuda" else {"foreach": True}
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, **fused)
    x = torch.randn(2, 16, model.config.n_features, device=device)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda"):
        out = model(x)
    (out.candle_logits.float().square().mean() + out.return_mean.float().square().mean()
     ).backward()
    torch.nn.utils.clip_grad_norm_(list(model.parameters()), 1.0, foreach=True)
    optimizer.step()
    synchronize(device)


def warm_up() -> list[DeviceChoice]:
    """Import the training stack, list the devices and take a first step on the default one
    (see the module docstring)."""
    import torch

    from . import checkpoints, online, trainer  # noqa: F401 - loaded here, off the GUI thread

    devices = list_devices()
    training_step(torch.device(devices[0].spec))
    return devices
