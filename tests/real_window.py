"""The app in a real window: an X server (Xvfb), with or without a window manager (openbox),
the ``workstation`` command started on it as a trader starts it, and synthetic key events
(xdotool, through the XTEST extension: the keyboard, not a Qt event sent to a widget).

Nothing here aims a key at a window: keys go wherever the X server's input focus is, so a
key acts only if the app put the focus on its window by itself (there is no window manager
to do it, or it is openbox's ordinary choice). ``needs()`` names what is missing; the tests
skip with that line only where the packages are not installed (``.ci/run`` installs them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TOOLS = {"Xvfb": "xvfb", "xdotool": "xdotool", "openbox": "openbox"}
WINDOW_MANAGERS = ("openbox", "none")


def needs() -> str | None:
    """What the real-window tests lack here, as one line; None when all is installed."""
    missing = [package for tool, package in TOOLS.items() if shutil.which(tool) is None]
    if not missing:
        return None
    return (f"real-window tests need the Debian packages {' '.join(missing)} "
            "(.ci/run installs them with apt-get)")


def wait_until(condition, timeout_s: float, what: str, step_s: float = 0.1):
    """Poll ``condition()`` until it returns something true; an AssertionError naming
    ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(step_s)


class Display:
    """An Xvfb server (``:N``, chosen by the server) and, if asked, openbox on it."""

    def __init__(self, window_manager: str):
        read, write = os.pipe()
        self.server = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write), "-screen", "0", "1600x1000x24", "-nolisten",
             "tcp"], pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()
        if not number:
            self.server.kill()
            raise AssertionError("Xvfb did not start (no display number)")
        self.name = f":{number}"
        self.env = {**os.environ, "DISPLAY": self.name}
        self.window_manager = None
        if window_manager == "openbox":
            self.window_manager = subprocess.Popen(
                ["openbox"], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_until(lambda: self._has_window_manager(), 20, "openbox to manage the screen")

    def _has_window_manager(self) -> bool:
        """openbox answers: the desktops are a window manager's (EWMH) to tell."""
        return bool(self.xdotool("get_num_desktops", check=False))

    def xdotool(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(["xdotool", *args], env=self.env, capture_output=True,
                              text=True, timeout=60)
        if check and done.returncode != 0:
            raise AssertionError(f"xdotool {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def keys(self, *keys: str, delay_ms: int = 60) -> None:
        """Press ``keys`` (xdotool names: ``l``, ``Right``, ``ctrl+k``, ``alt+4``) in turn."""
        self.xdotool("key", "--delay", str(delay_ms), *keys)
        time.sleep(0.3)  # the app handles them before what comes next is asked

    def type(self, text: str) -> None:
        self.xdotool("type", "--delay", "40", text)
        time.sleep(0.3)

    def focused_window(self) -> str:
        return self.xdotool("getwindowfocus", check=False)

    def close(self) -> None:
        for process in (self.window_manager, self.server):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()


@contextmanager
def display(window_manager: str) -> Iterator[Display]:
    screen = Display(window_manager)
    try:
        yield screen
    finally:
        screen.close()


class App:
    """``workstation`` (the command a trader runs) on ``screen``, its data in ``home``."""

    def __init__(self, screen: Display, home: Path, *args: str):
        self.screen = screen
        env = {**screen.env, "QT_QPA_PLATFORM": "xcb"}
        home.mkdir(parents=True, exist_ok=True)
        self.log = (home / "app-output.txt").open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "workstation", "--data-dir", str(home), *args], env=env,
            stdout=self.log, stderr=subprocess.STDOUT)
        self.window = ""

    def wait_ready(self, timeout_s: float = 90, title: str = "^Workstation .* — ") -> None:
        """Until the window's title matches ``title`` (by default: it names the series it
        shows) and the window holds the keyboard."""
        def titled() -> str:
            if self.process.poll() is not None:
                raise AssertionError(f"the app exited ({self.process.returncode}) before its "
                                     f"window was ready: {self.output()[-2000:]}")
            return self.screen.xdotool("search", "--name", title, check=False).split()

        wait_until(titled, timeout_s, f"a window titled {title!r}")
        self.window = wait_until(lambda: self.screen.focused_window() in titled() and
                                 self.screen.focused_window(), 20,
                                 "the window to take the keyboard by itself")
        time.sleep(0.5)

    def quit(self, timeout_s: float = 120) -> int:
        """Ctrl+Q, as the trader quits; the exit status once it has saved and closed."""
        self.screen.keys("ctrl+q")
        try:
            return self.process.wait(timeout_s)
        finally:
            self.log.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        self.log.close()

    def output(self) -> str:
        if not self.log.closed:
            self.log.flush()
        return Path(self.log.name).read_text(errors="replace")
