"""``workstation predict --at TS`` on a model that reads higher timeframes and a reference
asset: the prediction as of TS is bit for bit the same whether the data after TS (of the
series and of the reference) is absent, present or perturbed; and a run with a reference is
trained again from its manifest only on the very reference candles it had."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workstation.cli import main
from workstation.market.candles import Candles
from workstation.market.csv_io import write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.perturb import changed_after
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.history.reader import read_history
from workstation.ml.manifest import MANIFEST_NAME

END = 1_700_000_000_000 - 1_700_000_000_000 % 3_600_000
CONTEXT = ["--higher-timeframes", "15m,1h", "--reference", "BTC/USDT"]
TRAIN = ["--symbol", "ETH/USDT", "--seq-len", "32", "--batch-size", "16", "--epochs", "1",
         "--stride", "32", "--threads", "1", "--seed", "4", "--log-every", "1",
         "--no-annotations", "--json"]


@pytest.fixture
def trained(tmp_path, capsys, paths):
    eth = demo_candles(6000, ONE_MINUTE, seed=11, end_ts=END)
    btc = demo_candles(6000, ONE_MINUTE, seed=12, end_ts=END)
    keep = np.ones(len(btc), dtype=bool)
    keep[4700:4710] = False  # BTC candles missing just before TS: masked, not filled in
    btc = Candles.from_columns([c[keep] for c in btc.columns()], ONE_MINUTE)
    files = {"eth": write_candles_csv(eth, tmp_path / "eth.csv"),
             "btc": write_candles_csv(btc, tmp_path / "btc.csv")}
    assert main(["train", "--source", f"csv:{files['eth']}", "--reference-source",
                 f"csv:{files['btc']}", *CONTEXT, *TRAIN]) == 0
    run = json.loads(capsys.readouterr().out.splitlines()[-1])["run_id"]
    return eth, btc, files, run


def _predict(capsys, eth_file, btc_file, *more) -> dict:
    assert main(["predict", "--source", f"csv:{eth_file}", "--symbol", "ETH/USDT",
                 "--reference-source", f"csv:{btc_file}", "--json", *more]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_prediction_at_ts_uses_only_the_data_up_to_ts(trained, tmp_path, capsys):
    eth, btc, files, run = trained
    for row in (4705, 5100):
        ts = int(eth.ts[row])
        at = ["--run", run, "--at", str(ts)]
        present = _predict(capsys, files["eth"], files["btc"], *at)
        cut = {name: write_candles_csv(series.slice(0, int(np.searchsorted(
            series.ts, ts, side="right"))), tmp_path / f"{name}-cut.csv")
            for name, series in (("eth", eth), ("btc", btc))}
        absent = _predict(capsys, cut["eth"], cut["btc"], *at)
        changed = {name: write_candles_csv(changed_after(series, ts, seed),
                                           tmp_path / f"{name}-changed.csv")
                   for seed, (name, series) in enumerate((("eth", eth), ("btc", btc)))}
        perturbed = _predict(capsys, changed["eth"], changed["btc"], *at)
        assert present["prediction"]["ts"] == ts
        assert present["prediction"] == absent["prediction"] == perturbed["prediction"]
        # and the newest prediction of the cut files is the one as of TS
        assert _predict(capsys, cut["eth"], cut["btc"], "--run", run)["prediction"] == \
            present["prediction"]
    assert present["reference"].startswith("csv:btc.csv BTC/USDT")


def test_predict_at_names_a_time_without_a_candle_and_a_missing_reference(trained, capsys,
                                                                          paths):
    eth, _btc, files, run = trained
    assert main(["predict", "--source", f"csv:{files['eth']}", "--symbol", "ETH/USDT",
                 "--reference-source", f"csv:{files['btc']}", "--run", run,
                 "--at", str(int(eth.ts[-1]) + 3_600_000)]) == 1
    assert "no closed candle that opens at" in capsys.readouterr().err
    # the files read went into the candle cache, BTC/USDT too: without it, the reference is
    # nowhere to be found
    paths.candle_cache.unlink()
    assert main(["predict", "--source", f"csv:{files['eth']}", "--symbol", "ETH/USDT",
                 "--run", run]) == 1
    assert "--reference-source csv:FILE" in capsys.readouterr().err


def test_a_run_with_a_reference_is_trained_again_only_on_the_same_reference(trained,
                                                                              tmp_path, capsys):
    _eth, btc, files, run = trained
    store = CheckpointStore()
    manifest = store.run_dir(run) / MANIFEST_NAME
    recorded = json.loads(manifest.read_text())
    assert recorded["features"]["reference"] == "BTC/USDT"
    assert recorded["features"]["higher_timeframes"] == ["15m", "1h"]
    assert recorded["reference"]["series"]["symbol"] == "BTC/USDT"
    again = ["train", "--config", str(manifest), "--source", f"csv:{files['eth']}", "--json"]
    assert main([*again, "--reference-source", f"csv:{files['btc']}"]) == 0
    twin = json.loads(capsys.readouterr().out.splitlines()[-1])["run_id"]
    first, second = (
        [b["loss"] for b in read_history(store.run_dir(r)).batches] for r in (run, twin))
    assert first == second and len(first) > 1
    other = btc.copy()
    other.close[3000] = other.open[3000]  # one reference candle differs
    changed = write_candles_csv(other, tmp_path / "btc-other.csv")
    assert main([*again, "--reference-source", f"csv:{changed}"]) == 1
    assert "differ from the ones the run was trained on" in capsys.readouterr().err


def test_a_run_with_a_reference_packed_for_a_cluster_takes_its_reference_along(
        trained, tmp_path, capsys, monkeypatch):
    _eth, _btc, files, run = trained
    packed = tmp_path / "packed"
    assert main(["runs", "export", run, "--for-cluster", str(packed), "--source",
                 f"csv:{files['eth']}", "--reference-source", f"csv:{files['btc']}"]) == 0
    capsys.readouterr()
    assert (packed / "reference.csv.gz").is_file()
    script = (packed / "train.sh").read_text()
    assert "--reference-source csv:reference.csv.gz" in script
    here = [b["loss"] for b in read_history(CheckpointStore().run_dir(run)).batches]

    monkeypatch.setenv("WORKSTATION_HOME", str(tmp_path / "cluster"))  # another machine
    assert main(["train", "--config", str(packed / "run.json"), "--source",
                 f"csv:{packed / 'candles.csv.gz'}", "--symbol", "ETH/USDT", "--reference-source",
                 f"csv:{packed / 'reference.csv.gz'}", "--json"]) == 0
    there = json.loads(capsys.readouterr().out.splitlines()[-1])["run_id"]
    assert [b["loss"] for b in read_history(CheckpointStore().run_dir(there)).batches] == here


def test_a_run_with_a_reference_is_backtested_on_its_reference(trained, capsys, paths):
    _eth, _btc, files, run = trained
    series = ["--source", f"csv:{files['eth']}", "--symbol", "ETH/USDT"]
    assert main(["backtest", *series, "--signals", f"run:{run}", "--head", "candle",
                 "--in-sample", "--threshold", "0", "--reference-source", f"csv:{files['btc']}",
                 "--json"]) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(results) == 2 and len(results[0]["trades"]) > 0
    # the cache holds the reference the run read (imported from its file): that one serves
    assert main(["backtest", *series, "--signals", f"run:{run}", "--head", "candle",
                 "--in-sample", "--threshold", "0", "--json"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == results
    paths.candle_cache.unlink()  # without it, the reference is nowhere to be found
    assert main(["backtest", *series, "--signals", f"run:{run}", "--head", "candle",
                 "--in-sample"]) == 1
    assert "--reference-source csv:FILE" in capsys.readouterr().err
