"""Control marks: trades made by a simple causal rule, to prove the trader's heads learn marks.

A positive control imports trades that follow a rule the model can compute from its input
window and expects the position head to beat its baselines; the negative control imports the
same trades shuffled in time, which no rule on the candles explains, and expects no edge.

The rules (``ControlRule``, by name; each value ``t`` depends on candles ``<= t`` only):

- ``ma-cross`` (``ma_cross_positions``, default 10/40): +1 (long) while the ``fast``-candle
  simple moving average of closes is above the ``slow``-candle one, -1 (short) while below.
  Each average is summed from its own window only (``candle_columns.trailing_mean``), so the
  positions do not depend on where the series starts.
- ``ema-cross`` (``ema_cross_positions``, default 20/50): the same with exponential moving
  averages (``ema``: weight ``2 / (span + 1)``, seeded with the first close), which depend on
  the whole past, fading: a series that starts later agrees once the seed has faded.
- ``donchian`` (``donchian_positions``, default 20): long from a close above the highest high
  of the previous ``window`` candles, short from a close below their lowest low, held until
  the opposite breakout.
- ``rsi`` (``rsi_positions``, default 14): long while the chart's RSI of that period
  (``workstation.indicators``, Wilder's) is above 50, short while below: a rule of one
  indicator the trader reads, which the model computes from its window only approximately
  unless the RSI is one of its inputs (``FeatureSpec.indicators``).
- ``levels`` (``pivot_levels``, ``level_positions``, default 10): the swing highs and lows of
  the series as drawn levels (a candle whose high is the highest of the ``window`` candles on
  either side, whose low the lowest), each drawn at the candle where it is first known,
  ``window`` candles after the swing, at the swing's price; long while the close is within one
  volatility (the RMS log return of the last 60 candles) above the nearest level below (on a
  support), short while within one under the nearest level above (under a resistance), flat
  else (and when both hold): a rule of the levels the trader draws, which the model reads only
  approximately from its window unless the levels are inputs (``FeatureSpec.levels``). Its
  levels go with its marks (``control-marks`` writes both), and, flat between trades, it
  comes with a reviewed region as ma-agree does.
- ``ma-agree`` (``agreement_positions``, default 10/50 and 20/100): long while every pair's
  fast simple average is above its slow one, short while every one is below, flat while they
  disagree (not held): two trend filters that must agree, the one rule here with flat
  stretches between trades, and one no linear model of the window's inputs computes (an AND
  of signs), while a small network does.

Each position is 0 (flat) until the rule's first candle with a full window (``slow - 1`` for
the crosses and the agreement's longest slow average, ``window`` for donchian); from then on,
in the held rules, a candle that gives no signal (a tie of the averages, a close inside the
channel) keeps the position, and it is flat until the first signal. The model can compute a
rule from a window that holds the rule's longest window, or from the trend inputs
(``trend_columns``) that hold its averages: keep the windows well inside ``seq_len`` (10/40
or 20/50 with 200-candle windows, 5/20 with 64), or among the trend windows (ma-agree's
default 10/50 and 20/100 are).

- ``control_marks``: a rule's positions as trades, one per long or short regime, each entered
  at the close of the candle at which its signal is seen and exited at the close of the candle
  at which the position changes, where the next trade (if not flat) is entered: the held rules'
  trades touch end to end, so every candle from the first entry to the last exit is reviewed
  and labelled with the rule's position. The regime still open at the last closed candle is not
  a trade yet and is left out.
- ``review_region``: for a rule with flat stretches (``ControlRule.flat_gaps``), the reviewed
  region from the first entry to the last exit that goes with its trades, so that the flat
  candles between them are "no trade" labels, as a trader's reviewed stretch makes them.
- ``shuffled_marks``: the same trades in a random order that keeps the order of directions
  (each long trade takes the place of a long one, each short of a short), and the flat gaps
  between them in a random order too, laid out from the first entry: the same count, durations
  (in candles), gaps and directions, span, class balance and alternation of positions, never
  overlapping, at times the rule does not explain.

Entry and exit prices are the closes of the candles marked. Marks are tagged ``control`` and
with their rule, so they are never mistaken for a trader's.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..annotations.drawings import Drawing, Shape
from ..annotations.model import Direction, Region, RegionLabel, Trade
from ..errors import WorkstationError
from ..indicators import IndicatorKind, IndicatorSpec, compute
from ..market.candles import Candles
from ..market.series import MarketKey
from .candle_columns import trailing_mean, volatility
from .level_columns import Levels, level_distances

CONTROL_TAG = "control"
# Ids are uuid5 of a mark's content in this namespace: the same marks get the same ids.
_ID_NAMESPACE = uuid.UUID("0b9e3a4c-54a1-4f6e-9a8e-2f1c7d6b5e40")


def check_windows(fast: int, slow: int) -> None:
    """Refuse averages that make no crossover rule (``1 <= fast < slow``)."""
    if not 1 <= fast < slow:
        raise WorkstationError(f"a moving-average cross needs 1 <= fast < slow candles, got "
                               f"fast {fast} and slow {slow}")


def check_window(window: int) -> None:
    """Refuse a window that makes no breakout or RSI rule (``window >= 1``)."""
    if window < 1:
        raise WorkstationError(f"--window needs at least 1 candle, got {window}")


def _held(signal: np.ndarray) -> np.ndarray:
    """Each candle's last nonzero ``signal`` (+1/-1) so far, 0 before the first (int8)."""
    last = np.maximum.accumulate(np.where(signal != 0, np.arange(len(signal)), -1))
    return np.where(last >= 0, signal[np.maximum(last, 0)], 0).astype(np.int8)


def _cross(fast_line: np.ndarray, slow_line: np.ndarray, slow: int) -> np.ndarray:
    sign = np.sign(fast_line - slow_line).astype(np.int8)
    sign[:slow - 1] = 0
    return _held(sign)


def ma_cross_positions(close: np.ndarray, fast: int, slow: int) -> np.ndarray:
    """+1/-1/0 (int8) per candle once it has closed; see the module docstring."""
    check_windows(fast, slow)
    close = np.asarray(close, dtype=np.float64)
    return _cross(trailing_mean(close, fast), trailing_mean(close, slow), slow)


def ema(x: np.ndarray, span: int) -> np.ndarray:
    """Exponential moving average of ``x`` with weight ``2 / (span + 1)``, seeded with
    ``x[0]``: ``e[t] = e[t - 1] + w * (x[t] - e[t - 1])`` (float64)."""
    weight = 2.0 / (span + 1)
    out = np.empty(len(x), dtype=np.float64)
    value = float(x[0]) if len(x) else 0.0
    for t, v in enumerate(np.asarray(x, dtype=np.float64).tolist()):
        value += weight * (v - value)
        out[t] = value
    return out


def ema_cross_positions(close: np.ndarray, fast: int, slow: int) -> np.ndarray:
    """+1/-1/0 (int8) per candle once it has closed; see the module docstring."""
    check_windows(fast, slow)
    return _cross(ema(close, fast), ema(close, slow), slow)


def donchian_positions(high: np.ndarray, low: np.ndarray, close: np.ndarray, window: int
                       ) -> np.ndarray:
    """+1/-1/0 (int8) per candle once it has closed; see the module docstring."""
    check_window(window)
    close = np.asarray(close, dtype=np.float64)
    signal = np.zeros(len(close), dtype=np.int8)
    if len(close) > window:  # channel of candles t - window .. t - 1, for t >= window
        upper = sliding_window_view(np.asarray(high, dtype=np.float64)[:-1], window).max(1)
        lower = sliding_window_view(np.asarray(low, dtype=np.float64)[:-1], window).min(1)
        later = close[window:]
        signal[window:] = np.where(later > upper, 1, np.where(later < lower, -1, 0))
    return _held(signal)


def rsi_positions(candles: Candles, period: int) -> np.ndarray:
    """+1/-1/0 (int8) per candle once it has closed; see the module docstring."""
    check_window(period)
    rsi = compute(IndicatorSpec(IndicatorKind.RSI, period), candles)["value"]
    signal = np.where(rsi > 50, 1, np.where(rsi < 50, -1, 0)).astype(np.int8)  # NaN: 0
    return _held(signal)


def agreement_positions(close: np.ndarray, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """+1/-1/0 (int8) per candle once it has closed; see the module docstring."""
    for fast, slow in pairs:
        check_windows(fast, slow)
    close = np.asarray(close, dtype=np.float64)
    signs = np.array([np.sign(trailing_mean(close, fast) - trailing_mean(close, slow))
                      for fast, slow in pairs])
    position = np.where((signs > 0).all(0), 1, np.where((signs < 0).all(0), -1, 0))
    position[:max(slow for _, slow in pairs) - 1] = 0
    return position.astype(np.int8)


@dataclass(frozen=True)
class _Scale:
    """The volatility the levels rule measures nearness in (``candle_columns.volatility``)."""

    volatility_window: int = 60
    min_volatility_bps: float = 0.1


def _swings(candles: Candles, k: int) -> list[tuple[str, int, float]]:
    """``(high | low, candle, price)`` of every swing, by the candle it is seen at (``k``
    after it)."""
    check_window(k)
    if len(candles) < 2 * k + 1:
        return []
    out = []
    for name, values, pick in (("high", candles.high, np.argmax),
                               ("low", candles.low, np.argmin)):
        at = np.flatnonzero(pick(sliding_window_view(values, 2 * k + 1), axis=1) == k) + k
        out += [(name, i, float(values[i])) for i in at.tolist()]
    return sorted(out, key=lambda s: (s[1], s[0]))


def pivot_levels(candles: Candles, market: MarketKey, window: int) -> list[Drawing]:
    """The swing highs and lows of ``candles`` as levels drawn where each is first known:
    see the module docstring."""
    tf, ts = candles.timeframe.name, candles.ts
    out = []
    for name, i, price in _swings(candles, window):
        seen = int(ts[i + window])
        content = f"{market.kind.value} {market.symbol} {tf} {name} {ts[i]} {window}"
        out.append(Drawing(id=str(uuid.uuid5(_ID_NAMESPACE, content)), shape=Shape.LEVEL,
                           market=market.kind, symbol=market.symbol, timeframe=tf, ts1=seen,
                           price1=price, created_at=seen,
                           notes=f"control level: the swing {name} of {int(ts[i])}, "
                                 f"{window} candles either side"))
    return out


def swing_levels(candles: Candles, window: int) -> Levels:
    """``pivot_levels``' prices and the times they are known at, without the drawings."""
    swings = _swings(candles, window)
    seen = np.array([candles.ts[i + window] for _, i, _ in swings], dtype=np.int64)
    return Levels(np.array([p for *_, p in swings], dtype=np.float64),
                  seen + candles.timeframe.ms)


def level_positions(candles: Candles, levels: Levels, near: float = 1.0) -> np.ndarray:
    """+1/-1/0 (int8) per candle once it has closed; see the module docstring."""
    vol = volatility(candles, _Scale()) if len(candles) else np.zeros(0)
    above, below = level_distances(candles, levels, vol, 10.0).T
    support, resistance = -below <= near, above <= near
    return np.where(support & ~resistance, 1,
                    np.where(resistance & ~support, -1, 0)).astype(np.int8)


def parse_pairs(text: str) -> tuple[int, ...]:
    """``"10/50,20/100"`` as the flat windows ``(10, 50, 20, 100)``; anything else is refused
    with a line that shows the form."""
    try:
        pairs = [tuple(int(w) for w in pair.split("/")) for pair in text.split(",")]
    except ValueError:
        pairs = []
    if len(pairs) < 2 or any(len(pair) != 2 for pair in pairs):
        raise WorkstationError(f"--pairs takes two or more FAST/SLOW averages, e.g. "
                               f"10/50,20/100; got {text!r}")
    return tuple(w for pair in pairs for w in pair)


DEFAULT_WINDOWS = {"ma-cross": (10, 40), "ema-cross": (20, 50), "donchian": (20,),
                   "rsi": (14,), "levels": (10,), "ma-agree": (10, 50, 20, 100)}
RULES = tuple(DEFAULT_WINDOWS)


@dataclass(frozen=True)
class ControlRule:
    """One of ``RULES`` and its windows in candles: ``(fast, slow)`` for the crosses,
    ``(window,)`` for donchian, ``(fast, slow, fast, slow, ...)`` for ma-agree."""

    name: str
    windows: tuple[int, ...]

    @classmethod
    def of(cls, name: str, *, fast: int | None = None, slow: int | None = None,
           window: int | None = None, pairs: str | None = None) -> ControlRule:
        """The rule ``name`` with the windows given, the rule's defaults for the others;
        refuses windows the rule does not take and windows that make no rule."""
        if name not in DEFAULT_WINDOWS:
            raise WorkstationError(f"unknown control rule {name!r}: one of {', '.join(RULES)}")
        default = DEFAULT_WINDOWS[name]
        if pairs is not None and name != "ma-agree":
            raise WorkstationError("--pairs is for ma-agree")
        if name == "ma-agree":
            if fast is not None or slow is not None or window is not None:
                raise WorkstationError("ma-agree takes --pairs FAST/SLOW,FAST/SLOW")
            rule = cls(name, default if pairs is None else parse_pairs(pairs))
            for fast_, slow_ in rule.pairs:
                check_windows(fast_, slow_)
        elif name in ("donchian", "rsi", "levels"):
            if fast is not None or slow is not None:
                raise WorkstationError(f"{name} takes --window; --fast and --slow are for "
                                       f"the crosses")
            rule = cls(name, (default[0] if window is None else window,))
            check_window(*rule.windows)
        else:
            if window is not None:
                raise WorkstationError(f"{name} takes --fast and --slow; --window is for "
                                       f"donchian, rsi and levels")
            rule = cls(name, (default[0] if fast is None else fast,
                              default[1] if slow is None else slow))
            check_windows(*rule.windows)
        return rule

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """ma-agree's (fast, slow) pairs."""
        return tuple(zip(self.windows[::2], self.windows[1::2]))

    @property
    def flat_gaps(self) -> bool:
        """Whether the rule is flat between some of its trades (ma-agree, levels): its trades
        need their ``review_region`` for the flat candles to be labels."""
        return self.name in ("ma-agree", "levels")

    @property
    def _label(self) -> str:
        if self.name == "ma-agree":
            return "+".join(f"{fast}/{slow}" for fast, slow in self.pairs)
        return "/".join(map(str, self.windows))

    @property
    def tag(self) -> str:
        """E.g. ``ema-cross 20/50``: the rule's tag on its marks."""
        return f"{self.name} {self._label}"

    @property
    def summary(self) -> str:
        """E.g. ``20/50 EMA cross``: what a trade is, in words."""
        label = self._label
        return {"ma-cross": f"{label} cross", "ema-cross": f"{label} EMA cross",
                "donchian": f"{label}-candle Donchian breakout",
                "rsi": f"RSI({label}) above / below 50",
                "levels": f"{label}-candle swing level nearness",
                "ma-agree": f"{label} agreement"}[self.name]

    @property
    def notes(self) -> str:
        """The rule in a sentence, the notes of its marks."""
        if self.name == "ma-agree":
            each = " and ".join(f"the {fast}-candle average of closes above the {slow}-candle "
                                f"one" for fast, slow in self.pairs)
            return f"control mark: long while {each}, short while every one is below, flat else"
        if self.name == "rsi":
            return (f"control mark: long while the {self.windows[0]}-candle RSI is above 50, "
                    f"short while below")
        if self.name == "levels":
            return (f"control mark: long while the close is within one volatility above the "
                    f"nearest swing level below ({self.windows[0]} candles either side), short "
                    f"while within one under the nearest above, flat else")
        if self.name == "donchian":
            return (f"control mark: long from a close above the highest high of the previous "
                    f"{self.windows[0]} candles, short from one below their lowest low")
        fast, slow = self.windows
        kind = "exponential average" if self.name == "ema-cross" else "average"
        return (f"control mark: long while the {fast}-candle {kind} of closes is above the "
                f"{slow}-candle one, short while below")

    def positions(self, candles: Candles) -> np.ndarray:
        """The rule's position at each of ``candles``."""
        if self.name == "donchian":
            return donchian_positions(candles.high, candles.low, candles.close,
                                      self.windows[0])
        if self.name == "ma-agree":
            return agreement_positions(candles.close, self.pairs)
        if self.name == "rsi":
            return rsi_positions(candles, self.windows[0])
        if self.name == "levels":
            return level_positions(candles, swing_levels(candles, self.windows[0]))
        cross = ma_cross_positions if self.name == "ma-cross" else ema_cross_positions
        return cross(candles.close, *self.windows)


def _closed(candles: Candles) -> Candles:
    return candles if candles.last_closed else candles.slice(0, candles.n_closed)


def _trade(candles: Candles, market: MarketKey, entry: int, exit_: int, sign: int,
           tags: tuple[str, ...], notes: str) -> Trade:
    """The trade entered at the close of candle ``entry`` and exited at that of ``exit_``."""
    ts, close = candles.ts, candles.close
    direction = Direction.LONG if sign > 0 else Direction.SHORT
    content = (f"{market.kind.value} {market.symbol} {candles.timeframe.name} {ts[entry]} "
               f"{ts[exit_]} {direction.value} {';'.join(tags)}")
    return Trade(id=str(uuid.uuid5(_ID_NAMESPACE, content)), market=market.kind,
                 symbol=market.symbol, timeframe=candles.timeframe.name, direction=direction,
                 entry_ts=int(ts[entry]), entry_price=float(close[entry]),
                 exit_ts=int(ts[exit_]), exit_price=float(close[exit_]), tags=tags, notes=notes)


def control_marks(candles: Candles, market: MarketKey, rule: ControlRule) -> list[Trade]:
    """``rule``'s trades on the closed candles of ``candles`` (of ``market``), in time order;
    see the module docstring."""
    candles = _closed(candles)
    position = rule.positions(candles)
    change = np.flatnonzero(np.diff(position)) + 1  # a signal is seen at each of these closes
    tags = (CONTROL_TAG, rule.tag)
    return [_trade(candles, market, i, j, int(position[i]), tags, rule.notes)
            for i, j in pairwise(change.tolist()) if position[i]]


def review_region(trades: Sequence[Trade], rule: ControlRule) -> Region:
    """The reviewed region from the first of ``trades`` (marks of ``rule``, at least one) to
    the last, tagged as they are: see the module docstring."""
    first, last = min(trades, key=lambda t: t.entry_ts), max(trades, key=lambda t: t.exit_ts)
    content = f"review {first.id} {last.id}"
    return Region(id=str(uuid.uuid5(_ID_NAMESPACE, content)), market=first.market,
                  symbol=first.symbol, timeframe=first.timeframe, start_ts=first.entry_ts,
                  end_ts=last.exit_ts, label=RegionLabel.REVIEWED.value,
                  tags=(CONTROL_TAG, rule.tag),
                  notes=f"control: the stretch the {rule.summary} trades were made on")


def ma_cross_marks(candles: Candles, market: MarketKey, *, fast: int = 10, slow: int = 40
                   ) -> list[Trade]:
    """The ``ma-cross`` rule's trades (``control_marks``)."""
    return control_marks(candles, market, ControlRule.of("ma-cross", fast=fast, slow=slow))


def _indices(candles: Candles, times: list[int]) -> np.ndarray:
    """Indices of the candles opening at ``times``; a time that opens none is an error."""
    at = np.searchsorted(candles.ts, times)
    if len(candles) == 0 or not np.array_equal(candles.ts[np.minimum(at, len(candles) - 1)],
                                               times):
        raise WorkstationError(f"shuffling needs trades marked on these "
                               f"{candles.timeframe.name} candles")
    return at


def shuffled_marks(trades: Sequence[Trade], candles: Candles, *, seed: int = 0
                   ) -> list[Trade]:
    """``trades`` (marked on ``candles``) in a random order from ``seed`` that keeps the
    order of directions, with their gaps in a random order, laid out from the first one's
    entry, each tagged with the seed; see the module docstring."""
    if not trades:
        return []
    candles = _closed(candles)
    if any(t.timeframe != candles.timeframe.name for t in trades):
        raise WorkstationError(f"shuffling needs trades marked on these "
                               f"{candles.timeframe.name} candles")
    ordered = sorted(trades, key=lambda t: t.entry_ts)
    entry = _indices(candles, [t.entry_ts for t in ordered])
    exit_ = _indices(candles, [t.exit_ts for t in ordered])
    rng = np.random.default_rng(seed)
    sign = np.array([t.direction.sign for t in ordered])
    order = np.arange(len(ordered))
    for side in (1, -1):
        slots = np.flatnonzero(sign == side)
        order[slots] = rng.permutation(slots)
    gaps = np.concatenate(([0], rng.permutation(entry[1:] - exit_[:-1])))
    ends = int(entry[0]) + np.cumsum((exit_ - entry)[order] + gaps)
    starts = ends - (exit_ - entry)[order]
    moved = [ordered[k] for k in order]
    return [_trade(candles, t.market_key, int(i), int(j), t.direction.sign,
                   t.tags + (f"shuffled seed {seed}",),
                   f"shuffled in time (seed {seed}): {t.notes}")
            for i, j, t in zip(starts, ends, moved)]
