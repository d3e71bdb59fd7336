"""The header of a safetensors file, read and checked against the file's size without reading
any tensor data.

The format: an 8-byte little-endian header length ``N``, ``N`` bytes of JSON naming each
tensor's dtype, shape and ``data_offsets`` (begin and end inside the data that follows), then
the data. ``read_header`` checks what the safetensors library checks before it maps the
file: a header length within the file, a JSON object, known dtypes, whole-number shapes,
offsets that match each shape and cover the data exactly (no gap, no overlap, nothing past
the end). No torch here.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass

# bytes per element of each dtype safetensors writes
DTYPE_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2,
               "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}
MAX_HEADER_BYTES = 100_000_000  # the safetensors library refuses longer headers
METADATA = "__metadata__"


class HeaderError(ValueError):
    """A safetensors header that is malformed or does not fit its file; the message says how."""


@dataclass(frozen=True)
class TensorEntry:
    """One tensor as the header describes it."""

    dtype: str
    shape: tuple[int, ...]
    offsets: tuple[int, int]


def read_header(path: str | os.PathLike) -> dict[str, TensorEntry]:
    """The tensors the header of the safetensors file ``path`` describes, checked against
    the file's size; ``HeaderError`` says what is wrong (``OSError`` if it cannot be read)."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size < 8:
            raise HeaderError(f"{size} bytes, too short for a safetensors header")
        length = int.from_bytes(fh.read(8), "little")
        if length > min(MAX_HEADER_BYTES, size - 8):
            raise HeaderError(f"header length {length} does not fit a file of {size} bytes")
        raw = fh.read(length)
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HeaderError(f"header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise HeaderError(f"header is a JSON {type(header).__name__}, not an object")
    metadata = header.pop(METADATA, {})
    if not (isinstance(metadata, dict)
            and all(isinstance(v, str) for v in metadata.values())):
        raise HeaderError(f"{METADATA} must map names to text, got {metadata!r}"[:200])
    entries = {name: _entry(name, value) for name, value in header.items()}
    _check_layout(entries, size - 8 - length)
    return entries


def _entry(name: str, value: object) -> TensorEntry:
    if not isinstance(value, dict):
        raise HeaderError(f"tensor {name}: not an object")
    dtype, shape, offsets = value.get("dtype"), value.get("shape"), value.get("data_offsets")
    if dtype not in DTYPE_BYTES:
        raise HeaderError(f"tensor {name}: unknown dtype {dtype!r}")
    if not (isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape)):
        raise HeaderError(f"tensor {name}: shape must be whole numbers >= 0, got {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2
            and all(type(o) is int and o >= 0 for o in offsets) and offsets[0] <= offsets[1]):
        raise HeaderError(f"tensor {name}: data_offsets must be [begin, end], got {offsets!r}")
    needed = math.prod(shape) * DTYPE_BYTES[dtype]
    if offsets[1] - offsets[0] != needed:
        raise HeaderError(f"tensor {name}: {dtype} {tuple(shape)} needs {needed} bytes, its "
                          f"data_offsets span {offsets[1] - offsets[0]}")
    return TensorEntry(dtype, tuple(shape), (offsets[0], offsets[1]))


def _check_layout(entries: dict[str, TensorEntry], data_bytes: int) -> None:
    """The tensors' data lie one after the other and fill the ``data_bytes`` after the header."""
    end = 0
    for name, entry in sorted(entries.items(), key=lambda item: item[1].offsets):
        if entry.offsets[1] > data_bytes:
            raise HeaderError(f"tensor {name}: data_offsets {list(entry.offsets)} reach past "
                              f"the end of the file's {data_bytes} data bytes")
        if entry.offsets[0] != end:
            raise HeaderError(f"tensor {name}: data_offsets {list(entry.offsets)} leave a gap "
                              f"or overlap (the data before it ends at {end})")
        end = entry.offsets[1]
    if end != data_bytes:
        raise HeaderError(f"the tensors' data end at byte {end}, the file holds {data_bytes} "
                          f"data bytes")
