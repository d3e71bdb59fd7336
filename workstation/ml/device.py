"""Compute devices: which to use, listing them, per-thread torch setup, and sampling their
memory and utilisation (``warmup`` warms them up).

Importing this module does not import torch (the window shows device gauges and a device
picker before torch has loaded); each function that needs torch imports it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import psutil

from ..errors import WorkstationError
from .config import CPU_THREADS
from .events import MemoryStats

if TYPE_CHECKING:
    import torch

_MB = 1024.0 * 1024.0


@dataclass(frozen=True)
class DeviceChoice:
    """One entry of a device picker: ``spec`` is what ``resolve_device`` takes."""

    spec: str
    label: str
    total_mb: float | None


def check_device_spec(spec: str) -> str:
    """``spec`` normalised if it is a device name this app takes (auto, cpu, cuda, cuda:N),
    else an error; whether the device is there is ``resolve_device``'s question (torch)."""
    text = str(spec).strip().lower()
    if text in ("auto", "cpu", "cuda"):
        return text
    if text.startswith("cuda:") and text[5:].isdigit():
        return text
    raise WorkstationError(f"unknown device {spec!r}; use auto, cpu, cuda or cuda:N")


def resolve_device(spec: str | torch.device = "auto") -> torch.device:
    """``auto`` (CUDA if present, else CPU), ``cpu``, ``cuda`` or ``cuda:i``; a device that is
    not there is an error, never a silent fallback."""
    import torch

    spec = check_device_spec(str(spec))
    if spec == "auto":  # the first GPU; no CUDA context is created here
        return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    device = torch.device(spec)
    if device.type == "cpu":
        return device
    if not torch.cuda.is_available():
        raise WorkstationError(f"device {spec!r} asked for, but this torch "
                               f"({torch.__version__}) sees no CUDA GPU")
    index = 0 if device.index is None else device.index
    if index >= torch.cuda.device_count():
        raise WorkstationError(f"device {spec!r} asked for, but there are only "
                               f"{torch.cuda.device_count()} CUDA devices")
    return torch.device("cuda", index)


def prepare_thread(device: torch.device, cpu_threads: int = CPU_THREADS) -> None:
    """Set up the calling thread to compute on ``device``. Grad mode and the current CUDA
    device are per thread, so a worker must call this itself; on CPU the intra-op thread
    count (process-wide) is kept low so that a GUI stays smooth."""
    import torch

    torch.set_grad_enabled(True)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    else:
        torch.set_num_threads(max(1, int(cpu_threads)))


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        import torch

        torch.cuda.synchronize(device)


def describe(device: torch.device) -> str:
    """``cuda:0 (NVIDIA H200, 139.8 GiB)`` or ``cpu (16 threads of 32 cores)``."""
    import torch

    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        return f"{device} ({props.name}, {props.total_memory / 2**30:.1f} GiB)"
    return f"cpu ({torch.get_num_threads()} threads of {os.cpu_count()} cores)"


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


# -- memory and utilisation ---------------------------------------------------------------------
def _peak_rss_bytes() -> int | None:
    if sys.platform == "win32":
        return getattr(psutil.Process().memory_info(), "peak_wset", None)
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS: bytes, Linux: KiB


def memory_stats(device: torch.device | str) -> MemoryStats:
    """Counters only (no device synchronisation): cheap enough for a GUI timer."""
    if str(device).startswith("cuda"):
        import torch

        _free, total = torch.cuda.mem_get_info(device)
        return MemoryStats(
            device=str(device),
            allocated_mb=torch.cuda.memory_allocated(device) / _MB,
            reserved_mb=torch.cuda.memory_reserved(device) / _MB,
            peak_mb=torch.cuda.max_memory_allocated(device) / _MB,
            total_mb=total / _MB,
        )
    rss = psutil.Process(os.getpid()).memory_info().rss
    peak = _peak_rss_bytes()
    return MemoryStats(
        device="cpu",
        allocated_mb=rss / _MB,
        reserved_mb=None,
        peak_mb=None if peak is None else max(peak, rss) / _MB,
        total_mb=psutil.virtual_memory().total / _MB,
    )


def reset_peak_memory(device: torch.device) -> None:
    """Start a new peak measurement (CUDA only; the CPU peak RSS cannot be reset)."""
    if device.type == "cuda":
        import torch

        torch.cuda.reset_peak_memory_stats(device)


class UtilisationSampler:
    """How busy a device is, in percent: the process's share of all CPU cores, or the GPU's
    utilisation from NVML (``nvidia-ml-py``, optional: None when it cannot be read)."""

    def __init__(self):
        self._process = psutil.Process(os.getpid())
        self._process.cpu_percent(None)  # starts the first interval
        self.gpu_error: str | None = None

    def restart(self) -> None:
        """Start a new CPU measurement interval (before the first sample of a run)."""
        self._process.cpu_percent(None)

    def sample(self, device: str) -> float | None:
        if not str(device).startswith("cuda"):
            return self._process.cpu_percent(None) / (os.cpu_count() or 1)
        if self.gpu_error is not None:
            return None
        import torch

        try:
            return float(torch.cuda.utilization(device))
        except Exception as exc:  # noqa: BLE001 - NVML is optional; say why, once
            self.gpu_error = f"{type(exc).__name__}: {exc}"
            return None
