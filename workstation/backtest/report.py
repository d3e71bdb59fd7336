"""Backtests of several signals on one span, always beside buy & hold, each with the
assumptions it rests on and what its edge is worth (``worth``: the mean trade in bps and ticks,
the break-even cost, a placebo of shifted copies, how often the next open is the close), in
words and as plain JSON. A return before costs is shown only beside its mean trade and
break-even cost.

The trader's marks are two samples on the same span, costs and fills as every other signal:
their blind marks (``BLIND_MARKS``) and their hindsight marks (``HINDSIGHT_MARKS``; see
``signals``). A marks sample without a trade on the span has no result: every figure but its
trade count is "—" (NaN, ``null`` in JSON), never a return of 0. The **hindsight gap** of a
span (``HindsightGap``) is the hindsight marks' figure minus the blind marks' of the total
return and the win rate (percentage points) and of the mean trade after costs (bps), "—"
where either sample has no trade there.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

import numpy as np

from ..display import NO_DATA, has_value, number, significant
from ..market.candles import Candles
from .engine import NEXT_OPEN, BacktestRun, Costs, Sizing, run_backtest
from .metrics import cagr_known, compute_metrics
from .signals import BLIND_MARKS_SIGNAL, HINDSIGHT_MARKS_SIGNAL, buy_and_hold_signal
from .worth import Tick, Worth, assess

BUY_AND_HOLD = "buy & hold"
OUT_OF_SAMPLE, IN_SAMPLE = "out of sample", "IN-SAMPLE"
BLIND_MARKS = "the trader's blind marks (made in replay, the future hidden)"
HINDSIGHT_MARKS = "the trader's hindsight marks (drawn with the future in view)"
MARKS_SAMPLES = (BLIND_MARKS, HINDSIGHT_MARKS)
MARKS_SAMPLE_OF = {BLIND_MARKS_SIGNAL: BLIND_MARKS, HINDSIGHT_MARKS_SIGNAL: HINDSIGHT_MARKS}
# the figures a marks sample without trades keeps (the rest are NaN: "—")
_KEPT_WITHOUT_TRADES = frozenset({"Start", "End", "Duration", "# Trades"})

# the metrics printed in words, in this order, with their units
SHOWN = (
    ("Return [%]", "%"), ("Buy & Hold Return [%]", "%"), ("CAGR [%]", "%"),
    ("Volatility (Ann.) [%]", "%"), ("Sharpe Ratio", ""), ("Sortino Ratio", ""),
    ("Calmar Ratio", ""), ("Max. Drawdown [%]", "%"), ("Max. Drawdown Duration", "time"),
    ("Win Rate [%]", "%"), ("Profit Factor", ""), ("Expectancy [%]", "%"), ("# Trades", "n"),
    ("Exposure Time [%]", "%"), ("Commissions [$]", "$"),
)
# what an edge is worth (``worth_text``), below the metrics in the same columns
WORTH_SHOWN = ("Return before Costs [%]", "Mean Trade [bps]", "Mean Trade before Costs [bps]",
               "Mean Trade before Costs [ticks]", "Break-even Cost [bps/side]",
               "Placebo Rank", "Placebo Median [%]", "Placebo 95th Pct. [%]")
BELOW_ONE_TICK = "(< 1 tick)"
LOSES_BEFORE_COSTS = "none"  # the break-even cost of trades that lose even without costs
SHORT_SPAN_CAGR = f"{NO_DATA} (under a year)"  # the CAGR of a span too short for one
COLUMN_GAP = "  "  # between the columns of ``describe``


@dataclass(frozen=True)
class Assumptions:
    """What a result rests on; printed with every result."""

    series: str
    period: tuple[int, int]      # first and last candle open time (ms UTC)
    sample: str                  # OUT_OF_SAMPLE, IN_SAMPLE or one of MARKS_SAMPLES
    fill: str
    costs: Costs
    sizing: Sizing
    cash: float

    def lines(self) -> list[str]:
        size = (f"{self.sizing.units:g} units a trade" if self.sizing.units is not None
                else f"{self.sizing.size * 100:g} % of equity a trade")
        fill = ("signal at a candle's close, filled at the next candle's open"
                if self.fill == NEXT_OPEN else
                "filled at the signal candle's own close (SAME-CLOSE: optimistic)")
        return [f"{self.series}, {_when(self.period[0])} .. {_when(self.period[1])} UTC",
                f"fills: {fill}; long and short",
                f"costs per side: fee {self.costs.fee * 100:g} % ({self.costs.fee_source}), "
                f"slippage {self.costs.slippage_bps:g} bps",
                f"sizing: {size}, starting cash {self.cash:,.0f}"]

    def to_dict(self) -> dict:
        return {"series": self.series, "period": list(self.period), "sample": self.sample,
                "fill": self.fill, "fee": self.costs.fee, "fee_source": self.costs.fee_source,
                "slippage_bps": self.costs.slippage_bps, "size": self.sizing.size,
                "units": self.sizing.units, "cash": self.cash}


@dataclass(frozen=True)
class BacktestResult:
    name: str
    run: BacktestRun
    metrics: dict[str, float]
    assumptions: Assumptions
    worth: Worth

    def to_dict(self) -> dict:
        t = self.run.trades
        return {"signals": self.name, "assumptions": self.assumptions.to_dict(),
                "metrics": {k: _plain(v) for k, v in self.metrics.items()},
                "worth": self.worth.to_dict(),
                "trades": [{"direction": int(t.direction[i]), "entry_bar": int(t.entry_bar[i]),
                            "exit_bar": int(t.exit_bar[i]),
                            "entry_price": float(t.entry_price[i]),
                            "exit_price": float(t.exit_price[i]), "units": float(t.units[i]),
                            "fees": float(t.fees[i]), "pnl": float(t.pnl[i]),
                            "closed_at_end": bool(t.closed_at_end[i])} for i in range(len(t))]}


    @property
    def no_trades(self) -> bool:
        """A marks sample without a trade on the span: no result, every figure "—"."""
        return self.assumptions.sample in MARKS_SAMPLES and not len(self.run.trades)


def marks_columns(marks: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, str]]:
    """The trader's marks signals (``signals.marks_signals``) as ``backtest_signals`` takes
    them: each with its sample (``BLIND_MARKS``, ``HINDSIGHT_MARKS``)."""
    return {name: (signal, MARKS_SAMPLE_OF[name]) for name, signal in marks.items()}


def backtest_signals(candles: Candles, signals: dict[str, tuple[np.ndarray, str]], *,
                     series: str, costs: Costs, sizing: Sizing = Sizing(),
                     fill: str = NEXT_OPEN, cash: float = 10_000.0,
                     span: tuple[int, int] | None = None, tick: Tick | None = None
                     ) -> list[BacktestResult]:
    """Each of ``signals`` (name -> (signal, sample)) and buy & hold backtested on ``span``
    of ``candles`` with the same costs, sizing and fills; buy & hold comes last. ``tick``:
    the exchange's price tick (``worth.recorded_tick``; None: inferred from the prices). A
    marks sample without a trade on the span keeps only its trade count (the module
    docstring)."""
    span = span or (0, len(candles))
    runs = dict(signals)
    runs[BUY_AND_HOLD] = (buy_and_hold_signal(len(candles), span), "buy & hold (no model)")
    period = (int(candles.ts[span[0]]), int(candles.ts[span[1] - 1]))
    results = []
    for name, (signal, sample) in runs.items():
        run = run_backtest(candles.open, candles.close, signal, costs=costs, sizing=sizing,
                           fill=fill, cash=cash, span=span)
        metrics = compute_metrics(run, candles.ts, candles.close, candles.timeframe.ms)
        worth = assess(run, candles.open, candles.high, candles.low, candles.close, signal,
                       tick)
        if sample in MARKS_SAMPLES and not len(run.trades):
            metrics = {k: v if k in _KEPT_WITHOUT_TRADES else float("nan")
                       for k, v in metrics.items()}
            worth = replace(worth, return_before=float("nan"))
        results.append(BacktestResult(name, run, metrics, Assumptions(
            series, period, sample, fill, costs, sizing, cash), worth))
    return results


@dataclass(frozen=True)
class SampleFigures:
    """What the hindsight gap compares of one sample on one span: its ``trades``, total
    ``return_pct`` (``Return [%]``), ``win_rate_pct`` (``Win Rate [%]``) and mean trade after
    costs in bps (``worth.Worth.mean_trade_bps``); NaN without trades."""

    trades: int
    return_pct: float
    win_rate_pct: float
    mean_trade_bps: float

    @classmethod
    def of(cls, run: BacktestRun, metrics: dict[str, float]) -> SampleFigures:
        n = len(run.trades)
        if not n:
            return cls(0, float("nan"), float("nan"), float("nan"))
        return cls(n, float(metrics["Return [%]"]), float(metrics["Win Rate [%]"]),
                   float(run.trades.return_pct.mean() * 10_000))

    def to_dict(self) -> dict:
        return {"trades": self.trades, "return_pct": _plain(self.return_pct),
                "win_rate_pct": _plain(self.win_rate_pct),
                "mean_trade_bps": _plain(self.mean_trade_bps)}


@dataclass(frozen=True)
class HindsightGap:
    """The hindsight marks minus the blind marks on one span (``label``: "fold 2/4", "held
    out", "all" ...; ``span``: its candles, ``period``: its first and last open times):
    ``return_pp`` and ``win_rate_pp`` in percentage points, ``mean_trade_bps`` in bps; NaN
    ("—") where either sample has no trade on the span."""

    label: str
    span: tuple[int, int]
    period: tuple[int, int]
    blind: SampleFigures
    hindsight: SampleFigures

    def _minus(self, field: str) -> float:
        if not self.blind.trades or not self.hindsight.trades:
            return float("nan")
        return float(getattr(self.hindsight, field) - getattr(self.blind, field))

    @property
    def return_pp(self) -> float:
        return self._minus("return_pct")

    @property
    def win_rate_pp(self) -> float:
        return self._minus("win_rate_pct")

    @property
    def mean_trade_bps(self) -> float:
        return self._minus("mean_trade_bps")

    def to_dict(self) -> dict:
        return {"span": self.label, "candles": list(self.span), "first_ts": self.period[0],
                "last_ts": self.period[1], "blind": self.blind.to_dict(),
                "hindsight": self.hindsight.to_dict(),
                "gap": {"return_pp": _plain(self.return_pp),
                        "win_rate_pp": _plain(self.win_rate_pp),
                        "mean_trade_bps": _plain(self.mean_trade_bps)}}


def hindsight_gap(results: list[BacktestResult], label: str) -> HindsightGap | None:
    """The hindsight gap of ``results`` (one span), or None without both marks samples."""
    by_sample = {r.assumptions.sample: r for r in results}
    blind, hindsight = by_sample.get(BLIND_MARKS), by_sample.get(HINDSIGHT_MARKS)
    if blind is None or hindsight is None:
        return None
    return HindsightGap(label, blind.run.span, blind.assumptions.period,
                        SampleFigures.of(blind.run, blind.metrics),
                        SampleFigures.of(hindsight.run, hindsight.metrics))


def span_gaps(candles: Candles, marks: dict[str, np.ndarray],
              spans: list[tuple[str, tuple[int, int]]], *, costs: Costs,
              sizing: Sizing = Sizing(), fill: str = NEXT_OPEN, cash: float = 10_000.0
              ) -> list[HindsightGap]:
    """The hindsight gap on each of ``spans`` (label, candles) of the trader's ``marks``
    signals (``signals.marks_signals``), each span backtested on its own with these costs,
    sizing and fills (as ``backtest_signals`` backtests the whole)."""
    gaps = []
    for label, span in spans:
        figures = {}
        for name in (BLIND_MARKS_SIGNAL, HINDSIGHT_MARKS_SIGNAL):
            run = run_backtest(candles.open, candles.close, marks[name], costs=costs,
                               sizing=sizing, fill=fill, cash=cash, span=span)
            figures[name] = SampleFigures.of(run, compute_metrics(
                run, candles.ts, candles.close, candles.timeframe.ms))
        gaps.append(HindsightGap(label, span, (int(candles.ts[span[0]]),
                                               int(candles.ts[span[1] - 1])),
                                 figures[BLIND_MARKS_SIGNAL], figures[HINDSIGHT_MARKS_SIGNAL]))
    return gaps


WHOLE_SPAN = "backtested span"  # the gap's label where one span is backtested
GAP_COLUMNS = ("span", "blind trades", "hindsight trades", "return gap", "win rate gap",
               "mean trade gap")


def gap_cells(gap: HindsightGap) -> tuple[str, ...]:
    """A gap's row as the CLI and the Backtest view show it (``GAP_COLUMNS``)."""
    return (gap.label, f"{gap.blind.trades:,}", f"{gap.hindsight.trades:,}",
            _pp(gap.return_pp), _pp(gap.win_rate_pp), _bps(gap.mean_trade_bps))


def gap_line(gap: HindsightGap) -> str:
    """One span's hindsight gap in words."""
    def trades(n: int) -> str:
        return f"{n:,} trade{'s' if n != 1 else ''}"

    text = (f"hindsight gap ({gap.label}; hindsight minus blind marks): return "
            f"{_pp(gap.return_pp)}, win rate {_pp(gap.win_rate_pp)}, mean trade "
            f"{_bps(gap.mean_trade_bps)} (blind {trades(gap.blind.trades)}, hindsight "
            f"{trades(gap.hindsight.trades)})")
    missing = [name for name, side in (("blind", gap.blind), ("hindsight", gap.hindsight))
               if not side.trades]
    if missing:
        text += f": no {' and no '.join(missing)} trade on this span"
    return text


def describe_gaps(gaps: list[HindsightGap]) -> list[str]:
    """The hindsight gap of each span as a table, ``GAP_COLUMNS`` apart and aligned."""
    if not gaps:
        return []
    rows = [GAP_COLUMNS, *(gap_cells(g) for g in gaps)]
    widths = [max(len(row[c]) for row in rows) for c in range(len(GAP_COLUMNS))]
    lines = ["hindsight gap per span (hindsight minus blind marks: return and win rate in "
             "percentage points, mean trade after costs in bps):"]
    for row in rows:
        lines.append(row[0].ljust(widths[0]) + "".join(
            COLUMN_GAP + cell.rjust(width) for cell, width in zip(row[1:], widths[1:])))
    return lines


def describe(results: list[BacktestResult], gap_label: str = WHOLE_SPAN) -> list[str]:
    """The results as lines: the assumptions and the prices' line once, then one row per
    metric and per figure of ``WORTH_SHOWN`` and one right-aligned column per signal, each as
    wide as its widest text and ``COLUMN_GAP`` from the next, then each signal's
    ``worth_line``, with both marks samples their hindsight gap (``gap_line``), and the
    first signal's ``summary``."""
    if not results:
        return []
    lines = results[0].assumptions.lines() + [prices_line(results[0])]
    rows = [("", [r.name for r in results]),
            ("sample", [short_sample(r.assumptions.sample) for r in results])]
    rows += [(label, [metric_text(r, label, unit) for r in results]) for label, unit in SHOWN]
    rows += [(label, [worth_text(r, label) for r in results]) for label in WORTH_SHOWN]
    label_width = max(len(label) for label, _ in rows)
    widths = [max(len(cells[col]) for _, cells in rows) for col in range(len(results))]
    for label, cells in rows:
        lines.append(label.ljust(label_width) + "".join(
            COLUMN_GAP + cell.rjust(width) for cell, width in zip(cells, widths, strict=True)))
    lines += [worth_line(r) for r in results]
    gap = hindsight_gap(results, gap_label)
    if gap is not None:
        lines.append(gap_line(gap))
    lines.append(summary(results))
    for r in results:
        if r.assumptions.sample == IN_SAMPLE:
            lines.append(f"{r.name}: IN-SAMPLE (the model was trained on this span): not "
                         "evidence of an edge")
    return lines


def lead(results: list[BacktestResult]) -> BacktestResult:
    """The first signal (not buy & hold, nor a marks sample without trades), else the
    first result: the one the summary, the trades table and the chart show."""
    return next((r for r in results if r.name != BUY_AND_HOLD and not r.no_trades),
                next((r for r in results if r.name != BUY_AND_HOLD), results[0]))


def summary(results: list[BacktestResult]) -> str:
    """The first signal's (``lead``) trades and return beside buy & hold's in one line:
    returns after costs beside each other, each return before costs in brackets beside its
    mean trade and break-even cost (``before_costs``); buy & hold's is the price change."""
    signal = lead(results)
    hold = next((r for r in results if r.name == BUY_AND_HOLD), None)
    trades = len(signal.run.trades)
    change = signal.metrics.get("Buy & Hold Return [%]", float("nan"))
    text = (f"{signal.name}: {trades:,} trade{'s' if trades != 1 else ''}, return "
            f"{format_metric(signal.metrics.get('Return [%]', float('nan')), '%')} after costs")
    if hold is None or hold is signal:
        return f"{text} ({before_costs(signal, change)}) vs buy & hold " \
               f"{format_metric(change, '%')} before costs"
    after = format_metric(hold.metrics.get("Return [%]", float("nan")), "%")
    return (f"{text} ({before_costs(signal)}) vs buy & hold {after} after costs "
            f"({before_costs(hold, change)})")


def before_costs(result: BacktestResult, percent: float | None = None) -> str:
    """``result``'s return before costs (or ``percent``, a price change) beside its mean trade
    and break-even cost, as one text."""
    w = result.worth
    shown = w.return_before * 100 if percent is None else percent
    return (f"{format_metric(shown, '%')} before costs; mean trade "
            f"{_bps(w.mean_trade_bps_before)} before costs, {_bps(w.mean_trade_bps)} after; "
            f"{break_even_words(w)}")


def prices_line(result: BacktestResult) -> str:
    """The tick and how often the next open is the close, in words (the span's prices)."""
    w = result.worth
    tick = (f"tick {number(w.tick.size, '.10g')} ({w.tick.source})" if w.tick.known
            else w.tick.source)
    to = "to the tick" if w.tick.known else "exactly"
    return (f"prices: {tick}; the next candle opens at the signal candle's close on "
            f"{number(w.next_open_is_close * 100, '.1f', ' %')} of these candles ({to})")


def worth_line(result: BacktestResult) -> str:
    """What ``result``'s edge is worth, in words: its mean trade in ticks (flagged under one
    tick) and the placebo's verdict."""
    if result.no_trades:
        return f"{result.name}: no trade on this span"
    w, p = result.worth, result.worth.placebo
    ticks = (f" = {significant(w.mean_trade_ticks_before)} ticks of "
             f"{number(w.tick.size, '.10g')}" + (": BELOW ONE TICK" if w.below_one_tick else "")
             if w.tick.known else f" ({w.tick.source})")
    if len(p.returns):
        shifted = (f"placebo rank {p.rank} / {len(p.returns) + 1}: beats "
                   f"{number(p.beaten * 100, '.0f', ' %')} of {len(p.returns)} copies shifted "
                   f"in time (their median {format_metric(p.median * 100, '%')}, 95th "
                   f"percentile {format_metric(p.p95 * 100, '%')})")
    else:
        shifted = "no placebo (no trade, or one as long as half the span)"
    return (f"{result.name}: mean trade before costs {_bps(w.mean_trade_bps_before)}{ticks}; "
            f"{break_even_words(w)}; {shifted}")


def worth_text(result: BacktestResult, label: str) -> str:
    """Figure ``label`` of ``WORTH_SHOWN`` for ``result`` as the results show it."""
    w, p = result.worth, result.worth.placebo
    if label == "Return before Costs [%]":
        return format_metric(w.return_before * 100, "%")
    if label == "Mean Trade [bps]":
        return _bps(w.mean_trade_bps, "")
    if label == "Mean Trade before Costs [bps]":
        return _bps(w.mean_trade_bps_before, "")
    if label == "Mean Trade before Costs [ticks]":
        text = significant(w.mean_trade_ticks_before)
        return f"{text} {BELOW_ONE_TICK}" if w.below_one_tick else text
    if label == "Break-even Cost [bps/side]":
        return break_even_text(w, "")
    if label == "Placebo Rank":
        return f"{p.rank} / {len(p.returns) + 1}" if len(p.returns) else NO_DATA
    if label == "Placebo Median [%]":
        return format_metric(p.median * 100, "%")
    if label == "Placebo 95th Pct. [%]":
        return format_metric(p.p95 * 100, "%")
    raise KeyError(label)


def break_even_words(worth: Worth) -> str:
    """The break-even cost per side in words."""
    if worth.break_even_bps is None:
        return "no break-even cost (it loses even without costs)"
    return f"break-even cost {break_even_text(worth)} per side"


def break_even_text(worth: Worth, unit: str = " bps") -> str:
    """The break-even cost per side: bps, "none" (loses even without costs) or "—"."""
    if worth.break_even_bps is None:
        return LOSES_BEFORE_COSTS
    return significant(worth.break_even_bps) + unit if has_value(worth.break_even_bps) \
        else NO_DATA


def _bps(value: float, unit: str = " bps") -> str:
    return number(value + 0.0, "+,.2f", unit) if has_value(value) else NO_DATA


def _pp(value: float) -> str:
    return number(value + 0.0, "+,.2f", " pp") if has_value(value) else NO_DATA


def metric_text(result: BacktestResult, label: str, unit: str) -> str:
    """Metric ``label`` of ``result`` as the results show it (``format_metric``); the CAGR
    of a span under a year reads ``SHORT_SPAN_CAGR`` (``metrics.cagr_known``)."""
    if label == "CAGR [%]" and not result.no_trades and \
            not cagr_known(result.metrics.get("Duration", float("nan"))):
        return SHORT_SPAN_CAGR
    return format_metric(result.metrics.get(label, float("nan")), unit)


def short_sample(sample: str) -> str:
    """A sample label short enough for a column head."""
    return {BLIND_MARKS: "marks (blind)", HINDSIGHT_MARKS: "marks (hindsight)"}.get(
        sample, sample)


def format_metric(value: float, unit: str) -> str:
    """A metric as the results show it (``unit``: %, $, n, time or none); "—" without one."""
    if not has_value(value):
        return NO_DATA
    value += 0.0  # no "-0.00"
    if unit == "time":
        return _duration(value)
    if unit == "n":
        return f"{int(value):,}"
    if unit == "" and abs(value) >= 1e6:  # a ratio over a near-zero volatility (a ruin)
        return number(value, ".2e")
    return number(value, ",.2f", " %" if unit == "%" else "")


def _duration(ms: float) -> str:
    minutes = int(ms // 60_000)
    days, rest = divmod(minutes, 1440)
    return f"{days}d {rest // 60:02d}:{rest % 60:02d}"


def _when(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M")


def _plain(value: float) -> float | None:
    return float(value) if has_value(value) else None
