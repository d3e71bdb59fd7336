"""Candle CSV files: Binance kline CSVs and generic ``ts,open,high,low,close,volume`` files.

Reading accepts gzip or plain text (or a zip holding one CSV, as Binance's archive ships them),
with or without a header (and a UTF-8 BOM before it, as Excel writes), timestamps in ms or µs
(Binance switched its spot archive to µs in 2025). Parsing is strict: every row has exactly the
file's column count, every field used is one whole number (no trailing junk), blank and ``#``
lines are skipped but counted. The whole file is parsed and validated before anything is
returned: a bad file gives a ``CsvFormatError`` that names the true line, and nothing
half-read. The file's own timeframe is told from its
timestamps (``file_timeframe``): asked for a longer one it is resampled, a shorter one is
refused. Writing uses the generic format and replaces the target atomically.
"""

from __future__ import annotations

import gzip
import io
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..atomic import atomic_write_bytes
from ..errors import WorkstationError
from .candles import PRICE_FIELDS, Candles, find_problem
from .file_timeframe import infer_timeframe, on_timeframe
from .timeframes import Timeframe

HEADER = "ts_ms,open,high,low,close,volume"
_TS_NAMES = {"ts", "ts_ms", "timestamp", "time", "open_time", "opentime"}
_MICROSECONDS_ABOVE = 10**14  # ms timestamps stay below this until the year 5138
_LARGEST_TS = 10**17  # µs timestamps stay below this until the year 5138
_UTF8_BOM = b"\xef\xbb\xbf"  # what Excel's "CSV UTF-8" starts with


class CsvFormatError(WorkstationError):
    """A candle file that cannot be imported; the message names the file and the line."""


def _read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CsvFormatError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise CsvFormatError(f"{path}: corrupt gzip file: {exc}") from exc
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                members = [m for m in archive.namelist() if not m.endswith("/")]
                if len(members) != 1:
                    raise CsvFormatError(f"{path}: zip must hold exactly one CSV, "
                                         f"it holds {len(members)} files")
                return archive.read(members[0])
        except zipfile.BadZipFile as exc:
            raise CsvFormatError(f"{path}: corrupt zip file: {exc}") from exc
    return data


_NUMBER = re.compile(rb"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*|\s*[+-]?(?:nan|inf)\s*",
                     re.IGNORECASE)
_LOADTXT_AT = re.compile(r"at row (\d+), column (\d+)")


def _is_number(text: bytes) -> bool:
    """Whether the whole field is one decimal number (no trailing junk, no ``1_000``)."""
    return _NUMBER.fullmatch(text) is not None


def _columns_from_header(path: Path, header: list[str], line_no: int) -> list[int]:
    names = [h.strip().strip('"').lower() for h in header]
    wanted = []
    for field in ("ts",) + PRICE_FIELDS:
        options = _TS_NAMES if field == "ts" else {field, field[0]}
        found = [i for i, name in enumerate(names) if name in options]
        if not found:
            raise CsvFormatError(f"{path}: line {line_no}: header has no {field} column "
                                 f"(expected {HEADER}, got {','.join(header)})")
        wanted.append(found[0])
    return wanted


class _Rows:
    """The lines holding a header or candles, with their true 1-based line numbers.

    Blank lines and lines starting with ``#`` are skipped but still counted, so every message
    names the line an editor shows.
    """

    def __init__(self, lines: list[bytes]):
        keep = [bool(line.strip()) and not line.lstrip().startswith(b"#") for line in lines]
        if all(keep):
            self.lines, self._numbers = lines, None
        else:
            self.lines = [line for line, kept in zip(lines, keep) if kept]
            self._numbers = np.flatnonzero(keep) + 1

    def line_no(self, row: int) -> int:
        return row + 1 if self._numbers is None else int(self._numbers[row])


def _check_column_counts(path: Path, rows: _Rows, first: int, width: int) -> None:
    """Every candle row has exactly the file's column count (``width``)."""
    commas = np.fromiter((line.count(b",") for line in rows.lines[first:]), dtype=np.int64,
                         count=len(rows.lines) - first)
    bad = np.flatnonzero(commas != width - 1)
    if bad.size:
        row = first + int(bad[0])
        raise CsvFormatError(f"{path}: line {rows.line_no(row)}: {int(commas[bad[0]]) + 1} "
                             f"columns, the file has {width}")


def _locate_bad_field(path: Path, rows: _Rows, first: int, columns: list[int],
                      error: ValueError) -> str:
    """The message for the field numpy could not parse (the slow path, errors only)."""
    found = _LOADTXT_AT.search(str(error))
    candidates = range(first, len(rows.lines))
    if found:  # numpy names the row among those it was given; check it first
        at = first + int(found.group(1))
        candidates = range(at, at + 1) if at < len(rows.lines) else candidates
    for row in candidates:
        fields = rows.lines[row].split(b",")
        for name, col in zip(("ts",) + PRICE_FIELDS, columns):
            if not _is_number(fields[col]):
                text = fields[col].decode("utf-8", "replace")
                return f"{path}: line {rows.line_no(row)}: {name}: {text!r} is not a number"
    return f"{path}: could not parse the file: {error}"


def _timestamps_ms(path: Path, rows: _Rows, first: int, raw_ts: np.ndarray) -> np.ndarray:
    """Whole ms (or µs, converted) timestamps in range; the first bad one is named."""
    bad = np.flatnonzero(~np.isfinite(raw_ts) | (raw_ts < 0) | (raw_ts >= _LARGEST_TS)
                         | (raw_ts != np.floor(raw_ts)))
    if bad.size:
        value = float(raw_ts[bad[0]])
        in_range = np.isfinite(value) and 0 <= value < _LARGEST_TS
        why = ("is not a whole number of ms or µs" if in_range
               else "is not a timestamp in ms or µs since 1970")
        raise CsvFormatError(f"{path}: line {rows.line_no(first + int(bad[0]))}: ts: "
                             f"{value!r} {why}")
    ts = raw_ts.astype(np.int64)
    return np.where(ts >= _MICROSECONDS_ABOVE, ts // 1000, ts)


Progress = Callable[[float, str], None]
"""``progress(fraction done, what is being done)``: told a few dozen times per file."""
PARSE_ROWS = 100_000  # rows parsed per step (one progress report each)


def _step(progress: Progress | None, stop: Callable[[], bool] | None, done: float,
          what: str) -> None:
    if stop is not None and stop():
        raise ImportCancelled("the import was cancelled")
    if progress is not None:
        progress(done, what)


def _parse_rows(path: Path, rows: _Rows, first: int, columns: list[int],
                progress: Progress | None, stop: Callable[[], bool] | None,
                span: tuple[float, float]) -> np.ndarray:
    """The used columns of every candle row as floats, ``PARSE_ROWS`` rows a step."""
    n = len(rows.lines) - first
    parts = []
    for start in range(first, len(rows.lines), PARSE_ROWS):
        end = min(start + PARSE_ROWS, len(rows.lines))
        try:
            parts.append(np.loadtxt(rows.lines[start:end], delimiter=",", usecols=columns,
                                    dtype=np.float64, ndmin=2, comments=None, encoding=None))
        except ValueError as exc:
            raise CsvFormatError(_locate_bad_field(path, rows, start, columns, exc)) from None
        _step(progress, stop, span[0] + (span[1] - span[0]) * (end - first) / n,
              f"parsed {end - first:,} of {n:,} rows")
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


class ImportCancelled(WorkstationError):
    """``stop()`` said so between two steps of reading a file."""


def read_candles_csv(path: str | Path, tf: Timeframe | None = None, *,
                     progress: Progress | None = None,
                     stop: Callable[[], bool] | None = None) -> Candles:
    """Parse and validate a candle CSV (see the module docstring) into candles on ``tf``
    (None: the file's own timeframe); raises ``CsvFormatError``, or a
    ``file_timeframe.FileTimeframeError`` for a timeframe it cannot tell or give.
    ``progress`` hears how far it is (fractions 0 to 1); ``stop()`` true between two steps
    ends it with ``ImportCancelled``."""
    path = Path(path)
    _step(progress, stop, 0.0, f"reading {path.name}")
    data = _read_bytes(path).removeprefix(_UTF8_BOM)
    _step(progress, stop, 0.08, "splitting lines")
    rows = _Rows(data.splitlines())
    del data
    if not rows.lines:
        raise CsvFormatError(f"{path}: the file holds no candles")
    first = rows.lines[0].decode("utf-8", "replace").strip().split(",")
    if _is_number(first[0].encode()):
        header_rows = 0
        # a Binance kline row: open_time,o,h,l,c,v,close_time,...
        if len(first) != 12 and len(first) != 6:
            raise CsvFormatError(f"{path}: line {rows.line_no(0)}: {len(first)} columns without "
                                 f"a header; expected a Binance kline row (12) or {HEADER} (6)")
        columns = [0, 1, 2, 3, 4, 5]
    else:
        header_rows = 1
        columns = _columns_from_header(path, first, rows.line_no(0))
    if len(rows.lines) == header_rows:
        raise CsvFormatError(f"{path}: the file has a header but no candles")
    _step(progress, stop, 0.15, "checking columns")
    _check_column_counts(path, rows, header_rows, len(first))
    _step(progress, stop, 0.25, "parsing")
    table = _parse_rows(path, rows, header_rows, columns, progress, stop, (0.25, 0.9))
    _step(progress, stop, 0.9, "validating")
    ts = _timestamps_ms(path, rows, header_rows, table[:, 0])
    cols = [ts] + [np.ascontiguousarray(table[:, i + 1]) for i in range(5)]
    problem = find_problem(*cols)
    if problem is not None:
        raise CsvFormatError(f"{path}: line {rows.line_no(problem.row + header_rows)}: "
                             f"{problem.field}: {problem.reason}")
    own = infer_timeframe(ts, path.name)
    off_grid = np.flatnonzero(ts % own.ms)
    if off_grid.size:
        row = int(off_grid[0])
        raise CsvFormatError(f"{path}: line {rows.line_no(row + header_rows)}: ts: timestamp "
                             f"{int(ts[row])} is not on the {own.name} grid")
    return on_timeframe(Candles.from_columns(cols, own, validate=False), tf, path.name)


def candles_to_csv_bytes(candles: Candles) -> bytes:
    """The generic CSV (header ``ts_ms,open,high,low,close,volume``) of these candles."""
    out = io.StringIO()
    out.write(HEADER + "\n")
    if len(candles):
        table = np.column_stack([c.astype(np.float64) for c in candles.columns()[1:]])
        ts = candles.ts
        body = io.StringIO()
        np.savetxt(body, table, fmt="%.15g", delimiter=",")
        rows = body.getvalue().splitlines()
        out.write("\n".join(f"{t},{row}" for t, row in zip(ts.tolist(), rows)))
        out.write("\n")
    return out.getvalue().encode()


def write_candles_csv(candles: Candles, path: str | Path) -> Path:
    """Write the generic CSV (gzip if the name ends in .gz), replacing ``path`` atomically."""
    path = Path(path)
    data = candles_to_csv_bytes(candles)
    if path.suffix == ".gz":
        data = gzip.compress(data, compresslevel=6, mtime=0)
    atomic_write_bytes(path, data)
    return path
