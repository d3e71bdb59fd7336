"""``workstation backtest``: the trader's marks (blind and hindsight) and a run's signals after
costs, beside buy & hold, out of sample unless asked, every assumption printed, and what each
edge is worth (mean trade in bps and ticks, break-even cost, placebo rank, next open against
the close)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from workstation.annotations.model import Trade
from workstation.annotations.store import AnnotationStore
from workstation.backtest.costs import DEFAULT_FEE, costs_for
from workstation.backtest.report import BUY_AND_HOLD, SHORT_SPAN_CAGR, SHOWN, WORTH_SHOWN
from workstation.backtest.signals import BLIND_MARKS_SIGNAL, HINDSIGHT_MARKS_SIGNAL
from workstation.cli import main
from workstation.market.candles import Candles
from workstation.market.csv_io import write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.paths import app_paths

END = 1_700_000_040_000 - 1_700_000_040_000 % 60_000
MIN = 60_000
HOUR = 3_600_000


@pytest.fixture
def series(tmp_path):
    candles = demo_candles(3000, ONE_MINUTE, seed=5, end_ts=END)
    return candles, write_candles_csv(candles, tmp_path / "eth.csv")


def mark(candles, entry: int, exit_: int, direction: str) -> Trade:
    return Trade(symbol="ETH/USDT", timeframe="1m", direction=direction,
                 entry_ts=int(candles.ts[entry]), entry_price=float(candles.close[entry]),
                 exit_ts=int(candles.ts[exit_]), exit_price=float(candles.close[exit_]),
                 created_at=END, updated_at=END)


def assert_columns_apart_and_aligned(out: str, names: list[str]) -> None:
    """The printed table: the titles ``names``, each row a label and one cell per title,
    two spaces or more between any two, each cell's right edge under its title's."""
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.strip().startswith(names[0]))
    cell = re.compile(r"\S+(?: \S+)*")  # words one space apart
    ends = [m.end() for m in cell.finditer(lines[head])]
    assert re.split(r" {2,}", lines[head].strip()) == names
    for line in lines[head + 1:head + 2 + len(SHOWN)]:
        assert len(re.split(r" {2,}", line.strip())) == 1 + len(names), line
        assert [m.end() for m in cell.finditer(line)][1:] == ends, line


def backtest(capsys, *argv) -> tuple[int, str, str]:
    code = main(["backtest", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_marked_trades_fill_at_the_next_open_after_costs(series, capsys):
    candles, path = series
    with AnnotationStore(app_paths().annotations_db) as store:
        store.add(mark(candles, 100, 160, "long"))
        store.add(mark(candles, 400, 420, "short"))
    code, out, err = backtest(capsys, "--source", f"csv:{path}", "--symbol", "ETH/USDT",
                              "--fee-bps", "10", "--slippage-bps", "0", "--json")
    assert code == 0, err
    blind, marks, hold, gap = (json.loads(line) for line in out.splitlines())
    assert blind["signals"] == BLIND_MARKS_SIGNAL and marks["signals"] == HINDSIGHT_MARKS_SIGNAL
    assert hold["signals"] == BUY_AND_HOLD
    # no blind mark: a sample without a result, never a return of 0
    assert blind["metrics"]["# Trades"] == 0 and blind["metrics"]["Return [%]"] is None
    assert gap["hindsight_gap"][0]["gap"] == {"return_pp": None, "win_rate_pp": None,
                                              "mean_trade_bps": None}
    trades = marks["trades"]
    assert [(t["direction"], t["entry_bar"], t["exit_bar"]) for t in trades] == [
        (1, 101, 161), (-1, 401, 421)]
    assert trades[0]["entry_price"] == pytest.approx(float(candles.open[101]))
    assert trades[1]["exit_price"] == pytest.approx(float(candles.open[421]))
    gross = (candles.open[161] - candles.open[101]) / candles.open[101]
    assert trades[0]["pnl"] < 10_000 * gross  # the fees come off
    a = marks["assumptions"]
    assert a["fee"] == 0.001 and a["fee_source"] == "given (--fee-bps)"
    assert "hindsight" in a["sample"] and a["fill"] == "next open"
    assert marks["metrics"]["# Trades"] == 2 and hold["metrics"]["# Trades"] == 1
    assert marks["metrics"]["Buy & Hold Return [%]"] == pytest.approx(
        (candles.close[-1] - candles.close[0]) / candles.close[0] * 100)
    code, out, err = backtest(capsys, "--source", f"csv:{path}", "--symbol", "ETH/USDT")
    assert code == 0, err
    assert "filled at the next candle's open" in out and "slippage 1 bps" in out
    assert "default 0.1 %" in out and "Sharpe Ratio" in out and "buy & hold" in out
    assert_columns_apart_and_aligned(out, [BLIND_MARKS_SIGNAL, HINDSIGHT_MARKS_SIGNAL,
                                           BUY_AND_HOLD])
    assert any(line.startswith("hindsight gap (backtested span; hindsight minus blind marks): "
                               "return —, win rate —, mean trade — (blind 0 trades")
               for line in out.splitlines())
    # 3,000 minutes: no CAGR, said so; "after costs" beside the returns after costs only
    cagr = next(line for line in out.splitlines() if line.startswith("CAGR [%]"))
    assert cagr.split("  ")[-1].strip() == SHORT_SPAN_CAGR
    assert re.search(r"vs buy & hold -?[\d.,]+ % after costs \(-?[\d.,]+ % before costs; mean "
                     r"trade [+-][\d.,]+ bps before costs, [+-][\d.,]+ bps after; .*break-even"
                     r" cost.*\)$", out.splitlines()[-1])


def test_the_cli_says_what_each_edge_is_worth(tmp_path, capsys):
    base = demo_candles(3000, ONE_MINUTE, seed=5, end_ts=END)
    cents = [np.round(col, 2) for col in (base.open, base.high, base.low, base.close)]
    candles = Candles.from_arrays(base.ts, *cents, base.volume)  # prices on a 0.01 grid
    path = write_candles_csv(candles, tmp_path / "eth-cents.csv")
    with AnnotationStore(app_paths().annotations_db) as store:
        for entry, exit_, side in ((100, 160, "long"), (400, 420, "short"), (900, 1000, "long")):
            store.add(mark(candles, entry, exit_, side))
    argv = ["--source", f"csv:{path}", "--symbol", "ETH/USDT", "--fee-bps", "10"]
    code, out, err = backtest(capsys, *argv, "--json")
    assert code == 0, err
    _, marks, hold, _ = (json.loads(line) for line in out.splitlines())
    worth = marks["worth"]
    assert worth["tick"] == 0.01 and worth["tick_source"] == "tick inferred from prices"
    assert worth["trades"] == 3 and len(worth["placebo"]["offsets"]) == 200
    assert worth["placebo"]["of"] == 201 and worth["placebo"]["seed"] == 34
    opens = candles.open
    moves = [(opens[161] - opens[101]) / opens[101], (opens[401] - opens[421]) / opens[401],
             (opens[1001] - opens[901]) / opens[901]]
    assert worth["mean_trade_bps_before_costs"] == pytest.approx(np.mean(moves) * 10_000)
    # the next open of a demo candle is its close: every "next open" fill is the close
    assert worth["next_open_equals_close"] == 1.0
    assert hold["worth"]["placebo"]["offsets"] == []  # its one trade spans the span
    code, out, err = backtest(capsys, *argv)
    assert code == 0, err
    lines = out.splitlines()
    assert "prices: tick 0.01 (tick inferred from prices); the next candle opens at the " \
        "signal candle's close on 100.0 % of these candles (to the tick)" in lines
    for label in WORTH_SHOWN:
        assert any(line.startswith(label) for line in lines), label
    p = worth["placebo"]
    assert any(line.startswith(f"{HINDSIGHT_MARKS_SIGNAL}: mean trade before costs ")
               and f"placebo rank {p['rank']} / 201: beats" in line for line in lines)
    for line in lines:  # a return before costs only beside the mean trade and break-even
        if "before costs" in line:
            assert "bps" in line and "break-even" in line, line


def test_a_runs_signals_are_out_of_sample_unless_asked(series, tmp_path, capsys):
    candles, path = series
    early = write_candles_csv(candles.slice(0, 2000), tmp_path / "early.csv")
    assert main(["train", "--source", f"csv:{early}", "--symbol", "ETH/USDT", "--seq-len", "32",
                 "--stride", "32", "--batch-size", "16", "--epochs", "1", "--threads", "1",
                 "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.splitlines()[-1])["run_id"]
    code, out, err = backtest(capsys, "--source", f"csv:{path}", "--symbol", "ETH/USDT",
                              "--signals", f"run:{run_id}", "--head", "candle",
                              "--threshold", "0", "--json")
    assert code == 0, err
    model, hold = (json.loads(line) for line in out.splitlines())
    assert model["assumptions"]["sample"] == "out of sample"
    first, last = model["assumptions"]["period"]
    assert first == int(candles.ts[2000]) and last == int(candles.ts[-1])  # after training
    assert all(t["entry_bar"] > 2000 for t in model["trades"])
    assert hold["assumptions"]["period"] == [first, last]
    # on the candles it was trained on: refused, then labelled when asked for
    code, _, err = backtest(capsys, "--source", f"csv:{early}", "--symbol", "ETH/USDT",
                            "--signals", f"run:{run_id}")
    assert code == 1 and "none of these 2,000 candles comes after them" in err
    code, out, err = backtest(capsys, "--source", f"csv:{early}", "--symbol", "ETH/USDT",
                              "--signals", f"run:{run_id}", "--in-sample")
    assert code == 0, err
    assert "IN-SAMPLE" in out and "not evidence of an edge" in out
    assert_columns_apart_and_aligned(out, [f"run {run_id} position", BUY_AND_HOLD])


def test_the_fee_comes_from_the_exchange_else_a_stated_default():
    binance = costs_for(SeriesKey("binance", "ETH/USDT", ONE_MINUTE))
    assert binance.fee == 0.001 and "binance taker fee (ccxt)" in binance.fee_source
    kraken = costs_for(SeriesKey("kraken", "ETH/USD", parse_timeframe("1h")))
    assert kraken.fee == pytest.approx(0.0026) and "kraken" in kraken.fee_source
    demo = costs_for(SeriesKey("demo", "DEMO/USDT", ONE_MINUTE))
    assert demo.fee == DEFAULT_FEE and demo.fee_source.startswith("default")
    given = costs_for(SeriesKey("binance", "ETH/USDT", ONE_MINUTE), fee_bps=2.5, slippage_bps=3)
    assert (given.fee, given.slippage_bps) == (0.00025, 3)


def test_bad_requests_are_one_line(series, capsys):
    _, path = series
    base = ["--source", f"csv:{path}", "--symbol", "ETH/USDT"]
    for argv, message in (([], "no marked trade of ETH/USDT"),
                          (["--signals", "magic"],
                           "signals must be annotations or run:RUN, got 'magic'"),
                          (["--size", "2"], "size must be a fraction of equity"),
                          (["--fee-bps", "5000"], "fee must be between 0 and 10 %"),
                          (["--threshold", "1.5"], "--threshold must be between 0 and 1"),
                          (["--threshold", "0.4,x"], "--threshold must be numbers")):
        code, _, err = backtest(capsys, *base, *argv)
        assert code == 1 and message in err and len(err.strip().splitlines()) == 1, err


def test_evaluate_backtests_the_test_spans_each_with_its_folds_model(capsys):
    from workstation.market.sources import load_series

    candles, _ = load_series("demo", "DEMO/USDT", parse_timeframe("1h"), max_candles=3000)
    with AnnotationStore(app_paths().annotations_db) as store:  # hindsight marks only
        store.merge([Trade(market="demo", symbol="DEMO/USDT", timeframe="1h",
                           direction="long" if k % 2 else "short", entry_ts=int(candles.ts[i]),
                           entry_price=float(candles.close[i]), exit_ts=int(candles.ts[i + 10]),
                           exit_price=float(candles.close[i + 10]))
                     for k, i in enumerate(range(50, 2950, 100))])
    code = main(["evaluate", "--source", "demo", "--timeframe", "1h", "--max-candles", "3000",
                 "--seq-len", "16", "--batch-size", "32", "--folds", "2", "--epochs", "1",
                 "--stride", "16", "--threads", "1", "--backtest", "--threshold", "0,1",
                 "--backtest-head", "candle", "--fee-bps", "10",
                 "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    objects = [json.loads(line) for line in out.out.splitlines()]
    folds = [o for o in objects if "fold" in o and o["head"] == "candle"]
    model, never, blind, marks, hold, gaps = [o for o in objects if o.get("backtest")]
    assert model["signals"] == "model candle >= 0" and hold["signals"] == BUY_AND_HOLD
    assert never["signals"] == "model candle >= 1" and never["metrics"]["# Trades"] == 0
    assert model["assumptions"]["sample"] == "out of sample"
    assert model["assumptions"]["fee"] == 0.001
    assert model["metrics"]["# Trades"] > 10  # the candle head trades candle by candle
    first, last = model["assumptions"]["period"]  # the test spans, from the first fold's
    assert sum(o["n"] for o in folds) <= (last - first) // HOUR + 1
    assert all(first < candles.ts[t["entry_bar"]] and candles.ts[t["exit_bar"]] <= last
               for t in model["trades"])  # every trade inside the test spans
    assert "backtest of the test spans" in out.err and "Sharpe Ratio" in out.err
    assert model["worth"]["trades"] == model["metrics"]["# Trades"]
    assert "Break-even Cost [bps/side]" in out.err and "placebo rank" in out.err
    # the trader as a baseline on the same spans and costs: no blind mark, so no gap ("—")
    assert (blind["signals"], marks["signals"]) == (BLIND_MARKS_SIGNAL, HINDSIGHT_MARKS_SIGNAL)
    assert blind["assumptions"]["period"] == marks["assumptions"]["period"] == \
        model["assumptions"]["period"] and marks["assumptions"]["fee"] == 0.001
    assert blind["metrics"]["# Trades"] == 0 and marks["metrics"]["# Trades"] > 5
    spans = gaps["hindsight_gap"]
    assert [g["span"] for g in spans] == ["fold 1/2", "fold 2/2", "all"]
    assert all(g["blind"]["trades"] == 0 and set(g["gap"].values()) == {None} for g in spans)
    assert spans[-1]["hindsight"]["trades"] == marks["metrics"]["# Trades"]
    assert sum(g["hindsight"]["trades"] for g in spans[:2]) >= marks["metrics"]["# Trades"]
    assert "hindsight gap per span (hindsight minus blind marks" in out.err
    assert "hindsight gap (all test spans; hindsight minus blind marks): return —" in out.err


def test_a_ratio_over_a_ruined_equitys_volatility_reads_in_powers_of_ten():
    from workstation.backtest.report import format_metric

    assert format_metric(-3.0388e73, "") == "-3.04e+73"  # not a 75-digit number
    assert format_metric(-0.0183, "") == "-0.02" and format_metric(-100.0, "%") == "-100.00 %"
    assert format_metric(float("nan"), "") == "—"


def test_a_run_trained_until_a_date_is_backtested_on_its_held_out_span(series, capsys):
    candles, path = series
    until = int(candles.ts[1999])
    assert main(["train", "--source", f"csv:{path}", "--symbol", "ETH/USDT", "--seq-len", "32",
                 "--stride", "32", "--batch-size", "16", "--epochs", "1", "--threads", "1",
                 "--json",
                 "--train-until", str(until)]) == 0
    out = capsys.readouterr()
    events = [json.loads(line) for line in out.out.splitlines()]
    started = next(e for e in events if e["event"] == "RunStarted")
    gap = started["spans"]["held out"]["span"][0] - 2000  # a window and the longest reach
    assert started["spans"]["held out"]["span"][1] == 3000 and gap >= 32 + 10
    assert f"gaps of {gap} candles = 32-candle windows + " in started["split_rule"]
    assert started["spans"]["validation"]["last_ts"] == until
    assert started["train_config"]["train_until"] == until
    assert "held out: " in out.err
    code, out, err = backtest(capsys, "--source", f"csv:{path}", "--symbol", "ETH/USDT",
                              "--signals", f"run:{events[-1]['run_id']}", "--json")
    assert code == 0, err
    model, _ = (json.loads(line) for line in out.splitlines())
    assert model["assumptions"]["sample"] == "out of sample"
    assert model["assumptions"]["period"] == [int(candles.ts[2000 + gap]), int(candles.ts[-1])]
