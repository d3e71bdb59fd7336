"""Help: the ``?`` cheat sheet of every shortcut, the ``Ctrl+K`` command palette, About."""

from __future__ import annotations

import platform

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .. import __version__
from . import shortcuts
from .resources import app_icon
from .shortcuts import Command

HELP = "Help"
shortcuts.register(
    Command("help.shortcuts", "Keyboard shortcuts", ("?",), HELP, "Show every shortcut"),
    Command("help.palette", "Command palette…", ("Ctrl+K",), HELP,
            "Find any command by name and run it"),
)


class CheatSheet(QDialog):
    """Every registered command with its keys, grouped as the registry groups them."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Keys", "Command"])
        self.tree.setRootIsDecorated(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree)
        self.resize(520, 640)

    def showEvent(self, event) -> None:
        self.refresh()
        super().showEvent(event)

    def refresh(self) -> None:
        self.tree.clear()
        for group, rows in shortcuts.cheat_sheet():
            header = QTreeWidgetItem([group, ""])
            font = header.font(0)
            font.setBold(True)
            header.setFont(0, font)
            header.setFirstColumnSpanned(True)
            self.tree.addTopLevelItem(header)
            for keys, text in rows:
                self.tree.addTopLevelItem(QTreeWidgetItem([keys, text]))
        self.tree.resizeColumnToContents(0)

    def rows(self) -> list[tuple[str, str]]:
        return [(self.tree.topLevelItem(i).text(0), self.tree.topLevelItem(i).text(1))
                for i in range(self.tree.topLevelItemCount())]


class CommandPalette(QDialog):
    """Type to filter every action of the window (menus included); Enter runs the chosen one."""

    def __init__(self, window: QWidget):
        super().__init__(window)
        self.window_ = window
        self.setWindowTitle("Command palette")
        self.query = QLineEdit()
        self.query.setPlaceholderText("Type a command…")
        self.list = QListWidget()
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(self.list)
        self.resize(560, 420)
        self.query.textChanged.connect(self._filter)
        self.query.returnPressed.connect(self.run_selected)
        self.list.itemActivated.connect(lambda _item: self.run_selected())

    def actions_listed(self) -> list[QAction]:
        seen, out = set(), []
        for action in self.window_.findChildren(QAction):
            text = action.text().replace("&", "").strip()
            if (text and not action.isSeparator() and action.menu() is None
                    and id(action) not in seen):
                seen.add(id(action))
                out.append(action)
        return sorted(out, key=lambda a: a.text().replace("&", "").lower())

    def open_palette(self) -> None:
        self.query.clear()
        self._filter("")
        self.show()
        self.raise_()
        self.query.setFocus()

    def _filter(self, text: str) -> None:
        words = text.lower().split()
        self.list.clear()
        for action in self.actions_listed():
            label = action.text().replace("&", "")
            keys = action.shortcut().toString()
            if all(w in f"{label} {keys}".lower() for w in words):
                item = QListWidgetItem(f"{label}    {keys}" if keys else label)
                item.setData(Qt.UserRole, action)
                item.setFlags(item.flags() if action.isEnabled() else Qt.NoItemFlags)
                self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)

    def run_selected(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        action = item.data(Qt.UserRole)
        self.hide()
        action.trigger()


def about_text() -> str:
    import PySide6

    return (f"<h3>Workstation {__version__}</h3>"
            "<p>A live candlestick chart where you mark trades with the keyboard and train a "
            "transformer on them.</p>"
            f"<p>Python {platform.python_version()} · PySide6 {PySide6.__version__}</p>")


def show_about(parent: QWidget) -> None:
    box = QMessageBox(parent)
    box.setWindowTitle("About Workstation")
    box.setIconPixmap(app_icon().pixmap(64, 64))
    box.setText(about_text())
    box.setTextFormat(Qt.RichText)
    box.exec()

