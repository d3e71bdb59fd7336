"""Times as users type them: ISO dates or datetimes (UTC unless they say otherwise) or epoch ms."""

from __future__ import annotations

import datetime as dt

from .errors import WorkstationError

_DAY_MS = 86_400_000


def parse_time_ms(text: str, *, end_of_day: bool = False) -> int:
    """``"2024-01-01"``, ``"2024-01-01T12:30"``, ``"2024-01-01 12:30:00+02:00"`` or
    ``"1704067200000"`` -> epoch ms. A bare date means its first millisecond, or its last
    with ``end_of_day`` (so an inclusive ``--until 2024-01-31`` takes all of that day)."""
    text = str(text).strip()
    if text.isdigit():
        return int(text)
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise WorkstationError(f"cannot read {text!r} as a time: use an ISO date like "
                               f"2024-01-31, a datetime like 2024-01-31T12:00, or epoch ms"
                               ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    ms = int(moment.timestamp() * 1000)
    if end_of_day and len(text) == 10:
        ms += _DAY_MS - 1
    return ms


def format_ms(ms: int) -> str:
    """Epoch ms as ``2024-01-31 12:00:00 UTC`` (whole seconds)."""
    moment = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def format_minute(ms: int) -> str:
    """Epoch ms as ``2024-01-31 12:00`` (UTC, to the minute), as lists and messages show it."""
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M")
