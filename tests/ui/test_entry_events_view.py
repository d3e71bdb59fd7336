"""The Evaluation tab's "Entries and exits" section: a row per fold and kind from
``FoldScored``, every fold again and the pooled rows ("all") from ``EvaluationFinished``, in
the CLI's words on hover, and "too few entries (n)" without rates."""

from __future__ import annotations

import numpy as np

from workstation.ml.entry_events import (
    LONG,
    SHORT,
    describe_match,
    interval_text,
    span_tallies,
    trade_events,
)
from workstation.ml.events import EvaluationFinished, FoldScored, HeadScore
from workstation.ml.targets import CLASS_HEADS
from workstation.ui.training.evaluation_view import (
    EVENT_COLUMNS,
    EvaluationView,
    event_cells,
)

HOUR = 3_600_000


def span(n: int, every: int, late: int, start_ts: int):
    truth = np.zeros(n, dtype=np.int64)
    for k, start in enumerate(range(6, n - 12, every)):
        truth[start:start + 6] = LONG if k % 2 else SHORT
    ts = start_ts + np.arange(n, dtype=np.int64) * HOUR
    return span_tallies(truth, np.roll(truth, late), ts)


def test_the_section_shows_each_fold_then_the_pooled_rows(qtbot):
    view = EvaluationView()
    qtbot.addWidget(view)
    spans = [span(24 * 4, 12, 1, 0), span(24 * 2, 20, 0, 24 * 4 * HOUR)]
    folds = [trade_events([s]) for s in spans]
    assert folds[1].entries.true < 5  # too few in the second span
    heads = {head: HeadScore(None, 0) for head in CLASS_HEADS}
    view.start(2)
    for k, events in enumerate(folds):
        view.add_events([FoldScored(k, 2, (0, 1), (1, 2), 0, 1, heads, trade_events=events)])
    expected = [(f"{k + 1}/2", m.kind, *event_cells(m))
                for k, events in enumerate(folds) for m in (events.entries, events.exits)]
    assert view.event_rows() == expected
    pooled = trade_events(spans)
    view.add_events([EvaluationFinished(2, heads, 1.0, "position", (heads, heads),
                                        trade_events=pooled, fold_trade_events=tuple(folds))])
    rows = view.event_rows()
    assert rows == expected + [("all", m.kind, *event_cells(m))
                               for m in (pooled.entries, pooled.exits)]
    first, few = rows[0], rows[2]
    column = EVENT_COLUMNS.index
    assert first[column("Recall")] == "100.0%" and first[column("Timing (candles)")] == "+1.0"
    assert first[column("Recall 95 %")] == "too few days"  # four days in one span
    assert rows[-2][column("Recall 95 %")] == (  # six pooled
        f"{interval_text(pooled.entries.recall_interval)} pp")
    assert few[column("Recall")] == f"too few entries ({folds[1].entries.true})"
    assert set(few[column("Random recall"):]) == {"—"}
    table = view.events_table
    assert table.item(0, 0).toolTip() == describe_match(folds[0].entries)
    assert table.item(len(rows) - 1, 0).font().bold()
    view.start(2)
    assert view.event_rows() == []
