"""Drawn levels as model inputs (``--levels``): how far the close is from the nearest level
above and below in volatility units, counting a level from the close of its candle; causal
(a later candle or a later level changes no earlier row); the same rows from a live window as
from the full history; training reads the market's levels from the annotations file."""

from __future__ import annotations

import numpy as np
import pytest
from indicators.test_formulas import random_candles

from workstation.annotations.drawings import Drawing
from workstation.annotations.store import AnnotationStore
from workstation.errors import WorkstationError
from workstation.market.perturb import changed_after
from workstation.market.series import MarketKey
from workstation.ml.candle_columns import volatility
from workstation.ml.features import FeatureSpec, make_features
from workstation.ml.level_columns import LEVEL_NAMES, Levels, level_features, levels_for

ETH = MarketKey("real", "ETH/USDT")


def level(c, i: int, price: float, timeframe: str = "1h", **kw) -> Drawing:
    return Drawing(shape="level", symbol="ETH/USDT", timeframe=timeframe, ts1=int(c.ts[i]),
                   price1=price, **kw)


def test_the_columns_are_named_recorded_and_off_by_default():
    spec = FeatureSpec(levels=True)
    assert spec.names[-2:] == LEVEL_NAMES and "level_above" not in FeatureSpec().names
    assert FeatureSpec.from_dict(spec.to_dict()) == spec
    old = FeatureSpec().to_dict()
    del old["levels"]  # recorded before levels were inputs: none fed
    assert FeatureSpec.from_dict(old).levels is False


def test_only_levels_count_and_only_from_the_close_of_their_candle():
    c = random_candles(400, seed=3, timeframe="1h")
    trend = Drawing(shape="trend", symbol="ETH/USDT", timeframe="1h", ts1=int(c.ts[5]),
                    price1=1.0, ts2=int(c.ts[9]), price2=2.0)
    up, down = float(c.close[100]) * 1.02, float(c.close[100]) * 0.97
    levels = Levels.of([trend, level(c, 100, up), level(c, 200, down)])
    assert len(levels) == 2
    spec = FeatureSpec(levels=True)
    got = level_features(c, spec, levels)
    assert got[99, 0] == spec.clip and got[99, 1] == -spec.clip  # known from 100's close
    np.testing.assert_allclose(got, reference(c, spec, levels), rtol=1e-6)


def reference(c, spec, levels: Levels) -> np.ndarray:
    """Row by row, level by level: the nearest known level above and below the close."""
    vol, clip = volatility(c, spec), spec.clip
    out = np.empty((len(c), 2))
    for t in range(len(c)):
        closes = int(c.ts[t]) + c.timeframe.ms
        known = [p for p, k in zip(levels.price, levels.known_at, strict=True) if k <= closes]
        above = [p for p in known if p >= c.close[t]]
        below = [p for p in known if p <= c.close[t]]
        out[t, 0] = min(clip, np.log(min(above) / c.close[t]) / vol[t]) if above else clip
        out[t, 1] = max(-clip, np.log(max(below) / c.close[t]) / vol[t]) if below else -clip
    return out

def test_a_level_drawn_on_a_shorter_timeframe_counts_from_its_own_candle():
    c = random_candles(50, seed=4, timeframe="1h")
    minute = Drawing(shape="level", symbol="ETH/USDT", timeframe="1m",
                     ts1=int(c.ts[10]) + 59 * 60_000, price1=float(c.close[10]) * 1.01)
    got = level_features(c, FeatureSpec(levels=True), Levels.of([minute]))
    assert got[10, 0] < FeatureSpec().clip  # its minute closed with the hour's candle 10
    assert got[9, 0] == FeatureSpec().clip


def test_causal_a_later_candle_or_a_later_level_changes_no_earlier_row():
    spec = FeatureSpec(levels=True)
    c = random_candles(3_000, seed=5, timeframe="1h")
    drawn = [level(c, i, float(c.close[i]) * (1 + s)) for i, s in
             ((100, 0.01), (700, -0.02), (1500, 0.03), (2500, -0.01))]
    base = make_features(c, spec, levels=Levels.of(drawn))
    for t in (600, 1_499, 2_999):
        moved = changed_after(c, int(c.ts[t]), seed=t, drop=0.0)
        later = Levels.of(drawn + ([level(moved, t + 1, float(moved.close[t]))]
                                   if t + 1 < len(c) else []))
        after = make_features(moved, spec, levels=later)
        np.testing.assert_array_equal(after[:t + 1], base[:t + 1])


def test_a_live_window_gives_the_full_historys_rows():
    spec = FeatureSpec(levels=True)
    c = random_candles(5_000, seed=6, timeframe="5m")
    levels = Levels.of([level(c, i, float(c.close[i]) * 1.005, "5m") for i in (10, 900, 4000)])
    full = make_features(c, spec, levels=levels)
    for start in (spec.warmup + 1, 2_000, 4_500):
        tail = make_features(c.slice(start - spec.warmup, len(c)), spec, levels=levels)
        np.testing.assert_array_equal(tail[spec.warmup:], full[start:])


def test_features_that_read_levels_refuse_to_run_without_them():
    c = random_candles(100, seed=7, timeframe="1h")
    with pytest.raises(WorkstationError, match="drawn levels"):
        make_features(c, FeatureSpec(levels=True))


def test_the_levels_come_from_the_markets_drawings_in_the_file(tmp_path):
    c = random_candles(100, seed=8, timeframe="1h")
    db = tmp_path / "a.sqlite"
    assert levels_for(FeatureSpec(), db, ETH) is None
    assert len(levels_for(FeatureSpec(levels=True), db, ETH)) == 0  # no file yet: none
    with AnnotationStore(db) as store:
        store.drawings.add(level(c, 5, 100.0))
        store.drawings.add(Drawing(shape="level", symbol="BTC/USDT", timeframe="1h",
                                   ts1=int(c.ts[5]), price1=5.0))
    got = levels_for(FeatureSpec(levels=True), db, ETH)
    assert got.price.tolist() == [100.0] and got.known_at.tolist() == [int(c.ts[6])]


def test_a_run_trained_on_levels_reads_them_again_to_predict(tmp_path, paths, capsys):
    import json

    from workstation.cli import main
    from workstation.market.csv_io import write_candles_csv
    from workstation.market.demo import demo_candles
    from workstation.market.timeframes import ONE_MINUTE
    from workstation.ml.checkpoints import CheckpointStore
    from workstation.ml.online import OnlineLearner, Predictor

    c = demo_candles(1500, ONE_MINUTE, seed=4, end_ts=1_700_000_040_000)
    path = write_candles_csv(c, tmp_path / "eth.csv")
    with AnnotationStore(paths.annotations_db) as store:
        for i, s in ((200, 1.01), (600, 0.99), (1100, 1.02)):
            store.drawings.add(level(c, i, float(c.close[i]) * s, "1m"))
    assert main(["train", "--source", f"csv:{path}", "--symbol", "ETH/USDT", "--seq-len", "32",
                 "--stride", "32", "--batch-size", "32", "--epochs", "1", "--threads", "1",
                 "--levels", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.splitlines()[-1])["run_id"]
    loaded = CheckpointStore(paths.checkpoints_dir).load(run_id)
    predictor = Predictor.from_checkpoint(loaded)
    assert predictor.feature_spec.levels and predictor.feature_spec.names[-2:] == LEVEL_NAMES
    with pytest.raises(WorkstationError, match="drawn levels"):
        predictor.predict(c)
    levels = levels_for(predictor.feature_spec, paths.annotations_db, ETH)
    assert len(levels) == 3
    assert 0 <= predictor.predict(c, levels=levels).position_confidence <= 1
    learner = OnlineLearner(weights=loaded, train=True)
    step = learner.on_closed_candle(c, levels=levels)  # live mode: its offers carry them
    assert step.prediction.ts == int(c.ts[c.n_closed - 1])
    learner.close()
    assert main(["predict", "--run", run_id, "--source", f"csv:{path}", "--symbol",
                 "ETH/USDT"]) == 0  # the command line reads the levels too


def test_the_training_forms_level_box_asks_for_them_and_follows_a_recorded_run(qtbot):
    from workstation.ui.training.settings_form import TrainingSettings

    form = TrainingSettings()
    qtbot.addWidget(form)
    assert form.request().feature_overrides["levels"] is None  # off: the default, none fed
    form.level_inputs.setChecked(True)
    request = form.request()
    assert request.feature_overrides["levels"] is True
    given = {k: v for k, v in request.feature_overrides.items() if v is not None}
    assert FeatureSpec(**given).levels
    form.apply_recorded("tiny", {}, {}, {"levels": False})
    assert not form.level_inputs.isChecked()
    form.apply_recorded("tiny", {}, {}, FeatureSpec(levels=True).to_dict())
    assert form.level_inputs.isChecked()
