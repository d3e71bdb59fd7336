"""``ElidedLabel``: a one-line label that, when its text does not fit, shows it elided in the
middle ("binance ETH/…_1m.csv.gz") with the whole text in its tooltip; ``elided_path``: a
source or path that keeps its file's name whole, the folders giving way first."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QLabel, QWidget

MIN_CHARS = 12  # the narrowest it lays out to: about this many characters, elided


def elided_path(text: str, metrics: QFontMetrics, width: int) -> str:
    """``text`` (``csv:/home/…/ethusdt_1m.csv.gz``, any path) within ``width`` px: whole if it
    fits, else its folders elided on the right before the file's name ("csv:/home/tr…/
    ethusdt_1m.csv.gz"), else the name itself elided in the middle after "…/"; two files of
    one folder never read the same."""
    if metrics.horizontalAdvance(text) <= width:
        return text
    folders, slash, name = text.rpartition("/")
    tail = slash + name
    room = width - metrics.horizontalAdvance(tail)
    if slash and room >= metrics.horizontalAdvance(folders[:6] + "…"):
        return metrics.elidedText(folders, Qt.TextElideMode.ElideRight, room) + tail
    lead = "…/" if slash else ""
    return lead + metrics.elidedText(name, Qt.TextElideMode.ElideMiddle,
                                     max(width - metrics.horizontalAdvance(lead), 1))


class ElidedLabel(QLabel):
    """A ``QLabel`` whose ``text()`` is the whole text, painted elided in the middle to the
    width it gets; its tooltip is the whole text, then ``description`` (what the label is)."""

    def __init__(self, text: str = "", description: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self.description = description
        self.setText(text)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip("\n".join(t for t in (text, self.description) if t))

    def shown_text(self) -> str:
        """The text as painted at the label's width now."""
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideMiddle,
                                             self.contentsRect().width())

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), self.fontMetrics().averageCharWidth() * MIN_CHARS),
                     hint.height())

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        self.style().drawItemText(painter, self.contentsRect(), int(self.alignment()),
                                  self.palette(), self.isEnabled(), self.shown_text(),
                                  QPalette.ColorRole.WindowText)
        painter.end()
