"""The blind replay's clock: "now" walks through a stored series and nothing after it is shown.

A ``ReplayClock`` holds the whole series (``source``, never handed to a view) and how many of
its candles have been shown (``shown``). ``now`` is the close of the last candle shown: every
candle shown has closed by then and none after it has opened, so marks made at ``now`` are
blind. The clock only steps forward, by whole candles of the series' timeframe; higher
timeframes are built from those candles (their forming candle ends at ``now``).

``Speed`` is how fast it plays: a multiple of real time (``"60x"``: a minute of market time a
second) or candles per second (``"5/s"``). ``random_start`` picks a start the trader cannot
remember, inside a span, with history before it to read.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

from ..errors import WorkstationError
from ..timeparse import parse_time_ms
from .candles import Candles
from .timeframes import Timeframe

HISTORY = 300  # candles a random start leaves before it, so the chart has something to read
SPEEDS = ("1x", "10x", "60x", "300x", "1000x", "1/s", "2/s", "5/s", "10/s", "25/s", "50/s")
DEFAULT_SPEED = "5/s"


@dataclass(frozen=True)
class Speed:
    """``per_second`` candles a second (``"5/s"``), or ``times`` real time (``"60x"``)."""

    value: float
    per_candle: bool  # True: candles per second; False: a multiple of real time

    @classmethod
    def parse(cls, text: str) -> Speed:
        raw = str(text).strip().lower().replace(" ", "")
        per_candle = raw.endswith("/s")
        number = raw[:-2] if per_candle else raw.removesuffix("x")
        try:
            value = float(number)
        except ValueError:
            raise WorkstationError(f"replay speed {text!r}: write a multiple of real time "
                                   f"(1x to 1000x) or candles per second (5/s)") from None
        if not math.isfinite(value) or value <= 0:
            raise WorkstationError(f"replay speed {text!r} must be above 0")
        if not per_candle and not 1 <= value <= 1000:
            raise WorkstationError(f"replay speed {text!r}: real time runs 1x to 1000x")
        if per_candle and value > 1000:
            raise WorkstationError(f"replay speed {text!r}: at most 1000 candles a second")
        return cls(value, per_candle)

    def candles_per_second(self, timeframe: Timeframe) -> float:
        return self.value if self.per_candle else self.value / timeframe.seconds

    def __str__(self) -> str:
        return f"{self.value:g}/s" if self.per_candle else f"{self.value:g}x"


def speed_ladder(timeframe: Timeframe) -> list[Speed]:
    """The speeds faster / slower step through, slowest first on ``timeframe``."""
    return sorted((Speed.parse(s) for s in SPEEDS),
                  key=lambda s: (s.candles_per_second(timeframe), s.per_candle))


def stepped_speed(speed: Speed, timeframe: Timeframe, step: int) -> Speed:
    """The next faster (``step`` > 0) or slower speed of the ladder (the ends stay put)."""
    ladder = speed_ladder(timeframe)
    rate = speed.candles_per_second(timeframe)
    if step > 0:
        faster = [s for s in ladder if s.candles_per_second(timeframe) > rate]
        return faster[0] if faster else ladder[-1]
    slower = [s for s in ladder if s.candles_per_second(timeframe) < rate]
    return slower[-1] if slower else ladder[0]


def parse_span(text: str) -> tuple[int, int]:
    """``FROM..TO`` (dates, datetimes or epoch ms; a bare TO date takes all of that day)."""
    parts = str(text).split("..")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise WorkstationError(f"replay span {text!r}: write FROM..TO, e.g. "
                               f"2024-01-01..2024-06-30")
    start, end = parse_time_ms(parts[0]), parse_time_ms(parts[1], end_of_day=True)
    if start >= end:
        raise WorkstationError(f"replay span {text!r}: FROM must be before TO")
    return start, end


def index_at(candles: Candles, ts: int) -> int:
    """How many candles of ``candles`` have closed by ``ts`` (epoch ms)."""
    return int(np.searchsorted(candles.ts, ts - candles.timeframe.ms, side="right"))


def random_start(candles: Candles, span: tuple[int, int] | None, rng: random.Random,
                 history: int = HISTORY) -> int:
    """A start (candles shown) drawn uniformly from the candles that close inside ``span``
    (None: the whole series), leaving ``history`` candles before it where the series has
    them and at least one candle after it to play."""
    n = len(candles)
    if n < 2:
        raise WorkstationError("a replay needs at least 2 candles")
    lo, hi = (1, n - 1) if span is None else (max(1, index_at(candles, span[0])),
                                              min(n - 1, index_at(candles, span[1])))
    if lo > hi:
        raise WorkstationError("the replay span holds no candles of this series")
    lo = max(lo, min(history, hi))
    return rng.randint(lo, hi)


class ReplayClock:
    """See the module docstring."""

    def __init__(self, source: Candles, shown: int, speed: Speed | str = DEFAULT_SPEED,
                 stop: int | None = None):
        if len(source) < 2:
            raise WorkstationError("a replay needs at least 2 candles")
        self.source = source.slice(0, source.n_closed)  # a forming candle never replays
        self.shown = max(1, min(int(shown), len(self.source) - 1))
        self.start = self.shown
        # the most candles it shows (a stretch's end; None: the whole series)
        self.stop = len(self.source) if stop is None else \
            max(self.shown, min(int(stop), len(self.source)))
        self.speed = Speed.parse(speed) if isinstance(speed, str) else speed
        self.playing = False

    @property
    def timeframe(self) -> Timeframe:
        return self.source.timeframe

    @property
    def now(self) -> int:
        """The clock: the close of the last candle shown (epoch ms)."""
        return int(self.source.ts[self.shown - 1]) + self.timeframe.ms

    @property
    def started_at(self) -> int:
        """The clock when this replay started."""
        return int(self.source.ts[self.start - 1]) + self.timeframe.ms

    @property
    def left(self) -> int:
        """Candles still to show before it stops."""
        return self.stop - self.shown

    @property
    def hidden(self) -> int:
        """Candles still hidden."""
        return len(self.source) - self.shown

    def visible(self) -> Candles:
        """The candles shown: every one closed by ``now``."""
        return self.source.slice(0, self.shown)

    def step(self, n: int = 1) -> Candles:
        """Move the clock ``n`` candles forward (fewer at the end); returns the candles
        newly shown."""
        first = self.shown
        self.shown = min(self.stop, self.shown + max(0, int(n)))
        return self.source.slice(first, self.shown)
