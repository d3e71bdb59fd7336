"""``PaneItem``: an item as large as a pane's view that paints through a function."""

from __future__ import annotations

import pyqtgraph as pg
from pyqtgraph.Qt import QtCore, QtGui


class PaneItem(pg.GraphicsObject):
    """An item as large as the price pane's view; ``paint_fn(p, exposed, bounds)`` paints
    the exposed part."""

    def __init__(self, view: pg.ViewBox, paint_fn, z: float, tip_fn=None):
        super().__init__()
        self._view = view
        self._paint_fn = paint_fn
        self._tip_fn = tip_fn  # tip_fn(pos) -> the tooltip at item position pos ("" none)
        self._bounds = QtCore.QRectF()
        self.setFlag(self.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self.setZValue(z)
        view.addItem(self, ignoreBounds=True)
        view.sigRangeChanged.connect(self._sync_bounds)
        view.sigResized.connect(self._sync_bounds)
        self._sync_bounds()

    def _sync_bounds(self, *args) -> None:
        rect = self._view.viewRect()
        if rect != self._bounds:
            self.prepareGeometryChange()
            self._bounds = QtCore.QRectF(rect)

    def boundingRect(self) -> QtCore.QRectF:
        return self._bounds

    def hoverEvent(self, ev) -> None:
        """pyqtgraph's hover: the tooltip of what lies under the mouse (empty over nothing,
        so that the items beneath show theirs)."""
        if self._tip_fn is not None:
            self.setToolTip("" if ev.isExit() else self._tip_fn(ev.pos()))

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        if self._bounds.isNull():
            return
        exposed = option.exposedRect.intersected(self._bounds)
        self._paint_fn(p, self._bounds if exposed.isEmpty() else exposed, self._bounds)
