"""``DesktopNotifier``: a notification on the trader's desktop, whatever the window shows.

On a Linux desktop it asks the desktop's notification service
(``org.freedesktop.Notifications`` on the session bus) through ``gdbus``, else through
``notify-send``; elsewhere, or without either tool, the system tray's message where there is a
tray. The call runs as its own process, so the window never waits on the desktop. ``how``
says which way it notifies ("" when there is none: the alert is then in the window and the
log only); a way that fails is said once in the log and the next one is tried from then on.
"""

from __future__ import annotations

import logging
import shutil

from PySide6.QtCore import QObject, QProcess
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

log = logging.getLogger(__name__)
TIMEOUT_MS = 10_000
_SERVICE = ("--dest=org.freedesktop.Notifications", "--object-path=/org/freedesktop/Notifications",
            "--method=org.freedesktop.Notifications.Notify")


class DesktopNotifier(QObject):
    """See the module docstring."""

    def __init__(self, parent: QObject | None = None, app_name: str = "Workstation"):
        super().__init__(parent)
        self.app_name = app_name
        self._ways = [w for w in ("gdbus", "notify-send") if shutil.which(w)]
        if QSystemTrayIcon.isSystemTrayAvailable():
            self._ways.append("tray")
        self._tray: QSystemTrayIcon | None = None
        self._running: list[QProcess] = []

    @property
    def how(self) -> str:
        return self._ways[0] if self._ways else ""

    def notify(self, title: str, body: str) -> None:
        way = self.how
        if way == "tray":
            if self._tray is None:
                app = QApplication.instance()
                icon = app.windowIcon() if isinstance(app, QApplication) else None
                self._tray = QSystemTrayIcon(icon, self) if icon is not None else \
                    QSystemTrayIcon(self)
                self._tray.show()
            self._tray.showMessage(title, body, QSystemTrayIcon.MessageIcon.Information,
                                   TIMEOUT_MS)
        elif way:
            self._run(way, title, body)

    def _run(self, way: str, title: str, body: str) -> None:
        args = (["call", "--session", *_SERVICE, self.app_name, "0", "", title, body, "[]",
                 "{}", str(TIMEOUT_MS)] if way == "gdbus"
                else ["--app-name", self.app_name, "--expire-time", str(TIMEOUT_MS), title,
                      body])
        process = QProcess(self)
        process.setProgram(way)
        process.setArguments(args)
        process.finished.connect(self._finished)
        self._running.append(process)
        process.start()

    def _finished(self, code: int, _status) -> None:
        process = self.sender()
        if not isinstance(process, QProcess):
            return
        self._running.remove(process)
        process.deleteLater()
        if code and self._ways and self._ways[0] == process.program():
            problem = bytes(process.readAllStandardError().data()).decode(errors="replace")
            self._ways.pop(0)
            log.warning("desktop notification through %s failed (%s); %s", process.program(),
                        problem.strip().splitlines()[-1] if problem.strip() else f"exit {code}",
                        f"trying {self.how} next" if self.how else
                        "alerts are shown in the window and the log only")
