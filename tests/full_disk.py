"""A real small disk for the full-disk tests: a tmpfs mounted for one test, filled with a filler
file until a chosen number of bytes is left free, and unmounted after it. Mounting needs root
(Linux's mount(2)); where it is refused with EPERM the test skips, saying so."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Bytes left free: none, one page (less than SQLite's -shm needs even to read), and more than a
# read needs but less than each write of the tests.
LEVELS = (0, 4096, 65536)
_MNT_DETACH = 2


class SmallDisk:
    """A mounted tmpfs at ``root``; ``fill`` leaves ``leave`` bytes free, ``unfill`` frees it."""

    def __init__(self, root: Path):
        self.root = root
        self.filler = root / ".filler"

    def free(self) -> int:
        st = os.statvfs(self.root)
        return st.f_bavail * st.f_frsize

    def fill(self, leave: int) -> None:
        self.unfill()
        with open(self.filler, "wb") as fh, contextlib.suppress(OSError):  # ENOSPC: full
            fh.write(bytes(max(self.free() - leave, 0)))
        assert self.free() <= leave, f"{self.free()} bytes free, wanted {leave}"

    def unfill(self) -> None:
        self.filler.unlink(missing_ok=True)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


@contextlib.contextmanager
def small_tmpfs(folder: Path, size: int = 8 << 20) -> Iterator[SmallDisk]:
    """A tmpfs of ``size`` bytes mounted at ``folder`` for the ``with`` block. The log
    handlers writing into it are closed before it is unmounted (detached if still busy)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("a full disk is made with a Linux tmpfs (mount(2))")
    folder.mkdir(parents=True, exist_ok=True)
    libc = _libc()
    if libc.mount(b"tmpfs", os.fsencode(folder), b"tmpfs", 0,
                  f"size={size},mode=0700".encode()) != 0:
        code = ctypes.get_errno()
        if code == errno.EPERM:
            pytest.skip("mounting a small tmpfs to fill was refused (EPERM: it needs root)")
        raise OSError(code, f"mount tmpfs at {folder}: {os.strerror(code)}")
    try:
        yield SmallDisk(folder)
    finally:
        root = logging.getLogger()
        for handler in list(root.handlers):
            name = getattr(handler, "baseFilename", "")
            if name and Path(name).is_relative_to(folder):
                root.removeHandler(handler)
                with contextlib.suppress(OSError):
                    handler.close()
        if libc.umount2(os.fsencode(folder), 0) != 0:
            libc.umount2(os.fsencode(folder), _MNT_DETACH)  # busy: gone once let go of
