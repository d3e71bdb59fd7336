"""``DrawingLayer``: the trader's drawings in the window, made and edited by keys.

The keys of the keymap's ``drawings.*`` commands act on the annotation layer's target chart
(the active one) through its ``DrawingTool`` (``annotations.drawing_tool``): H, /, V, B and R
start a level, trend line, vertical line, box or measure at the cursor candle's close; the
cursor keys and Up / Down move the pending point, Enter places it (a click places it where
clicked), Esc drops the tool; Shift+M turns the magnet on or off. D / Shift+D select the
chart's next and previous drawing, Alt+arrows move the selected one (a candle of the chart, or
a round hundredth of the visible prices), Shift+L locks it, Del deletes it, Esc lets it go, a
click on a drawing selects it; Shift+H hides every drawing, or shows them again. Every change
goes into the annotation store (``store.drawings``) as an undoable change on the annotation
layer's undo stack, so Ctrl+Z / Ctrl+Shift+Z undo and redo drawings and marks in one order.

Every shown chart draws the drawings of its market (``ChartDrawings``), whatever timeframe
they were made on, and follows each change to the store; a replay clock shows only those known
by then (``drawings.visible_at``: once the last candle a drawing touches has closed), and the
tool refuses points after it. Drawings are always the trader's own store's (a consistency
check swaps the marks, not the levels). The magnet and hiding are remembered.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QObject, QSettings
from PySide6.QtGui import QAction

from ...annotations.drawing_tool import DrawingTool, step_drawing
from ...annotations.drawings import Drawing, Shape, visible_at
from ...annotations.editing import ToolRefused
from ...annotations.model import AnnotationError
from ...market.series import MarketKey
from ...timeparse import format_minute
from ..chart.chart_widget import ChartWidget
from ..chart_area import ChartArea
from ..command_registry import create_command_actions
from .changes import AddDrawing, DeleteDrawing, EditDrawing, describe, shape_name
from .shapes import ChartDrawings, measure_text

if TYPE_CHECKING:
    from ..annotations.dock import AnnotationLayer

SHAPE_KEYS = {Shape.LEVEL: "drawings.level", Shape.TREND: "drawings.trend",
              Shape.VERTICAL: "drawings.vertical", Shape.BOX: "drawings.box",
              Shape.MEASURE: "drawings.measure"}
_HOW = {1: "Enter places it", 2: "Enter places its first point, then its second"}


def price_step(span: float) -> float:
    """A round step near a hundredth of the visible price ``span`` (1, 2 or 5 × 10^k)."""
    raw = max(span, 1e-12) / 100.0
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1.0, 2.0, 5.0, 10.0) if m * power >= raw)


class DrawingLayer(QObject):
    """See the module docstring. ``command_actions``: the Draw menu's actions by id."""

    def __init__(self, annotations: AnnotationLayer, area: ChartArea, settings: QSettings):
        super().__init__(annotations)
        self.annotations = annotations
        self.store = annotations.own_store
        self.area = area
        self.settings = settings
        self.clock: int | None = None
        self.selected: Drawing | None = None
        self.magnet = cast(bool, settings.value("drawings/magnet", True, type=bool))
        self.hidden = cast(bool, settings.value("drawings/hidden", False, type=bool))
        self._tools: dict[int, DrawingTool] = {}
        self.shown = {id(chart): ChartDrawings(chart) for chart in area.charts}
        handlers = {
            **{command: self._starter(shape) for shape, command in SHAPE_KEYS.items()},
            "drawings.magnet": self.set_magnet,
            "drawings.point_up": lambda: self.nudge(1),
            "drawings.point_down": lambda: self.nudge(-1),
            "drawings.next": lambda: self.step(1),
            "drawings.previous": lambda: self.step(-1),
            "drawings.move_left": lambda: self.move(-1, 0),
            "drawings.move_right": lambda: self.move(1, 0),
            "drawings.move_up": lambda: self.move(0, 1),
            "drawings.move_down": lambda: self.move(0, -1),
            "drawings.lock": self.toggle_lock,
            "drawings.hide_all": self.set_hidden,
        }
        self.command_actions: dict[str, QAction] = create_command_actions(area.primary,
                                                                          handlers)
        for chart in area.charts[1:]:  # the keys act on whichever chart has the keyboard
            chart.addActions(list(self.command_actions.values()))
        for command, on in (("drawings.magnet", self.magnet),
                            ("drawings.hide_all", self.hidden)):
            self.command_actions[command].setCheckable(True)
            self.command_actions[command].setChecked(on)
        for chart in area.charts:
            chart.cursor_moved.connect(self._cursor_moved)
        self._unsubscribe = self.store.drawings.subscribe(self._store_changed)
        area.series_changed.connect(self.reload)
        annotations.drawings = self
        self.reload()

    # -- what the charts show ----------------------------------------------------------------
    def reload(self) -> None:
        """Every shown chart's drawings again (after a change, a series switch, the clock)."""
        shown, found = self.area.shown(), {}
        for index, chart in enumerate(self.area.charts):
            key = self.area.series_key(index) if chart in shown else None
            drawings: list[Drawing] = []
            if key is not None:
                if key.market not in found:
                    found[key.market] = visible_at(self.store.drawings.list(key.market),
                                                   self.clock)
                drawings = found[key.market]
            view = self.shown[id(chart)]
            view.set_drawings(drawings)
            view.set_visible(not self.hidden)
        if self.selected is not None:
            self.selected = next((d for d in self._on_target() if d.id == self.selected.id),
                                 None)
        for view in self.shown.values():
            view.set_selected(self.selected.id if self.selected else None)

    def set_clock(self, clock: int | None) -> None:
        """Follow the replay clock (None: no replay)."""
        self.clock = clock
        for tool in self._tools.values():
            tool.cancel()
        for view in self.shown.values():
            view.set_sketch(None, None)
        self.reload()

    def _store_changed(self, _change) -> None:
        if not self.annotations.closed:
            self.reload()

    def _on_target(self) -> list[Drawing]:
        return self.shown[id(self.annotations.target)].drawings

    def on_primary(self) -> list[Drawing]:
        """What chart 1 shows: the live market's drawings (known by the replay clock)."""
        return self.shown[id(self.area.primary)].drawings

    def all_drawings(self) -> list[Drawing]:
        return self.store.drawings.list()

    def set_alerted(self, drawing_ids: set[str]) -> None:
        """The levels that have an alert (their tags say so)."""
        for view in self.shown.values():
            view.set_alerted(drawing_ids)

    # -- the tool ------------------------------------------------------------------------
    @property
    def target(self) -> ChartWidget:
        return self.annotations.target

    @property
    def tool(self) -> DrawingTool:
        tool = self._tools.setdefault(id(self.target), DrawingTool(self.magnet))
        tool.magnet = self.magnet
        return tool

    @property
    def active(self) -> bool:
        """Whether the target chart has a drawing being placed."""
        return self.tool.active

    def _starter(self, shape: Shape):
        return lambda: self.begin(shape)

    def _sketch(self, chart: ChartWidget | None = None) -> None:
        chart = chart or self.target
        tool = self._tools.get(id(chart))
        series = self.annotations.series
        sketch = tool.sketch(*series) if tool is not None and series is not None else None
        self.shown[id(chart)].set_sketch(sketch, tool.point if tool is not None else None)

    def _tick(self) -> float:
        lo, hi = self.target.price_view.viewRange()[1]
        return price_step(hi - lo)

    def begin(self, shape: Shape) -> None:
        if not self.annotations.ready():
            return
        if self.hidden:
            self.set_hidden(False)
        try:
            self.tool.begin(shape, self.target.candles, self.target.cursor_index, self.clock)
        except ToolRefused as exc:
            self.annotations.say(str(exc))
            return
        self._sketch()
        magnet = "magnet on: Up / Down step through the candle's values" if self.magnet \
            else "magnet off: Up / Down move it"
        self.annotations.say(f"{shape_name(shape).capitalize()}: the cursor keys move the "
                             f"point ({magnet}); {_HOW[shape.points]}; Esc cancels")

    def nudge(self, step: int) -> None:
        if not self.tool.active:
            self.annotations.say("No drawing being placed (H level, / trend line, V vertical, "
                                 "B box, R measure); Alt+Up / Alt+Down move the selected one")
            return
        try:
            point = self.tool.nudge(self.target.candles, self.target.cursor_index, step,
                                    self._tick())
        except ToolRefused as exc:
            self.annotations.say(str(exc))
            return
        self._sketch()
        if point is not None:
            self.annotations.say(f"{point.field or 'Price'} "
                                 f"{self.target.format_price(point.price)}")

    def place(self) -> bool:
        """Enter: place the pending point; False when no drawing is being placed (Enter
        then closes a trade)."""
        if not self.tool.active:
            return False
        if not self.annotations.ready():
            return True
        self._placed(lambda series: self.tool.place(self.target.candles,
                                                    self.target.cursor_index, *series,
                                                    self.clock))
        return True

    def click(self, index: int, price: float) -> bool:
        """A click on the target chart: a point of the drawing being placed, or the drawing
        under it selected; False when it was neither."""
        if self.tool.active:
            if self.annotations.ready():
                self._placed(lambda series: self.tool.click(self.target.candles, index, price,
                                                            *series, self.clock))
            return True
        hit = self.shown[id(self.target)].hit(index, price)
        if hit is None:
            if self.selected is not None:
                self.select(None)
            return False
        self.select(hit)
        return True

    def _placed(self, place: Callable[[tuple[MarketKey, str]], Drawing | None]) -> None:
        """Run ``place(series)`` (the tool placing a point for the target's series) and show
        what came of it, or why it was refused."""
        series = self.annotations.series
        assert series is not None  # the caller checked ready()
        try:
            drawing = place(series)
        except ToolRefused as exc:
            self.annotations.say(str(exc))
            return
        self._finish(drawing)

    def _finish(self, drawing: Drawing | None) -> None:
        if drawing is None:
            self._sketch()
            self.annotations.say("First point placed: move to the second and press Enter "
                                 "(or click it); Esc cancels")
            return
        self._sketch()
        self.annotations.undo_stack.push(AddDrawing(self.store, drawing, self._failed))
        self.select(drawing)
        self.annotations.say(f"{describe(drawing).capitalize()} drawn: {self._what(drawing)} "
                             f"(Ctrl+Z undoes)")

    def _what(self, d: Drawing) -> str:
        if d.shape is Shape.MEASURE:
            return measure_text(d, self.target.format_price)
        if d.shape is Shape.VERTICAL:
            return format_minute(d.ts1)
        prices = [p for _, p in d.points if p is not None]
        return " → ".join(self.target.format_price(p) for p in prices)

    def cancel(self) -> bool:
        """Esc: drop the drawing being placed, else let the selected one go; False when
        there was neither (Esc then cancels an entry or a mark)."""
        shape = self.tool.cancel()
        if shape is not None:
            self._sketch()
            self.annotations.say(f"{shape_name(shape).capitalize()} cancelled")
            return True
        if self.selected is not None:
            self.select(None)
            self.annotations.say("Drawing let go")
            return True
        return False

    def set_magnet(self, on: bool | None = None) -> None:
        self.magnet = (not self.magnet) if on is None else bool(on)
        self.settings.setValue("drawings/magnet", self.magnet)
        self.command_actions["drawings.magnet"].setChecked(self.magnet)
        self.tool.set_magnet(self.magnet, self.target.candles, self.target.cursor_index)
        self._sketch()
        self.annotations.say("Magnet on: points snap to the candle's open, high, low or close"
                             if self.magnet else "Magnet off: points keep the price you give")

    def set_hidden(self, hidden: bool | None = None) -> None:
        self.hidden = (not self.hidden) if hidden is None else bool(hidden)
        self.settings.setValue("drawings/hidden", self.hidden)
        self.command_actions["drawings.hide_all"].setChecked(self.hidden)
        for view in self.shown.values():
            view.set_visible(not self.hidden)
        self.annotations.say("Every drawing hidden (Shift+H shows them)" if self.hidden
                             else "Drawings shown")

    def _cursor_moved(self, _ts) -> None:
        chart = self.sender()
        tool = self._tools.get(id(chart))
        if isinstance(chart, ChartWidget) and tool is not None and tool.active:
            tool.follow(chart.candles, chart.cursor_index)
            self._sketch(chart)

    # -- the selected drawing --------------------------------------------------------------
    def select(self, drawing: Drawing | None) -> None:
        self.selected = drawing
        for view in self.shown.values():
            view.set_selected(drawing.id if drawing else None)

    def step(self, step: int) -> None:
        drawing = step_drawing(self._on_target(), self.selected, step)
        if drawing is None:
            self.annotations.say("No drawings on this chart" if not self._on_target() else
                                 "No drawing after it" if step > 0 else "No drawing before it")
            return
        self.select(drawing)
        self.target.set_cursor_time(drawing.ts1)
        lock = " (locked)" if drawing.locked else ""
        self.annotations.say(f"{describe(drawing).capitalize()}{lock}: {self._what(drawing)}; "
                             f"Alt+arrows move it, Shift+L locks it, Del deletes it")

    def move(self, candles: int, steps: int) -> None:
        d = self.selected
        if d is None:
            self.annotations.say("Select a drawing first (D / Shift+D, or click it)")
            return
        c = self.target.candles
        tf = c.timeframe.ms if c is not None else 0
        try:
            moved = d.moved(candles * tf, steps * self._tick())
        except AnnotationError as exc:
            self.annotations.say(f"Not moved: {exc}")
            return
        if self.clock is not None and moved.known_at > self.clock:
            self.annotations.say("Not moved: it would reach past the replay clock")
            return
        self.annotations.undo_stack.push(EditDrawing(self.store, moved, f"move {describe(d)}",
                                                     self._failed))
        self.select(moved)
        self.annotations.say(f"{describe(d).capitalize()} moved: {self._what(moved)}")

    def toggle_lock(self) -> None:
        d = self.selected
        if d is None:
            self.annotations.say("Select a drawing first (D / Shift+D, or click it)")
            return
        new = d.edited(locked=not d.locked)
        verb = "lock" if new.locked else "unlock"
        self.annotations.undo_stack.push(EditDrawing(self.store, new, f"{verb} {describe(d)}",
                                                     self._failed))
        self.select(new)
        self.annotations.say(f"{describe(d).capitalize()} {verb}ed")

    def delete_selected(self) -> bool:
        """Del: delete the selected drawing; False when none is selected (Del then deletes
        the annotation under the cursor)."""
        d = self.selected
        if d is None:
            return False
        if d.locked:
            self.annotations.say(f"This {describe(d)} is locked: Shift+L unlocks it")
            return True
        self.annotations.undo_stack.push(DeleteDrawing(self.store, d, self._failed))
        self.select(None)
        self.annotations.say(f"Deleted the {describe(d)} (Ctrl+Z brings it back)")
        return True

    def _failed(self, text: str) -> None:
        self.reload()
        self.annotations.say(text)

    def close(self) -> None:
        self._unsubscribe()
