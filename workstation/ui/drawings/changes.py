"""Undoable drawing changes, on the annotation layer's undo stack beside the marks': each
calls ``store.drawings`` and keeps what it returned for its undo."""

from __future__ import annotations

from ...annotations.drawings import Drawing, Shape
from ...annotations.store import AnnotationStore
from ..annotations.undoable_changes import ErrorHandler, UndoableChange


def shape_name(shape: Shape) -> str:
    """``"level"``, ``"trend line"``, ``"vertical line"``, ``"box"``, ``"measure"``."""
    return {Shape.TREND: "trend line", Shape.VERTICAL: "vertical line"}.get(shape,
                                                                          shape.value)


def describe(d: Drawing) -> str:
    return shape_name(d.shape)


class AddDrawing(UndoableChange):
    def __init__(self, store: AnnotationStore, d: Drawing, on_error: ErrorHandler):
        super().__init__(store, f"add {describe(d)}", on_error)
        self.drawing = d

    def _do(self) -> None:
        self.store.drawings.add(self.drawing)

    def _undo(self) -> None:
        self.store.drawings.delete(self.drawing.id)


class DeleteDrawing(UndoableChange):
    def __init__(self, store: AnnotationStore, d: Drawing, on_error: ErrorHandler):
        super().__init__(store, f"delete {describe(d)}", on_error)
        self.drawing_id = d.id
        self.removed: Drawing | None = None

    def _do(self) -> None:
        self.removed = self.store.drawings.delete(self.drawing_id)

    def _undo(self) -> None:
        assert self.removed is not None  # set by _do, which the stack runs first
        self.store.drawings.restore(self.removed)


class EditDrawing(UndoableChange):
    """Replace a drawing by a new version of it (same id)."""

    def __init__(self, store: AnnotationStore, new: Drawing, text: str,
                 on_error: ErrorHandler):
        super().__init__(store, text, on_error)
        self.new = new
        self.previous: Drawing | None = None

    def _do(self) -> None:
        self.previous = self.store.drawings.update(self.new)

    def _undo(self) -> None:
        assert self.previous is not None  # set by _do, which the stack runs first
        self.store.drawings.update(self.previous)
