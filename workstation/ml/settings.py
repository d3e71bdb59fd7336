"""Settings dataclasses as plain JSON, the way checkpoints record them."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

from ..errors import WorkstationError

T = TypeVar("T")


def settings_from_dict(cls: type[T], data: dict, what: str, ignore: frozenset = frozenset()
                       ) -> T:
    """``cls(**data)`` for a settings dataclass, naming any key it does not know (``what``:
    "model settings", ...); keys in ``ignore`` are dropped first."""
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - known - ignore)
    if unknown:
        raise WorkstationError(f"unknown {what}: {', '.join(unknown)}")
    values: dict[str, Any] = {k: v for k, v in data.items() if k not in ignore}
    return cls(**values)
