"""The one training job (``ml.job``): the series' market decides which annotations label it,
overlapping trades are refused naming every pair, resume rules live in the checkpoint store,
and the CLI checks every argument before torch is loaded."""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import workstation
from workstation.annotations.model import Region, Trade
from workstation.annotations.overlap import OverlappingTradesError
from workstation.annotations.store import AnnotationStore
from workstation.annotations.targets import LONG, SHORT
from workstation.errors import WorkstationError
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml import job
from workstation.ml.checkpoints import CheckpointStore

END_TS = 1_700_000_000_000
TINY = dict(preset="tiny", model_overrides={"seq_len": 16},
            train_overrides={"epochs": 1, "batch_size": 8, "cpu_threads": 1,
                             "window_stride": 16})


def candles():
    return demo_candles(400, ONE_MINUTE, seed=3, end_ts=END_TS)


def trade(c, i, j, direction="long", market="real", tf="1m"):
    return Trade(market=market, symbol="ETH/USDT", timeframe=tf, direction=direction,
                 entry_ts=int(c.ts[i]), entry_price=float(c.close[i]), exit_ts=int(c.ts[j]),
                 exit_price=float(c.close[j]))


def prepare(c, series, *, db, store=None, request=None):
    request = request or job.TrainingRequest(**TINY, device="cpu")
    return job.build(job.plan(request, store), c, series, store=store, annotations_db=db,
                     on_event=lambda event: None, stop=threading.Event())


@pytest.mark.parametrize("market", ["demo", "real"])
def test_a_series_is_labelled_by_the_marks_of_its_own_market_only(tmp_path, market):
    c = candles()
    db = tmp_path / "annotations.sqlite"
    with AnnotationStore(db) as store:
        store.add(trade(c, 50, 80, "long", market="demo"))
        store.add(trade(c, 60, 90, "short", market="real"))  # same symbol, same time
        for market in ("demo", "real"):  # another symbol, on both markets: never a label here
            store.add(dataclasses.replace(trade(c, 20, 200, market=market), symbol="BTC/USDT"))
            # the end reviewed too: validation lies there, the trade in the training span
            store.add(Region(market=market, symbol="ETH/USDT", timeframe="1m",
                             start_ts=int(c.ts[300]), end_ts=int(c.ts[390]), label="reviewed"))
    source = "demo" if market == "demo" else "binance"
    prepared = prepare(c, SeriesKey(source, "ETH/USDT", ONE_MINUTE), db=db)
    position = prepared.data.targets.position
    assert prepared.annotations == 2 and prepared.market == SeriesKey(source, "ETH/USDT",
                                                                      ONE_MINUTE).market
    held = np.flatnonzero((position == LONG) | (position == SHORT)).tolist()
    assert held == (list(range(50, 80)) if market == "demo" else list(range(60, 90)))
    assert int(position[held[0]]) == (LONG if market == "demo" else SHORT)
    assert prepared.trainer.provenance.startswith("DEMO" if market == "demo" else "binance")


def test_a_market_whose_trades_overlap_is_refused_naming_every_pair(tmp_path):
    c = candles()
    db = tmp_path / "annotations.sqlite"
    first, second, third = (trade(c, 10, 40), trade(c, 30, 60, "short"),
                            trade(c, 50, 70, "long", tf="5m"))
    with AnnotationStore(db) as store:
        conn = store._conn  # an older release let these in; the store refuses them now
        from workstation.annotations import store as store_module
        for t in (first, second, third):
            conn.execute(store_module._INSERT, store_module._row(t))
    with pytest.raises(OverlappingTradesError) as err:
        prepare(c, SeriesKey("binance", "ETH/USDT", ONE_MINUTE), db=db)
    assert [(a.id, b.id) for a, b in err.value.pairs] == [(first.id, second.id),
                                                         (second.id, third.id)]
    message = str(err.value)
    assert message.startswith("training refuses this market: trades overlap in ETH/USDT "
                              "(2 pairs)") and "5m long entered on the" in message
    # the demo market of that symbol has no overlap: it trains
    assert prepare(c, SeriesKey("demo", "ETH/USDT", ONE_MINUTE), db=db).annotations == 0


def test_resume_rules_live_in_the_checkpoint_store(tmp_path):
    c = candles()
    store = CheckpointStore(tmp_path / "ckpt")
    assert store.newest_resumable() is None and store.newest_with_checkpoint() is None
    prepared = prepare(c, SeriesKey("binance", "ETH/USDT", ONE_MINUTE), db=None, store=store)
    final = prepared.trainer.run()
    assert final.ok
    run_id = final.run_id
    point = store.newest_resumable()
    assert (point.run_id, point.epoch, point.batch, point.total_epochs) == (run_id, 1, 0, 1)
    assert store.newest_with_checkpoint() == run_id and store.has_checkpoint(run_id, "best")
    with pytest.raises(WorkstationError, match="already trained 1 epoch; raise the total"):
        job.plan(job.TrainingRequest(resume_run=run_id), store)
    again = job.plan(job.TrainingRequest(resume_run=run_id, train_overrides={"epochs": 2}),
                     store)
    assert again.train_config.epochs == 2 and again.model_config.seq_len == 16
    with pytest.raises(WorkstationError, match="data: 'binance ETH/USDT 1m' -> 'DEMO"):
        prepare(c, SeriesKey("demo", "ETH/USDT", ONE_MINUTE), db=None, store=store,
                request=job.TrainingRequest(resume_run=run_id, train_overrides={"epochs": 2}))


def test_the_cli_and_the_window_build_runs_only_through_the_job():
    """No module outside ``ml.job`` makes a ``Trainer`` (but the walk-forward evaluation's
    ``ml.folds``, one per fold, on the job's settings and labels); the CLI and the GUI worker
    call the job's ``plan`` and ``build``."""
    root = Path(workstation.__file__).parent
    makers = []
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Trainer":
                makers.append(path.relative_to(root).as_posix())
    assert sorted(makers) == ["ml/folds.py", "ml/job.py"]
    for caller in ("commands/train.py", "ui/training/worker.py"):
        text = (root / caller).read_text(encoding="utf-8")
        assert ".plan(" in text and ".build(" in text, caller


_CHECK = """
import sys
from workstation.cli import main
code = main(sys.argv[1:])
print("TORCH" if "torch" in sys.modules else "NO TORCH", code)
"""


@pytest.mark.parametrize("argv, message", [
    (["train", "--preset", "huge"], "unknown model preset 'huge'"),
    (["train", "--epochs", "0"], "epochs must be >= 1"),
    (["train", "--device", "gpu0"], "unknown device 'gpu0'"),
    (["train", "--resume", ""], "not a run id"),
    (["train", "--resume", "20261130-011500-000-ab12"], "no such run"),
    (["train", "--lr", "-1"], "learning rate must be a positive number"),
    (["train", "--trend-horizon", "0"], "trend_horizon must be >= 1"),
    (["train", "--source", "csv:/nonexistent.csv", "--symbol", "ETH/USDT"], "nonexistent"),
    (["predict", "--run", "nope"], "no such run"),
    (["predict", "--device", "gpu0"], "unknown device 'gpu0'"),
    (["predict"], "no saved run"),
])
def test_train_and_predict_refuse_bad_arguments_before_loading_torch(argv, message,
                                                                     workstation_home):
    result = subprocess.run([sys.executable, "-c", _CHECK, *argv], capture_output=True,
                            text=True, timeout=120)
    assert result.stdout.split() == ["NO", "TORCH", "1"], result.stderr[-2000:]
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("workstation: error: ") and message in line


@pytest.mark.parametrize("make_bad", [
    lambda tmp: (tmp / "afile").write_text("x") and tmp / "afile",
    lambda tmp: (tmp / "afile").write_text("x") and tmp / "afile" / "below",
    lambda tmp: Path("/proc/workstation-cannot-write-here"),
])
def test_a_bad_data_dir_is_one_line_and_a_non_zero_exit(tmp_path, make_bad):
    bad = make_bad(tmp_path)
    result = subprocess.run([sys.executable, "-m", "workstation", "--data-dir", str(bad),
                             "candles", "list"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("workstation: error: ") and str(bad).split("/below")[0] in line
    assert "Traceback" not in result.stderr


def test_core_settings_events_and_job_import_without_torch():
    code = ("import sys\n"
            "import workstation.ml.config, workstation.ml.events, workstation.ml.device\n"
            "import workstation.ml.checkpoints, workstation.ml.job, workstation.ml.live\n"
            "print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.stdout.strip() == "False", result.stderr[-2000:]


def test_the_window_dispatches_events_on_their_types_not_their_names():
    """No comparison in ``ui`` with the name of an event type (``type(x).__name__ ==
    "BatchEnd"``, ``kind == "EpochEnd"``): the window uses isinstance / match."""
    from workstation.ml import events

    event_names = {name for name, value in vars(events).items() if isinstance(value, type)}
    root = Path(workstation.__file__).parent / "ui"
    found = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                for part in (node.left, *node.comparators):
                    values = part.elts if isinstance(part, (ast.Tuple, ast.List, ast.Set)) \
                        else [part]
                    if any(isinstance(v, ast.Constant) and v.value in event_names
                           for v in values):
                        found.append(f"{path.name}:{node.lineno}")
    assert len(event_names) >= 10 and not found, found
