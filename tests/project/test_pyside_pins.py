"""Regression: PySide6 6.12.0 on Python 3.11 aborts after a few hundred Signal.emit() or void
QPainter calls (reference counts of True/None). The pins exclude it; these runs prove the
installed binding survives 10,000 of each, in a subprocess so an abort cannot take pytest down."""

import os
import subprocess
import sys
import textwrap

EMIT = """
from PySide6.QtCore import QCoreApplication, QObject, Signal

class Source(QObject):
    fired = Signal(bool)

class Sink(QObject):
    count = 0
    def take(self, value):
        Sink.count += 1

app = QCoreApplication([])
source, sink = Source(), Sink()
source.fired.connect(sink.take)
for i in range(10_000):
    source.fired.emit(i % 2 == 0)
assert Sink.count == 10_000, Sink.count
print("ok")
"""

PAINT = """
from PySide6.QtCore import QLineF, QRectF
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPen

app = QGuiApplication([])
image = QImage(64, 64, QImage.Format_ARGB32)
painter = QPainter(image)
pen = QPen(QColor("red"))
calls = 0
while calls < 10_000:
    painter.setPen(pen)
    painter.drawLine(QLineF(0, 0, 63, 63))
    painter.drawRect(QRectF(1, 1, 10, 10))
    painter.fillRect(QRectF(2, 2, 4, 4), QColor("blue"))
    calls += 4
painter.end()
print("ok")
"""


def run_child(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, timeout=120)


def test_ten_thousand_signal_emits_do_not_abort():
    result = run_child(EMIT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


def test_ten_thousand_painter_calls_do_not_abort():
    result = run_child(PAINT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


def test_pins_exclude_the_broken_release():
    from importlib.metadata import requires, version

    pins = [r for r in requires("workstation") if r.lower().startswith("pyside6-essentials")]
    assert any("!=6.12.0" in p and "python_version < \"3.12\"" in p.replace("'", '"')
               for p in pins), pins
    if sys.version_info < (3, 12):
        assert version("PySide6-Essentials") != "6.12.0"
