"""Trainer: real training of a tiny model; stop, failure and resume behave as promised.

Failures of the seed system this makes impossible: errors swallowed into "Loss 0.0000, Acc
0.0%", a metric without data shown as 0, a non-finite loss that keeps training, a stop
request that never arrives, checkpoint calls to functions that did not exist.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import threading

import numpy as np
import pytest
import torch

from workstation.errors import WorkstationError
from workstation.market.candles import Candles
from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.config import TrainConfig, preset_config
from workstation.ml.dataset import TrainingData
from workstation.ml.events import BatchEnd, CheckpointSaved, EpochEnd, Failed, Finished, RunStarted
from workstation.ml.scoring import verdict_of
from workstation.ml.trainer import Trainer

torch.set_num_threads(1)
END = 1_700_000_000_000
PROVENANCE = "DEMO (simulated market) DEMO/USDT 1m"


def demo_data(n: int = 3000, trader=None, timeframe: str = "1m") -> TrainingData:
    candles = demo_candles(n, parse_timeframe(timeframe), seed=1, end_ts=END)
    return TrainingData.from_candles(candles, trader=trader)


def model_config(**overrides):
    return preset_config("tiny", **dict(dict(seq_len=32), **overrides))


def train_config(**overrides) -> TrainConfig:
    return TrainConfig(**dict(dict(epochs=2, batch_size=8, log_every=1, warmup_steps=2,
                                   window_stride=32,
                                   lr=1e-3, cpu_threads=1), **overrides))


class Recorder:
    """``on_event``: keeps every event, optionally reacting to some."""

    def __init__(self, react=None):
        self.events = []
        self.react = react

    def __call__(self, event) -> None:
        json.dumps(event.to_dict(), allow_nan=False)  # every event is plain, finite JSON
        self.events.append(event)
        if self.react:
            self.react(event)

    def of(self, kind):
        return [e for e in self.events if isinstance(e, kind)]

    def losses(self) -> dict[int, float]:
        return {e.step: e.metrics.loss for e in self.of(BatchEnd)}


def train(data=None, mc=None, tc=None, *, react=None, stop=None, store=None, **kw):
    rec = Recorder(react)
    trainer = Trainer(mc or model_config(), tc or train_config(), data or demo_data(), "cpu",
                      on_event=rec, stop=stop or threading.Event(), checkpoints=store,
                      provenance=kw.pop("provenance", PROVENANCE), **kw)
    return trainer, trainer.run(), rec


# -- a normal run ---------------------------------------------------------------------------
def test_run_reports_events_in_order_with_baselines(tmp_path):
    data = demo_data(timeframe="1h")  # 300 validation hours: twelve days to bootstrap
    store = CheckpointStore(tmp_path)
    trainer, final, rec = train(data, store=store)
    assert isinstance(final, Finished) and final.ok and final.status == "completed"
    kinds = [e.kind for e in rec.events]
    assert kinds[0] == "RunStarted" and kinds[-1] == "Finished"
    assert kinds.count("EpochEnd") == 2 and kinds.count("CheckpointSaved") == 2
    assert kinds.index("CheckpointSaved") == kinds.index("EpochEnd") + 1
    started = rec.of(RunStarted)[0]
    assert started.provenance == PROVENANCE and started.steps_per_epoch == trainer.steps_per_epoch
    steps = [e.step for e in rec.of(BatchEnd)]
    assert steps == list(range(1, 2 * trainer.steps_per_epoch + 1))
    assert final.step == 2 * trainer.steps_per_epoch and final.epoch == 2

    train_split = trainer.split.train
    for e in rec.of(BatchEnd):
        m = e.metrics
        assert math.isfinite(m.loss) and m.loss != 0.0
        for head in ("candle", "trend"):
            score = m.heads[head]
            majority = data.targets.majority_baseline(head, *train_split)
            assert score.baselines == {"majority": majority} and score.best_baseline == "majority"
            assert 0 < score.accuracy < 1
        for head in ("position", "regime"):  # no annotations: no metric, no loss
            assert m.heads[head].accuracy is None and m.heads[head].n == 0
            assert m.head_losses[head] is None
        assert m.head_losses["candle"] > 0 and m.batches == e.batches
        assert e.lr > 0 and e.grad_norm > 0 and e.samples_per_s > 0
        assert e.memory.device == "cpu" and e.memory.allocated_mb > 0 and e.memory.total_mb > 0
    for e in rec.of(EpochEnd):
        assert e.val.examples > 0 and e.val.heads["position"].accuracy is None
        assert e.train.batches == e.batches_per_epoch == trainer.steps_per_epoch
        for head in ("candle", "trend"):
            score = e.val.heads[head]
            assert set(score.baselines) == {"majority", "volatility", "logistic", "persistence"}
            train_majority = int(data.targets.class_counts(head, *train_split).argmax())
            truths = [sum(row) for row in score.confusion]  # confusion[truth][prediction]
            assert score.baselines["majority"] == pytest.approx(truths[train_majority]
                                                                / score.n)
            best = max(score.baselines.values())
            assert score.best_baseline_accuracy == best
            assert score.margin == pytest.approx(score.accuracy - best)
            low, high = score.interval
            assert low <= score.margin <= high
            assert score.verdict == verdict_of(score.margin, score.interval)
            assert sum(map(sum, score.confusion)) == score.n > 0
    dumped = json.loads(json.dumps(rec.of(EpochEnd)[0].to_dict()))
    assert dumped["val"]["heads"]["position"]["accuracy"] is None

    saved = rec.of(CheckpointSaved)[-1]
    loaded = store.load(final.run_id)
    assert str(loaded.path) == saved.path == final.checkpoint
    assert loaded.meta["provenance"] == PROVENANCE and loaded.meta["step"] == final.step
    assert loaded.meta["config"] == model_config().to_dict()
    assert loaded.meta["features"] == data.feature_spec.to_dict()
    assert loaded.meta["targets"] == data.target_spec.to_dict()
    assert loaded.meta["metrics"]["val"]["heads"]["candle"]["best_baseline"] is not None


def test_the_model_learns_a_predictable_market():
    """Closes alternate up and down: the next candle's direction is the opposite of this one's.
    Accuracy must leave the majority baseline far behind (the seed showed 0.0 %)."""
    n = 4000
    rng = np.random.default_rng(0)
    moves = np.where(np.arange(n) % 2 == 0, 10.0, -10.0) + rng.normal(0, 1.0, n)
    close = 1000 * np.exp(np.cumsum(moves) * 1e-4)
    ts = END - END % 60_000 + 60_000 * np.arange(n, dtype=np.int64)
    candles = Candles.from_arrays(ts, close, close, close, close, np.ones(n), ONE_MINUTE)
    data = TrainingData.from_candles(candles)
    _, final, rec = train(data, tc=train_config(epochs=3, lr=3e-3, log_every=10))
    assert final.status == "completed"
    candle = rec.of(EpochEnd)[-1].val.heads["candle"]
    assert candle.baselines["majority"] < 0.55 and candle.accuracy > 0.9
    # the pattern is in each candle's own features: logistic regression on them finds it too,
    # so the model shows no margin over the best baseline (three days: too few for a verdict)
    assert candle.best_baseline == "logistic" and candle.baselines["logistic"] > 0.9
    assert candle.baselines["persistence"] < 0.1 and candle.verdict is None


def test_the_trader_heads_are_trained_and_scored_beside_their_baselines():
    from workstation.annotations.targets import TraderTargets

    n = 3000
    rng = np.random.default_rng(0)
    position = np.full(n, -1, dtype=np.int8)
    position[500:2500] = rng.choice(3, 2000, p=[0.6, 0.2, 0.2])
    position[2700:2900] = 0
    regime = np.full(n, -1, dtype=np.int8)
    regime[2600:2950] = 2
    data = demo_data(n, trader=TraderTargets(position, regime, position >= 0))
    trainer, final, rec = train(data, tc=train_config(epochs=1))
    assert final.status == "completed"
    m = rec.of(BatchEnd)[-1].metrics
    assert m.heads["position"].accuracy is not None and m.head_losses["position"] is not None
    assert m.heads["position"].baselines["majority"] == data.targets.majority_baseline(
        "position", *trainer.split.train)
    val = rec.of(EpochEnd)[0].val.heads
    # only "flat" in validation: no trade there, too few marks to score
    assert val["position"].too_few and val["position"].marks.marks == 0
    assert val["position"].accuracy is None and val["position"].verdict is None
    # persistence and the hour of day, and the lagged baselines for the trader heads only
    assert {"persistence", "hour_of_day", "lagged_logistic", "boosted_trees"} <= set(
        val["position"].baselines)
    assert "lagged_logistic" not in val["candle"].baselines
    assert val["position"].transitions is not None and val["regime"].n > 0


def test_gradient_checkpointing_gives_the_same_50_steps():
    data = demo_data(6000)
    tc = train_config(epochs=3, log_every=1)
    runs = []
    for checkpointing in (False, True):
        mc = model_config(dropout=0.1, use_gradient_checkpointing=checkpointing)
        _, final, rec = train(data, mc, tc)
        assert final.status == "completed"
        runs.append(rec.losses())
    assert len(runs[0]) >= 50
    for step in runs[0]:
        assert runs[1][step] == pytest.approx(runs[0][step], rel=1e-6, abs=1e-7)


def test_trains_in_a_thread_whose_grad_mode_is_off():
    result = {}

    def worker():
        torch.set_grad_enabled(False)
        result["final"] = train(tc=train_config(epochs=1))[1]

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(60)
    assert result["final"].status == "completed"


def test_no_host_sync_per_step(monkeypatch):
    """Our code reads tensors on the host only every ``log_every`` steps (and per epoch).
    (torch's non-fused AdamW reads its CPU step counters; on CUDA the step is fused.)"""
    calls = []
    for name in ("item", "tolist", "__float__", "__int__", "__bool__"):
        original = getattr(torch.Tensor, name)

        def counted(self, *a, _original=original, _name=name):
            caller = sys._getframe(1).f_code.co_filename
            if "workstation" in caller:
                calls.append(f"{_name} {caller.rsplit('/', 1)[-1]}:{sys._getframe(1).f_lineno}")
            return _original(self, *a)
        monkeypatch.setattr(torch.Tensor, name, counted)
    data = demo_data(6000)
    rec = Recorder()
    trainer = Trainer(model_config(), train_config(epochs=2, batch_size=4, log_every=25), data,
                      "cpu",
                      on_event=rec, stop=threading.Event(), provenance=PROVENANCE)
    before = len(calls)
    final = trainer.run()
    assert final.status == "completed" and final.step > 60
    reports = len(rec.of(BatchEnd)) + len(rec.of(EpochEnd))
    syncs = len(calls) - before
    assert syncs <= 2 * reports + 4, f"{syncs} host reads for {final.step} steps: {calls}"


# -- stop --------------------------------------------------------------------------------------
def test_stop_is_honoured_within_one_batch(tmp_path):
    stop = threading.Event()

    def react(event):
        if isinstance(event, BatchEnd) and event.step == 3:
            stop.set()

    store = CheckpointStore(tmp_path)
    _, final, rec = train(react=react, stop=stop, store=store)
    assert isinstance(final, Finished) and final.status == "stopped"
    assert final.step == 3
    assert max(e.step for e in rec.of(BatchEnd)) == 3
    assert not rec.of(EpochEnd)
    saved = rec.of(CheckpointSaved)
    assert [(s.reason, s.step) for s in saved] == [("stopped", 3)]
    assert store.load(final.run_id).meta["resume"] == {"epoch": 0, "batch": 3}


def test_stop_during_validation_ends_the_run():
    stop = threading.Event()
    holder = {}

    def react(event):
        if isinstance(event, RunStarted):
            holder["last"] = event.steps_per_epoch
        if isinstance(event, BatchEnd) and event.step == holder["last"]:
            stop.set()  # after the last batch: validation comes next

    _, final, rec = train(react=react, stop=stop)
    assert final.status == "stopped" and final.step == holder["last"]
    assert not rec.of(EpochEnd)


def test_stop_from_another_thread():
    stop = threading.Event()
    first = threading.Event()
    rec = Recorder(lambda e: first.set() if isinstance(e, BatchEnd) else None)
    trainer = Trainer(model_config(), train_config(epochs=50), demo_data(), "cpu", on_event=rec,
                      stop=stop, provenance=PROVENANCE)
    result = {}
    thread = threading.Thread(target=lambda: result.update(final=trainer.run()))
    thread.start()
    assert first.wait(30)
    seen = trainer.step
    stop.set()
    thread.join(30)
    assert not thread.is_alive()
    assert result["final"].status == "stopped" and result["final"].step <= seen + 2


def test_stop_before_start_saves_nothing(tmp_path):
    stop = threading.Event()
    stop.set()
    _, final, rec = train(stop=stop, store=CheckpointStore(tmp_path))
    assert final.status == "stopped" and final.step == 0 and final.checkpoint is None
    assert not rec.of(CheckpointSaved) and not rec.of(BatchEnd)


# -- failures ------------------------------------------------------------------------------------
def test_nan_features_fail_the_run_naming_the_candle(tmp_path):
    data = demo_data()
    data.features[1234, 2] = np.nan
    store = CheckpointStore(tmp_path)
    _, final, rec = train(data, store=store)
    assert isinstance(final, Failed) and not final.ok
    assert "candle 1234" in final.message and "Traceback" in final.traceback
    assert rec.events[-1] is final and not rec.of(BatchEnd) and not rec.of(CheckpointSaved)
    assert store.run_ids() == []


def test_huge_learning_rate_fails_at_the_exact_step_naming_the_heads(tmp_path):
    data = demo_data()
    failures = []
    for log_every in (1, 7):
        tc = train_config(lr=1e30, warmup_steps=0, log_every=log_every)
        _, final, rec = train(data, tc=tc, store=CheckpointStore(tmp_path / str(log_every)))
        assert isinstance(final, Failed)
        assert "non-finite" in final.message and final.nonfinite
        assert set(final.nonfinite) <= {"candle", "trend", "position", "regime", "return",
                                        "grad_norm"}
        assert final.batch is not None and final.batch == final.step  # first epoch
        assert not rec.of(CheckpointSaved) and not rec.of(EpochEnd)
        for e in rec.of(BatchEnd):  # what was reported is real, never a NaN or a 0.0
            assert math.isfinite(e.metrics.loss) and e.metrics.loss != 0.0
            assert e.step <= final.step
        failures.append(final)
    # reading metrics every 7 steps still names the step where it happened
    assert failures[0].step == failures[1].step and failures[0].nonfinite == failures[1].nonfinite


def test_an_infinite_return_target_names_the_return_head():
    data = demo_data()
    data.targets.next_return_bps[:2500] = np.inf  # every training window meets it
    _, final, _ = train(data)
    assert isinstance(final, Failed)
    assert final.step == 1 and final.batch == 1  # the very first step, numbered as BatchEnd
    assert "return" in final.nonfinite
    assert not {"candle", "trend", "position", "regime"} & set(final.nonfinite)
    assert "return" in final.message and "step 1 (epoch 1, batch 1)" in final.message


def test_an_exception_fails_the_run_with_its_traceback(caplog):
    raised = []

    def react(event):
        if isinstance(event, BatchEnd) and not raised:
            raised.append(1)
            raise RuntimeError("boom in the panel")

    _, final, rec = train(react=react)
    assert isinstance(final, Failed) and final.message == "RuntimeError: boom in the panel"
    assert "Traceback" in final.traceback and "boom in the panel" in final.traceback
    assert final.step == 1 and rec.events[-1] is final
    assert "boom in the panel" in caplog.text  # logged, not swallowed


def test_a_failing_checkpoint_store_fails_the_run(tmp_path):
    class BrokenStore(CheckpointStore):
        """A real store whose disk is full."""

        def save(self, *args, **kwargs):
            raise OSError(28, "No space left on device")

    _, final, rec = train(store=BrokenStore(tmp_path), tc=train_config(epochs=1))
    assert isinstance(final, Failed) and "No space left" in final.message
    assert "OSError" in final.traceback and rec.of(EpochEnd)


def test_when_even_the_failure_cannot_be_reported_run_raises():
    def react(event):
        if isinstance(event, (BatchEnd, Failed)):
            raise RuntimeError("panel is gone")

    with pytest.raises(RuntimeError, match="panel is gone"):
        train(react=react)


def test_too_few_candles_is_a_clear_error():
    with pytest.raises(WorkstationError, match="too few to train"):
        train(demo_data(100))


def test_provenance_is_required():
    with pytest.raises(WorkstationError, match="provenance"):
        train(provenance=" ")


# -- resume ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("stop_at", ["mid-epoch", "epoch-end"])
def test_resume_continues_exactly(tmp_path, stop_at):
    data = demo_data()
    mc = model_config(dropout=0.1)
    tc = train_config(epochs=2)
    _, _, rec_a = train(data, mc, tc)
    steps_per_epoch = rec_a.of(RunStarted)[0].steps_per_epoch
    stop_step = 5 if stop_at == "mid-epoch" else steps_per_epoch

    store = CheckpointStore(tmp_path)
    stop = threading.Event()

    def react(event):
        if isinstance(event, (BatchEnd if stop_at == "mid-epoch" else EpochEnd)) \
                and event.step == stop_step:
            stop.set()

    _, first, _ = train(data, mc, tc, react=react, stop=stop, store=store)
    assert first.status == "stopped" and first.step == stop_step
    loaded = store.load(first.run_id)
    _, resumed, rec_c = train(data, mc, tc, store=store, resume_from=loaded)
    assert resumed.status == "completed" and resumed.run_id == first.run_id
    assert rec_c.of(RunStarted)[0].start_step == stop_step
    a, c = rec_a.losses(), rec_c.losses()
    assert sorted(c) == list(range(stop_step + 1, 2 * steps_per_epoch + 1))
    for step in c:
        assert c[step] == pytest.approx(a[step], rel=1e-6, abs=1e-7), step
    lr_a = [e.lr for e in rec_a.of(BatchEnd) if e.step > stop_step]
    assert [e.lr for e in rec_c.of(BatchEnd)] == pytest.approx(lr_a)
    assert rec_c.of(EpochEnd)[-1].val.loss == pytest.approx(rec_a.of(EpochEnd)[-1].val.loss)
    # the resumed epoch's training numbers say what they cover (honest resume)
    first_epoch = rec_c.of(EpochEnd)[0]
    assert first_epoch.train.batches == (steps_per_epoch - stop_step if stop_at == "mid-epoch"
                                         else steps_per_epoch)
    assert first_epoch.batches_per_epoch == steps_per_epoch


def test_resume_refuses_other_data_or_settings(tmp_path):
    store = CheckpointStore(tmp_path)
    data = demo_data()
    _, final, _ = train(data, tc=train_config(epochs=1), store=store)
    loaded = store.load(final.run_id)
    with pytest.raises(WorkstationError, match="data: "):
        train(data, store=store, resume_from=loaded, provenance="binance ETH/USDT 1m")
    with pytest.raises(WorkstationError, match="d_model"):
        train(data, model_config(d_model=64), store=store, resume_from=loaded)
    other = dataclasses.replace(data, target_spec=dataclasses.replace(data.target_spec,
                                                                      trend_horizon=5))
    with pytest.raises(WorkstationError, match="target settings differ"):
        train(other, store=store, resume_from=loaded)


# -- the CLI -------------------------------------------------------------------------------------
def cli_events(capsys, argv) -> tuple[int, list[dict], str]:
    from workstation.cli import main

    code = main(argv)
    out = capsys.readouterr()
    return code, [json.loads(line) for line in out.out.splitlines() if line.strip()], out.err


def test_cli_trains_on_demo_data_and_resumes(capsys):
    argv = ["train", "--source", "demo", "--max-candles", "3000", "--seq-len", "32",
            "--stride", "32", "--batch-size", "16", "--epochs", "1", "--log-every", "5",
            "--threads", "1", "--json"]
    code, events, err = cli_events(capsys, argv)
    assert code == 0, err
    kinds = [e["event"] for e in events]
    assert kinds[0] == "RunStarted" and kinds[-1] == "Finished"
    assert events[0]["provenance"].startswith("DEMO")
    assert "DEMO" in err and "majority" in err and "position —" in err
    # 300 validation candles of one day: the margin, but no interval and so no verdict
    assert "margin" in err and "too few days for an interval" in err
    run_id, step = events[-1]["run_id"], events[-1]["step"]
    assert events[-1]["status"] == "completed"

    code, events, err = cli_events(capsys, ["train", "--source", "demo", "--max-candles", "3000",
                                            "--resume", run_id, "--epochs", "2", "--json"])
    assert code == 0, err
    assert events[0]["start_step"] == step and events[-1]["step"] == 2 * step
    assert events[-1]["run_id"] == run_id


def test_cli_trains_on_a_csv_file(tmp_path, capsys):
    from workstation.market.csv_io import write_candles_csv

    path = write_candles_csv(demo_candles(2500, ONE_MINUTE, seed=3, end_ts=END),
                             tmp_path / "eth.csv")
    code, events, err = cli_events(capsys, [
        "train", "--source", f"csv:{path}", "--symbol", "ETH/USDT", "--timeframe", "1m",
        "--seq-len", "32", "--batch-size", "16", "--epochs", "1", "--threads", "1", "--no-save",
        "--stride", "32", "--json"])
    assert code == 0, err
    assert events[0]["provenance"] == "csv:eth.csv ETH/USDT 1m"
    assert "CheckpointSaved" not in [e["event"] for e in events]


def test_cli_reports_a_failed_run(capsys):
    code, events, err = cli_events(capsys, [
        "train", "--source", "demo", "--max-candles", "3000", "--seq-len", "32", "--stride", "32",
        "--batch-size", "16", "--epochs", "1", "--lr", "1e30", "--threads", "1", "--no-save",
        "--json"])
    assert code == 1
    assert events[-1]["event"] == "Failed" and events[-1]["nonfinite"]
    assert "training failed" in err and "non-finite" in err


# -- device --------------------------------------------------------------------------------------
def test_device_selection_never_falls_back_silently():
    from workstation.ml.device import memory_stats, resolve_device

    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto") == (torch.device("cuda", 0) if torch.cuda.is_available()
                                      else torch.device("cpu"))
    if not torch.cuda.is_available():
        with pytest.raises(WorkstationError, match="sees no CUDA GPU"):
            resolve_device("cuda:0")
    with pytest.raises(WorkstationError, match="unknown device 'gpu0'"):
        resolve_device("gpu0")
    mem = memory_stats(torch.device("cpu"))
    assert mem.reserved_mb is None and 0 < mem.allocated_mb <= mem.peak_mb < mem.total_mb


def test_cli_refuses_an_unknown_preset(capsys):
    from workstation.cli import main

    assert main(["train", "--source", "demo", "--preset", "huge", "--no-save"]) == 1
    assert "unknown model preset 'huge'; use one of tiny, small, base, large" in \
        capsys.readouterr().err


# -- losses ------------------------------------------------------------------------------------
def test_each_head_is_the_mean_over_its_own_targets_and_class_weights_count_rare_classes():
    from workstation.ml.dataset import WindowBatch
    from workstation.ml.model import ModelOutput
    from workstation.ml.targets import HEADS, TargetSpec
    from workstation.ml.trainer import compute_loss, head_weights

    g = torch.Generator().manual_seed(0)
    logits = {h: torch.randn(2, 50, 3, generator=g) for h in ("candle", "trend", "position",
                                                            "regime")}
    out = ModelOutput(logits["candle"], logits["trend"], logits["position"], logits["regime"],
                      torch.zeros(2, 50), None)
    candle = torch.randint(0, 3, (2, 50), generator=g)
    position = torch.full((2, 50), -1)
    position[0, :3] = torch.tensor([0, 1, 2])  # three targets among a hundred positions
    regime = torch.full((2, 50), -1)  # none: this head adds nothing
    batch = WindowBatch(torch.zeros(2, 50, 9), candle, candle, position, regime,
                        torch.zeros(2, 50), torch.zeros(2, 50, dtype=torch.bool))
    spec = TargetSpec(regime_weight=5.0)
    terms = compute_loss(out, batch, head_weights(spec, "cpu"))
    ce = torch.nn.functional.cross_entropy
    expected = ce(logits["position"][0, :3], position[0, :3])  # the mean of its own three
    assert terms.heads[HEADS.index("position")] == pytest.approx(float(expected), rel=1e-5)
    assert terms.heads[HEADS.index("regime")] == 0 and terms.counts[HEADS.index("regime")] == 0
    weights = {h: torch.tensor([1.0, 2.0, 0.5]) for h in ("candle", "trend", "position",
                                                          "regime")}
    weighted = compute_loss(out, batch, head_weights(spec, "cpu"), weights)
    w = weights["candle"][candle.reshape(-1)]
    manual = (ce(logits["candle"].reshape(-1, 3), candle.reshape(-1), reduction="none")
              * w).sum() / w.sum()
    assert weighted.heads[HEADS.index("candle")] == pytest.approx(float(manual), rel=1e-5)
    assert float(weighted.total) == pytest.approx(float((weighted.heads
                                                         * head_weights(spec, "cpu")).sum()))


def test_a_compiled_training_step_gives_the_eager_steps_losses():
    from workstation.ml.events import Compiling

    # aot_eager: torch.compile's graph capture and AOT autograd without a C++ compiler (the
    # inductor backend, the default on CUDA, takes ~25 s to compile even the tiny model here)
    _, eager, plain = train(tc=train_config(compile="off"))
    _, compiled, traced = train(tc=train_config(compile="on", compile_backend="aot_eager"))
    assert eager.status == compiled.status == "completed"
    assert not plain.of(Compiling) and [e.backend for e in traced.of(Compiling)] == ["aot_eager"]
    a, b = plain.losses(), traced.losses()
    assert a.keys() == b.keys() and len(a) > 5
    np.testing.assert_allclose(list(b.values()), list(a.values()), rtol=1e-5)
    assert not TrainConfig().compiles_on("cpu") and TrainConfig().compiles_on("cuda")
    with pytest.raises(WorkstationError, match="compile must be one of auto, on, off"):
        TrainConfig(compile="sometimes")
