"""Import torch and wake the GPU off the GUI thread, and list the devices for the picker.

Importing torch takes seconds and the first CUDA call stalls its thread for 30-200 ms, so the
window opens first and shows "preparing device" until ``DeviceWarmup.ready`` arrives. The
warm-up also imports the training modules and takes one training step of a tiny model on the
default device: the first AdamW imports ``torch._dynamo`` (about a second, with pauses of
200 ms in which no other thread gets the GIL) and the first step picks kernels. Done here, at
startup, none of that stalls the GUI while a run starts.
"""

from __future__ import annotations

import logging
import os
import time
import traceback
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal, Slot

from .worker import ThreadWorker, WorkerThread

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeviceChoice:
    """One entry of the device picker: ``spec`` is what ``resolve_device`` takes."""

    spec: str
    label: str
    total_mb: float | None


def list_devices() -> list[DeviceChoice]:
    """Each CUDA device by name, then the CPU (imports torch: call it off the GUI thread)."""
    import torch

    out = []
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            out.append(DeviceChoice(f"cuda:{i}", f"cuda:{i} — {props.name} "
                                                 f"({props.total_memory / 2**30:.1f} GiB)",
                                    props.total_memory / 2**20))
    out.append(DeviceChoice("cpu", f"CPU ({os.cpu_count()} cores)", None))
    return out


def training_step(device) -> None:
    """One optimizer step of a tiny model on ``device``, the way the trainer takes it."""
    import torch

    from ...ml.device import prepare_thread, synchronize
    from ...ml.model import TradingTransformer, preset_config

    prepare_thread(device)
    model = TradingTransformer(preset_config("tiny", seq_len=16)).to(device)
    fused = {"fused": True} if device.type == "cuda" else {"foreach": True}
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, **fused)
    x = torch.randn(2, 16, model.config.n_features, device=device)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda")
    with autocast:
        out = model(x)
    (out.candle_logits.float().square().mean() + out.return_mean.float().square().mean()
     ).backward()
    torch.nn.utils.clip_grad_norm_(list(model.parameters()), 1.0, foreach=True)
    optimizer.step()
    synchronize(device)


def warm_up() -> list[DeviceChoice]:
    """Import the training stack, list the devices and take a first step on the default one."""
    import torch

    from ...ml import checkpoints, online, trainer  # noqa: F401 - imported off the GUI thread

    devices = list_devices()
    training_step(torch.device(devices[0].spec))
    return devices


class _WarmupWorker(ThreadWorker):
    done = Signal(list, float)
    failed = Signal(str, str)

    def work(self) -> None:
        started = time.monotonic()
        try:
            devices = warm_up()
        except Exception as exc:  # noqa: BLE001 - shown in the panel, never swallowed
            self.failed.emit(f"{type(exc).__name__}: {exc}", traceback.format_exc())
            return
        self.done.emit(devices, time.monotonic() - started)


class DeviceWarmup(QObject):
    """Runs ``warm_up`` on its own thread once ``start()`` is called; ``ready(list of
    DeviceChoice)`` or ``failed(message, traceback)`` follows on the GUI thread."""

    ready = Signal(list)
    failed = Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.devices: list[DeviceChoice] | None = None
        self.error: str | None = None
        self.elapsed_s: float | None = None
        self._thread: WorkerThread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        worker = _WarmupWorker()
        worker.done.connect(self._done)
        worker.failed.connect(self._failed)
        self._thread = WorkerThread(worker, "device warm-up")
        self._thread.start()

    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_running()

    def join(self, timeout_s: float) -> bool:
        """Wait for the warm-up thread to end; True if it has (or never started)."""
        return self._thread is None or self._thread.join(timeout_s)

    @Slot(list, float)
    def _done(self, devices: list, elapsed_s: float) -> None:
        self.devices, self.elapsed_s = devices, elapsed_s
        log.info("devices ready in %.1f s: %s", elapsed_s, ", ".join(d.label for d in devices))
        self.ready.emit(devices)

    @Slot(str, str)
    def _failed(self, message: str, tb: str) -> None:
        self.error = message
        log.error("preparing the compute device failed: %s\n%s", message, tb)
        self.failed.emit(message, tb)
