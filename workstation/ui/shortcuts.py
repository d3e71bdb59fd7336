"""The one registry of commands and their keys.

Every command of the application is a ``Command`` registered here, whatever area it belongs
to; menus, toolbars and widgets create their ``QAction``s from it (``create_actions``), and
the ``?`` cheat sheet and the command palette list it (``cheat_sheet``, ``commands``). An area
adds its commands with ``register(Command(...), ...)`` from its own module; a key that two
commands claim, or one id registered with two meanings, is an error at registration, not a
shortcut that silently never fires.

Keys are written as ``QKeySequence`` reads them in portable form: ``"Left"``,
``"Shift+Left"``, ``"PgUp"``, ``"+"``, ``"Ctrl+Shift+Z"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from PySide6 import QtCore, QtGui, QtWidgets

from ..errors import WorkstationError


@dataclass(frozen=True)
class Command:
    """A user command: ``id`` (``area.name``), menu ``text``, its ``keys`` (first is shown
    first), the cheat-sheet ``group`` and a one-line ``tooltip``."""

    id: str
    text: str
    keys: tuple[str, ...] = ()
    group: str = "General"
    tooltip: str = ""


class ShortcutConflict(WorkstationError):
    """Two commands claim one key, or one id is registered with two meanings."""


def normalize_key(key: str) -> str:
    """The portable text of ``key`` (``"shift+left"`` -> ``"Shift+Left"``); a clear error for
    something Qt cannot read as a single key combination."""
    seq = QtGui.QKeySequence(key)
    if seq.isEmpty() or seq.count() != 1 or seq[0].key() == QtCore.Qt.Key.Key_unknown:
        raise ShortcutConflict(f"{key!r} is not a key combination Qt understands")
    return seq.toString(QtGui.QKeySequence.SequenceFormat.PortableText)


class ShortcutRegistry:
    """Commands by id, in registration order, with a check that no key is claimed twice."""

    def __init__(self):
        self._commands: dict[str, Command] = {}
        self._owner_of_key: dict[str, str] = {}

    def register(self, *commands: Command) -> None:
        """Add commands; registering an identical command again is a no-op."""
        for cmd in commands:
            known = self._commands.get(cmd.id)
            if known == cmd:
                continue
            if known is not None:
                raise ShortcutConflict(f"command {cmd.id!r} is already registered as {known!r}")
            keys = [normalize_key(k) for k in cmd.keys]
            for key in keys:
                owner = self._owner_of_key.get(key)
                if owner is not None:
                    raise ShortcutConflict(f"key {key} of {cmd.id!r} already belongs to {owner!r}")
            self._commands[cmd.id] = cmd
            for key in keys:
                self._owner_of_key[key] = cmd.id

    def command(self, command_id: str) -> Command:
        try:
            return self._commands[command_id]
        except KeyError:
            raise WorkstationError(f"no command {command_id!r} is registered") from None

    def find(self, command_id: str) -> Command | None:
        """The command registered as ``command_id``, or None."""
        return self._commands.get(command_id)

    def commands(self, group: str | None = None) -> list[Command]:
        """Registered commands in registration order, optionally of one group."""
        return [c for c in self._commands.values() if group is None or c.group == group]

    def groups(self) -> list[str]:
        return list(dict.fromkeys(c.group for c in self._commands.values()))

    def owner(self, key: str) -> Command | None:
        """The command that a key triggers, if any."""
        command_id = self._owner_of_key.get(normalize_key(key))
        return self._commands[command_id] if command_id else None

    def cheat_sheet(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """``[(group, [(keys as the user sees them, text), ...]), ...]`` for the ``?`` sheet."""
        return [(g, [(keys_text(c), c.text) for c in self.commands(g)]) for g in self.groups()]

    def create_actions(self, widget: QtWidgets.QWidget,
                       handlers: Mapping[str, Callable[[], object]],
                       context: QtCore.Qt.ShortcutContext =
                       QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut,
                       ) -> dict[str, QtGui.QAction]:
        """One ``QAction`` per handled command, added to ``widget``: its keys as shortcuts (in
        ``context``), its text, and a tooltip that shows the keys. Returns them by id."""
        actions: dict[str, QtGui.QAction] = {}
        for command_id, handler in handlers.items():
            cmd = self.command(command_id)
            action = QtGui.QAction(cmd.text, widget)
            action.setObjectName(cmd.id)
            action.setShortcuts([QtGui.QKeySequence(k) for k in cmd.keys])
            action.setShortcutContext(context)
            action.setToolTip(tooltip_text(cmd))
            action.setStatusTip(cmd.tooltip or cmd.text)
            action.triggered.connect(handler)
            widget.addAction(action)
            actions[cmd.id] = action
        return actions


def keys_text(cmd: Command) -> str:
    """The keys as the user's platform writes them, ``" / "`` between alternatives."""
    native = QtGui.QKeySequence.SequenceFormat.NativeText
    return " / ".join(QtGui.QKeySequence(k).toString(native) for k in cmd.keys)


def tooltip_text(cmd: Command) -> str:
    text = cmd.tooltip or cmd.text
    return f"{text} ({keys_text(cmd)})" if cmd.keys else text


REGISTRY = ShortcutRegistry()
"""The application's registry."""

register = REGISTRY.register
command = REGISTRY.command
find = REGISTRY.find
commands = REGISTRY.commands
cheat_sheet = REGISTRY.cheat_sheet
create_actions = REGISTRY.create_actions

CHART = "Chart"
CHART_COMMANDS: tuple[Command, ...] = (
    Command("chart.cursor_left", "Cursor to previous candle", ("Left",), CHART),
    Command("chart.cursor_right", "Cursor to next candle", ("Right",), CHART),
    Command("chart.cursor_left_10", "Cursor 10 candles back", ("Shift+Left",), CHART),
    Command("chart.cursor_right_10", "Cursor 10 candles forward", ("Shift+Right",), CHART),
    Command("chart.first", "Cursor to first candle", ("Home",), CHART),
    Command("chart.last", "Cursor to last candle", ("End",), CHART),
    Command("chart.zoom_in", "Zoom in", ("+", "="), CHART, "Zoom in about the cursor candle"),
    Command("chart.zoom_out", "Zoom out", ("-",), CHART, "Zoom out about the cursor candle"),
    Command("chart.page_back", "Back one screen", ("PgUp",), CHART,
            "Pan one screen back in time (the cursor moves with it)"),
    Command("chart.page_forward", "Forward one screen", ("PgDown",), CHART,
            "Pan one screen forward in time (the cursor moves with it)"),
    Command("chart.fit_all", "Fit all candles", ("F",), CHART),
    Command("chart.toggle_autoscale", "Toggle price auto-scale", ("A",), CHART,
            "Fit the price axis to the visible candles, or pin it where it is"),
    Command("chart.go_live", "Back to the live edge", ("0",), CHART,
            "Show the newest candle and follow new ones"),
    Command("chart.toggle_utc", "Toggle UTC / local time", (), CHART,
            "Show times in UTC or in the computer's time zone"),
    Command("chart.focus", "Focus chart 1", ("Ctrl+1",), CHART,
            "Bring the charts forward and give the keyboard to chart 1 from anywhere in the "
            "window, so its keys act"),
)

register(*CHART_COMMANDS)

CHARTS = "Charts"
CHART_AREA_COMMANDS: tuple[Command, ...] = (
    *(Command(f"chart.focus_{n}", f"Focus chart {n}", (f"Ctrl+{n}",), CHARTS,
              f"Bring the charts forward and make chart {n} the active one (its keys act)")
      for n in (2, 3, 4)),
    Command("chart.layout_one", "One chart", ("Alt+1",), CHARTS),
    Command("chart.layout_side_by_side", "Two charts side by side", ("Alt+2",), CHARTS),
    Command("chart.layout_stacked", "Two charts stacked", ("Alt+3",), CHARTS),
    Command("chart.layout_four", "Four charts (2x2)", ("Alt+4",), CHARTS),
    Command("chart.timeframe_down", "Shorter timeframe", ("[",), CHARTS,
            "Show the chart on the next shorter timeframe (chart 1's is the data bar's: the "
            "source opens on it)"),
    Command("chart.timeframe_up", "Longer timeframe", ("]",), CHARTS,
            "Show the chart on the next longer timeframe"),
    Command("chart.link_symbol", "Link charts: symbol", ("Ctrl+Shift+Y",), CHARTS,
            "Linked charts switch symbol together; unlinked ones keep the candles they show"),
    Command("chart.link_crosshair", "Link charts: crosshair", ("Ctrl+Shift+X",), CHARTS,
            "The crosshair on one chart marks its candle's span on the linked charts"),
    Command("chart.link_time", "Link charts: time", ("Ctrl+Shift+T",), CHARTS,
            "Linked charts centre on the time the moved chart centres on"),
    Command("chart.link_active", "Link / unlink the active chart", ("Ctrl+Shift+L",), CHARTS,
            "Put the active chart into the link group, or take it out"),
)

register(*CHART_AREA_COMMANDS)
