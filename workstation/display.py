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


def file_size(n_bytes: float | None) -> str:
    """A file's size in binary units as the CLI lists them ("512 B", "1.5 KB", "2.0 GB"), or
    "—"."""
    if not has_value(n_bytes):
        return NO_DATA
    scaled = float(n_bytes)
    for unit in ("B", "KB", "MB"):
        if scaled < 1024:
            return f"{scaled:.0f} B" if unit == "B" else f"{scaled:.1f} {unit}"
        scaled /= 1024
    return f"{scaled:.1f} GB"


def volume(value: float | None) -> str:
    """A traded volume, short ("3.20K", "1.05M", "12.50"; under 1: four significant
    digits), or "—"."""
    if not has_value(value):
        return NO_DATA
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= limit:
            return f"{value / limit:.2f}{suffix}"
    return f"{value:.4g}" if value < 1 else f"{value:.2f}"


def measure(value: float | None, digits: int = 1) -> str:
    """A measured figure of a benchmark table: ``digits`` decimals, and from 1,000 whole
    numbers with separators ("1,234"), or "—"."""
    if not has_value(value):
        return NO_DATA
    return f"{value:,.0f}" if value >= 1000 else f"{value:.{digits}f}"


def significant(value: float | int | str | None) -> str:
    """Three significant digits, and from 1,000 whole numbers with separators; an int or a
    text as it is; "—" for None, NaN and infinities."""
    if isinstance(value, str | int) and not isinstance(value, bool):
        return str(value)
    if not has_value(value):
        return NO_DATA
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


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


def step(ms: int) -> str:
    """A spacing between candles in the largest unit that divides it ("1m", "2h", "90s",
    "250 ms")."""
    for unit, scale in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000)):
        if ms and ms % scale == 0:
            return f"{ms // scale}{unit}"
    return f"{ms} ms"
