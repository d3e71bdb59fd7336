"""Runs ``ml.warmup.warm_up`` (import torch, list the devices, one training step) on its own
thread, so the window opens first and shows "preparing device" until ``DeviceWarmup.ready``
arrives; none of that work then stalls the GUI while a run starts."""

from __future__ import annotations

import logging
import time
import traceback

from PySide6.QtCore import QObject, Signal, Slot

from ...ml.device import DeviceChoice
from ...ml.warmup import warm_up
from .worker import ThreadWorker, WorkerThread

log = logging.getLogger(__name__)


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
