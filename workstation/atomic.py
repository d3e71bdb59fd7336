"""Crash-safe file writes: a temporary file in the same folder, fsync, then ``os.replace``.

A process killed mid-write leaves the previous file intact (``torch.save`` or ``open(.., "w")``
straight onto the target would leave a truncated file and destroy it).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from .storage import DiskFullError, is_disk_full


def fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "wb", **open_args) -> Iterator[IO]:
    """Yield a file to write; on success it atomically becomes ``path``, on error it vanishes
    (a full disk is a ``DiskFullError`` naming ``path``, which is left as it was)."""
    path = Path(path)
    kept = "it was left as it was" if path.exists() else "no file was made there"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFullError(path, kept) from exc
        raise
    try:
        with os.fdopen(fd, mode, **open_args) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if is_disk_full(exc):
            raise DiskFullError(path, kept) from exc
        raise
    fsync_dir(path.parent)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_writer(path, "wb") as handle:
        handle.write(data)


def atomic_write_text(path: str | Path, text: str) -> None:
    """``text`` as UTF-8, newlines as given."""
    with atomic_writer(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
