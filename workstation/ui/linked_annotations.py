"""``LinkedAnnotations``: a market's annotations on every chart of the area, whatever
timeframe they were made on, at their time span.

Chart 1's annotation layer (``annotations.dock``) draws those of its own timeframe; this draws
the rest there, and all of them on the other charts (except a chart that kept another
symbol's candles), follows every change to the store, and highlights the annotation selected
on the chart the keys act on.
"""

from __future__ import annotations

from ..annotations.store import AnnotationStore, StoreChange
from .annotations.drawing import AnnotationGraphics
from .chart_area import ChartArea

BULK_CHANGE = 100  # a change of more annotations than this reloads them all


class LinkedAnnotations:
    """See the module docstring; ``close()`` stops listening to the store."""

    def __init__(self, store: AnnotationStore, area: ChartArea):
        self.store = store
        self.area = area
        self.graphics: dict[int, AnnotationGraphics] = {}  # id(chart) -> what it draws
        self._unsubscribe = store.subscribe(self._store_changed)
        area.series_changed.connect(self.reload)
        self.reload()

    def on(self, chart) -> AnnotationGraphics | None:
        """What this draws on ``chart`` (None before it drew there)."""
        return self.graphics.get(id(chart))

    def reload(self) -> None:
        key = self.area.key
        found = self.store.list(market=key.market) if key is not None else []
        for i, chart in enumerate(self.area.charts):
            graphics = self.graphics.get(id(chart))
            if graphics is None:
                graphics = self.graphics[id(chart)] = AnnotationGraphics(chart)
            if key is None or chart not in self.area.shown() or i in self.area.frozen:
                graphics.set_annotations([])
            elif i == 0:  # chart 1's own timeframe is its annotation layer's
                graphics.set_annotations([a for a in found if a.timeframe != key.timeframe.name])
            else:
                graphics.set_annotations(found)

    def select(self, chart, ann) -> None:
        """Highlight ``ann`` (None: nothing) on ``chart``, and nothing on the others."""
        for other in self.area.charts:
            graphics = self.graphics.get(id(other))
            if graphics is not None:
                graphics.set_selected(ann if other is chart else None)

    def _store_changed(self, change: StoreChange) -> None:
        key = self.area.key
        if key is None:
            return
        mine = [a for a in change.annotations if a.market_key == key.market]
        if len(mine) > BULK_CHANGE:
            self.reload()
            return
        for i, chart in enumerate(self.area.shown()):
            graphics = self.graphics.get(id(chart))
            if graphics is None or i in self.area.frozen:
                continue
            for ann in mine:
                if change.action == "deleted":
                    graphics.remove(ann.id)
                elif i or ann.timeframe != key.timeframe.name:
                    graphics.put(ann)

    def close(self) -> None:
        self._unsubscribe()
        self.area.series_changed.disconnect(self.reload)
