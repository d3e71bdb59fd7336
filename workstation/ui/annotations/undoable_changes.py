"""Undoable annotation changes: each ``QUndoCommand`` calls the store and keeps what the
store returned for its undo (``add`` -> ``delete``; ``delete`` -> ``restore`` of the removed
record; ``update`` -> ``update`` with the record it replaced).

A store that refuses a step (the file changed under it, a disk error) does not leave the
stack pretending: the change reports the error through ``on_error`` and marks itself
obsolete, so ``QUndoStack`` drops it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QUndoCommand

from ...annotations.model import Annotation, Region, Trade
from ...annotations.store import AnnotationError, AnnotationStore

ErrorHandler = Callable[[str], None]


def describe(ann: Annotation) -> str:
    """``"long trade"``, ``"uptrend region"``, ``"point note"``."""
    if isinstance(ann, Trade):
        return f"{ann.direction.value} trade"
    if isinstance(ann, Region):
        return f"{ann.label} region"
    return "point note"


class UndoableChange(QUndoCommand):
    """Runs its subclass's ``_do``/``_undo`` against the store; a failed step is reported,
    not raised."""

    # what each subclass defines
    _do: Callable[[], None]
    _undo: Callable[[], None]

    def __init__(self, store: AnnotationStore, text: str, on_error: ErrorHandler):
        super().__init__(text)
        self.store = store
        self._on_error = on_error

    def redo(self) -> None:
        self._run(self._do, "do")

    def undo(self) -> None:
        self._run(self._undo, "undo")

    def _run(self, step: Callable[[], None], verb: str) -> None:
        try:
            step()
        except AnnotationError as exc:
            self.setObsolete(True)
            self._on_error(f"Could not {verb} “{self.text()}”: {exc}")


class AddAnnotation(UndoableChange):
    def __init__(self, store: AnnotationStore, ann: Annotation, on_error: ErrorHandler):
        super().__init__(store, f"add {describe(ann)}", on_error)
        self.annotation = ann

    def _do(self) -> None:
        self.store.add(self.annotation)

    def _undo(self) -> None:
        self.store.delete(self.annotation.id)


class DeleteAnnotation(UndoableChange):
    def __init__(self, store: AnnotationStore, ann: Annotation, on_error: ErrorHandler):
        super().__init__(store, f"delete {describe(ann)}", on_error)
        self.annotation_id = ann.id
        self.removed: Annotation | None = None

    def _do(self) -> None:
        self.removed = self.store.delete(self.annotation_id)

    def _undo(self) -> None:
        assert self.removed is not None  # set by _do, which the stack runs first
        self.store.restore(self.removed)


class EditAnnotation(UndoableChange):
    """Replace an annotation by a new version of it (same id)."""

    def __init__(self, store: AnnotationStore, new: Annotation, text: str,
                 on_error: ErrorHandler):
        super().__init__(store, text, on_error)
        self.new = new
        self.previous: Annotation | None = None

    def _do(self) -> None:
        self.previous = self.store.update(self.new)

    def _undo(self) -> None:
        assert self.previous is not None  # set by _do, which the stack runs first
        self.store.update(self.previous)
