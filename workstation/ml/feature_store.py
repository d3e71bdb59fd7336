"""The features of a long series in a memory-mapped scratch file instead of in memory.

``make_features`` of a year of one-second candles is 6.7 GB of float32 (53 columns): held in
memory it would be by far the largest thing a training process owns, and it grows with the
series. ``series_features`` computes them ``CHUNK_ROWS`` rows at a time instead, each chunk
from the candles its rows need (``context.window_start``: the warm-up and the higher
timeframes' buckets), so every row is bit for bit the row of one ``make_features`` call over
the whole series. The chunks are written to a scratch file in the app's data folder and read
back through a private (copy-on-write) memory map: the pages a batch or a scored span touches
are read from the file, and the kernel can drop them again, so the process's own memory
holds only the chunk it computes. The file is unlinked as soon as it is mapped (POSIX), so
nothing is left behind even when the process is killed; where an open file cannot be
removed (Windows) it goes at exit.

Features that fit in ``IN_MEMORY_BYTES`` are computed in memory, as before: a short series
gains nothing from the file.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
from pathlib import Path

import numpy as np

from ..errors import WorkstationError
from .context import window_candles, window_start
from .features import FeatureSpec, make_features

IN_MEMORY_BYTES = 256 * 2**20  # features larger than this go to a memory-mapped file
CHUNK_ROWS = 1 << 18           # rows computed at once (then their warm-up, at most as many)


def series_features(candles, spec: FeatureSpec, reference=None, levels=None, *,
                    folder: Path | None = None, in_memory_bytes: int = IN_MEMORY_BYTES,
                    chunk_rows: int = CHUNK_ROWS) -> np.ndarray:
    """``make_features(candles, spec, reference, levels)``, equal bit for bit, memory-mapped
    from a scratch file in ``folder`` (default: the app's data folder) when larger than
    ``in_memory_bytes``; see the module docstring."""
    n = len(candles)
    if n * spec.n_features * 4 <= in_memory_bytes:
        return make_features(candles, spec, reference, levels)
    if folder is None:
        from ..paths import app_paths

        folder = app_paths().data_dir
    folder = Path(folder)
    # a chunk's warm-up (a day's buckets of seconds, say) never costs more than its rows
    chunk = max(int(chunk_rows), window_candles(spec, candles.timeframe, 0))
    ts = np.asarray(candles.ts)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix="features-", suffix=".f32", dir=folder)
    except OSError as exc:
        raise WorkstationError(f"no scratch file for the features of {n:,} candles in "
                               f"{folder}: {exc}") from exc
    try:
        with os.fdopen(fd, "wb") as out:
            for a in range(0, n, chunk):
                b = min(n, a + chunk)
                first = window_start(ts, b, spec, b - a)
                rows = make_features(candles.slice(first, b), spec, reference, levels)
                out.write(np.ascontiguousarray(rows[a - first:], dtype=np.float32).data)
        return np.memmap(name, dtype=np.float32, mode="c", shape=(n, spec.n_features))
    except OSError as exc:
        raise WorkstationError(f"the features of {n:,} candles could not be written to "
                               f"{folder} ({n * spec.n_features * 4 / 2**30:.1f} GB): "
                               f"{exc}") from exc
    finally:
        _remove(name)


def _remove(name: str) -> None:
    """Unlink the scratch file now (a mapping keeps its pages), or at exit where an open
    file cannot be removed."""
    try:
        os.unlink(name)
    except FileNotFoundError:
        pass
    except OSError:
        atexit.register(_remove_at_exit, name)


def _remove_at_exit(name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name)
