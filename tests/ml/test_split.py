"""Where a run's spans lie: validation carved from the marks (only at the start, only at the
end, in two stretches), training on both sides of it, the held-out span of train-until, the
counts per span, and a run whose training span holds no trade refused in one line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workstation.annotations.targets import TraderTargets
from workstation.errors import WorkstationError
from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.dataset import TrainingData, WindowSampler
from workstation.ml.split import (
    MARKS_RULE,
    MIN_VAL_REVIEWED,
    NO_MARKS_RULE,
    check_marks,
    describe_spans,
    plan_split,
    span_marks,
    spans_record,
    split_marks,
    until_index,
)
from workstation.ml.targets import MASKED, trade_starts

N, SEQ, GAP = 10_000, 50, 60
END = 1_700_000_040_000 - 1_700_000_040_000 % 60_000


def reviewed(*stretches: tuple[int, int], n: int = N) -> np.ndarray:
    out = np.zeros(n, dtype=bool)
    for a, b in stretches:
        out[a:b] = True
    return out


def test_without_marks_validation_is_the_end_of_the_candles():
    split = plan_split(N, SEQ, 0.1, GAP)
    assert split.val == (9000, N) and split.train == (0, 9000 - GAP)
    assert split.after is None and split.held_out is None
    assert split.rule == NO_MARKS_RULE.format(pct="10 %")


def test_marks_only_at_the_end_validate_on_the_last_tenth_of_them():
    split = plan_split(N, SEQ, 0.1, GAP, reviewed=reviewed((8000, N)))
    assert split.val == (9800, N)  # 10 % of the 2,000 reviewed candles
    assert split.train == (0, 9800 - GAP) and split.after is None
    assert split.rule == MARKS_RULE.format(pct="10 %")


def test_marks_only_at_the_start_train_the_market_heads_after_validation_too():
    split = plan_split(N, SEQ, 0.1, GAP, reviewed=reviewed((1000, 3000)))
    assert split.val == (2800, 3000) and split.train == (0, 2800 - GAP)
    assert split.after == (3000 + GAP, N)  # unreviewed: the market heads train on it
    mask = reviewed((1000, 3000))
    assert not mask[slice(*split.after)].any()
    assert split.train_spans == (split.train, split.after)
    windows = WindowSampler.over(split.train_spans, SEQ)
    starts = np.concatenate([windows.starts(e, seed=1).numpy() for e in range(5)])
    assert windows.n_windows == sum(WindowSampler(*s, SEQ).n_windows for s in split.train_spans)
    assert windows.n_windows > 180  # both spans: 2,740 and 6,940 candles
    for s in starts:  # no window reaches into the gap or the validation span
        assert s + SEQ <= split.train[1] or s >= split.after[0]


def test_marks_in_two_stretches_validate_on_the_end_of_the_second():
    mask = reviewed((1000, 2000), (6000, 7000))
    split = plan_split(N, SEQ, 0.1, GAP, reviewed=mask)
    assert split.val == (6800, 7000)  # 200 of the 2,000 reviewed candles
    assert mask[slice(*split.train)].sum() == 1740  # the first stretch, the second up to the gap
    assert split.after == (7000 + GAP, N)


def test_a_few_marks_validate_on_their_newest_twenty_and_too_few_before_are_refused():
    split = plan_split(N, SEQ, 0.1, GAP, reviewed=reviewed((5000, 5100)))
    assert split.val == (5100 - MIN_VAL_REVIEWED, 5100)  # 10 % would be 10 reviewed candles
    with pytest.raises(WorkstationError, match="mark trades later in the history"):
        plan_split(N, SEQ, 0.1, GAP, reviewed=reviewed((0, 100)))


def test_train_until_holds_out_the_later_candles_after_a_gap():
    ts = np.arange(N, dtype=np.int64) * 60_000 + END
    limit = until_index(ts, int(ts[7999]))
    assert limit == 8000
    split = plan_split(N, SEQ, 0.1, GAP, reviewed=reviewed((5000, N)), limit=limit)
    assert split.held_out == (8000 + GAP, N) and split.val[1] == 8000
    assert split.used == 8000
    with pytest.raises(WorkstationError, match="nothing would be held out"):
        until_index(ts, int(ts[-1]))
    with pytest.raises(WorkstationError, match="before the first candle"):
        until_index(ts, int(ts[0]) - 1)
    assert until_index(ts, None) == N


def test_the_single_span_sampler_draws_what_it_always_drew():
    one, over = WindowSampler(100, 5100, 64), WindowSampler.over(((100, 5100),), 64)
    for epoch in range(5):
        assert torch.equal(one.starts(epoch, seed=2), over.starts(epoch, seed=2))


def labelled(position_at: dict[int, int], n: int = 3000) -> TrainingData:
    """Demo candles whose trader labels are ``position_at`` (index -> class), every other
    candle unreviewed; a long trade = a run of class 1."""
    position = np.full(n, MASKED, dtype=np.int64)
    for i, c in position_at.items():
        position[i] = c
    regime = np.full(n, MASKED, dtype=np.int64)
    candles = demo_candles(n, ONE_MINUTE, seed=3, end_ts=END)
    return TrainingData.from_candles(candles, trader=TraderTargets(position, regime,
                                                                   position != MASKED))


def trades(*spans: tuple[int, int], flat: int = 5) -> dict[int, int]:
    """Long trades over ``spans``, each with ``flat`` reviewed flat candles either side."""
    out: dict[int, int] = {}
    for a, b in spans:
        out.update(dict.fromkeys(range(a - flat, b + flat), 0))
        out.update(dict.fromkeys(range(a, b), 1))
    return out


def test_the_counts_per_span_and_the_text_the_cli_and_window_share():
    data = labelled(trades(*[(1000 + 40 * k, 1020 + 40 * k) for k in range(30)]))
    assert trade_starts(data.targets.position).sum() == 30
    split = plan_split(len(data), SEQ, 0.1, GAP, reviewed=data.targets.reviewed())
    marks = split_marks(data.targets, split)
    # a trade that begins before a span counts in it too, where it is first seen
    in_gap = span_marks(data.targets, (split.train[1], split.val[0])).trades
    assert marks["train"].trades + in_gap + marks["validation"].trades == 31
    assert marks["train"].trades == 26
    assert marks["validation"].trades >= 2 and marks["train"].regions == 0
    assert marks["validation"].reviewed == span_marks(data.targets, split.val).reviewed
    assert check_marks(marks, split, data.ts) == ()
    lines = describe_spans(spans_record(split, marks, data.ts))
    assert lines[0].startswith("train: ") and lines[1].startswith("validation: ")
    assert f"{marks['train'].trades} trades, 0 regions" in lines[0]


def test_a_training_span_without_a_trade_is_refused_and_validation_without_one_warned():
    data = labelled(trades((2900, 2950)))  # one trade, at the end: validation takes it
    split = plan_split(len(data), SEQ, 0.1, GAP, reviewed=data.targets.reviewed())
    marks = split_marks(data.targets, split)
    with pytest.raises(WorkstationError, match=r"none of the 1 trades lies in the training "
                                               r"span .*mark trades earlier in the history"):
        check_marks(marks, split, data.ts)
    # trades early, and only flat candles reviewed at the end: a warning that stays
    marked = trades(*[(500 + 40 * k, 520 + 40 * k) for k in range(10)])
    marked.update(dict.fromkeys(range(2500, 2900), 0))
    data = labelled(marked)
    split = plan_split(len(data), SEQ, 0.1, GAP, reviewed=data.targets.reviewed())
    (warning,) = check_marks(split_marks(data.targets, split), split, data.ts)
    assert warning.startswith("the validation span (") and "holds no trade" in warning


def test_the_trainer_refuses_a_run_without_a_training_trade_but_a_fold_trains_on():
    import threading

    from workstation.ml.config import TrainConfig, preset_config
    from workstation.ml.trainer import Trainer

    data = labelled(trades((2900, 2950)))
    config = preset_config("tiny", seq_len=SEQ, n_features=data.features.shape[1])
    kwargs = dict(on_event=lambda e: None, stop=threading.Event(), provenance="test")
    with pytest.raises(WorkstationError, match="none of the 1 trades lies in the training"):
        Trainer(config, TrainConfig(epochs=1), data, "cpu", **kwargs)
    fold = Trainer(config, TrainConfig(epochs=1), data, "cpu", strict_marks=False, **kwargs)
    (warning,) = fold.warnings
    assert warning.startswith("none of the 1 trades")
    until = TrainConfig(epochs=1, train_until=int(data.ts[2000]))
    with pytest.raises(WorkstationError, match="1 held out after train until; mark trades "
                                               "earlier in the history, or train until a later"):
        Trainer(config, until, data, "cpu", **kwargs)
    data = labelled(trades(*[(500 + 40 * k, 520 + 40 * k) for k in range(20)], (2900, 2950)))
    run = Trainer(config, until, data, "cpu", **kwargs)
    assert run.split.held_out == (2001 + run.split.gap, len(data))
    assert run.marks["held out"].trades == 1 and run.marks["train"].trades > 15
    assert run._data_record()["held_out_first_ts"] == int(data.ts[2001 + run.split.gap])
    assert run._data_record()["last_ts"] == int(data.ts[2000])


def test_walk_forward_folds_with_marks_are_tested_inside_the_reviewed_stretch():
    from workstation.ml.folds import walk_forward_folds
    from workstation.ml.split import reviewed_stretch

    data = labelled(trades(*[(1500 + 40 * k, 1520 + 40 * k) for k in range(30)]))
    first, last = reviewed_stretch(data.targets)
    assert (first, last) == (1495, 1500 + 40 * 29 + 25)
    folds = walk_forward_folds(len(data), 2, 16, 10, within=(first, last))
    assert folds[0].test[0] > first and folds[-1].test[1] == last
    assert all(f.train[0] == 0 for f in folds)  # every candle before the stretch trains
    assert walk_forward_folds(len(data), 2, 16, 10)[-1].test[1] == len(data)
    assert reviewed_stretch(labelled({}).targets) is None


def test_the_trainers_gap_covers_the_longest_mark():
    import threading

    from workstation.ml.config import TrainConfig, preset_config
    from workstation.ml.trainer import Trainer

    data = labelled(trades((400, 700), *[(900 + 40 * k, 920 + 40 * k) for k in range(20)]))
    config = preset_config("tiny", seq_len=SEQ, n_features=data.features.shape[1])
    run = Trainer(config, TrainConfig(epochs=1), data, "cpu", on_event=lambda e: None,
                  stop=threading.Event(), provenance="test")
    assert run.split.gap == SEQ + 300  # the 300-candle trade reads 300 ahead at its entry
    assert run.split.val[0] - run.split.train[1] == run.split.gap
    assert f"gaps of {SEQ + 300} candles = {SEQ}-candle windows + the longest mark, 300 " \
        "candles" in run.split.rule


def test_train_show_spans_previews_the_spans_without_training(tmp_path, capsys):
    from workstation.annotations.model import Trade
    from workstation.annotations.store import AnnotationStore
    from workstation.cli import main
    from workstation.market.csv_io import write_candles_csv
    from workstation.paths import app_paths

    candles = demo_candles(3000, ONE_MINUTE, seed=3, end_ts=END)
    path = write_candles_csv(candles, tmp_path / "eth.csv")
    ts, close = candles.ts, candles.close
    with AnnotationStore(app_paths().annotations_db) as store:
        for k in range(12):
            i = 500 + 150 * k
            store.add(Trade(symbol="ETH/USDT", timeframe="1m", direction="long",
                            entry_ts=int(ts[i]), entry_price=float(close[i]),
                            exit_ts=int(ts[i + 40]), exit_price=float(close[i + 40])))
    argv = ["train", "--source", f"csv:{path}", "--symbol", "ETH/USDT", "--seq-len", "32",
            "--stride", "32", "--show-spans"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "a run on 3,000 candles of csv:eth.csv ETH/USDT 1m would have:"
    assert out[1].startswith("  train: ") and " trades, 0 regions, " in out[1]
    assert out[2].startswith("  validation: ")
    assert out[3].startswith("  train after validation: ") and out[3].endswith(
        ", no marks (it trains the market heads)")
    assert out[4].startswith("  (the validation span is the last 10 % of the reviewed candles")
    assert not list(app_paths().checkpoints_dir.glob("*/*"))  # nothing trained or saved
    assert main([*argv, "--train-until", str(int(ts[600]))]) == 1
    assert "a run would be refused: " in capsys.readouterr().err
