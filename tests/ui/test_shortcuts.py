"""The keymap and the command registry: conflicts are refused, command actions carry the keys,
the cheat sheet lists everything, and no module but the keymap declares a command."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from workstation.errors import WorkstationError
from workstation.ui import command_registry
from workstation.ui.command_registry import CommandConflict, CommandRegistry, app_registry
from workstation.ui.keymap import KEYMAP, Command


def test_the_application_registry_has_the_chart_keys():
    keys = {c.id: c.keys for c in command_registry.commands("Chart")}
    assert keys["chart.cursor_left"] == ("Left",)
    assert keys["chart.cursor_right_10"] == ("Shift+Right",)
    assert keys["chart.first"] == ("Home",) and keys["chart.last"] == ("End",)
    assert keys["chart.zoom_in"][0] == "+" and keys["chart.zoom_out"] == ("-",)
    assert keys["chart.page_back"] == ("PgUp",) and keys["chart.page_forward"] == ("PgDown",)
    assert keys["chart.fit_all"] == ("F",) and keys["chart.toggle_autoscale"] == ("A",)
    assert keys["chart.go_live"] == ("0",)
    assert app_registry().owner("shift+left").id == "chart.cursor_left_10"


def test_a_key_claimed_twice_is_refused_naming_both_commands():
    reg = CommandRegistry()
    reg.register(Command("a.one", "One", ("Ctrl+K",), "A"))
    with pytest.raises(CommandConflict, match=r"Ctrl\+K.*b\.two.*a\.one"):
        reg.register(Command("b.two", "Two", ("ctrl+k",), "B"))
    assert [c.id for c in reg.commands()] == ["a.one"]


def test_an_id_registered_with_two_meanings_is_refused_but_repeats_are_fine():
    reg = CommandRegistry()
    cmd = Command("a.one", "One", ("L",), "A")
    reg.register(cmd)
    reg.register(cmd)
    with pytest.raises(CommandConflict, match=r"a\.one"):
        reg.register(Command("a.one", "Other", ("M",), "A"))
    with pytest.raises(CommandConflict, match="not a key"):
        reg.register(Command("a.bad", "Bad", ("Ctrl+Nonsense",), "A"))


def test_other_areas_extend_the_registry_and_the_cheat_sheet_lists_them_by_group():
    reg = CommandRegistry()
    reg.register(*command_registry.commands("Chart"))
    reg.register(Command("annotate.long", "Mark long entry", ("L",), "Annotate"),
                 Command("annotate.undo", "Undo", ("Ctrl+Z",), "Annotate"),
                 Command("app.palette", "Command palette", ("Ctrl+K",), "App"))
    sheet = dict(reg.cheat_sheet())
    assert list(sheet) == ["Chart", "Annotate", "App"]
    assert ("L", "Mark long entry") in sheet["Annotate"]
    assert ("+ / =", "Zoom in") in sheet["Chart"]
    assert ("", "Toggle UTC / local time") in sheet["Chart"]  # palette-only command
    with pytest.raises(WorkstationError, match="no command"):
        reg.command("annotate.missing")


def test_command_actions_bind_keys_tooltips_and_handlers(qtbot):
    reg = CommandRegistry()
    reg.register(Command("t.go", "Go", ("G", "Shift+G"), "T", "Go somewhere"),
                 Command("t.stay", "Stay", (), "T"))
    widget = QtWidgets.QWidget()
    widget.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
    qtbot.addWidget(widget)
    calls = []
    actions = reg.create_command_actions(widget, {"t.go": lambda: calls.append("go"),
                                                  "t.stay": lambda: calls.append("stay")})
    go = actions["t.go"]
    assert [s.toString() for s in go.shortcuts()] == ["G", "Shift+G"]
    assert go.toolTip() == "Go somewhere (G / Shift+G)" and go.objectName() == "t.go"
    assert actions["t.stay"].toolTip() == "Stay"
    widget.show()
    qtbot.waitExposed(widget)
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus)
    QTest.keyClick(widget, QtCore.Qt.Key.Key_G)
    QTest.keyClick(widget, QtCore.Qt.Key.Key_G, QtCore.Qt.KeyboardModifier.ShiftModifier)
    assert calls == ["go", "go"]
    actions["t.stay"].trigger()
    assert calls[-1] == "stay"
    with pytest.raises(WorkstationError):
        reg.create_command_actions(widget, {"t.unknown": lambda: None})


def test_a_text_field_keeps_its_letters(qtbot):
    """Single-key shortcuts do not fire while the user types in a text field inside the
    widget (Qt lets the field override them); they do once focus is back elsewhere."""
    reg = CommandRegistry()
    reg.register(Command("t.go", "Go", ("G",), "T"))
    window = QtWidgets.QWidget()
    field = QtWidgets.QLineEdit(window)
    qtbot.addWidget(window)
    calls = []
    reg.create_command_actions(window, {"t.go": lambda: calls.append("go")})
    window.show()
    qtbot.waitExposed(window)
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)
    QTest.keyClick(field, QtCore.Qt.Key.Key_G)
    assert field.text() == "g" and calls == []


UI = Path(command_registry.__file__).parent
KEYMAP_MODULE = UI / "keymap.py"


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _import_time_nodes(tree: ast.Module):
    """Every node that runs when the module is imported: its body and class bodies, not the
    bodies of functions (nor lambdas) defined there."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            pending.extend(ast.iter_child_nodes(node))


def _declarations(path: Path) -> list[str]:
    """``Command(...)`` calls anywhere in ``path``, and calls of a ``register`` at import time."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = [f"line {node.lineno}: Command(...)" for node in ast.walk(tree)
             if isinstance(node, ast.Call) and _called_name(node) == "Command"]
    found += [f"line {node.lineno}: {_called_name(node)}(...) at import time"
              for node in _import_time_nodes(tree)
              if isinstance(node, ast.Call) and _called_name(node) == "register"]
    return found


def test_only_the_keymap_declares_commands():
    root = UI.parents[1]
    declaring = {path.relative_to(root).as_posix(): found for path in sorted(UI.rglob("*.py"))
                 if path != KEYMAP_MODULE and (found := _declarations(path))}
    assert _declarations(KEYMAP_MODULE)  # the check sees the keymap's own declarations
    assert not declaring, f"declare commands in workstation/ui/keymap.py only: {declaring}"


def test_the_application_registry_is_the_keymap_in_its_order():
    assert command_registry.commands() == list(KEYMAP)
    assert [group for group, _ in command_registry.cheat_sheet()] == list(
        dict.fromkeys(c.group for c in KEYMAP))
