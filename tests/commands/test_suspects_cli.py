"""``workstation annotations suspects``: a walk-forward whose held-out models read the
trader's marks, and the marks they read otherwise, ranked, beside the heads' verdicts."""

from __future__ import annotations

import json

from workstation.annotations.model import Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.annotations.suspects import kept
from workstation.cli import main
from workstation.market.timeframes import parse_timeframe
from workstation.paths import app_paths

ARGV = ["annotations", "suspects", "--source", "demo", "--symbol", "DEMO/USDT", "--timeframe",
        "1h", "--max-candles", "3000", "--seq-len", "16", "--batch-size", "32", "--folds", "2",
        "--epochs", "1", "--stride", "16", "--threads", "1", "--seeds", "1"]


def test_suspects_lists_the_marks_the_held_out_models_read_otherwise(capsys):
    from workstation.market.sources import load_series

    candles, _ = load_series("demo", "DEMO/USDT", parse_timeframe("1h"), max_candles=3000)
    ts, close = candles.ts, candles.close
    trades = [Trade(market="demo", symbol="DEMO/USDT", timeframe="1h",
                    direction="long" if k % 3 else "short", entry_ts=int(ts[i]),
                    entry_price=float(close[i]), exit_ts=int(ts[i + 12]),
                    exit_price=float(close[i + 12])) for k, i in enumerate(range(50, 2950, 100))]
    regions = [Region(market="demo", symbol="DEMO/USDT", timeframe="1h", start_ts=int(ts[i]),
                      end_ts=int(ts[i + 40]), label=("uptrend", "downtrend", "range")[k % 3])
               for k, i in enumerate(range(70, 2950, 300))]
    marks = [kept(trades[-1]), *trades[:-1], *regions]
    with AnnotationStore(app_paths().annotations_db) as store:
        store.merge(marks)
    code = main([*ARGV, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    (found,) = [json.loads(line) for line in out.out.splitlines() if "likely_label_errors" in line]
    report, verdicts = found["likely_label_errors"], found["verdicts"]
    assert report["checked"] == 1  # the kept trade is not read again
    assert report["scored"] + report["untested"] + report["checked"] == len(marks)
    assert report["scored"] > 0 and report["untested"] > 0  # the first block is never tested
    assert set(verdicts) == {"position", "regime"}
    ids = {m.id: m for m in marks}
    suspects = report["suspects"]
    assert [s["self_confidence"] for s in suspects] == sorted(s["self_confidence"]
                                                              for s in suspects)
    for s in suspects:
        mark = ids[s["annotation_id"]]
        assert s["share_off"] >= 0.5 and s["off"] <= s["tested"]
        assert s["tested"] <= (12 if isinstance(mark, Trade) else 41)
        assert s["label"] == (str(mark.direction) if isinstance(mark, Trade) else mark.label)
        assert s["reading"] != s["label"]
    assert set(report["thresholds"]) == {"position", "regime"}
    assert "likely label errors (position head on the test spans: " in out.err
    assert f"{len(suspects)} of {report['scored']} marks read on held-out candles" in out.err


def test_suspects_refuses_in_one_line_before_training(capsys):
    assert main(ARGV) == 1
    err = capsys.readouterr().err
    assert "no marks of demo DEMO/USDT to check" in err or "no marks of" in err
    assert len(err.strip().splitlines()) == 1, err
    assert main([*ARGV, "--min-share", "0"]) == 1
    assert "--min-share must be in (0, 1], got 0.0" in capsys.readouterr().err
