"""Writing a run history (``RunHistory``, the trainer's, under the run's one-writer lock).

Each record goes to the operating system as one ``write`` when it happens, so a process killed
(even by SIGKILL) loses nothing it recorded; ``fsync`` runs at most once a second, at every
epoch and at the end, so a machine crash loses at most about the last second. A run that
trains no step leaves no file (and so no run folder), as it leaves no checkpoint. A resumed
run appends to the same file; a line torn by a kill mid-write is cut off first. The records
are those of ``format``. A full disk is a ``DiskFullError`` naming the file; a record it tore
is cut off at once, so the history still ends on a whole record.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Callable, Iterator

from ...atomic import fsync_dir
from ...storage import DiskFullError, is_disk_full
from .format import HistoryError, history_path, parse_line, record_of

SYNC_EVERY_S = 1.0


class RunHistory:
    """Appends a run's events to ``<run_dir>/history.jsonl`` (see the module docstring). One
    writer per run: the caller holds the run's lock (the trainer does). ``append`` takes the
    ml events (``RunStarted``, ``BatchEnd``, ``EpochEnd``, ``CheckpointSaved``, ``Finished``,
    ``Failed``, ``EvaluationFinished``; others are passed over); ``flush`` makes what was
    appended durable; ``close`` flushes and lets go of the file."""

    def __init__(self, run_dir: str | os.PathLike, on_create: Callable[[], object] | None = None):
        self.path = history_path(run_dir)
        self.on_create = on_create  # called once the run's folder holds its new history
        self._fd: int | None = None
        self._pending: list[bytes] = []
        self._unsynced = False
        self._last_sync = time.monotonic()
        self._cut_at: int | None = None  # length to cut a torn last line back to
        self._newline = False            # the last line is whole but lacks its newline
        self._offset = self._inspect()   # wall time the file has already recorded
        self._t0 = time.monotonic()

    def _inspect(self) -> float:
        """The wall time recorded so far, and how to mend a torn last line before appending."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return 0.0
        except OSError as exc:
            raise HistoryError(self.path, f"cannot be read: {exc.strerror or exc}") from None
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            if parse_line(data[cut:]) is None:
                self._cut_at = cut
                data = data[:cut]
            else:
                self._newline = True
        recorded = 0.0
        for line in data.splitlines():
            record = parse_line(line)
            wall = record.get("wall_s") if record is not None else None
            if isinstance(wall, (int, float)) and math.isfinite(wall):
                recorded = max(recorded, float(wall))
        return recorded

    @property
    def wall_s(self) -> float:
        """The run's wall time now: the recorded total plus the time since this writer began."""
        return self._offset + time.monotonic() - self._t0

    def append(self, event: object) -> None:
        record = record_of(event)
        if record is None:
            return
        record.update(utc_ms=int(time.time() * 1000), wall_s=round(self.wall_s, 3))
        line = (json.dumps(record, allow_nan=False, separators=(",", ":")) + "\n").encode()
        kind = record["type"]
        if self._fd is None and not self.path.exists():
            if kind in ("start", "resume"):
                self._pending.append(line)  # written with the run's first step
                return
            if kind == "end":
                self._pending.clear()  # the run trained no step: no history
                return
        with self._disk_full_said("the history recorded before is intact"):
            if self._fd is None:
                self._open()
            self._write(line)
        if kind in ("epoch", "end", "evaluation") or \
                time.monotonic() - self._last_sync >= SYNC_EVERY_S:
            self.flush()

    @contextlib.contextmanager
    def _disk_full_said(self, kept: str) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            if is_disk_full(exc, self.path):
                raise DiskFullError(self.path, kept) from exc
            raise

    def _open(self) -> None:
        created = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._cut_at is not None:
            os.truncate(self.path, self._cut_at)  # a line torn by a kill mid-write
            self._cut_at = None
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        if created:
            fsync_dir(self.path.parent)
            if self.on_create is not None:
                self.on_create()
        if self._newline:
            self._write(b"\n")
            self._newline = False
        pending, self._pending = self._pending, []
        for line in pending:
            self._write(line)

    def _write(self, data: bytes) -> None:
        assert self._fd is not None
        whole = os.fstat(self._fd).st_size
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, whole)  # no torn record before the next one
            raise
        self._unsynced = True

    def flush(self) -> None:
        """Make every appended record durable (fsync)."""
        if self._fd is not None and self._unsynced:
            with self._disk_full_said("what it recorded before its last sync is intact"):
                os.fsync(self._fd)
            self._unsynced = False
        self._last_sync = time.monotonic()

    def close(self) -> None:
        if self._fd is None:
            return
        try:
            self.flush()
        finally:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> RunHistory:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
