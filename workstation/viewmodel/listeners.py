"""``Listeners``: plain-Python callbacks of one kind of change (a Qt-free signal)."""

from __future__ import annotations

from collections.abc import Callable


class Listeners:
    """Callbacks called with the values of each change, in the order they were connected."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[..., None]] = []

    def connect(self, callback: Callable[..., None]) -> None:
        self._callbacks.append(callback)

    def disconnect(self, callback: Callable[..., None]) -> None:
        self._callbacks.remove(callback)

    def emit(self, *values) -> None:
        for callback in tuple(self._callbacks):
            callback(*values)
