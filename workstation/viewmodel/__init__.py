"""View models: what the views show, as plain Python state with plain callbacks (no Qt).

``ChartViewModel`` is one chart's view in time (visible range, cursor, follow-live), with the
``TimeMap`` between a series' times and the chart's x; it is the seam synchronized charts
share.
"""

from .chart import ChartViewModel, ViewLimits, view_limits
from .listeners import Listeners
from .time_map import TimeMap

__all__ = ["ChartViewModel", "Listeners", "TimeMap", "ViewLimits", "view_limits"]
