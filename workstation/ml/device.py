"""Which device to compute on, how much memory it uses, and per-thread torch setup."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass

import psutil
import torch

from ..errors import WorkstationError

# Training leaves a core to the GUI: 16 intra-op threads pushed GUI jitter p99 to 4.5 ms, two
# gave 0.26 ms; on a 2-core machine one thread is also 2-6x faster under load than two.
CPU_THREADS = max(1, min(2, (os.cpu_count() or 2) - 1))
_MB = 1024.0 * 1024.0


def resolve_device(spec: "str | torch.device" = "auto") -> torch.device:
    """``auto`` (CUDA if present, else CPU), ``cpu``, ``cuda`` or ``cuda:i``; a device that is
    not there is an error, never a silent fallback."""
    if isinstance(spec, torch.device):
        spec = str(spec)
    spec = spec.strip().lower()
    if spec == "auto":  # the first GPU; no CUDA context is created here
        return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    try:
        device = torch.device(spec)
    except RuntimeError:
        raise WorkstationError(f"unknown device {spec!r}; use auto, cpu, cuda or cuda:N") from None
    if device.type == "cpu":
        return device
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise WorkstationError(f"device {spec!r} asked for, but this torch "
                                   f"({torch.__version__}) sees no CUDA GPU")
        index = 0 if device.index is None else device.index
        if index >= torch.cuda.device_count():
            raise WorkstationError(f"device {spec!r} asked for, but there are only "
                                   f"{torch.cuda.device_count()} CUDA devices")
        return torch.device("cuda", index)
    raise WorkstationError(f"device type {device.type!r} is not supported; use cpu or cuda")


def prepare_thread(device: torch.device, cpu_threads: int = CPU_THREADS) -> None:
    """Set up the calling thread to compute on ``device``. Grad mode and the current CUDA
    device are per thread, so a worker must call this itself; on CPU the intra-op thread
    count (process-wide) is kept low so that a GUI stays smooth."""
    torch.set_grad_enabled(True)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    else:
        torch.set_num_threads(max(1, int(cpu_threads)))


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@dataclass(frozen=True)
class MemoryStats:
    """Memory in MiB. On CUDA: allocated/reserved/peak by the torch allocator, total of the
    GPU. On CPU: allocated is the process RSS, peak the process peak RSS, total the RAM;
    there is no reserved pool (None)."""

    device: str
    allocated_mb: float
    reserved_mb: float | None
    peak_mb: float | None
    total_mb: float

    def to_dict(self) -> dict:
        return asdict(self)


def _peak_rss_bytes() -> int | None:
    if sys.platform == "win32":
        return getattr(psutil.Process().memory_info(), "peak_wset", None)
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS: bytes, Linux: KiB


def memory_stats(device: torch.device) -> MemoryStats:
    if device.type == "cuda":
        free, total = torch.cuda.mem_get_info(device)
        return MemoryStats(
            device=str(device),
            allocated_mb=torch.cuda.memory_allocated(device) / _MB,
            reserved_mb=torch.cuda.memory_reserved(device) / _MB,
            peak_mb=torch.cuda.max_memory_allocated(device) / _MB,
            total_mb=total / _MB,
        )
    peak = _peak_rss_bytes()
    return MemoryStats(
        device="cpu",
        allocated_mb=psutil.Process(os.getpid()).memory_info().rss / _MB,
        reserved_mb=None,
        peak_mb=None if peak is None else peak / _MB,
        total_mb=psutil.virtual_memory().total / _MB,
    )


def reset_peak_memory(device: torch.device) -> None:
    """Start a new peak measurement (CUDA only; the CPU peak RSS cannot be reset)."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def describe(device: torch.device) -> str:
    """``cuda:0 (NVIDIA H200, 139.8 GiB)`` or ``cpu (16 threads of 32 cores)``."""
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        return f"{device} ({props.name}, {props.total_memory / 2**30:.1f} GiB)"
    return f"cpu ({torch.get_num_threads()} threads of {os.cpu_count()} cores)"
