"""A one-line text progress bar on stderr for long CLI commands."""

from __future__ import annotations

import sys
import time

_open_line: list = []  # the bar whose line is being drawn, if any


def end_open_line() -> None:
    """End a progress line left open (a command stopped mid-way), so the next message starts
    on its own line."""
    if _open_line:
        bar = _open_line.pop()
        bar.stream.write("\n")
        bar.stream.flush()


class _Line:
    """A progress line drawn with ``draw_line`` (a bar is the other kind)."""

    def __init__(self, stream):
        self.stream = stream


def draw_line(text: str, width: int = 0) -> None:
    """Redraw the open progress line on stderr with ``text`` (padded to ``width``)."""
    sys.stderr.write("\r" + text.ljust(width))
    sys.stderr.flush()
    _open_line[:] = [_Line(sys.stderr)]


def say(text: str) -> None:
    """Print ``text`` on its own line on stderr, below a progress line left open."""
    end_open_line()
    print(text, file=sys.stderr, flush=True)


class ProgressBar:
    """``bar.update(done)`` redraws at most 10 times a second; ``bar.finish()`` ends the line."""

    def __init__(self, total: float, label: str, *, stream=None, width: int = 30):
        self.total = max(float(total), 1.0)
        self.label = label
        self.stream = stream or sys.stderr
        self.width = width
        self._last = 0.0
        self._started = time.monotonic()

    def update(self, done: float, note: str = "") -> None:
        now = time.monotonic()
        if now - self._last < 0.1 and done < self.total:
            return
        self._last = now
        frac = min(max(done / self.total, 0.0), 1.0)
        filled = int(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        elapsed = now - self._started
        self.stream.write(f"\r{self.label} [{bar}] {frac * 100:5.1f}% {elapsed:6.1f}s {note}")
        self.stream.flush()
        _open_line[:] = [self]

    def finish(self, note: str = "") -> None:
        self._last = 0.0
        self.update(self.total, note)
        end_open_line()
