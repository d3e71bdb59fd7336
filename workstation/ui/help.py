"""Help: the ``?`` cheat sheet of every command's keys, the ``Ctrl+K`` command palette, About.

The cheat sheet and the palette are overlays inside the main window (``overlay.Overlay``), so
they take the keyboard with or without a window manager. Every palette entry names the area it
acts on (``"Training: Stop"``, ``"View: Show / hide the Log panel"``) and no two entries read
the same (``palette_entries``).
"""

from __future__ import annotations

import platform
import re

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QKeyEvent
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QToolBar,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .. import __version__
from .command_registry import cheat_sheet, find
from .overlay import Overlay
from .resources import app_icon


class CheatSheet(Overlay):
    """Every command with its keys, grouped and ordered as the keymap declares them; fitted
    inside the window and scrolled (arrows, PgUp / PgDn) when it is taller than the room."""

    def __init__(self, parent: QWidget):
        super().__init__(parent, "cheatSheet")
        title = QLabel("<b>Keyboard shortcuts</b> — Esc or ? closes")
        self.tree = QTreeWidget()
        self.tree.setObjectName("cheatSheetTree")
        self.tree.setHeaderLabels(["Keys", "Command"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setVerticalScrollMode(QTreeWidget.ScrollMode.ScrollPerPixel)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(title)
        layout.addWidget(self.tree, 1)
        self.focus_widget = self.tree

    def wanted_size(self) -> QSize:
        rows = max(1, self.tree.topLevelItemCount())
        row_height = self.tree.sizeHintForRow(0) if self.tree.topLevelItemCount() else 20
        return QSize(560, 80 + rows * max(row_height, 16))

    def open(self) -> None:
        self.refresh()
        super().open()

    def refresh(self) -> None:
        self.tree.clear()
        for group, rows in cheat_sheet():
            header = QTreeWidgetItem([group, ""])
            font = header.font(0)
            font.setBold(True)
            header.setFont(0, font)
            header.setFirstColumnSpanned(True)
            self.tree.addTopLevelItem(header)
            for keys, text in rows:
                self.tree.addTopLevelItem(QTreeWidgetItem([keys, text]))
        self.tree.resizeColumnToContents(0)
        first = self.tree.topLevelItem(0)
        if first is not None:  # there are rows
            self.tree.setCurrentItem(first)

    def rows(self) -> list[tuple[str, str]]:
        items = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        return [(item.text(0), item.text(1)) for item in items if item is not None]


def _plain(text: str) -> str:
    return text.replace("&", "").strip()


def _is_plot_menu_action(action: QAction) -> bool:
    """pyqtgraph's right-click "Export..." of each plot: it works only from the plot's own
    context menu (it exports the item that was clicked), so the palette leaves it out."""
    parent = action.parent()
    return parent is not None and type(parent).__module__.startswith("pyqtgraph")


def _area(action: QAction, window: QWidget) -> str:
    """What an action acts on: its command's group, else the menu that holds it."""
    command = find(action.objectName())
    if command is not None:
        return command.group
    for menu in window.findChildren(QMenu):
        if action in menu.actions() and menu.title():
            return _plain(menu.title())
    return "Window"


def palette_entries(window: QWidget) -> list[tuple[str, QAction]]:
    """``(label, action)`` for every visible command of ``window`` (those the palette offers),
    sorted by label; a label says what the command acts on and no two labels are equal."""
    toggles = {}
    for panel in window.findChildren(QDockWidget) + window.findChildren(QToolBar):
        title = _plain(panel.windowTitle()) or panel.objectName()
        kind = "panel" if isinstance(panel, QDockWidget) else "bar"
        toggles[id(panel.toggleViewAction())] = f"View: Show / hide the {title} {kind}"
    seen, entries = set(), []
    for action in window.findChildren(QAction):
        text = _plain(action.text())
        if (not text or action.isSeparator() or action.menu() is not None
                or not action.isVisible() or id(action) in seen
                or _is_plot_menu_action(action)):
            continue
        seen.add(id(action))
        label = toggles.get(id(action)) or f"{_area(action, window)}: {text}"
        entries.append((label, action))
    counts: dict[str, int] = {}
    for label, _action in entries:
        counts[label] = counts.get(label, 0) + 1
    out = []
    for label, action in entries:
        if counts[label] > 1:  # two areas' commands of one name: say whose each one is
            owner = action.parent()
            name = (owner.objectName() or type(owner).__name__) if owner is not None else "?"
            label = f"{label} ({name})"
        out.append((label, action))
    return sorted(out, key=lambda entry: entry[0].lower())


class _Query(QLineEdit):
    """The palette's text field: Up / Down / PgUp / PgDn move in the list below it."""

    def __init__(self, palette: CommandPalette):
        super().__init__()
        self.palette_ = palette

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp,
                           Qt.Key.Key_PageDown):
            QApplication.sendEvent(self.palette_.list, event)
            return
        super().keyPressEvent(event)


def match_rank(query: str, label: str, keys: str = "", tip: str = "") -> int | None:
    """How well a command (its ``label`` ``"Area: text"``, ``keys`` and tooltip ``tip``)
    matches the typed ``query``: 0 its text or label is the query, 1 starts with it, 2 every
    word starts a word of the label or keys, 3 every word is inside them, 4 inside them or
    the tooltip; None: no match."""
    words = query.lower().split()
    whole, text = label.lower(), label.split(": ", 1)[-1].lower()
    shown = f"{whole} {keys.lower()}"
    if not words:
        return 3
    typed = " ".join(words)
    if typed in (whole, text, text.rstrip("…")):
        return 0
    if text.startswith(typed) or whole.startswith(typed):
        return 1
    label_words = re.split(r"[^\w+]+", shown)
    if all(any(lw.startswith(w) for lw in label_words) for w in words):
        return 2
    if all(w in shown for w in words):
        return 3
    if all(w in f"{shown} {tip.lower()}" for w in words):
        return 4
    return None


class CommandPalette(Overlay):
    """Type to filter every command of the window (menus included): the closest matches first
    (``match_rank``), the first row always chosen; Enter runs it (Up / Down choose), or says
    why it cannot run now; Esc closes."""

    top = 40

    def __init__(self, window: QWidget):
        super().__init__(window, "commandPalette")
        self.query = _Query(self)
        self.query.setObjectName("paletteQuery")
        self.query.setPlaceholderText("Type a command…  (Enter runs it, Esc closes)")
        self.list = QListWidget()
        self.list.setObjectName("paletteList")
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the field keeps the keyboard
        self.hint = QLabel()
        self.hint.setObjectName("paletteHint")
        self.hint.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.query)
        layout.addWidget(self.hint)
        layout.addWidget(self.list, 1)
        self.focus_widget = self.query
        self.query.textChanged.connect(self._filter)
        self.query.returnPressed.connect(self.run_selected)
        self.list.itemActivated.connect(lambda _item: self.run_selected())
        self.list.itemClicked.connect(lambda _item: self.run_selected())

    def wanted_size(self) -> QSize:
        return QSize(640, 440)

    def actions_listed(self) -> list[QAction]:
        return [action for _label, action in palette_entries(self.window_)]

    def labels(self) -> list[str]:
        """The entries shown now (after the filter), as the list reads them."""
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole + 1)
                for i in range(self.list.count())]

    def chosen(self) -> str | None:
        """The label of the chosen row (Enter runs it), None when nothing is listed."""
        item = self.list.currentItem()
        return None if item is None else item.data(Qt.ItemDataRole.UserRole + 1)

    def open_palette(self) -> None:
        self.query.clear()
        self._filter("")
        self.open()

    def _filter(self, text: str) -> None:
        self.list.clear()
        ranked = []
        for label, action in palette_entries(self.window_):
            keys = action.shortcut().toString()
            rank = match_rank(text, label, keys, action.toolTip())
            if rank is not None:
                ranked.append((rank, not action.isEnabled(), label.lower(), label, action))
        ranked.sort(key=lambda entry: entry[:3])
        muted = self.palette().color(self.palette().ColorGroup.Disabled,
                                     self.palette().ColorRole.Text)
        for _rank, disabled, _key, label, action in ranked:
            keys = action.shortcut().toString()
            item = QListWidgetItem(f"{label}    {keys}" if keys else label)
            item.setData(Qt.ItemDataRole.UserRole, action)
            item.setData(Qt.ItemDataRole.UserRole + 1, label)
            item.setToolTip(action.toolTip())
            if disabled:  # listed, chosen like any other; Enter says why it cannot run
                item.setForeground(muted)
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)
            self.hint.hide()
        else:
            self.hint.setText(f"No command matches “{text.strip()}”")
            self.hint.show()

    def run_selected(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        action = item.data(Qt.ItemDataRole.UserRole)
        if not action.isEnabled():
            label = item.data(Qt.ItemDataRole.UserRole + 1)
            self.hint.setText(f"“{label}” is not available now")
            self.hint.show()
            return
        self.close_overlay()  # the focus goes back first: the command may move it
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
    box.setTextFormat(Qt.TextFormat.RichText)
    box.exec()
