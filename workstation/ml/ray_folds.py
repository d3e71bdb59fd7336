"""Walk-forward folds trained as Ray tasks (``evaluate --ray ADDRESS``, ``--ray local``).

``ray_cluster`` connects this process to a Ray cluster (``local``: one started on this
machine, and shut down afterwards). ``tested_on_ray`` then submits each (fold, training
settings: a seed) job as a Ray task that runs ``folds.run_fold`` exactly as the sequential
evaluation does (same settings, seed and CPU threads), so each fold's predictions, and so
every score, are the same. The evaluation's data (the features and targets made from the
candles and the trader's marks) is put in Ray's object store once, beside the SHA-256 of its
arrays (``data_digest``); each task recomputes it and refuses to train on data that differs.
A task that fails (its process died, or it raised) is submitted again at once, up to
``RETRIES`` times (said as ``FoldRetried``); one that still fails ends the evaluation with one
line naming its fold and seed. (Ray's own retries are off: they would announce themselves on
stdout, where ``--json`` writes.) The
trainers' events reach ``on_event`` in the calling thread through a Ray actor, while the
folds train; ``stop`` cancels every task. Ray is imported only here, only when called: it is
the optional extra ``workstation[ray]``.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import fields

import numpy as np

from ..errors import WorkstationError
from .config import TradingTransformerConfig, TrainConfig
from .dataset import TrainingData
from .events import FoldRetried
from .folds import EvaluationStopped, Fold, run_fold

LOCAL = "local"  # the address that starts a cluster in this process
RETRIES = 2  # runs of a failed task beyond its first
_POLL_S = 0.1


def require_ray():
    """The ``ray`` module, or one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise WorkstationError('training on a Ray cluster needs Ray, an optional extra: '
                               'pip install "workstation[ray]"') from None
    return ray


@contextlib.contextmanager
def ray_cluster(address: str, *, num_cpus: int | None = None) -> Iterator[str]:
    """This process connected to the Ray cluster at ``address`` (``LOCAL``: one node started
    here with ``num_cpus`` CPUs and no dashboard) while the block runs; yields words saying
    which. A connection made before is used as it is and left open."""
    ray = require_ray()
    if ray.is_initialized():
        yield "the Ray cluster this process is connected to"
        return
    sigterm = signal.getsignal(signal.SIGTERM)  # ray.init replaces the command's handler
    try:
        if address == LOCAL:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise WorkstationError(f"could not connect to the Ray cluster at {address}: "
                               f"{_first_line(exc)}") from None
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, sigterm)
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        yield (f"a local Ray cluster of {cpus} CPUs" if address == LOCAL else
               f"the Ray cluster at {address} ({cpus} CPUs)")
    finally:
        ray.shutdown()


def data_digest(data: TrainingData) -> str:
    """SHA-256 of the evaluation's arrays: features, open times and every target."""
    digest = hashlib.sha256()
    arrays = [data.features, data.ts] + [getattr(data.targets, f.name)
                                         for f in fields(data.targets)]
    for array in arrays:
        array = np.ascontiguousarray(array)
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.data)
    return digest.hexdigest()


class _EventBox:
    """A Ray actor holding the trainers' events until the caller takes them; the calls of
    one task arrive in the order it made them."""

    def __init__(self):
        self.events: list = []

    def put(self, event) -> None:
        self.events.append(event)

    def take(self) -> list:
        out, self.events = self.events, []
        return out

    def sync(self) -> None:
        """Returns once every earlier call of the caller has been handled."""


def _fold_task(data: TrainingData, digest: str, run: Callable, model_config, train_config,
               fold: Fold, folds: int, device: str, provenance: str, box):
    """One job, in a Ray worker: the data checked against ``digest``, then ``run``
    (``run_fold``)."""
    import ray

    found = data_digest(data)
    if found != digest:
        raise WorkstationError(f"the candles and marks reached the Ray worker altered "
                               f"(SHA-256 {found[:16]}…, sent {digest[:16]}…): refused")
    data = copy.deepcopy(data)  # the object store's arrays are read-only; training's are not
    try:
        return run(data, model_config, train_config, fold, folds, device=device,
                   provenance=provenance, on_event=box.put.remote, stop=threading.Event())
    finally:
        ray.get(box.sync.remote())  # every event is with the caller before the result


def tested_on_ray(data: TrainingData, model_config: TradingTransformerConfig,
                  jobs: list[tuple[Fold, TrainConfig]], *, folds: int, device: str,
                  provenance: str, on_event: Callable[[object], None],
                  stop: threading.Event, run: Callable = run_fold) -> Iterator[tuple]:
    """The ``run`` (``run_fold``) result of each (fold, training settings: a seed) of
    ``jobs``, in that order, each trained as a task on the Ray cluster this process is
    connected to (``ray_cluster``; see the module docstring). A job that fails runs again
    at once (``FoldRetried`` to ``on_event``)."""
    ray = require_ray()
    from .device import resolve_device

    gpus = 1 if resolve_device(device).type == "cuda" else 0
    box = ray.remote(_EventBox).options(num_cpus=0).remote()
    task = ray.remote(_fold_task)
    data_ref = ray.put(data)
    digest = data_digest(data)

    def submit(j: int):
        fold, config = jobs[j]
        return task.options(num_cpus=config.cpu_threads, num_gpus=gpus, max_retries=0).remote(
            data_ref, digest, run, model_config, config, fold, folds, device, provenance, box)

    refs = [submit(j) for j in range(len(jobs))]
    attempts = [1] * len(jobs)
    done: dict[int, tuple] = {}
    waiting = set(range(len(jobs)))
    try:
        for i, (fold, _) in enumerate(jobs):
            while i in waiting:
                running = {refs[j]: j for j in waiting}
                ready, _ = ray.wait(list(running), num_returns=len(running), timeout=_POLL_S)
                _relay(ray, box, on_event)
                for ref in ready:
                    j = running[ref]
                    try:
                        done[j] = ray.get(ref)
                        waiting.remove(j)
                    except ray.exceptions.RayError as exc:
                        _say_retry(jobs[j], attempts[j], folds, exc, on_event)
                        refs[j] = submit(j)
                        attempts[j] += 1
                if i in waiting and stop.is_set():
                    raise EvaluationStopped(f"evaluation stopped in fold {fold.index + 1} "
                                            f"of {folds}; the folds scored so far are above")
            yield done.pop(i)
    finally:
        for ref in refs:
            ray.cancel(ref)
        ray.kill(box)


def _say_retry(job: tuple[Fold, TrainConfig], attempts: int, folds: int, exc: BaseException,
               on_event: Callable[[object], None]) -> None:
    """A job that failed ``attempts`` times runs again (``FoldRetried`` to ``on_event``), or,
    once it has failed ``RETRIES + 1`` times, ends the evaluation in one line naming its fold
    and seed."""
    fold, config = job
    if attempts > RETRIES:
        raise WorkstationError(f"fold {fold.index + 1} of {folds}, seed {config.seed}, failed "
                               f"on Ray {attempts} times: {_cause(exc)}") from None
    on_event(FoldRetried(fold.index, folds, config.seed, attempts + 1, _cause(exc)))


def _relay(ray, box, on_event: Callable[[object], None]) -> None:
    for event in ray.get(box.take.remote()):
        on_event(event)


def _cause(exc: BaseException) -> str:
    """What went wrong in a task, in one line: the task's own exception where it raised."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, WorkstationError):
        return str(cause)
    if isinstance(cause, BaseException):
        exc = cause
    return f"{type(exc).__name__}: {_first_line(exc)}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
