"""The Backtest view's two linked plots: equity of every signal (buy & hold among them) and its
drawdown below, against time, each with a legend naming its lines. Long spans are drawn
peak-downsampled to the plot's width (1.7M candles stay responsive)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ...backtest.report import BUY_AND_HOLD, BacktestResult

COLORS = ("#42a5f5", "#ffca28", "#ab47bc", "#26a69a", "#ec407a", "#66bb6a")
HOLD_COLOR = "#9e9e9e"


def drawdown_pct(equity: np.ndarray) -> np.ndarray:
    """Each close's distance below the equity's running peak, in % (0 at a new peak)."""
    return (equity / np.maximum.accumulate(equity) - 1.0) * 100.0


class EquityPlots(QWidget):
    """``show_results(results, ts)`` draws each result's equity and drawdown over its span
    (``ts``: the candles' open times, ms UTC); ``names()`` the lines drawn, in legend order."""

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.equity = pg.PlotWidget(axisItems={"bottom": pg.DateAxisItem()})
        self.drawdown = pg.PlotWidget(axisItems={"bottom": pg.DateAxisItem()})
        self.equity.setTitle("Equity")
        self.drawdown.setTitle("Drawdown, %")
        self.drawdown.setXLink(self.equity)
        for plot in (self.equity, self.drawdown):
            plot.showGrid(x=True, y=True, alpha=0.15)
            plot.setMinimumHeight(160)
            plot.addLegend(offset=(8, 4))
        layout.addWidget(self.equity, 3)
        layout.addWidget(self.drawdown, 2)
        self._names: list[str] = []

    def clear(self) -> None:
        for plot in (self.equity, self.drawdown):
            plot.clear()
        self._names = []

    def names(self) -> list[str]:
        return list(self._names)

    def show_results(self, results: list[BacktestResult], ts: np.ndarray) -> None:
        self.clear()
        colors = iter(COLORS)
        for result in results:
            start, stop = result.run.span
            x = ts[start:stop] / 1000.0
            hold = result.name == BUY_AND_HOLD
            pen = pg.mkPen(HOLD_COLOR if hold else next(colors, COLORS[-1]), width=1.5,
                           style=pg.QtCore.Qt.PenStyle.DashLine if hold else
                           pg.QtCore.Qt.PenStyle.SolidLine)
            for plot, y in ((self.equity, result.run.equity),
                            (self.drawdown, drawdown_pct(result.run.equity))):
                item = plot.plot(x, y, pen=pen, name=result.name)
                item.setDownsampling(auto=True, method="peak")
                item.setClipToView(True)
            self._names.append(result.name)
        for plot in (self.equity, self.drawdown):
            plot.enableAutoRange()
