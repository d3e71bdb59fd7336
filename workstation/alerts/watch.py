"""``AlertWatch``: when the trader's alerts go off (no Qt, no file).

A level alert goes off when the price crosses its level: from below to at or above it
(``crossed`` is +1), or from above to at or below it (-1), between two prices heard of its
market (ticks of the forming candle and closes alike), at most once per candle. The level is
the drawing's price when the price is heard, so a moved level is watched where it is now; an
alert whose level is gone (deleted) is silent. The first price heard after a start is only
remembered: a crossing needs a price before it.

A flip alert goes off when the model's suggested position (the position head's most likely
class, with at least the alert's ``threshold`` of probability) differs from the last one that
was that sure: a long at 72 % after a short at 65 % with a 60 % threshold. Suggestions below the
threshold neither go off nor count as the position held; the first sure one is only
remembered.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..annotations.drawings import Drawing, Shape
from ..market.series import MarketKey
from ..ml.targets import POSITION_CLASSES
from .book import Alert, AlertKind


@dataclass(frozen=True)
class Fired:
    """An alert that went off at ``when`` (epoch ms) and the line that says so."""

    alert: Alert
    text: str
    when: int


def crossed(level: float, before: float, now: float) -> int:
    """+1 if the price went from below ``level`` to at or above it, -1 the other way, 0 not."""
    if before < level <= now:
        return 1
    if before > level >= now:
        return -1
    return 0


def sure_position(position_probs, threshold: float) -> tuple[str, float] | None:
    """The suggested position and its probability, if at least ``threshold``; else None."""
    probs = [float(p) for p in position_probs]
    best = max(range(len(probs)), key=probs.__getitem__)
    return (POSITION_CLASSES[best], probs[best]) if probs[best] >= threshold else None


class AlertWatch:
    """See the module docstring: what it heard last, per market and alert."""

    def __init__(self):
        self._price: dict[MarketKey, float] = {}
        self._fired_on: dict[str, int] = {}  # level alert id -> the candle it went off on
        self._held: dict[str, str] = {}  # flip alert id -> the last sure position

    def forget(self, market: MarketKey | None = None) -> None:
        """Start over (another series, a replay): the next price is only remembered."""
        if market is None:
            self._price.clear()
        else:
            self._price.pop(market, None)

    def price(self, alerts: list[Alert], levels: dict[str, Drawing], market: MarketKey,
              price: float, candle_ts: int, when: int, format_price=str) -> list[Fired]:
        """The level alerts of ``market`` that ``price`` (on the candle opening at
        ``candle_ts``) sets off; ``levels`` holds the drawings by id."""
        before = self._price.get(market)
        self._price[market] = price
        if before is None or before == price:
            return []
        fired = []
        for alert in alerts:
            d = levels.get(alert.drawing_id or "")
            if (alert.kind is not AlertKind.LEVEL or alert.market_key != market or d is None
                    or d.shape is not Shape.LEVEL or d.price1 is None):
                continue
            way = crossed(d.price1, before, price)
            if way and self._fired_on.get(alert.id) != candle_ts:
                self._fired_on[alert.id] = candle_ts
                text = (f"{market.symbol} crossed the level {format_price(d.price1)} "
                        f"{'upward' if way > 0 else 'downward'} (price {format_price(price)})")
                fired.append(Fired(alert, text, when))
        return fired

    def prediction(self, alerts: list[Alert], market: MarketKey, position_probs,
                   when: int) -> list[Fired]:
        """The flip alerts of ``market`` that a live prediction's position probabilities
        (flat, long, short) set off."""
        fired = []
        for alert in alerts:
            if alert.kind is not AlertKind.FLIP or alert.market_key != market:
                continue
            sure = sure_position(position_probs, float(alert.threshold or 1.0))
            if sure is None:
                continue
            held = self._held.get(alert.id)
            self._held[alert.id] = sure[0]
            if held is not None and held != sure[0]:
                text = (f"the model's suggested position on {market.symbol} flipped to "
                        f"{sure[0].upper()} {sure[1]:.0%} (was {held.upper()}; alert at "
                        f"{float(alert.threshold or 0):.0%})")
                fired.append(Fired(alert, text, when))
        return fired
