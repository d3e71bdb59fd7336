"""How numbers read on screen and in the CLI, in one place.

A value without data (``None``, NaN or an infinity) reads "—" everywhere, never 0 and never
"nan". Every "no data" text and number format of the window and the CLI comes from here.
"""

from __future__ import annotations

import math
from typing import TypeGuard

NO_DATA = "—"


def has_value(value: float | None) -> TypeGuard[float]:
    """True for a finite number; False for None, NaN and infinities."""
    return value is not None and math.isfinite(value)


def number(value: float | None, spec: str = ".4f", unit: str = "") -> str:
    """``value`` in ``spec`` (``format`` syntax) followed by ``unit`` ("12 ms" for
    ``number(12, ".0f", " ms")``), or "—" without a value."""
    return format(value, spec) + unit if has_value(value) else NO_DATA


def percent(fraction: float | None, digits: int = 1, *, signed: bool = False) -> str:
    """A fraction as a percentage (0.372 -> "37.2%"; ``signed``: "+37.2%"), or "—"."""
    if not has_value(fraction):
        return NO_DATA
    return f"{fraction * 100:{'+' if signed else ''}.{digits}f}%"


def points(fraction: float | None, digits: int = 2) -> str:
    """A difference of two fractions in signed percentage points (0.0025 -> "+0.25 pp")."""
    return f"{fraction * 100:+.{digits}f} pp" if has_value(fraction) else NO_DATA


def size(n_bytes: float | None) -> str:
    """A byte count in decimal units ("1.2 GB", "350.0 kB", "12 bytes"), or "—"."""
    if not has_value(n_bytes):
        return NO_DATA
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{int(n_bytes)} bytes"


def mebibytes(mb: float | None) -> str:
    """A memory size given in MiB, in binary units ("512 MiB"; from 1024 MiB "1.50 GiB"), or
    "—"."""
    if not has_value(mb):
        return NO_DATA
    return f"{mb / 1024:.2f} GiB" if mb >= 1024 else f"{mb:.0f} MiB"


def age(seconds: float | None) -> str:
    """A time since something in the unit that reads best ("45 s", "12 min", "2.5 h"), or "—"."""
    if not has_value(seconds):
        return NO_DATA
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
