"""``FileLock``: one writer at a time for a folder, across processes.

An OS lock (``fcntl.flock``, or ``msvcrt.locking`` on Windows) on a lock file, taken without
waiting: a second writer is refused at once with a ``LockedError`` naming the holder (its pid,
command line and since when, which the holder writes into the lock file). The OS drops the
lock when its process dies, so the lock of a crashed or killed process is taken over by the
next writer; nothing stale is left to clean up by hand.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path

from .errors import WorkstationError
from .storage import is_disk_full

if sys.platform == "win32":
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


class LockedError(WorkstationError):
    """Another process holds the lock; ``holder`` is what it wrote about itself."""

    def __init__(self, what: str, holder: dict):
        self.holder = holder
        who = (f"pid {holder.get('pid', '?')} ({holder.get('command', 'unknown command')}, "
               f"since {holder.get('since', '?')})") if holder else "another process"
        super().__init__(f"{what} is in use by {who}; wait for it to end or stop it")


class FileLock:
    """Hold ``path`` (a lock file) for writing ``what``; a context manager."""

    def __init__(self, path: str | os.PathLike, what: str):
        self.path = Path(path)
        self.what = what
        self._fd: int | None = None

    def acquire(self) -> FileLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if not _try_lock(fd):
            holder = self._holder(fd)
            os.close(fd)
            raise LockedError(self.what, holder)
        info = {"pid": os.getpid(), "command": " ".join(sys.argv)[:200],
                "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
        try:
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, json.dumps(info).encode())
        except OSError as exc:  # on a full disk the lock holds, its holder unnamed: a
            if not is_disk_full(exc):  # delete that would free space still works
                _unlock(fd)
                os.close(fd)
                raise
        self._fd = fd
        return self

    @staticmethod
    def _holder(fd: int) -> dict:
        """What the holder wrote about itself ({} if it cannot be read)."""
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            data = json.loads(os.read(fd, 4096) or b"{}")
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def release(self, *, remove: bool = False) -> None:
        """Let go; with ``remove``, the lock file goes too (what it guarded is gone)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                if remove:
                    self.path.unlink(missing_ok=True)
                _unlock(fd)
            finally:
                os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> FileLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
