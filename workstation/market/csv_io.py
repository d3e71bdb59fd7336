"""Candle CSV files: Binance kline CSVs and generic ``ts,open,high,low,close,volume`` files.

Reading accepts gzip or plain text (or a zip holding one CSV, as Binance's archive ships them),
with or without a header, timestamps in ms or µs (Binance switched its spot archive to µs in
2025). The whole file is parsed and validated before anything is returned: a bad file gives a
``CsvFormatError`` that names the line, and nothing half-read. Writing uses the generic format
and replaces the target atomically.
"""

from __future__ import annotations

import gzip
import io
import zipfile
from pathlib import Path

import numpy as np

from ..atomic import atomic_write_bytes
from ..errors import WorkstationError
from .candles import PRICE_FIELDS, Candles, find_problem
from .timeframes import Timeframe, parse_timeframe

HEADER = "ts_ms,open,high,low,close,volume"
_TS_NAMES = {"ts", "ts_ms", "timestamp", "time", "open_time", "opentime"}
_MICROSECONDS_ABOVE = 10**14  # ms timestamps stay below this until the year 5138


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


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _columns_from_header(path: Path, header: list[str]) -> list[int]:
    names = [h.strip().strip('"').lower() for h in header]
    wanted = []
    for field in ("ts",) + PRICE_FIELDS:
        options = _TS_NAMES if field == "ts" else {field, field[0]}
        found = [i for i, name in enumerate(names) if name in options]
        if not found:
            raise CsvFormatError(f"{path}: line 1: header has no {field} column "
                                 f"(expected {HEADER}, got {','.join(header)})")
        wanted.append(found[0])
    return wanted


def _locate_bad_line(path: Path, lines: list[bytes], first_line: int, columns: list[int]) -> str:
    """The message for the first line that does not parse (the slow path, errors only)."""
    need = max(columns) + 1
    for offset, raw in enumerate(lines):
        line_no = first_line + offset
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            return f"{path}: line {line_no}: empty line"
        fields = text.split(",")
        if len(fields) < need:
            return f"{path}: line {line_no}: expected at least {need} columns, found {len(fields)}"
        for name, col in zip(("ts",) + PRICE_FIELDS, columns):
            if not _is_number(fields[col]):
                return f"{path}: line {line_no}: {name}: {fields[col]!r} is not a number"
    return f"{path}: could not parse the file"


def read_candles_csv(path: str | Path, timeframe: str | Timeframe) -> Candles:
    """Parse and validate a candle CSV (see the module docstring); raises ``CsvFormatError``."""
    path = Path(path)
    tf = parse_timeframe(timeframe)
    lines = _read_bytes(path).splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise CsvFormatError(f"{path}: the file holds no candles")
    first = lines[0].decode("utf-8", "replace").strip().split(",")
    if _is_number(first[0]):
        header_lines = 0
        # a Binance kline row: open_time,o,h,l,c,v,close_time,...
        if len(first) >= 12 or len(first) == 6:
            columns = [0, 1, 2, 3, 4, 5]
        else:
            raise CsvFormatError(f"{path}: line 1: {len(first)} columns without a header; "
                                 f"expected a Binance kline row (12) or {HEADER} (6)")
    else:
        header_lines = 1
        columns = _columns_from_header(path, first)
    body = lines[header_lines:]
    if not body:
        raise CsvFormatError(f"{path}: the file has a header but no candles")
    try:
        table = np.loadtxt(body, delimiter=",", usecols=columns, dtype=np.float64, ndmin=2,
                           encoding=None)
    except ValueError:
        raise CsvFormatError(_locate_bad_line(path, body, header_lines + 1, columns)) from None
    raw_ts = table[:, 0]
    ts = raw_ts.astype(np.int64)
    ts = np.where(ts >= _MICROSECONDS_ABOVE, ts // 1000, ts)
    cols = [ts] + [np.ascontiguousarray(table[:, i + 1]) for i in range(5)]
    bad_ts = np.flatnonzero(raw_ts != np.floor(raw_ts))
    if bad_ts.size:
        raise CsvFormatError(f"{path}: line {int(bad_ts[0]) + header_lines + 1}: ts: "
                             f"{raw_ts[bad_ts[0]]!r} is not a whole number of ms or µs")
    problem = find_problem(*cols, timeframe=tf)
    if problem is not None:
        raise CsvFormatError(f"{path}: line {problem.row + header_lines + 1}: "
                             f"{problem.field}: {problem.reason}")
    return Candles.from_columns(cols, tf, validate=False)


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
