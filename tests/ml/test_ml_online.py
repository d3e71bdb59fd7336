"""The online learner: real tiny transformers, real steps, real threads."""

from __future__ import annotations

import json
import math
import threading

import numpy as np
import pytest
import torch

from workstation.errors import WorkstationError
from workstation.market.candles import Candles
from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.checkpoints import CheckpointError, CheckpointStore
from workstation.ml.config import preset_config
from workstation.ml.model import TradingTransformer
from workstation.ml.online import OnlineLearner, OnlineTrainingError, Predictor
from workstation.ml.ownership import ModelOwnershipError, claim, owner_of
from workstation.ml.targets import TargetSpec, make_targets

torch.set_num_threads(1)

H = 3
SPEC = TargetSpec(trend_horizon=H)
CONFIG = preset_config("tiny", seq_len=32, dropout=0.0)


def learner(**kw) -> OnlineLearner:
    kw = {"lr": 1e-3, "replay_size": 7, "replay_window": 64, **kw}
    return OnlineLearner(kw.pop("config", CONFIG), kw.pop("target_spec", SPEC), **kw)


def zigzag(n: int, step_bps: float = 20.0) -> Candles:
    """Closes that go up, down, up, down ...: the next candle's direction is predictable."""
    ts = 1_700_000_040_000 + 60_000 * np.arange(n, dtype=np.int64)
    sign = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    close = 100.0 * np.exp(np.cumsum(sign * step_bps * 1e-4))
    open_ = np.concatenate(([100.0], close[:-1]))
    high = np.maximum(open_, close) * 1.0002
    low = np.minimum(open_, close) * 0.9998
    return Candles.from_arrays(ts, open_, high, low, close, np.full(n, 5.0), ONE_MINUTE)


def feed(candles: Candles, start: int):
    """Yield the series growing from ``start`` candles by one closed candle at a time."""
    live = candles.slice(0, start)
    yield live
    for i in range(start, len(candles)):
        live.apply(candles.row(i))
        yield live


def test_each_closed_candle_is_settled_trained_on_and_predicted():
    candles = demo_candles(140, ONE_MINUTE, seed=3)
    targets = make_targets(candles, SPEC)
    online = learner()
    steps = [online.on_closed_candle(live) for live in feed(candles, 100)]
    ts = candles.ts
    for k, step in enumerate(steps):
        n = 100 + k
        p = step.prediction
        assert step.ts == p.ts == ts[n - 1] and p.target_ts == ts[n - 1] + 60_000
        assert math.isclose(sum(p.candle_probs), 1.0, rel_tol=1e-5)
        assert math.isclose(sum(p.trend_probs), 1.0, rel_tol=1e-5)
        assert p.confidence == max(p.candle_probs) and p.trend_horizon == H
        g = p.ghost
        assert g.ts == p.target_ts and g.open == p.close == candles.close[n - 1]
        assert g.close == pytest.approx(p.close * math.exp(p.return_bps * 1e-4))
        assert g.low < min(g.open, g.close) <= max(g.open, g.close) < g.high
        assert p.return_std_bps > 0
        # outcomes: the candle prediction made one call ago, the trend one made H calls ago
        heads = {o.head: o for o in step.outcomes}
        if k >= 1:
            o = heads.pop("candle")
            assert o.ts == ts[n - 2] and o.matured_ts == ts[n - 1]
            assert o.predicted == steps[k - 1].prediction.candle_class
            assert o.actual == targets.candle[n - 2]
        if k >= H:
            o = heads.pop("trend")
            assert o.ts == ts[n - 1 - H] and o.actual == targets.trend[n - 1 - H]
            assert o.predicted == steps[k - H].prediction.trend_class
            assert o.correct == (o.predicted == o.actual)
        assert not heads
        # one step per candle on the window whose targets just matured, plus replay
        t = step.train
        assert t.sample_ts == ts[n - 1 - H] and t.windows == 8 and t.positions == 8 * 32
        assert math.isfinite(t.loss) and 0 <= t.candle_acc <= 1
        assert t.head_losses["position"] is None
        assert step.new_candles == 1 and step.coalesced == 0
    avg = steps[-1].averages
    assert avg.steps == len(steps) == online.steps
    assert avg.live_candle_n == len(steps) - 1 and avg.live_trend_n == len(steps) - H
    assert 0 < avg.live_candle_baseline <= 1 and avg.train_loss == pytest.approx(
        np.mean([s.train.loss for s in steps]))


def test_it_learns_a_predictable_market():
    online = learner(config=preset_config("tiny", seq_len=16, dropout=0.0), lr=3e-3,
                     replay_window=48, average_window=40)
    steps = [online.on_closed_candle(live) for live in feed(zigzag(260), 60)]
    first = np.mean([s.train.head_losses["candle"] for s in steps[:10]])
    last = np.mean([s.train.head_losses["candle"] for s in steps[-10:]])
    assert last < 0.5 * first
    avg = steps[-1].averages
    assert avg.live_candle_baseline == pytest.approx(0.5)
    assert avg.live_candle_acc >= 0.95


def test_a_forming_candle_is_ignored_and_a_repeat_call_does_nothing():
    candles = demo_candles(80, ONE_MINUTE, seed=4)
    online = learner()
    first = online.on_closed_candle(candles)
    forming = candles.copy()
    forming.append(int(candles.ts[-1]) + 60_000, 1.0, 1.0, 1.0, 1.0, 0.0, closed=False)
    again = online.on_closed_candle(forming)
    assert again.new_candles == 0 and again.train is None and again.outcomes == ()
    assert again.prediction is first.prediction and online.steps == 1


def test_several_new_candles_are_coalesced_into_one_step():
    candles = demo_candles(120, ONE_MINUTE, seed=5)
    online = learner()
    online.on_closed_candle(candles.slice(0, 100))
    online.on_closed_candle(candles.slice(0, 101))
    step = online.on_closed_candle(candles.slice(0, 106))
    assert step.new_candles == 5 and step.coalesced == 4 and online.steps == 3
    assert step.train.sample_ts == candles.ts[105 - H] and step.prediction.ts == candles.ts[105]
    # the second prediction's candle and both trends matured (the first's candle already had)
    assert sorted((o.head, int(o.ts)) for o in step.outcomes) == [
        ("candle", candles.ts[100]), ("trend", candles.ts[99]), ("trend", candles.ts[100])]


def test_inference_runs_on_its_own_copy_refreshed_between_steps():
    candles = demo_candles(120, ONE_MINUTE, seed=6)
    online = learner()
    trained, copy = online.model, online.predictor.model
    assert trained is not copy and not copy.training
    ptrs = {p.untyped_storage().data_ptr() for p in trained.parameters()}
    assert not ptrs & {p.untyped_storage().data_ptr() for p in copy.parameters()}
    assert all(not p.requires_grad for p in copy.parameters())
    before = {k: v.clone() for k, v in trained.state_dict().items()}
    online.on_closed_candle(candles)
    after = trained.state_dict()
    assert not all(torch.equal(before[k], after[k]) for k in before)  # the step changed them
    for k, v in copy.state_dict().items():
        assert torch.equal(v, after[k])  # and the copy has exactly the new weights


def test_the_trained_model_has_one_owner_and_one_thread():
    candles = demo_candles(100, ONE_MINUTE, seed=7)
    online = learner()
    assert owner_of(online.model) == "OnlineLearner"
    with pytest.raises(ModelOwnershipError, match="OnlineLearner is training it"):
        claim(online.model, "Trainer")  # batch training cannot take the learner's model

    errors = []

    def work():
        try:
            online.on_closed_candle(candles.slice(0, 90))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    worker = threading.Thread(target=work, name="online-worker")
    worker.start()
    worker.join()
    with pytest.raises(ModelOwnershipError, match="belongs to thread 'online-worker'"):
        online.on_closed_candle(candles)
    with pytest.raises(ModelOwnershipError):
        online.save(CheckpointStore(), "DEMO")
    assert online.steps == 1 and not errors

    busy = TradingTransformer(CONFIG)
    refused = pytest.raises(ModelOwnershipError, match="OnlineLearner cannot take this model: "
                                                       "Trainer is training it")
    with claim(busy, "Trainer"), refused:  # a model being batch-trained cannot be adopted
        learner(model=busy)
    adopted = learner(model=busy)  # released: now it can
    assert adopted.model is busy and owner_of(busy) == "OnlineLearner"
    with pytest.raises(ModelOwnershipError):
        claim(busy, "Trainer")
    adopted.close()
    with pytest.raises(ModelOwnershipError, match="released"):
        adopted.on_closed_candle(candles)
    with claim(busy, "Trainer"):
        assert owner_of(busy) == "Trainer"
    assert owner_of(busy) is None


def test_weights_from_memory_are_copied_and_checked():
    source = TradingTransformer(CONFIG)
    online = learner(weights=source.state_dict())
    assert online.model is not source and owner_of(source) is None
    for k, v in online.predictor.model.state_dict().items():
        assert torch.equal(v, source.state_dict()[k])
    other = TradingTransformer(preset_config("tiny", seq_len=16))
    with pytest.raises(WorkstationError, match=r"do not fit.*shape mismatch: .*pos \(16, 32\)"):
        learner(weights=other.state_dict())


def test_a_non_finite_loss_fails_loudly_without_touching_the_weights():
    candles = demo_candles(100, ONE_MINUTE, seed=8)
    online = learner()
    online.on_closed_candle(candles.slice(0, 95))
    with torch.no_grad():
        online.model.candle_head.bias[0] = float("nan")
    before = {k: v.clone() for k, v in online.model.state_dict().items()}
    with pytest.raises(OnlineTrainingError, match=r"loss is nan \(heads: candle\).*not updated"):
        online.on_closed_candle(candles.slice(0, 96))
    after = online.model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before if k != "candle_head.bias")
    assert online.failed and online.steps == 1
    with pytest.raises(OnlineTrainingError, match="failed earlier"):
        online.on_closed_candle(candles)


def test_a_different_series_needs_a_reset():
    online = learner(train=False)
    a = demo_candles(60, ONE_MINUTE, seed=1)
    b = demo_candles(60, ONE_MINUTE, seed=2, end_ts=int(a.ts[-1]) - 3_600_000)
    first = online.on_closed_candle(a)
    assert first.train is None and online.optimizer is None and online.steps == 0
    with pytest.raises(OnlineTrainingError, match="call reset"):
        online.on_closed_candle(b)
    online.reset()
    assert online.on_closed_candle(b).prediction.ts == b.ts[-1]


def test_a_checkpoint_carries_the_learner_and_the_predictor():
    candles = demo_candles(120, ONE_MINUTE, seed=9)
    online = learner()
    step = online.on_closed_candle(candles)
    store = CheckpointStore()
    folder = online.save(store, "DEMO (simulated market) DEMO/USDT 1m")
    loaded = store.load(folder.parent.parent.name)
    assert loaded.meta["provenance"].startswith("DEMO") and loaded.meta["step"] == 1
    assert loaded.meta["metrics"]["online"]["steps"] == 1

    predictor = Predictor.from_checkpoint(loaded)
    again = predictor.predict(candles)
    assert again.candle_probs == pytest.approx(step.prediction.candle_probs, abs=1e-6)
    resumed = OnlineLearner(weights=loaded, train=False)
    assert resumed.config == CONFIG and resumed.target_spec == SPEC
    assert resumed.on_closed_candle(candles).prediction.return_bps == pytest.approx(
        step.prediction.return_bps, abs=1e-5)

    with pytest.raises(CheckpointError, match="does not fit the online learner: d_model: 32 -> 64"):
        OnlineLearner(preset_config("tiny", seq_len=32, d_model=64), weights=loaded)
    with pytest.raises(CheckpointError, match="targets"):
        OnlineLearner(target_spec=TargetSpec(trend_horizon=7), weights=loaded)


@pytest.mark.parametrize("change, reason", [
    (lambda m: m["features"].update(version=2), "features version 2 is not supported"),
    (lambda m: m["config"].update(n_features=12), "the model takes 12 features"),
    (lambda m: m.pop("targets"), "has no 'targets' settings"),
])
def test_a_checkpoint_of_other_features_or_settings_is_refused(change, reason):
    store = CheckpointStore()
    folder = learner(train=False).save(store, "DEMO")
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text())
    change(meta)
    meta_path.write_text(json.dumps(meta))
    loaded = store.load(folder.parent.parent.name)
    with pytest.raises(CheckpointError, match=reason) as err:
        Predictor.from_checkpoint(loaded)
    assert err.value.path == meta_path
    with pytest.raises(CheckpointError, match=reason):
        OnlineLearner(weights=loaded)


def test_with_higher_timeframes_a_live_tail_predicts_as_the_whole_history_does():
    """The live session offers ``window_candles`` (plus a margin) candles; with higher
    timeframes on, the prediction from that tail is the full history's, bit for bit, and the
    per-candle learner trains on the same rows."""
    from workstation.ml.context import window_candles
    from workstation.ml.features import FeatureSpec
    from workstation.ml.live import TAIL_MARGIN

    features = FeatureSpec(higher_timeframes=("15m", "1h"))
    config = preset_config("tiny", seq_len=32, dropout=0.0, n_features=features.n_features)
    torch.manual_seed(0)
    predictor = Predictor(config, features, SPEC)
    candles = demo_candles(9000, ONE_MINUTE, seed=8, end_ts=1_700_000_000_000)
    tail = window_candles(features, candles.timeframe, config.seq_len) + TAIL_MARGIN
    for n in (7000, 7777, len(candles)):
        whole = predictor.predict(candles.slice(0, n))
        live = predictor.predict(candles.slice(n - tail, n))
        assert live == whole
    short = predictor.predict(candles.slice(len(candles) - 200, len(candles)))
    assert short != whole  # 200 candles are too few for the hour's context: it differs


def test_with_a_reference_asset_a_live_tail_predicts_as_the_whole_history_does():
    """Live mode offers the reference from ``warmup`` candles before the series' tail; the
    prediction from both tails is the full histories', bit for bit, also where the reference
    misses candles (masked), and the learner needs the reference's candles to step."""
    from workstation.ml.context import window_candles
    from workstation.ml.features import FeatureSpec
    from workstation.ml.live import TAIL_MARGIN

    features = FeatureSpec(higher_timeframes=("15m",), reference="BTC/USDT")
    config = preset_config("tiny", seq_len=32, dropout=0.0, n_features=features.n_features)
    torch.manual_seed(0)
    predictor = Predictor(config, features, SPEC)
    candles = demo_candles(6000, ONE_MINUTE, seed=8, end_ts=1_700_000_000_000)
    btc = demo_candles(6000, ONE_MINUTE, seed=3, end_ts=1_700_000_000_000)
    gone = np.random.default_rng(1).choice(len(btc) - 2, 300, replace=False)
    btc = btc.without(np.r_[gone, len(btc) - 1])  # the newest reference candle has not arrived
    tail = window_candles(features, candles.timeframe, config.seq_len) + TAIL_MARGIN
    for n in (3000, 4321, len(candles)):
        whole = predictor.predict(candles.slice(0, n), reference=btc)
        first = int(np.searchsorted(btc.ts, candles.ts[n - tail])) - features.warmup
        live = predictor.predict(candles.slice(n - tail, n), reference=btc.slice(first, len(btc)))
        assert live == whole
    learner = OnlineLearner(config, SPEC, feature_spec=features, train=True)
    with pytest.raises(WorkstationError, match="also reads BTC/USDT: its candles are needed"):
        learner.on_closed_candle(candles)
    step = learner.on_closed_candle(candles, reference=btc)
    assert step.reference_present is False  # its newest reference candle is missing: masked
    more = candles.slice(0, len(candles) - 1)
    learner.reset()
    assert learner.on_closed_candle(more, reference=btc).reference_present is True
