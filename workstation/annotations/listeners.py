"""``Listeners``: callbacks told about each committed change of a store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

Change = TypeVar("Change")


class Listeners(Generic[Change]):
    """``subscribe(listener)`` returns an unsubscribe; ``notify(change)`` tells every
    listener, and raises the first listener error once all have heard."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[Change], None]] = []

    def subscribe(self, listener: Callable[[Change], None]) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def notify(self, change: Change) -> None:
        error: BaseException | None = None
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception as exc:  # noqa: BLE001 - re-raised below
                error = error or exc
        if error is not None:
            raise error
