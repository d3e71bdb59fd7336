"""Every run writes ``run.json``; ``workstation train --config run.json`` trains exactly that
run again (same losses, same weights) and refuses data or marks that differ from it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import load_file

from workstation.annotations.model import Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.cli import main
from workstation.market.csv_io import read_candles_csv, write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.history.reader import read_history
from workstation.ml.manifest import MANIFEST_NAME, candles_sha256
from workstation.paths import app_paths

END = 1_700_000_040_000 - 1_700_000_040_000 % 60_000
TRAIN = ["--symbol", "ETH/USDT", "--seq-len", "16", "--batch-size", "16", "--epochs", "2",
         "--stride", "16", "--threads", "1", "--seed", "3", "--json"]


@pytest.fixture
def data(tmp_path):
    candles = demo_candles(700, ONE_MINUTE, seed=9, end_ts=END)
    path = write_candles_csv(candles, tmp_path / "eth.csv")
    with AnnotationStore(app_paths().annotations_db) as store:
        store.add(Trade(symbol="ETH/USDT", timeframe="1m", direction="long",
                        entry_ts=int(candles.ts[300]), entry_price=float(candles.close[300]),
                        exit_ts=int(candles.ts[340]), exit_price=float(candles.close[340]),
                        created_at=END, updated_at=END))
        # the end reviewed too: validation lies there, the trade in the training span
        store.add(Region(symbol="ETH/USDT", timeframe="1m", start_ts=int(candles.ts[550]),
                         end_ts=int(candles.ts[690]), label="reviewed", created_at=END,
                         updated_at=END))
    return candles, path


def train(capsys, *argv) -> tuple[int, str, str]:
    code = main(["train", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def run_id_of(out: str) -> str:
    return json.loads(out.splitlines()[-1])["run_id"]


def weights(run_id: str) -> dict[str, np.ndarray]:
    store = CheckpointStore()
    return load_file(store.snapshot_dir(run_id, "latest") / "model.safetensors")


def losses(run_id: str) -> list[float]:
    return [b["loss"] for b in read_history(CheckpointStore().run_dir(run_id)).batches]


def test_a_run_trained_again_from_its_manifest_is_the_same_run(data, capsys):
    candles, path = data
    code, out, err = train(capsys, "--source", f"csv:{path}", *TRAIN)
    assert code == 0, err
    first = run_id_of(out)
    manifest_path = CheckpointStore().run_dir(first) / MANIFEST_NAME
    manifest = json.loads(manifest_path.read_text())
    assert manifest["run_id"] == first and manifest["seed"] == 3 and manifest["world_size"] == 1
    assert manifest["data"]["candles"] == len(candles)
    assert manifest["data"]["sha256"] == candles_sha256(read_candles_csv(path, ONE_MINUTE))
    assert manifest["labels"]["annotations"] == 2 and manifest["labels"]["sha256"]
    assert manifest["model"]["seq_len"] == 16 and manifest["training"]["epochs"] == 2
    assert manifest["code"]["workstation"] and manifest["code"]["torch"]

    code, out, err = train(capsys, "--config", str(manifest_path), "--source", f"csv:{path}",
                           "--json")
    assert code == 0, err
    second = run_id_of(out)
    assert second != first and "training again the run" in err
    assert losses(second) == losses(first) and len(losses(first)) > 1
    a, b = weights(first), weights(second)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    again = json.loads((CheckpointStore().run_dir(second) / MANIFEST_NAME).read_text())
    assert {k: v for k, v in again.items() if k != "run_id"} == \
        {k: v for k, v in manifest.items() if k != "run_id"}


def test_other_data_other_marks_and_extra_settings_are_refused(data, capsys, tmp_path):
    candles, path = data
    code, out, err = train(capsys, "--source", f"csv:{path}", *TRAIN, "--epochs", "1")
    assert code == 0, err
    manifest = CheckpointStore().run_dir(run_id_of(out)) / MANIFEST_NAME

    changed = candles.slice(0, len(candles))
    changed.close[400] = float(changed.close[400]) + 0.01
    changed.high[400] = max(float(changed.high[400]), float(changed.close[400]))
    other = write_candles_csv(changed, tmp_path / "other.csv")
    code, _, err = train(capsys, "--config", str(manifest), "--source", f"csv:{other}")
    assert code == 1 and "differ from the ones the run was trained on" in err
    assert len(err.strip().splitlines()) == 1

    with AnnotationStore(app_paths().annotations_db) as store:
        store.add(Trade(symbol="ETH/USDT", timeframe="1m", direction="short",
                        entry_ts=int(candles.ts[500]), entry_price=float(candles.close[500]),
                        exit_ts=int(candles.ts[520]), exit_price=float(candles.close[520]),
                        created_at=END, updated_at=END))
    code, _, err = train(capsys, "--config", str(manifest), "--source", f"csv:{path}")
    assert code == 1 and "import the marks it was trained on" in err

    code, _, err = train(capsys, "--config", str(manifest), "--epochs", "5")
    assert code == 1 and "--config takes every setting from the run's manifest" in err
    assert "--epochs" in err

    broken = tmp_path / "run.json"
    broken.write_text('{"manifest_version": 1,\n "model": }')
    code, _, err = train(capsys, "--config", str(broken))
    assert code == 1 and f"run manifest {broken} is not valid JSON (line 2" in err


def test_a_run_packed_for_a_cluster_trains_there_as_it_did_here(data, capsys, tmp_path,
                                                                  monkeypatch):
    _candles, path = data
    code, out, err = train(capsys, "--source", f"csv:{path}", *TRAIN)
    assert code == 0, err
    run_id = run_id_of(out)
    packed = tmp_path / "packed"
    assert main(["runs", "export", run_id, "--for-cluster", str(packed), "--source",
                 f"csv:{path}"]) == 0
    said = capsys.readouterr().out
    assert "2 marks" in said and "torchrun" in said
    assert sorted(p.name for p in packed.iterdir()) == ["candles.csv.gz", "marks.json",
                                                        "run.json", "train.sh"]
    script = (packed / "train.sh").read_text()
    assert "workstation annotations import marks.json" in script
    assert "-m workstation train --config run.json --source csv:candles.csv.gz" in script
    here = losses(run_id)

    monkeypatch.setenv("WORKSTATION_HOME", str(tmp_path / "cluster"))  # another machine
    assert main(["annotations", "import", str(packed / "marks.json")]) == 0
    code, out, err = train(capsys, "--config", str(packed / "run.json"), "--source",
                           f"csv:{packed / 'candles.csv.gz'}", "--symbol", "ETH/USDT", "--json")
    assert code == 0, err
    assert losses(run_id_of(out)) == here  # the same run, from the packed folder alone

    code, out, err = train(capsys, "--source", "demo", "--seq-len", "16", "--batch-size", "16",
                           "--stride", "16", "--epochs", "1", "--threads", "1", "--max-candles",
                           "600", "--json")
    assert code == 0, err
    assert main(["runs", "export", run_id_of(out), "--for-cluster", str(tmp_path / "d")]) == 1
    assert "trained on demo candles" in capsys.readouterr().err
