"""Import torch and wake the GPU off the GUI thread, and list the devices for the picker.

Importing torch takes seconds and the first CUDA call stalls its thread for 30-200 ms, so the
window opens first and shows "preparing device" until ``DeviceWarmup.ready`` arrives. The
warm-up also imports the training modules, so that nothing later imports torch on the GUI
thread.
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


def warm_up() -> list[DeviceChoice]:
    """Import the training stack, list the devices and make the first CUDA device ready."""
    import torch

    from ...ml import checkpoints, trainer  # noqa: F401 - imported here, off the GUI thread

    devices = list_devices()
    if devices[0].spec.startswith("cuda"):
        device = torch.device(devices[0].spec)
        torch.ones(1, device=device).add_(1)
        torch.cuda.synchronize(device)
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
