"""What an edge is worth: a backtest's figures that say whether its return could be earned.

Pure functions on the engine's results (``engine.run_backtest``), for every backtest:

- **The mean trade** in bps after costs (the trades' ``ReturnPct``) and before costs (the same
  trades between the raw fills: no fee, no slippage), and before costs in **price ticks**: the
  mean price move a trade captures, over the tick. The tick is the exchange's price precision
  where ``workstation fetch`` recorded it (``recorded_tick``), else the smallest positive
  increment among the span's prices (open, high, low, close), "tick inferred from prices",
  where every price lies on its grid; else it is unknown. A mean trade under one tick (either
  way) is flagged.
- **The break-even cost per side**: the cost, as a fee per side on the traded value (slippage
  in it), at which the total return after costs is zero, solved exactly (it falls as the cost
  rises); ``None`` ("none") when the trades lose even without costs.
- **A placebo**: the same positions shifted in time, circularly within the span, by
  ``PLACEBO_SHIFTS`` offsets drawn with the fixed seed ``PLACEBO_SEED`` from those no shorter
  than the longest trade (``longest`` .. ``span - longest`` candles), each backtested with the
  same costs, sizing and fills; the result's rank among them (1 + the copies it beats, out of
  ``PLACEBO_SHIFTS + 1``, by the log of the equity's growth, so that ruined equities still
  rank by how far they fell) and their median and 95th percentile return (numpy's linear
  interpolation). Returns are the final equity over the starting cash, less 1.
- **The share of candles whose next open equals their close** (within half a tick; exactly,
  where the tick is unknown): how often a "next open" fill is in effect a same-close fill.

The shifted backtests take the engine's trade rules without its equity curve (``outcome``),
so 200 of them on 100,000 candles take well under a second; for the unshifted signal it equals
the engine's final equity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .engine import NEXT_OPEN, BacktestRun, Costs, Sizing

PLACEBO_SHIFTS = 200
PLACEBO_SEED = 34
TICK_INFERRED = "tick inferred from prices"
NO_TICK = "no tick: the prices lie on no grid"
_GRID_TOLERANCE = 1e-6  # of a tick: how far a price may lie off the grid (float rounding)
_FLOAT_NOISE = 1e-10  # of a price: two prices closer than this are one price, rounded apart


@dataclass(frozen=True)
class Tick:
    """The price grid: ``size`` (NaN when unknown) and where it came from."""

    size: float
    source: str

    @property
    def known(self) -> bool:
        return bool(np.isfinite(self.size))


@dataclass(frozen=True)
class Placebo:
    """The shifted copies' ``offsets`` (candles), ``returns`` (fractions) and ``scores`` (what
    the rank compares: ``_score``), the result's own ``actual`` return and ``score``, and its
    ``rank`` (1 = beaten by every copy, ``len(returns) + 1`` = beats them all); ``offsets`` is
    empty when no shift is longer than the longest trade."""

    offsets: np.ndarray
    returns: np.ndarray
    scores: np.ndarray
    actual: float
    score: float
    rank: int

    @property
    def beaten(self) -> float:
        """The fraction of copies the result beats (NaN without copies)."""
        return (self.rank - 1) / len(self.returns) if len(self.returns) else float("nan")

    @property
    def median(self) -> float:
        return float(np.median(self.returns)) if len(self.returns) else float("nan")

    @property
    def p95(self) -> float:
        return float(np.percentile(self.returns, 95)) if len(self.returns) else float("nan")


@dataclass(frozen=True)
class Worth:
    """The figures of the module docstring for one backtest (bps and returns as numbers:
    ``mean_trade_bps`` after costs, ``*_before`` without costs; NaN without trades)."""

    trades: int
    mean_trade_bps: float
    mean_trade_bps_before: float
    mean_trade_ticks_before: float
    tick: Tick
    return_before: float          # the total return without costs, a fraction
    break_even_bps: float | None  # per side; None: loses even without costs; NaN: no trades
    placebo: Placebo
    next_open_is_close: float     # a fraction of the span's candles that have a next one
    placebo_by_log: bool          # the placebo ranks by log growth (fraction-of-equity sizing)

    @property
    def below_one_tick(self) -> bool:
        """Whether the mean trade before costs moves less than one tick, either way."""
        return bool(self.tick.known and abs(self.mean_trade_ticks_before) < 1)

    def to_dict(self) -> dict:
        p = self.placebo
        return {"trades": self.trades, "mean_trade_bps": _plain(self.mean_trade_bps),
                "mean_trade_bps_before_costs": _plain(self.mean_trade_bps_before),
                "mean_trade_ticks_before_costs": _plain(self.mean_trade_ticks_before),
                "below_one_tick": self.below_one_tick, "tick": _plain(self.tick.size),
                "tick_source": self.tick.source,
                "return_before_costs_pct": _plain(self.return_before * 100),
                "break_even_bps_per_side": (None if self.break_even_bps is None
                                            else _plain(self.break_even_bps)),
                "loses_before_costs": self.break_even_bps is None,
                "next_open_equals_close": _plain(self.next_open_is_close),
                "placebo": {"seed": PLACEBO_SEED, "rank": p.rank, "of": len(p.returns) + 1,
                            "beats": _plain(p.beaten),
                            "return_pct": _plain(p.actual * 100),
                            "median_return_pct": _plain(p.median * 100),
                            "p95_return_pct": _plain(p.p95 * 100),
                            "ranked_by": "log growth" if self.placebo_by_log else "return",
                            "score": _plain(p.score),
                            "offsets": [int(k) for k in p.offsets],
                            "returns_pct": [float(r * 100) for r in p.returns],
                            "scores": [_plain(x) for x in p.scores]}}


def inferred_tick(*prices: np.ndarray) -> Tick:
    """The smallest positive increment among ``prices`` (steps under a ten-billionth of the
    price are float noise; rounded to 6 significant digits), where every price lies on its
    grid; else an unknown tick."""
    values = np.unique(np.concatenate([np.asarray(p, dtype=np.float64) for p in prices]))
    values = values[np.isfinite(values)]
    steps = np.diff(values)
    steps = steps[steps > _FLOAT_NOISE * np.abs(values[1:])]
    if not len(steps):
        return Tick(float("nan"), NO_TICK)
    smallest = float(steps.min())
    tick = float(f"{smallest:.6g}")
    off = np.abs(values / tick - np.round(values / tick))
    if off.max() > _GRID_TOLERANCE:
        return Tick(float("nan"), NO_TICK)
    return Tick(tick, TICK_INFERRED)


def next_open_equals_close(open_: np.ndarray, close: np.ndarray, span: tuple[int, int],
                           tick: Tick) -> float:
    """The share of the span's candles (all but its last) whose next candle opens at their
    close: within half a tick, or exactly where the tick is unknown; NaN under two candles."""
    start, stop = span
    o = np.asarray(open_, dtype=np.float64)[start + 1:stop]
    c = np.asarray(close, dtype=np.float64)[start:stop - 1]
    if not len(c):
        return float("nan")
    tolerance = tick.size / 2 if tick.known else 0.0
    return float(np.mean(np.abs(o - c) <= tolerance))


def raw_fills(run: BacktestRun, open_: np.ndarray, close: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Each trade's entry and exit prices before slippage: the opens of its fill candles (the
    closes with ``SAME_CLOSE``), a trade closed at the span's end at its last close."""
    t = run.trades
    o, c = np.asarray(open_, dtype=np.float64), np.asarray(close, dtype=np.float64)
    if run.fill == NEXT_OPEN:
        return o[t.entry_bar], np.where(t.closed_at_end, c[t.exit_bar], o[t.exit_bar])
    return c[t.entry_bar], c[t.exit_bar]


def outcome(open_: np.ndarray, close: np.ndarray, wanted: np.ndarray, *, costs: Costs,
            sizing: Sizing, fill: str, cash: float) -> tuple[float, float]:
    """The engine's total return (final equity / starting cash - 1) of ``wanted`` (+1 / 0 / -1
    per candle) on these candles (one span, all three of one length), and the placebo's score
    of it (``_score``), by the engine's rules: a position held from the fill after its signal
    to the next change, the last one closed at the last close; only the trades, no equity
    curve."""
    fills = _fills(open_, close, wanted, costs, fill)
    return (_return_of(*fills, costs.fee, sizing, cash),
            _score(*fills, costs.fee, sizing, cash))


def _fills(open_: np.ndarray, close: np.ndarray, wanted: np.ndarray, costs: Costs, fill: str
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The direction, entry and exit fill (after slippage) of each trade of ``wanted``, by the
    engine's rules (see ``outcome``)."""
    o = np.asarray(open_, dtype=np.float64)
    c = np.asarray(close, dtype=np.float64)
    m = len(c)
    held = np.zeros(m, dtype=np.int8)
    held[1:] = np.clip(np.asarray(wanted[:-1]).astype(np.int8), -1, 1)
    fill_price = o if fill == NEXT_OPEN else np.concatenate(([np.nan], c[:-1]))
    change = np.flatnonzero(np.diff(held, prepend=0) != 0)
    k = np.flatnonzero(held[change] != 0)  # the changes that enter a trade
    entries = change[k]
    at_end = k + 1 >= len(change)
    exits = change[np.minimum(k + 1, len(change) - 1)]
    direction = held[entries].astype(np.float64)
    entry = costs.entry_fill(fill_price[entries], direction)
    exit_ = costs.exit_fill(np.where(at_end, c[-1], fill_price[exits]), direction)
    return direction, entry, exit_


def _return_of(direction: np.ndarray, entry: np.ndarray, exit_: np.ndarray, fee: float,
               sizing: Sizing, cash: float) -> float:
    """The total return of trades between these fills, each paying ``fee`` per side, sized by
    ``sizing`` from ``cash`` (the engine's accounting)."""
    gross = direction * (exit_ - entry)
    per_unit = gross - fee * (entry + exit_)
    if sizing.units is not None:
        return float(sizing.units * per_unit.sum() / cash)
    growth = 1 + sizing.size * per_unit / (entry * (1 + fee))
    return float(np.prod(growth) - 1)


def _score(direction: np.ndarray, entry: np.ndarray, exit_: np.ndarray, fee: float,
           sizing: Sizing, cash: float) -> float:
    """What the placebo ranks by: the log of the equity's growth (so that equities ruined to
    a return of -100.00 % still rank by how far they fell), or the return with fixed units."""
    if sizing.units is not None:
        return _return_of(direction, entry, exit_, fee, sizing, cash)
    return _log_growth(direction, entry, exit_, fee, sizing.size)


def break_even_bps(direction: np.ndarray, entry: np.ndarray, exit_: np.ndarray,
                   sizing: Sizing) -> float | None:
    """The fee per side, in bps, at which trades between these raw fills return nothing
    (``_return_of`` falls as the fee rises, to below 0 as it nears 1); None when they lose
    even without costs, NaN without trades."""
    if not len(direction):
        return float("nan")
    if _return_of(direction, entry, exit_, 0.0, sizing, 1.0) <= 0:
        return None
    if sizing.units is not None:  # the units cancel: the cash P&L is linear in the fee
        return float((direction * (exit_ - entry)).sum() / (entry + exit_).sum() * 10_000)
    lo, hi = 0.0, 1.0
    for _ in range(80):  # the interval halves each time: far below a billionth of a bps
        mid = (lo + hi) / 2
        if _log_growth(direction, entry, exit_, mid, sizing.size) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2 * 10_000


def _log_growth(direction, entry, exit_, fee: float, size: float) -> float:
    """The log of the equity's growth over the trades (``-inf`` once a trade ruins it)."""
    growth = 1 + size * (direction * (exit_ - entry) - fee * (entry + exit_)) / (
        entry * (1 + fee))
    return float(np.log(growth).sum()) if np.all(growth > 0) else -np.inf


def placebo(run: BacktestRun, open_: np.ndarray, close: np.ndarray, signal: np.ndarray, *,
            shifts: int = PLACEBO_SHIFTS, seed: int = PLACEBO_SEED) -> Placebo:
    """``run``'s signal shifted in time (see the module docstring), each copy backtested by
    ``outcome`` with the run's costs, sizing and fills, and the run's rank among them by
    ``_score`` (the result's own taken the same way)."""
    start, stop = run.span
    m = stop - start
    o = np.asarray(open_, dtype=np.float64)[start:stop]
    c = np.asarray(close, dtype=np.float64)[start:stop]
    wanted = np.asarray(signal)[start:stop]
    t = run.trades
    actual = float(run.equity[-1] / run.cash - 1)
    longest = max(int((t.exit_bar - t.entry_bar).max()), 1) if len(t) else m
    if m - longest < longest:  # no trade (nothing to shift), or one as long as half the span
        return Placebo(np.empty(0, dtype=np.int64), np.empty(0), np.empty(0), actual,
                       float("nan"), 1)
    offsets = np.random.default_rng(seed).integers(longest, m - longest + 1, size=shifts)
    def backtested(copy: np.ndarray) -> tuple[float, float]:
        return outcome(o, c, copy, costs=run.costs, sizing=run.sizing, fill=run.fill,
                       cash=run.cash)

    returns, scores = np.empty(shifts), np.empty(shifts)
    for i, k in enumerate(offsets):
        returns[i], scores[i] = backtested(np.roll(wanted, int(k)))
    own = backtested(wanted)[1]
    return Placebo(offsets, returns, scores, actual, own, 1 + int((scores < own).sum()))


def recorded_tick(candle_cache, source: str, symbol: str) -> Tick | None:
    """The price tick the exchange gave when ``symbol``'s candles were fetched from
    ``source`` into the cache file ``candle_cache`` (None: none recorded, or no cache)."""
    from pathlib import Path

    from ..market.cache import CandleCache

    if candle_cache is None or not Path(candle_cache).is_file():
        return None
    with CandleCache(candle_cache) as cache:
        found = cache.tick(source, symbol)
    return None if found is None else Tick(found[0], found[1])


def assess(run: BacktestRun, open_: np.ndarray, high: np.ndarray, low: np.ndarray,
           close: np.ndarray, signal: np.ndarray, tick: Tick | None = None) -> Worth:
    """Every figure of the module docstring for ``run`` (the engine's result of ``signal`` on
    these candles, every candle of the series); ``tick``: the exchange's (``recorded_tick``),
    else it is inferred from the prices."""
    start, stop = run.span
    tick = tick or inferred_tick(*(np.asarray(p)[start:stop] for p in (open_, high, low,
                                                                        close)))
    t = run.trades
    entry, exit_ = raw_fills(run, open_, close)
    direction = t.direction.astype(np.float64)
    moves = direction * (exit_ - entry)
    return Worth(
        trades=len(t), mean_trade_bps=_mean(t.return_pct) * 10_000,
        mean_trade_bps_before=_mean(moves / entry) * 10_000,
        mean_trade_ticks_before=_mean(moves) / tick.size, tick=tick,
        return_before=_return_of(direction, entry, exit_, 0.0, run.sizing, run.cash),
        break_even_bps=break_even_bps(direction, entry, exit_, run.sizing),
        placebo=placebo(run, open_, close, signal),
        next_open_is_close=next_open_equals_close(open_, close, run.span, tick),
        placebo_by_log=run.sizing.units is None)


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else float("nan")


def _plain(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None
