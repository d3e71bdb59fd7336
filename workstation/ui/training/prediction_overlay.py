"""Live predictions on the chart, through its overlay API (``chart.overlays``).

For the newest prediction: a ghost candle where the next candle will be, a trend arrow from
the last close across the trend horizon (one standard deviation of the predicted return per
candle, scaled by the square root of the horizon; flat when the trend says flat), a label
with the predicted direction and its confidence, and in the pane's top right corner a badge
with the position the model suggests holding once the newest candle has closed (what it
learned from the trader's marks: flat, long or short) and its probability. When a prediction
matures, the candle it was about gets a mark, green ✓ or red ✗: above the candle for the
next-candle direction, below it for the trend (made ``trend_horizon`` candles earlier).
"""

from __future__ import annotations

import math
from collections import deque

CURRENT = "prediction"
MARKS = "prediction.marks"
MAX_MARKS = 400  # the oldest marks are removed beyond this
_BPS = 1e-4
_DIRECTION_COLORS = {"up": "#26a69a", "down": "#ef5350", "flat": "#9e9e9e"}
_POSITION_COLORS = {"long": "#26a69a", "short": "#ef5350", "flat": "#9e9e9e"}
_RIGHT, _WRONG = "#00c853", "#ff1744"


class PredictionOverlay:
    """Draws ``OnlineStep``s (``workstation.ml.online``) on ``chart``; reads candle prices
    from ``live_data`` to place the marks."""

    def __init__(self, chart, live_data):
        self.chart = chart
        self.live_data = live_data
        self._marks: deque[int] = deque()
        self.right = 0
        self.wrong = 0
        self.prediction = None  # the newest one shown

    @property
    def overlays(self):
        return self.chart.overlays

    def show_step(self, step) -> None:
        """The step's prediction replaces the previous one; its outcomes add marks."""
        for outcome in step.outcomes:
            self._mark(outcome)
        self._show_prediction(step.prediction)

    def _show_prediction(self, p) -> None:
        o = self.overlays
        o.clear(CURRENT)
        g = p.ghost
        o.set_ghost(g.ts, g.open, g.high, g.low, g.close, _DIRECTION_COLORS[p.candle_label])
        tf_ms = p.target_ts - p.ts
        direction = {"down": -1, "flat": 0, "up": 1}[p.trend_label]
        sigma = p.return_std_bps if p.return_std_bps is not None else abs(p.return_bps)
        end_price = p.close * math.exp(direction * sigma * math.sqrt(p.trend_horizon) * _BPS)
        end_ts = p.ts + p.trend_horizon * tf_ms
        color = _DIRECTION_COLORS[p.trend_label]
        o.add_segment(p.ts, p.close, end_ts, end_price, color, dashed=False, group=CURRENT)
        trend_p = max(p.trend_probs)
        if direction:
            o.add_marker(end_ts, end_price, "up" if direction > 0 else "down", color,
                         f"trend {trend_p:.0%}", group=CURRENT)
        o.add_label(g.ts, g.high, f"next {p.candle_label} {p.confidence:.0%}",
                    _DIRECTION_COLORS[p.candle_label], group=CURRENT)
        o.set_badge(position_text(p), _POSITION_COLORS[p.position_label], group=CURRENT)
        self.prediction = p

    def _mark(self, outcome) -> None:
        candles = self.live_data.candles
        i = candles.index_of(outcome.matured_ts)
        if i < 0 or int(candles.ts[i]) != outcome.matured_ts:
            return  # that candle is not on screen (another series is shown now)
        color = _RIGHT if outcome.correct else _WRONG
        sign = "✓" if outcome.correct else "✗"
        if outcome.head == "candle":
            handle = self.overlays.add_marker(outcome.matured_ts, float(candles.high[i]), "down",
                                              color, sign, group=MARKS)
        else:
            handle = self.overlays.add_marker(outcome.matured_ts, float(candles.low[i]), "up",
                                              color, sign, group=MARKS)
        if outcome.correct:
            self.right += 1
        else:
            self.wrong += 1
        self._marks.append(handle)
        while len(self._marks) > MAX_MARKS:
            self.overlays.remove(self._marks.popleft())

    def clear(self) -> None:
        """Remove every prediction overlay (live mode ended or the series changed)."""
        self.prediction = None
        self.overlays.clear(CURRENT)
        self.overlays.clear(MARKS)
        self.overlays.clear_ghost()
        self._marks.clear()


def position_text(p) -> str:
    """The badge of prediction ``p``: ``"suggested LONG 72%"``."""
    return f"suggested {p.position_label.upper()} {p.position_confidence:.0%}"
