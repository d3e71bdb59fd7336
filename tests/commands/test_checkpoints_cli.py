"""``workstation checkpoints list|delete|clear`` and ``workstation predict`` end to end."""

from __future__ import annotations

import io
import json

import pytest
import torch

from workstation.cli import main
from workstation.market.csv_io import write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.online import Predictor

from saved_runs import DEMO, save_run

torch.set_num_threads(1)


def test_list_shows_each_run_with_its_data_and_size(capsys):
    assert main(["checkpoints", "list"]) == 0
    assert "no saved runs" in capsys.readouterr().out
    store = CheckpointStore()
    a = save_run(store, 1)
    b = save_run(store, 2, best=False, provenance="binance ETH/USDT 1h")
    assert main(["checkpoints", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["model", "run", "created"]
    row_a, row_b = out[1], out[2]
    assert a in row_a and "41" in row_a and "1.2500" in row_a and "yes" in row_a
    assert DEMO in row_a and "KB" in row_a
    assert b in row_b and " no " in row_b and "binance ETH/USDT 1h" in row_b
    assert out[3].startswith("2 run(s), ")


def test_delete_one_run_reports_what_it_freed(capsys):
    store = CheckpointStore()
    keep, gone = save_run(store, 1), save_run(store, 2)
    size = {i.run_id: i.size_bytes for i in store.list_runs()}[gone]
    assert main(["checkpoints", "delete", gone]) == 0
    out = capsys.readouterr().out
    assert f"deleted run {gone}" in out and f"{size / 1024:.1f} KB" in out
    assert store.run_ids() == [keep]
    assert main(["checkpoints", "delete", gone]) == 1
    assert "no such run" in capsys.readouterr().err


def test_clear_asks_first_and_refuses_without_a_terminal(capsys, monkeypatch):
    store = CheckpointStore()
    save_run(store, 1)
    save_run(store, 2)
    total = sum(i.size_bytes for i in store.list_runs())

    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a terminal
    assert main(["checkpoints", "clear"]) == 1
    err = capsys.readouterr().err
    assert "refusing to delete 2 run(s)" in err and "--yes" in err
    assert len(store.run_ids()) == 2

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    assert main(["checkpoints", "clear"]) == 1
    captured = capsys.readouterr()
    assert f"delete 2 run(s), {total / 1024:.1f} KB" in captured.err
    assert "nothing deleted" in captured.out and len(store.run_ids()) == 2

    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    assert main(["checkpoints", "clear"]) == 0
    assert f"cleared 2 run(s): freed {total / 1024:.1f} KB" in capsys.readouterr().out
    assert store.run_ids() == []
    save_run(store, 3)
    assert main(["checkpoints", "clear", "--yes"]) == 0
    assert store.run_ids() == []


def test_predict_prints_the_next_candle_of_a_series(tmp_path, capsys):
    store = CheckpointStore()
    old = save_run(store, 1)
    newest = save_run(store, 2, best=False)
    candles = demo_candles(300, ONE_MINUTE, seed=5, end_ts=1_790_000_000_000)
    csv = write_candles_csv(candles, tmp_path / "eth.csv")

    assert main(["predict", "--source", f"csv:{csv}", "--symbol", "ETH/USDT", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["run"] == newest and got["checkpoint"] == "latest" and got["trained_on"] == DEMO
    assert got["series"] == "csv:eth.csv ETH/USDT 1m" and got["demo"] is False
    assert got["window"] == 48
    expected = Predictor.from_checkpoint(store.load(newest)).predict(candles)
    p = got["prediction"]
    assert p["ts"] == candles.ts[-1] and p["target_ts"] == candles.ts[-1] + 60_000
    assert p["candle_probs"] == pytest.approx(expected.candle_probs, abs=1e-6)
    assert p["return_bps"] == pytest.approx(expected.return_bps, abs=1e-4)
    assert p["trend_horizon"] == 4 and p["candle"] in ("down", "flat", "up")

    assert main(["predict", "--source", "demo", "--run", old]) == 0
    out = capsys.readouterr().out
    assert out.startswith("DEMO (simulated market) DEMO/USDT 1m: prediction for the candle of")
    assert f"run {old} (best, step 41), trained on {DEMO}" in out
    assert "next candle:" in out and "trend over  4 candles:" in out and " bps (close ≈" in out


def test_predict_without_runs_or_with_a_damaged_one_says_why(capsys):
    assert main(["predict", "--source", "demo"]) == 1
    assert "no saved run" in capsys.readouterr().err
    store = CheckpointStore()
    run = save_run(store, 1)
    weights = store.snapshot_dir(run, "best") / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    assert main(["predict", "--source", "demo"]) == 1
    err = capsys.readouterr().err
    assert str(weights) in err and "truncated" in err
