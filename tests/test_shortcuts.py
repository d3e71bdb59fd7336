"""The one shortcut registry: conflicts are refused, actions carry the keys, the cheat sheet
lists everything."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from workstation.errors import WorkstationError
from workstation.ui import shortcuts
from workstation.ui.shortcuts import Command, ShortcutConflict, ShortcutRegistry


def test_the_application_registry_has_the_chart_keys():
    keys = {c.id: c.keys for c in shortcuts.commands("Chart")}
    assert keys["chart.cursor_left"] == ("Left",)
    assert keys["chart.cursor_right_10"] == ("Shift+Right",)
    assert keys["chart.first"] == ("Home",) and keys["chart.last"] == ("End",)
    assert keys["chart.zoom_in"][0] == "+" and keys["chart.zoom_out"] == ("-",)
    assert keys["chart.page_back"] == ("PgUp",) and keys["chart.page_forward"] == ("PgDown",)
    assert keys["chart.fit_all"] == ("F",) and keys["chart.toggle_autoscale"] == ("A",)
    assert keys["chart.go_live"] == ("0",)
    assert shortcuts.REGISTRY.owner("shift+left").id == "chart.cursor_left_10"


def test_a_key_claimed_twice_is_refused_naming_both_commands():
    reg = ShortcutRegistry()
    reg.register(Command("a.one", "One", ("Ctrl+K",), "A"))
    with pytest.raises(ShortcutConflict, match=r"Ctrl\+K.*b\.two.*a\.one"):
        reg.register(Command("b.two", "Two", ("ctrl+k",), "B"))
    assert [c.id for c in reg.commands()] == ["a.one"]


def test_an_id_registered_with_two_meanings_is_refused_but_repeats_are_fine():
    reg = ShortcutRegistry()
    cmd = Command("a.one", "One", ("L",), "A")
    reg.register(cmd)
    reg.register(cmd)
    with pytest.raises(ShortcutConflict, match=r"a\.one"):
        reg.register(Command("a.one", "Other", ("M",), "A"))
    with pytest.raises(ShortcutConflict, match="not a key"):
        reg.register(Command("a.bad", "Bad", ("Ctrl+Nonsense",), "A"))


def test_other_areas_extend_the_registry_and_the_cheat_sheet_lists_them_by_group():
    reg = ShortcutRegistry()
    reg.register(*shortcuts.CHART_COMMANDS)
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


def test_create_actions_binds_keys_tooltips_and_handlers(qtbot):
    reg = ShortcutRegistry()
    reg.register(Command("t.go", "Go", ("G", "Shift+G"), "T", "Go somewhere"),
                 Command("t.stay", "Stay", (), "T"))
    widget = QtWidgets.QWidget()
    widget.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
    qtbot.addWidget(widget)
    calls = []
    actions = reg.create_actions(widget, {"t.go": lambda: calls.append("go"),
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
        reg.create_actions(widget, {"t.unknown": lambda: None})


def test_a_text_field_keeps_its_letters(qtbot):
    """Single-key shortcuts do not fire while the user types in a text field inside the
    widget (Qt lets the field override them); they do once focus is back elsewhere."""
    reg = ShortcutRegistry()
    reg.register(Command("t.go", "Go", ("G",), "T"))
    window = QtWidgets.QWidget()
    field = QtWidgets.QLineEdit(window)
    qtbot.addWidget(window)
    calls = []
    reg.create_actions(window, {"t.go": lambda: calls.append("go")})
    window.show()
    qtbot.waitExposed(window)
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)
    QTest.keyClick(field, QtCore.Qt.Key.Key_G)
    assert field.text() == "g" and calls == []
