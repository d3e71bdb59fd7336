"""``LinkedAnnotations``: each chart's market's annotations on it, whatever timeframe they
were made on, at their time span.

Chart 1's annotation layer (``annotations.dock``) draws those of its own timeframe; this draws
the rest there, and all of them on the other charts (a chart that keeps another symbol shows
that market's while it is live, none while it is not), follows every change to the store,
and highlights the annotation selected on the chart the keys act on.
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
        shown, found = self.area.shown(), {}
        for i, chart in enumerate(self.area.charts):
            graphics = self.graphics.get(id(chart))
            if graphics is None:
                graphics = self.graphics[id(chart)] = AnnotationGraphics(chart)
            key = self.area.series_key(i) if chart in shown else None
            if key is None:
                graphics.set_annotations([])
                continue
            if key.market not in found:
                found[key.market] = self.store.list(market=key.market)
            if i == 0:  # chart 1's own timeframe is its annotation layer's
                graphics.set_annotations([a for a in found[key.market]
                                          if a.timeframe != key.timeframe.name])
            else:
                graphics.set_annotations(found[key.market])

    def use_store(self, store: AnnotationStore) -> None:
        """Draw the marks of ``store`` instead (a consistency check's, or the trader's
        again)."""
        self._unsubscribe()
        self.store = store
        self._unsubscribe = store.subscribe(self._store_changed)
        self.reload()

    def set_clock(self, clock: int | None) -> None:
        """Follow the replay clock (None: no replay): each chart shows the marks it passed."""
        for graphics in self.graphics.values():
            graphics.set_clock(clock)

    def select(self, chart, ann) -> None:
        """Highlight ``ann`` (None: nothing) on ``chart``, and nothing on the others."""
        for other in self.area.charts:
            graphics = self.graphics.get(id(other))
            if graphics is not None:
                graphics.set_selected(ann if other is chart else None)

    def _store_changed(self, change: StoreChange) -> None:
        if len(change.annotations) > BULK_CHANGE:
            self.reload()
            return
        for i, chart in enumerate(self.area.shown()):
            graphics = self.graphics.get(id(chart))
            key = self.area.series_key(i)
            if graphics is None or key is None:
                continue
            for ann in change.annotations:
                if ann.market_key != key.market:
                    continue
                if change.action == "deleted":
                    graphics.remove(ann.id)
                elif i or ann.timeframe != key.timeframe.name:
                    graphics.put(ann)

    def close(self) -> None:
        self._unsubscribe()
        self.area.series_changed.disconnect(self.reload)
