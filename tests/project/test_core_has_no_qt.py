"""The core (market, annotations, ml, backtest, viewmodel) imports no Qt: checked in a fresh
interpreter."""

import os
import pkgutil
import subprocess
import sys

import workstation

CORE = ("workstation.market", "workstation.annotations", "workstation.ml",
        "workstation.backtest", "workstation.viewmodel")


def test_core_modules_import_without_qt():
    modules = [info.name for info in pkgutil.walk_packages(workstation.__path__, "workstation.")
               if info.name.startswith(CORE)]
    assert len(modules) >= 8, modules
    code = (
        "import sys\n"
        f"for name in {modules!r}:\n"
        "    __import__(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'shiboken6', 'pyqtgraph', 'qasync', 'PyQt5', 'PyQt6'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "", f"core imported Qt: {result.stdout}"


def test_the_window_module_loads_neither_torch_nor_ccxt():
    """They take seconds to import: torch loads in the warm-up thread after the window shows,
    ccxt when an exchange is opened (the startup bench's target is 2 s)."""
    code = ("import sys, workstation.ui.main_window\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'ccxt'}))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, env={**os.environ,
                                              "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]", result.stdout
