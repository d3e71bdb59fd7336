"""A lesson on the demo market: "Teach a rule" and "Teach shuffled marks" in the window.

The lesson is the trades of ``TEACH_RULE``, a rule the model can compute from its window (or
the same trades shuffled in time, ``SHUFFLE_SEED``, which nothing on the candles explains),
with the reviewed region over them that makes the flat candles between them labels, over the
closed candles on screen, and the time training stops at (``train_until``): the
newest ``HELD_OUT_DAYS`` days are held out, never trained or validated on, so that the report
("Did it learn my marks?") scores the position head on them beside every baseline, with an
interval over enough days (``scoring.MIN_DAYS``) for a verdict. The rule's marks should earn
"edge" there and the shuffled ones "no edge shown" (``tests/ui/test_teaching.py``).

The rule is ma-agree 10/50 + 20/100 (long while both simple-average pairs point up, short
while both point down, flat while they disagree) and not a single cross: a cross is one sign
of the trend inputs, which the lagged logistic baseline reads as well as the model does (on
the demo lesson the two were within half a point), while an agreement of two is an AND that
no linear baseline computes and the model's layers do (docs/evaluation.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..annotations.model import Region, Trade
from ..errors import WorkstationError
from ..market.candles import Candles
from ..market.series import MarketKey
from .controls import ControlRule, control_marks, review_region, shuffled_marks

TEACH_RULE = ControlRule.of("ma-agree")  # 10/50 and 20/100 agree: long, short; else flat
SHUFFLE_SEED = 1
HELD_OUT_DAYS = 6.0  # the newest days, held out: at least scoring.MIN_DAYS UTC days
MIN_TRAIN_DAYS = 3.0  # days before them to learn from
_DAY_MS = 86_400_000


@dataclass(frozen=True)
class Lesson:
    """The trades to import, the reviewed region over them, and where training stops (open
    time of its last candle)."""

    rule: ControlRule
    trades: tuple[Trade, ...]
    review: Region
    shuffled: bool
    train_until: int

    @property
    def marks(self) -> tuple[Trade | Region, ...]:
        """What the lesson imports: its trades and reviewed region."""
        return (*self.trades, self.review)

    @property
    def words(self) -> str:
        """E.g. "713 10/50+20/100 agreement trades" or "... shuffled in time (seed 1)"."""
        what = f"{len(self.trades):,} {self.rule.summary} trades"
        return f"{what} shuffled in time (seed {SHUFFLE_SEED})" if self.shuffled else what


def lesson(candles: Candles, market: MarketKey, *, shuffled: bool = False) -> Lesson:
    """The lesson over the closed ``candles`` of ``market`` (see the module docstring); a
    history too short to hold out ``HELD_OUT_DAYS`` days after ``MIN_TRAIN_DAYS`` is refused."""
    n = candles.n_closed
    span_days = (int(candles.ts[n - 1]) - int(candles.ts[0])) / _DAY_MS if n else 0.0
    if span_days < HELD_OUT_DAYS + MIN_TRAIN_DAYS:
        raise WorkstationError(
            f"a lesson needs {HELD_OUT_DAYS + MIN_TRAIN_DAYS:g} days of closed candles "
            f"({MIN_TRAIN_DAYS:g} to learn from, {HELD_OUT_DAYS:g} held out), these span "
            f"{span_days:.1f}")
    trades = control_marks(candles, market, TEACH_RULE)
    if not trades:
        raise WorkstationError(f"these candles hold no {TEACH_RULE.summary} trade to teach")
    if shuffled:
        trades = shuffled_marks(trades, candles, seed=SHUFFLE_SEED)
    last = int(candles.ts[n - 1])
    until = last - int(HELD_OUT_DAYS * _DAY_MS)
    until -= until % candles.timeframe.ms
    return Lesson(TEACH_RULE, tuple(trades), review_region(trades, TEACH_RULE), shuffled, until)
