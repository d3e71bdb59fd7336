"""One owner per model: a registry that lets a model object be trained by one holder in one
thread at a time.

A holder (``Trainer``, ``OnlineLearner``) calls :func:`claim` before it touches a model; a
second claim on the same object fails until the first is released. The claim binds to the
first thread that calls :meth:`ModelClaim.check` (so a holder may be built on one thread and
run on its worker thread); a call from any other thread then fails. Other readers get a copy
of the weights, never the object.
"""

from __future__ import annotations

import threading
import weakref

from torch import nn

from ..errors import WorkstationError


class ModelOwnershipError(WorkstationError):
    """A model was claimed twice, or touched from a thread other than its owner's."""


_lock = threading.Lock()
_claims: weakref.WeakKeyDictionary[nn.Module, ModelClaim] = weakref.WeakKeyDictionary()


class ModelClaim:
    """Proof that ``owner`` holds a model; release it (or use ``with``) when done."""

    def __init__(self, model: nn.Module, owner: str):
        self._model = weakref.ref(model)
        self.owner = owner
        self.thread: threading.Thread | None = None
        self.released = False

    def check(self) -> None:
        """Bind to the calling thread on first use; fail on any other thread or after release."""
        if self.released:
            raise ModelOwnershipError(f"{self.owner} released its model and may not use it")
        current = threading.current_thread()
        if self.thread is None:
            self.thread = current
        elif self.thread is not current:
            raise ModelOwnershipError(
                f"the model of {self.owner} belongs to thread {self.thread.name!r}; it was "
                f"used from thread {current.name!r} (give other threads a copy of the weights)")

    def release(self) -> None:
        with _lock:
            model = self._model()
            if model is not None and _claims.get(model) is self:
                del _claims[model]
            self.released = True

    def __enter__(self) -> ModelClaim:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def claim(model: nn.Module, owner: str) -> ModelClaim:
    """Make ``owner`` the only holder of ``model``; fails if someone else holds it."""
    with _lock:
        held = _claims.get(model)
        if held is not None:
            raise ModelOwnershipError(f"{owner} cannot take this model: {held.owner} is "
                                      f"training it (one owner per model)")
        new = ModelClaim(model, owner)
        _claims[model] = new
        return new


def owner_of(model: nn.Module) -> str | None:
    """Who holds ``model`` now, or None."""
    with _lock:
        held = _claims.get(model)
        return held.owner if held is not None else None
