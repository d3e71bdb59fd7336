"""Walk-forward folds trained in separate processes at once (``evaluate --workers N``).

Each worker is a fresh (spawned) Python process that receives the evaluation's data once and
trains the folds (each seed of a fold a job of its own) it is given with ``folds.run_fold``,
exactly as the sequential
evaluation does (same settings, seed and CPU threads per fold), so each fold's predictions,
and so every score, are the same. The trainers' events come back through a queue and reach
``on_event`` in the calling thread; a fold's result is handed on in fold order. ``stop``
(set in the caller) reaches every worker through a shared event; a worker's failure ends the
evaluation with its message, and the other workers are stopped.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

from .config import TradingTransformerConfig, TrainConfig
from .dataset import TrainingData
from .folds import Fold, run_fold

_POLL_S = 0.1


def default_workers(device_type: str, threads: int) -> int:
    """Processes an evaluation trains its folds in unless told: as many as the cores hold at
    ``threads`` each on the CPU (2 on a 2-core machine at one thread), one on a GPU."""
    if device_type != "cpu":
        return 1
    return max(1, (os.cpu_count() or 1) // max(int(threads), 1))
_worker: dict = {}  # in a worker process: the data, the event queue and the stop event


def _start_worker(data, events, stop) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's: it sets ``stop``
    _worker.update(data=data, events=events, stop=stop)


def _fold_in_worker(model_config, train_config, fold, folds: int, device: str,
                    provenance: str):
    events = _worker["events"]
    return run_fold(_worker["data"], model_config, train_config, fold, folds, device=device,
                    provenance=provenance, on_event=events.put, stop=_worker["stop"])


def tested_in_parallel(data: TrainingData, model_config: TradingTransformerConfig,
                       jobs: list[tuple[Fold, TrainConfig]], *, folds: int, device: str,
                       provenance: str, on_event: Callable[[object], None],
                       stop: threading.Event, workers: int) -> Iterator[tuple]:
    """The ``run_fold`` result of each (fold, training settings: a seed) of ``jobs``, in that
    order, trained by ``workers`` processes at once (see the module docstring)."""
    context = multiprocessing.get_context("spawn")
    events = context.Queue()
    shared_stop = context.Event()
    pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=context,
                               initializer=_start_worker, initargs=(data, events, shared_stop))
    try:
        futures: list[Future] = [
            pool.submit(_fold_in_worker, model_config, train_config, fold, folds, device,
                        provenance) for fold, train_config in jobs]
        for future in futures:
            while not future.done():
                if stop.is_set():
                    shared_stop.set()
                _relay(events, on_event)
                wait([f for f in futures if not f.done()], timeout=_POLL_S,
                     return_when=FIRST_COMPLETED)
            _relay(events, on_event)
            yield future.result()  # a fold's failure (or stop) is raised here, in order
    finally:
        shared_stop.set()  # the folds still running stop at their next batch
        pool.shutdown(wait=True, cancel_futures=True)
        _relay(events, on_event)
        events.close()


def _relay(events, on_event: Callable[[object], None]) -> None:
    while True:
        try:
            event = events.get_nowait()
        except queue.Empty:
            return
        on_event(event)
