"""``AlertBook``: the trader's alerts, kept in a JSON file across restarts.

An ``Alert`` is on a market and symbol: a price crossing one of its drawn levels (``LEVEL``,
by the drawing's id, so it follows the level when the level moves) or the model's suggested
position flipping with a confidence of at least ``threshold`` (``FLIP``). The file::

    {"version": 1, "alerts": [{"id", "kind": "level" | "flip", "market": "real" | "demo",
      "symbol", "drawing_id", "threshold", "created_at", "fired", "last_fired_at"}, ...]}

Every change is written at once, atomically (a temporary file renamed over the old one). A
file that cannot be read as alerts is never overwritten: ``AlertBook.open`` moves it aside
(``alerts.json.damaged``), says so in one line (``problem``) and starts empty.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..atomic import atomic_write_text
from ..errors import WorkstationError
from ..market.series import MarketKey, MarketKind

VERSION = 1
FIELDS = ("id", "kind", "market", "symbol", "drawing_id", "threshold", "created_at", "fired",
          "last_fired_at")


class AlertError(WorkstationError):
    """An alert that cannot be, or an alerts file that cannot be read; the message names
    what is wrong."""


class AlertKind(str, enum.Enum):
    LEVEL = "level"
    FLIP = "flip"


@dataclass(frozen=True, kw_only=True)
class Alert:
    """See the module docstring; ``fired`` counts the times it went off."""

    kind: AlertKind
    market: MarketKind
    symbol: str
    drawing_id: str | None = None  # LEVEL: the drawn level's id
    threshold: float | None = None  # FLIP: the confidence the new position needs
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    created_at: int = field(default_factory=lambda: time.time_ns() // 1_000_000)
    fired: int = 0
    last_fired_at: int | None = None

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "kind", AlertKind(self.kind))
            object.__setattr__(self, "market", MarketKind(self.market))
        except ValueError as exc:
            raise AlertError(f"alert {self.id}: {exc}") from None
        if not isinstance(self.symbol, str) or not self.symbol.strip():
            raise AlertError(f"alert {self.id}: symbol must be a non-empty text")
        if self.kind is AlertKind.LEVEL and not isinstance(self.drawing_id, str):
            raise AlertError(f"alert {self.id}: a level alert needs the level's drawing_id")
        if self.kind is AlertKind.FLIP:
            t = self.threshold
            if isinstance(t, bool) or not isinstance(t, int | float) or not 0.0 < t <= 1.0:
                raise AlertError(f"alert {self.id}: threshold must be a confidence in (0, 1], "
                                 f"got {t!r}")
        for name in ("created_at", "fired"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise AlertError(f"alert {self.id}: {name} must be a whole number >= 0")

    @property
    def market_key(self) -> MarketKey:
        return MarketKey(self.market, self.symbol)

    def went_off(self, when: int) -> Alert:
        return dataclasses.replace(self, fired=self.fired + 1, last_fired_at=when)


def _record(a: Alert) -> dict:
    return {"id": a.id, "kind": a.kind.value, "market": a.market.value, "symbol": a.symbol,
            "drawing_id": a.drawing_id, "threshold": a.threshold, "created_at": a.created_at,
            "fired": a.fired, "last_fired_at": a.last_fired_at}


def _alert(record, index: int) -> Alert:
    if not isinstance(record, dict):
        raise AlertError(f"alerts[{index}] must be an object")
    unknown = sorted(set(record) - set(FIELDS))
    missing = [k for k in FIELDS if k not in record]
    if unknown or missing:
        what = f"unknown key {unknown[0]!r}" if unknown else f"missing {missing[0]!r}"
        raise AlertError(f"alerts[{index}]: {what}")
    return Alert(**record)


def read_alerts(path: Path) -> list[Alert]:
    """The alerts of ``path`` ([] when there is no file); ``AlertError`` names what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise AlertError(f"{path}: cannot be read ({exc})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AlertError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(doc, dict) or doc.get("version") != VERSION \
            or not isinstance(doc.get("alerts"), list):
        raise AlertError(f'{path}: not an alerts file (want {{"version": {VERSION}, "alerts": '
                         f'[...]}})')
    try:
        alerts = [_alert(r, i) for i, r in enumerate(doc["alerts"])]
    except AlertError as exc:
        raise AlertError(f"{path}: {exc}") from None
    return alerts


class AlertBook:
    """The alerts of one file; ``problem``: the line saying why a damaged file was moved
    aside at ``open`` ("" when none was)."""

    def __init__(self, path: Path, alerts: list[Alert], problem: str = ""):
        self.path = path
        self.problem = problem
        self._alerts = {a.id: a for a in alerts}

    @classmethod
    def open(cls, path: str | os.PathLike) -> AlertBook:
        path = Path(path)
        try:
            return cls(path, read_alerts(path))
        except AlertError as exc:
            aside = path.with_name(path.name + ".damaged")
            os.replace(path, aside)
            return cls(path, [], f"{exc}; it was moved to {aside.name} and no alerts are set")

    def list(self, market: MarketKey | None = None) -> list[Alert]:
        return [a for a in self._alerts.values() if market is None or a.market_key == market]

    def get(self, alert_id: str) -> Alert | None:
        return self._alerts.get(alert_id)

    def on_level(self, drawing_id: str) -> Alert | None:
        return next((a for a in self._alerts.values() if a.drawing_id == drawing_id), None)

    def flip_alert(self, market: MarketKey) -> Alert | None:
        return next((a for a in self.list(market) if a.kind is AlertKind.FLIP), None)

    def add(self, alert: Alert) -> Alert:
        self._write({**self._alerts, alert.id: alert})
        return alert

    def put(self, alert: Alert) -> None:
        """Replace the alert with ``alert``'s id (one that went off)."""
        if alert.id in self._alerts:
            self._write({**self._alerts, alert.id: alert})

    def remove(self, alert_id: str) -> Alert | None:
        gone = self._alerts.get(alert_id)
        if gone is not None:
            self._write({k: a for k, a in self._alerts.items() if k != alert_id})
        return gone

    def clear(self) -> int:
        n = len(self._alerts)
        if n:
            self._write({})
        return n

    def _write(self, alerts: dict[str, Alert]) -> None:
        """Write, then hold: a failed write leaves both the file and the book as they were."""
        text = json.dumps({"version": VERSION, "alerts": [_record(a) for a in alerts.values()]},
                          indent=1)
        atomic_write_text(self.path, text + "\n")
        self._alerts = alerts
