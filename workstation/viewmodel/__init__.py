"""View models: what the views show, as plain Python state with plain callbacks (no Qt).

``ChartViewModel`` is one chart's view in time (visible range, cursor, follow-live), with the
``TimeMap`` between a series' times and the chart's x; it is the seam synchronized charts
share; ``LinkGroup`` keeps several of them in step by time (links.py).
"""

from .chart import ChartViewModel, ViewLimits, view_limits
from .links import LinkGroup, candle_span
from .listeners import Listeners
from .time_map import TimeMap

__all__ = ["ChartViewModel", "LinkGroup", "Listeners", "TimeMap", "ViewLimits", "candle_span",
           "view_limits"]
