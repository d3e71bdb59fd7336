"""Drawings in the window: the tools on keys (``layer``), what each chart paints
(``shapes``) and their undoable store changes (``changes``)."""
