"""Short texts drawn on every frame (axis labels, annotation labels), laid out once."""

from __future__ import annotations

from pyqtgraph.Qt import QtCore, QtGui

MAX_KEPT = 2000  # laid-out texts kept before the cache starts over


class TextCache:
    """Draws texts in one font. A text seen before is drawn from a cached ``QStaticText``
    (laid out once, about 3x cheaper to draw); a new one is drawn directly, since laying out
    a ``QStaticText`` costs as much as eight plain draws and zooming keeps producing new
    labels."""

    def __init__(self, font: QtGui.QFont):
        self.font = font
        self.metrics = QtGui.QFontMetricsF(font)
        self._texts: dict[str, QtGui.QStaticText] = {}
        self._seen: set[str] = set()

    def width(self, text: str) -> float:
        st = self._texts.get(text)
        return st.size().width() if st is not None else self.metrics.horizontalAdvance(text)

    def draw(self, p: QtGui.QPainter, x: float, top: float, text: str,
             centred: bool = False) -> None:
        """Draw ``text`` in the painter's pen with its top at ``top`` and its left (or
        centre) at ``x``; the painter's font must be this cache's."""
        st = self._texts.get(text)
        if st is None and text in self._seen:
            if len(self._texts) > MAX_KEPT:
                self._texts.clear()
                self._seen.clear()
            st = QtGui.QStaticText(text)
            st.setTextFormat(QtCore.Qt.TextFormat.PlainText)
            st.prepare(QtGui.QTransform(), self.font)
            self._texts[text] = st
        if st is not None:
            left = x - st.size().width() / 2 if centred else x
            p.drawStaticText(QtCore.QPointF(left, top), st)
            return
        self._seen.add(text)
        left = x - self.metrics.horizontalAdvance(text) / 2 if centred else x
        p.drawText(QtCore.QPointF(left, top + self.metrics.ascent()), text)
