"""The application's commands, registered from the keymap, and the QActions made from them.

``app_registry()`` is the one registry of the running application: the ``keymap.KEYMAP``
commands, registered in their order the first time anything asks for a command (the first
widget that makes its actions, the ``?`` cheat sheet). Menus, toolbars and widgets make their
``QAction``s from it (``create_command_actions``: the *command actions*), and the ``?`` cheat
sheet and the command palette list it (``cheat_sheet``, ``find``). A key that two commands
claim, or one id registered with two meanings, is an error at registration, not a key that
silently never fires.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cache

from PySide6 import QtCore, QtGui, QtWidgets

from ..errors import WorkstationError
from .keymap import KEYMAP, Command


class CommandConflict(WorkstationError):
    """Two commands claim one key, or one id is registered with two meanings."""


def normalize_key(key: str) -> str:
    """The portable text of ``key`` (``"shift+left"`` -> ``"Shift+Left"``); a clear error for
    something Qt cannot read as a single key combination."""
    seq = QtGui.QKeySequence(key)
    # PySide6's stub lacks QKeySequence.__getitem__
    if (seq.isEmpty() or seq.count() != 1
            or seq[0].key() == QtCore.Qt.Key.Key_unknown):  # type: ignore[index]
        raise CommandConflict(f"{key!r} is not a key combination Qt understands")
    return seq.toString(QtGui.QKeySequence.SequenceFormat.PortableText)


class CommandRegistry:
    """Commands by id, in registration order, with a check that no key is claimed twice;
    ``commands`` are registered at once."""

    def __init__(self, commands: Iterable[Command] = ()):
        self._commands: dict[str, Command] = {}
        self._owner_of_key: dict[str, str] = {}
        self.register(*commands)

    def register(self, *commands: Command) -> None:
        """Add commands; registering an identical command again is a no-op."""
        for cmd in commands:
            known = self._commands.get(cmd.id)
            if known == cmd:
                continue
            if known is not None:
                raise CommandConflict(f"command {cmd.id!r} is already registered as {known!r}")
            keys = [normalize_key(k) for k in cmd.keys]
            for key in keys:
                owner = self._owner_of_key.get(key)
                if owner is not None:
                    raise CommandConflict(f"key {key} of {cmd.id!r} already belongs to {owner!r}")
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

    def create_command_actions(self, widget: QtWidgets.QWidget,
                               handlers: Mapping[str, Callable[..., object]],
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


@cache
def app_registry() -> CommandRegistry:
    """The application's registry: the keymap's commands, registered when first asked."""
    return CommandRegistry(KEYMAP)


def command(command_id: str) -> Command:
    """The application's command ``command_id``; an error if there is none."""
    return app_registry().command(command_id)


def find(command_id: str) -> Command | None:
    """The application's command ``command_id``, or None."""
    return app_registry().find(command_id)


def commands(group: str | None = None) -> list[Command]:
    """The application's commands in the keymap's order, optionally of one group."""
    return app_registry().commands(group)


def cheat_sheet() -> list[tuple[str, list[tuple[str, str]]]]:
    """The application's ``?`` sheet (``CommandRegistry.cheat_sheet``)."""
    return app_registry().cheat_sheet()


def create_command_actions(widget: QtWidgets.QWidget,
                           handlers: Mapping[str, Callable[..., object]],
                           context: QtCore.Qt.ShortcutContext =
                           QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut,
                           ) -> dict[str, QtGui.QAction]:
    """The QActions of the application's commands that ``handlers`` handle, on ``widget``
    (``CommandRegistry.create_command_actions``)."""
    return app_registry().create_command_actions(widget, handlers, context)
