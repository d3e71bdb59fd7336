"""``workstation report``: did a run learn the trader's marks? Marks per span, each trader
head beside its baselines on the held-out span (else on validation, said loudly), the
position head's entries and exits (against every mark and against the blind marks only), the
held-out backtest beside the blind marks, the hindsight marks and buy & hold, with the
hindsight gap; bad input is one line.

The candles are 15-minute ones: 3,000 of them span a month, so the held-out span holds the
five UTC days a margin's interval (and so a verdict) needs."""

from __future__ import annotations

import json

import pytest

from workstation.annotations.model import Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.backtest.report import BLIND_MARKS, BUY_AND_HOLD, HINDSIGHT_MARKS, OUT_OF_SAMPLE
from workstation.backtest.signals import BLIND_MARKS_SIGNAL, HINDSIGHT_MARKS_SIGNAL
from workstation.backtest.teaching_report import MODEL_SIGNAL, NO_HELD_OUT
from workstation.cli import main
from workstation.market.csv_io import write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.timeframes import parse_timeframe
from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.history.format import HISTORY_FILE
from workstation.ml.manifest import MANIFEST_NAME
from workstation.ml.scoring import VERDICTS
from workstation.paths import app_paths

TF = parse_timeframe("15m")
END = 1_700_000_000_000 - 1_700_000_000_000 % TF.ms
LAGGED = ("lagged_logistic", "boosted_trees")


@pytest.fixture
def marked(tmp_path):
    """3,000 candles in a file and marks over all of them: a trade every 60 candles (the
    shorts made in blind replay, each exit decided two candles after its candle closed), a
    regime region every 120."""
    candles = demo_candles(3000, TF, seed=5, end_ts=END)
    path = write_candles_csv(candles, tmp_path / "eth.csv")
    with AnnotationStore(app_paths().annotations_db) as store:
        for k, entry in enumerate(range(100, 2950, 60)):
            blind = {} if k % 2 else {
                "blind": True, "decided_at": (int(candles.ts[entry]) + TF.ms,
                                              int(candles.ts[entry + 20]) + 3 * TF.ms)}
            store.add(Trade(symbol="ETH/USDT", timeframe="15m",
                            direction="long" if k % 2 else "short",
                            entry_ts=int(candles.ts[entry]),
                            entry_price=float(candles.close[entry]),
                            exit_ts=int(candles.ts[entry + 20]),
                            exit_price=float(candles.close[entry + 20]),
                            created_at=END, updated_at=END, **blind))
        for k, start in enumerate(range(90, 2900, 120)):
            store.add(Region(symbol="ETH/USDT", timeframe="15m", start_ts=int(candles.ts[start]),
                             end_ts=int(candles.ts[start + 90]),
                             label=("uptrend", "downtrend", "range")[k % 3],
                             created_at=END, updated_at=END))
    return candles, path


def train(capsys, path, *extra) -> tuple[str, dict]:
    """A tiny run on the file; its id and its RunStarted event."""
    assert main(["train", "--source", f"csv:{path}", "--symbol", "ETH/USDT", "--timeframe",
                 "15m", "--seq-len", "32", "--batch-size", "32", "--epochs", "1", "--threads",
                 "1", "--stride", "32", "--json", *extra]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return events[-1]["run_id"], next(e for e in events if e["event"] == "RunStarted")


def report(capsys, *argv) -> tuple[int, str, str]:
    code = main(["report", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_held_out_run_reports_its_marks_scores_events_and_backtest(marked, capsys):
    candles, path = marked
    until = int(candles.ts[1999])
    run_id, started = train(capsys, path, "--train-until", str(until))
    held_out = started["spans"]["held out"]
    gap = held_out["span"][0] - 2000  # a window and the longest look-ahead (a mark's)
    assert held_out["span"] == [2000 + gap, 3000] and held_out["trades"] > 5
    assert f"gaps of {gap} candles = 32-candle windows + " in started["split_rule"]

    code, out, err = report(capsys, run_id, "--source", f"csv:{path}", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["run_id"] == run_id and r["checkpoint"] == "best" and r["candles"] == 3000
    # 1. marks used and where: as the run recorded them
    assert r["spans"] == started["spans"] and r["split_rule"] == started["split_rule"]
    assert r["warnings"] == started["warnings"]
    # 2. every trader head on the held-out span beside every baseline, with its verdict
    assert r["scored_on"] == {"name": "held out", "span": [2000 + gap, 3000],
                              "first_ts": int(candles.ts[2000 + gap]),
                              "last_ts": int(candles.ts[-1]), "out_of_sample": True}
    assert r["no_held_out"] is None
    position, regime = r["heads"]["position"], r["heads"]["regime"]
    assert position["n"] == held_out["reviewed"]  # every reviewed candle of the span, scored
    assert set(position["baselines"]) == {"majority", "volatility", "logistic", "persistence",
                                          "hour_of_day", *LAGGED}
    assert {"majority", "persistence", *LAGGED} <= set(regime["baselines"])
    for head in (position, regime):
        best = max(head["baselines"].values())
        assert head["baselines"][head["best_baseline"]] == best
        assert head["margin"] == pytest.approx(head["accuracy"] - best)
        assert head["interval"][0] <= head["interval"][1] and head["verdict"] in VERDICTS
        assert 1 <= head["baseline_lags"] <= 32
    # 3. the position head's entries and exits there, against every mark and the blind ones
    entries = r["trade_events"]["entries"]
    assert entries["true"] == held_out["trades"] and entries["recall"] is not None
    blind_entries = r["blind_trade_events"]["entries"]
    shorts = sum(1 for i in range(100, 2950, 120) if i >= 2000 + gap)  # the blind trades
    assert blind_entries["true"] == shorts >= 5 and blind_entries["recall"] is not None
    # 4. the held-out backtest: the model beside the trader's blind and hindsight marks and
    # buy & hold, and the hindsight gap between the two
    model, blind, marks, _ = r["backtest"]
    assert [b["signals"] for b in r["backtest"]] == [
        MODEL_SIGNAL, BLIND_MARKS_SIGNAL, HINDSIGHT_MARKS_SIGNAL, BUY_AND_HOLD]
    assert model["assumptions"]["sample"] == OUT_OF_SAMPLE
    assert blind["assumptions"]["sample"] == BLIND_MARKS
    assert marks["assumptions"]["sample"] == HINDSIGHT_MARKS
    period = [int(candles.ts[2000 + gap]), int(candles.ts[-1])]
    assert all(b["assumptions"]["period"] == period for b in r["backtest"])
    assert blind["metrics"]["# Trades"] == shorts
    assert blind["metrics"]["# Trades"] + marks["metrics"]["# Trades"] == held_out["trades"]
    assert all(t["entry_bar"] > 2000 + gap
               for t in model["trades"] + blind["trades"] + marks["trades"])
    # each blind exit filled at the open after its decision, two candles after the mark's
    exits = {t["exit_bar"] for t in blind["trades"]}
    assert exits == {i + 23 for i in range(100, 2950, 120) if i >= 2000 + gap}
    hindsight_gap = r["hindsight_gap"]
    assert hindsight_gap["span"] == "held out" and hindsight_gap["first_ts"] == period[0]
    assert hindsight_gap["gap"]["return_pp"] == pytest.approx(
        marks["metrics"]["Return [%]"] - blind["metrics"]["Return [%]"])
    assert hindsight_gap["gap"]["win_rate_pp"] == pytest.approx(
        marks["metrics"]["Win Rate [%]"] - blind["metrics"]["Win Rate [%]"])
    assert hindsight_gap["gap"]["mean_trade_bps"] == pytest.approx(
        marks["worth"]["mean_trade_bps"] - blind["worth"]["mean_trade_bps"])

    code, out, err = report(capsys, "--source", f"csv:{path}")  # the newest run, as text
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"run {run_id} (best checkpoint): csv:eth.csv ETH/USDT 15m")
    assert NO_HELD_OUT not in out
    spans = lines.index("marks used and where:")
    assert lines[spans + 1].startswith("  train: ") and "trades" in lines[spans + 1]
    assert lines[spans + 3].startswith("  held out: ") and \
        f"{held_out['trades']} trades" in lines[spans + 3]
    assert f"  ({r['split_rule']})" in lines
    scored = next(i for i, line in enumerate(lines) if line.startswith("scored on the held-out "
                                                                        "span"))
    assert "never trained or validated on" in lines[scored]
    assert lines[scored + 1].startswith("  position ") and position["verdict"] in \
        lines[scored + 1]
    assert lines[scored + 2].startswith("    baselines majority ") and "(" in lines[scored + 2]
    assert lines[scored + 3].startswith("  regime ") and regime["verdict"] in lines[scored + 3]
    assert lines[scored + 5] == "the position head's entries and exits there:"
    assert lines[scored + 6].startswith(f"  entries within 5 candles: trader "
                                        f"{held_out['trades']}, model ")
    assert lines[scored + 7].startswith("  exits within 5 candles: ")
    assert lines[scored + 8].startswith(f"  vs blind marks: entries within 5 candles: trader "
                                        f"{shorts}, model ")
    assert lines[scored + 9].startswith("  vs blind marks: exits within 5 candles: ")
    assert lines[scored + 10].startswith("held-out backtest of the position head after costs")
    assert any(MODEL_SIGNAL in line and BLIND_MARKS_SIGNAL in line
               and HINDSIGHT_MARKS_SIGNAL in line and BUY_AND_HOLD in line
               for line in lines[scored + 11:])
    assert any(line.startswith("  hindsight gap (held out; hindsight minus blind marks): "
                               f"return {hindsight_gap['gap']['return_pp']:+,.2f} pp, win rate ")
               for line in lines)
    assert lines[-1].startswith(f"  {MODEL_SIGNAL}: ") and "vs buy & hold" in lines[-1]


def test_without_a_held_out_span_it_says_so_and_bad_input_is_one_line(marked, capsys,
                                                                        tmp_path):
    candles, path = marked
    run_id, started = train(capsys, path)
    code, out, err = report(capsys, run_id, "--source", f"csv:{path}")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1] == f"WARNING: {NO_HELD_OUT}"
    assert any(line.startswith("scored on the validation span, ") and "NOT out of sample"
               in line for line in lines)
    assert lines[-1] == "held-out backtest: none (no held-out span)"
    code, out, err = report(capsys, run_id, "--source", f"csv:{path}", "--json")
    r = json.loads(out)
    assert r["no_held_out"] == NO_HELD_OUT and r["backtest"] is None
    assert r["scored_on"]["name"] == "validation" and not r["scored_on"]["out_of_sample"]
    assert r["scored_on"]["span"] == started["spans"]["validation"]["span"]

    def one_line(*argv) -> str:
        code, out, err = report(capsys, *argv)
        assert code == 1 and out == "" and err.count("\n") == 1, err
        return err

    assert one_line("20200101-000000-000-abcd") == \
        "workstation: error: no run 20200101-000000-000-abcd (see `workstation runs list`)\n"
    assert "name where they are with --source" in one_line(run_id)  # csv: only its name kept
    changed = candles.slice(0, 3000)
    changed.volume[1500] += 1.0  # one candle's volume
    other = write_candles_csv(changed, tmp_path / "changed.csv")
    assert one_line(run_id, "--source", f"csv:{other}").startswith(
        f"workstation: error: the candles of csv:changed.csv ETH/USDT 15m changed since run "
        f"{run_id}: ")
    with AnnotationStore(app_paths().annotations_db) as store:
        store.add(Trade(symbol="ETH/USDT", timeframe="15m", direction="long",
                        entry_ts=int(candles.ts[2965]), entry_price=1.0,
                        exit_ts=int(candles.ts[2975]), exit_price=1.0, created_at=END,
                        updated_at=END))
    assert one_line(run_id, "--source", f"csv:{path}").startswith(
        "workstation: error: the marks of ")
    run_dir = CheckpointStore().run_dir(run_id)
    (run_dir / HISTORY_FILE).unlink()
    assert one_line(run_id) == (f"workstation: error: run history {run_dir / HISTORY_FILE}: "
                                f"missing (the run recorded no history)\n")
    (run_dir / MANIFEST_NAME).unlink()
    assert one_line(run_id) == (f"workstation: error: run {run_id} has no manifest "
                                f"({MANIFEST_NAME}), so its data cannot be rebuilt: train it "
                                f"again to report on it\n")
