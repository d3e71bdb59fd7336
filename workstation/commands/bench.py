"""``workstation bench NAME``: the benchmarks of ``workstation.bench``."""

from __future__ import annotations

import importlib
import pkgutil


def register(sub) -> None:
    from .. import bench

    parser = sub.add_parser("bench", help="measure speed and memory against references")
    names = parser.add_subparsers(dest="bench", metavar="NAME", required=True)
    for info in sorted(pkgutil.iter_modules(bench.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{bench.__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(names)
