"""Data-parallel training under ``torchrun`` (PyTorch's launcher and its c10d rendezvous).

``torchrun --nproc-per-node N [--nnodes M --rdzv-endpoint HOST:PORT] -m workstation train
--config run.json`` starts N processes per node; each reads its place (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``) from the environment (``World.from_environment``). The
trainer then:

- joins the process group (gloo on the CPU, nccl on CUDA) with a timeout, so a rank that
  fails or never comes ends the run with a message instead of a hang;
- trains a ``DistributedDataParallel`` copy of the model: every rank draws the same global
  batch of windows (same seed) and takes its own share of it (``shard``: rank r takes windows
  r, r + N, ...), so the gradients DDP averages are those of the global batch;
- sums the statistics it reports over the ranks, and only rank 0 writes checkpoints, history
  and events. The weights saved are the plain model's: a checkpoint does not depend on the
  world size, so a cluster run resumes in the desktop's single process and the reverse.

Without ``torchrun`` (``WORLD_SIZE`` unset or 1) nothing here is used.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass

from ..errors import WorkstationError

TIMEOUT_S = 300  # a rank that does not answer a collective within this fails the run
TIMEOUT_VARIABLE = "WORKSTATION_RANK_TIMEOUT_S"  # overrides it (seconds), e.g. for slow disks


@dataclass(frozen=True)
class World:
    """This process's place: ``rank`` of ``size`` processes (``local_rank`` on its node)."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @classmethod
    def from_environment(cls, environ=None) -> World:
        environ = os.environ if environ is None else environ
        try:
            size = int(environ.get("WORLD_SIZE", "1"))
            rank = int(environ.get("RANK", "0"))
            local = int(environ.get("LOCAL_RANK", "0"))
        except ValueError as exc:
            raise WorkstationError(f"torchrun's RANK / WORLD_SIZE / LOCAL_RANK are not numbers: "
                                   f"{exc}") from None
        if size < 1 or not 0 <= rank < size:
            raise WorkstationError(f"rank {rank} of a world of {size} processes is not one")
        return cls(rank, size, local)

    @property
    def distributed(self) -> bool:
        return self.size > 1

    @property
    def leader(self) -> bool:
        """Rank 0: the one that writes."""
        return self.rank == 0


def join(world: World, device) -> None:
    """Join the process group of ``world`` (gloo on the CPU, nccl on CUDA)."""
    import torch.distributed as dist

    if dist.is_initialized():
        return
    backend = "nccl" if getattr(device, "type", str(device)).startswith("cuda") else "gloo"
    timeout = dt.timedelta(seconds=rank_timeout_s())
    try:
        dist.init_process_group(backend, rank=world.rank, world_size=world.size,
                                timeout=timeout)
    except Exception as exc:  # whatever the rendezvous raises, said in words
        raise WorkstationError(f"rank {world.rank} of {world.size} could not join the other "
                               f"processes: {exc}") from exc


def rank_timeout_s(environ=None) -> float:
    """Seconds a rank waits for the others in one collective (``TIMEOUT_VARIABLE`` or 300)."""
    environ = os.environ if environ is None else environ
    text = environ.get(TIMEOUT_VARIABLE, "")
    if not text:
        return TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise WorkstationError(f"{TIMEOUT_VARIABLE}={text!r} is not a positive number of seconds")
    return seconds


def leave() -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def shard(starts, world: World):
    """This rank's share of one global batch of window starts."""
    return starts[world.rank::world.size]


def summed(tensor):
    """``tensor`` summed over every rank (in place on each, and returned)."""
    import torch.distributed as dist

    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    return tensor


def any_rank(flag: bool, device) -> bool:
    """True if ``flag`` is true on any rank (every rank learns the same answer)."""
    import torch

    value = torch.tensor([1.0 if flag else 0.0], device=device)
    return bool(summed(value).item() > 0)
