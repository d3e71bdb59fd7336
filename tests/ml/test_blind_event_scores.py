"""The position head's entries and exits against the trader's blind marks only
(``ml.blind_marks``): the blind marks' own position target, the same scoring as against every
mark, "—" where no blind mark labels the span, pooled over spans, and in the Evaluation view
(``evaluate`` per fold and pooled: ``tests/ml/test_entry_events.py``'s tiny evaluation)."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.annotations.model import Region, Trade
from workstation.annotations.targets import trader_targets
from workstation.errors import WorkstationError
from workstation.market.timeframes import parse_timeframe
from workstation.ml.blind_marks import (
    NO_BLIND_MARKS,
    blind_position,
    blind_tallies,
    blind_trade_events,
    describe_blind_events,
    pooled_blind_events,
    with_blind,
)
from workstation.ml.entry_events import describe_match, span_tallies, trade_events
from workstation.ml.events import EvaluationFinished, FoldScored, HeadScore
from workstation.ml.targets import CLASS_HEADS, MASKED

HOUR = 3_600_000
TF = parse_timeframe("1h")
T0 = 1_700_000_000_000 - 1_700_000_000_000 % (24 * HOUR)  # a UTC midnight
MARGIN = 10


def marks(ts: np.ndarray, starts, length: int, *, blind_every: int = 2,
          reviewed: bool = True) -> list:
    """Trades of ``length`` candles from each start, long and short in turn, every
    ``blind_every``-th made blind (decided at its candles' closes); with ``reviewed`` a blind
    "reviewed" region over every candle (a replay's)."""
    out: list = []
    for k, start in enumerate(starts):
        entry, exit_ = int(ts[start]), int(ts[start + length])
        blind = {} if k % blind_every else {"blind": True,
                                            "decided_at": (entry + HOUR, exit_ + HOUR)}
        out.append(Trade(symbol="ETH/USDT", timeframe="1h",
                         direction="long" if k % 2 else "short", entry_ts=entry,
                         entry_price=100.0, exit_ts=exit_, exit_price=101.0, **blind))
    if reviewed:
        out.append(Region(symbol="ETH/USDT", timeframe="1h", start_ts=int(ts[0]),
                          end_ts=int(ts[-1]), label="reviewed", blind=True,
                          decided_at=(int(ts[0]) + HOUR, int(ts[-1]) + HOUR)))
    return out


def test_the_blind_target_is_the_blind_marks_alone_by_the_training_rule():
    ts = T0 + np.arange(60, dtype=np.int64) * HOUR
    annotations = marks(ts, (5, 30), 6, reviewed=False)  # the first blind, the second not
    everything = trader_targets(annotations, ts, TF, review_margin=MARGIN).position
    blind = blind_position(annotations, ts, TF, review_margin=MARGIN)
    alone = trader_targets(annotations[:1], ts, TF, review_margin=MARGIN).position
    assert blind.tolist() == alone.tolist()
    assert (blind[5:11] == everything[5:11]).all() and (blind[5:11] != 0).all()
    assert (blind[30:36] == MASKED).all() and (everything[30:36] != 0).all()  # hindsight
    unblinded = annotations[0].edited(exit_ts=annotations[0].exit_ts + HOUR)
    assert (blind_position([unblinded], ts, TF, review_margin=MARGIN) == MASKED).all()


def test_entries_and_exits_against_the_blind_marks_on_a_hand_built_case():
    n = 24 * 8
    ts = T0 + np.arange(n, dtype=np.int64) * HOUR
    annotations = marks(ts, range(6, 174, 12), 6)  # 14 trades, 7 of them blind
    truth = trader_targets(annotations, ts, TF, review_margin=MARGIN).position
    blind = blind_position(annotations, ts, TF, review_margin=MARGIN)
    assert (blind != MASKED).all()  # the replay's reviewed region covers every candle
    model = np.roll(truth, 1)  # every trade of the trader's, one candle late
    every = trade_events([span_tallies(truth, model, ts)])
    against_blind = blind_trade_events([(blind, model, ts)], seed=0)
    assert against_blind is not None
    for kind in ("entries", "exits"):
        m, b = getattr(every, kind), getattr(against_blind, kind)
        assert (m.true, m.predicted, m.found, m.made) == (14, 14, 14, 14)
        assert (b.true, b.predicted, b.found, b.made) == (7, 14, 7, 7)  # the hindsight ones
        assert b.recall == 1.0 and b.precision == 0.5 and b.timing == 1.0  # made no blind mark
    lines = describe_blind_events(against_blind)
    assert lines == [f"vs blind marks: {describe_match(m)}"
                     for m in (against_blind.entries, against_blind.exits)]


def test_without_a_blind_mark_there_is_nothing_to_score_a_dash():
    n = 24 * 4
    ts = T0 + np.arange(n, dtype=np.int64) * HOUR
    annotations = marks(ts, range(6, 80, 12), 6, blind_every=10 ** 6, reviewed=False)[1:]
    blind = blind_position(annotations, ts, TF, review_margin=MARGIN)
    assert (blind == MASKED).all()
    truth = trader_targets(annotations, ts, TF, review_margin=MARGIN).position
    assert blind_tallies(blind, truth, ts, seed=0) is None
    assert blind_trade_events([(blind, truth, ts)], seed=0) is None
    assert describe_blind_events(None) == [f"vs blind marks: — ({NO_BLIND_MARKS})"]
    # pooled: the spans that have blind marks only
    with_marks = marks(ts, range(6, 80, 12), 6)
    some = blind_position(with_marks, ts, TF, review_margin=MARGIN)
    tallies = blind_tallies(some, truth, ts, seed=3)
    assert tallies is not None
    assert pooled_blind_events([None, tallies], 3) == trade_events([tallies], 3)
    assert pooled_blind_events([None, None], 3) is None


def test_the_evaluation_view_shows_the_rows_against_the_blind_marks(qtbot):
    from workstation.ui.training.evaluation_view import (
        EVENT_COLUMNS,
        EvaluationView,
        blind_event_cells,
        blind_kind,
        event_cells,
    )

    n = 24 * 6
    ts = T0 + np.arange(n, dtype=np.int64) * HOUR
    annotations = marks(ts, range(6, 130, 12), 6)
    truth = trader_targets(annotations, ts, TF, review_margin=MARGIN).position
    model = np.roll(truth, 1)
    every = trade_events([span_tallies(truth, model, ts)])
    blind = blind_trade_events([(blind_position(annotations, ts, TF, review_margin=MARGIN),
                                 model, ts)], seed=0)
    assert blind is not None
    folds = (with_blind(every, blind), with_blind(every, None))  # fold 2: no blind mark
    heads = {head: HeadScore(None, 0) for head in CLASS_HEADS}
    view = EvaluationView()
    qtbot.addWidget(view)
    view.start(2)
    for k, events in enumerate(folds):
        view.add_events([FoldScored(k, 2, (0, 1), (1, 2), 0, 1, heads, trade_events=events)])
    dashes = ("—",) * (len(EVENT_COLUMNS) - 2)
    expected = [("1/2", "entries", *event_cells(every.entries)),
                ("1/2", "exits", *event_cells(every.exits)),
                ("1/2", blind_kind("entries"), *event_cells(blind.entries)),
                ("1/2", blind_kind("exits"), *event_cells(blind.exits)),
                ("2/2", "entries", *event_cells(every.entries)),
                ("2/2", "exits", *event_cells(every.exits)),
                ("2/2", "entries vs blind marks", *dashes),
                ("2/2", "exits vs blind marks", *dashes)]
    assert view.event_rows() == expected
    assert blind_event_cells(None) == dashes
    assert view.events_table.item(2, 0).toolTip() == f"vs blind marks: " \
        f"{describe_match(blind.entries)}"
    assert view.events_table.item(6, 0).toolTip() == f"vs blind marks: — ({NO_BLIND_MARKS})"
    view.add_events([EvaluationFinished(2, heads, 1.0, "position", (heads, heads),
                                        trade_events=with_blind(every, blind),
                                        fold_trade_events=folds)])
    rows = view.event_rows()
    assert rows[:8] == expected and rows[10:] == [("all", *row[1:]) for row in expected[2:4]]
    assert view.events_table.item(11, 0).font().bold()


def test_evaluate_takes_one_blind_position_a_candle():
    """(``tests/ml/test_entry_events.py``'s tiny evaluation scores its blind marks per fold and
    pooled through the CLI.)"""
    from workstation.market.sources import load_series
    from workstation.ml import job
    from workstation.ml.dataset import TrainingData
    from workstation.ml.evaluation import evaluate
    from workstation.ml.features import make_features
    from workstation.ml.targets import make_targets

    candles, key = load_series("demo", "ETH/USDT", TF, max_candles=400)
    annotations = marks(candles.ts, range(20, 380, 30), 12)
    plan = job.plan(job.TrainingRequest(preset="tiny", model_overrides={"seq_len": 16},
                                        device="cpu"), None)
    spec = plan.target_spec
    data = TrainingData(make_features(candles, plan.feature_spec, None),
                        make_targets(candles, spec, job.trader_labels(annotations, candles, spec)),
                        plan.feature_spec, spec, np.asarray(candles.ts, dtype=np.int64))
    blind = blind_position(annotations, candles.ts, TF, review_margin=spec.review_margin)
    with pytest.raises(WorkstationError, match="399 blind positions for 400 candles"):
        evaluate(data, plan.model_config, plan.train_config, folds=2, provenance=key.provenance,
                 on_event=lambda e: None, blind_position=blind[:-1])
