"""What a set of annotations adds up to: how many, how many trades, the win rate and the mean
P&L of those trades (``None`` where there is no trade, shown as "—", never 0)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..display import number, percent
from .model import Annotation, Trade


def trade_pnl(ann: Annotation) -> float | None:
    """The P&L % of a trade; None for a region or a point."""
    return ann.pnl_pct if isinstance(ann, Trade) else None


@dataclass(frozen=True)
class Totals:
    """``count`` annotations, ``trades`` of them trades, ``wins`` with P&L > 0; win rate and
    mean P&L are None without trades."""

    count: int
    trades: int
    wins: int
    mean_pnl: float | None

    @property
    def win_rate(self) -> float | None:
        return self.wins / self.trades if self.trades else None

    @classmethod
    def of(cls, annotations: Iterable[Annotation]) -> Totals:
        anns = list(annotations)
        return cls.of_pnls(len(anns), [trade_pnl(a) for a in anns])

    @classmethod
    def of_pnls(cls, count: int, pnls: Iterable[float | None]) -> Totals:
        """Totals of ``count`` annotations whose P&L % are ``pnls`` (None: not a trade)."""
        trades = [x for x in pnls if x is not None]
        wins = sum(1 for x in trades if x > 0)
        return cls(count, len(trades), wins, sum(trades) / len(trades) if trades else None)

    def text(self) -> str:
        rate = percent(self.win_rate)
        mean = number(self.mean_pnl, "+.2f", "%")
        noun = "annotation" if self.count == 1 else "annotations"
        trades = "trade" if self.trades == 1 else "trades"
        return (f"{self.count} {noun} · {self.trades} {trades} · win rate {rate} · "
                f"mean P&L {mean}")
