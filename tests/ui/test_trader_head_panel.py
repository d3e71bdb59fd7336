"""The trader's heads in the training dock: the suggested position on the live chart, each
accuracy beside its best baseline, and the validation confusion matrices (tiny preset, CPU,
real worker thread)."""

from __future__ import annotations

import re

from PySide6 import QtGui

from workstation.annotations.model import Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.ml.events import EpochEnd
from workstation.ml.scoring import describe
from workstation.ml.targets import CLASS_HEADS, CLASSES, TRADER_HEADS
from workstation.ui.chart.chart_widget import ChartWidget
from workstation.ui.training.confusion import NO_TARGETS
from workstation.ui.training.prediction_overlay import (
    CURRENT,
    badge_text,
    muted_color,
    position_text,
)

from conftest import WAIT_MS, demo_live

DEMO = {"market": "demo", "symbol": "DEMO/USDT", "timeframe": "1m"}


def mark_demo(paths, candles) -> None:
    """A reviewed stretch over the second half of the candles with two trades early in it
    and an uptrend region near its end (the gap before validation covers the region's
    look-ahead, so the trades train)."""
    n, ts, close = len(candles), candles.ts, candles.close

    def trade(direction, i, j):
        return Trade(**DEMO, direction=direction, entry_ts=int(ts[i]),
                     entry_price=float(close[i]), exit_ts=int(ts[j]),
                     exit_price=float(close[j]))

    with AnnotationStore(paths.annotations_db) as store:
        store.merge([Region(**DEMO, start_ts=int(ts[n // 2]), end_ts=int(ts[-1]),
                            label="reviewed"),
                     Region(**DEMO, start_ts=int(ts[n - 300]), end_ts=int(ts[n - 50]),
                            label="uptrend"),
                     trade("long", n // 2 + 20, n // 2 + 60),
                     trade("short", n // 2 + 100, n // 2 + 130)])


def test_live_mode_shows_the_suggested_position_on_the_chart(qtbot, make_dock, paths):
    live = demo_live(paths, n=800)
    chart = ChartWidget()
    qtbot.addWidget(chart)
    chart.resize(900, 500)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_candles(live.candles, live.key)
    dock = make_dock(live, chart)
    dock.start_live_training()
    qtbot.waitUntil(lambda: dock.events_seen["LiveStep"] >= 1 or dock.state == "failed",
                    timeout=WAIT_MS)
    p = dock.overlay.prediction
    badge = chart.overlays.badge
    assert badge is not None and badge.group == CURRENT
    assert position_text(p) == (f"suggested {p.position_label.upper()} "
                                f"{p.position_confidence:.0%}")
    # a fresh model was never validated: its suggestion says so, in the theme's grey
    assert badge.text == badge_text(p, None) == f"{position_text(p)} · not evaluated"
    assert re.fullmatch(r"suggested (FLAT|LONG|SHORT) \d+% · not evaluated", badge.text)
    assert badge.color.name() == muted_color(chart.colors)
    assert p.position_label in CLASSES["position"] and len(p.position_probs) == 3
    assert badge.text in dock.readout.text("live") and "the trader's head" in \
        dock.readout.text("live")
    assert badge.text in dock.detail

    # drawn at the top right corner of the price pane, in its colour
    qtbot.wait(10)
    image = chart.view.viewport().grab().toImage()
    pane = chart.price_view.sceneBoundingRect()
    right = chart.view.mapFromScene(pane.topRight())
    edge = QtGui.QColor(badge.color).rgb()
    corner = {image.pixel(right.x() - dx, right.y() + dy)
              for dx in range(8, 200) for dy in range(48, 75)}
    assert edge in corner

    dock.stop()
    qtbot.waitUntil(lambda: dock.state == "idle" and not dock.busy, timeout=WAIT_MS)
    assert chart.overlays.badge is None and dock.overlay.prediction is None


def test_each_validation_updates_the_confusion_matrices_and_the_baselines(qtbot, make_dock,
                                                                         paths):
    live = demo_live(paths)
    mark_demo(paths, live.candles)
    dock = make_dock(live, epochs=2)
    epochs: list[EpochEnd] = []
    dock.relay.delivered.connect(
        lambda items: epochs.extend(e for e in items if isinstance(e, EpochEnd)))
    dock.start_training()
    qtbot.waitUntil(lambda: dock.state in ("idle", "failed") and not dock.busy,
                    timeout=WAIT_MS)
    assert dock.state == "idle", dock.detail
    assert len(epochs) == 2
    last = epochs[-1].val
    for head in CLASS_HEADS:
        score, matrix = last.heads[head], dock.confusion.heads[head]
        assert matrix.counts == score.confusion and score.confusion is not None
        assert sum(map(sum, matrix.counts)) == score.n > 0
        names = CLASSES[head]
        assert [matrix.table.verticalHeaderItem(r).text() for r in range(3)] == list(names)
        first = matrix.table.item(0, 0)
        assert first.text().startswith(f"{score.confusion[0][0]:,}")
        assert f"true {names[0]}, predicted {names[0]}" in first.toolTip()
        assert matrix.caption.text() == f"validation, epoch 2: {describe(head, score)}"
        # the readout: the accuracy beside the best baseline, in the CLI's words
        assert describe("val", score) in dock.readout.text(head)
        if head in TRADER_HEADS:  # two trades, one region: too few marks, no percentage
            assert score.too_few and "too few marks (" in matrix.caption.text()
            assert "%" not in first.text() and score.best_baseline is None
        else:
            assert f"({score.best_baseline} " in dock.readout.text(head)
    for head in CLASS_HEADS:  # each head's curve beside its best and majority baselines
        score = last.heads[head]
        best, majority = (dock.curves.baselines[f"{head}_{kind}"] for kind in ("best",
                                                                               "majority"))
        assert best.name == score.best_baseline
        assert best.value == score.best_baseline_accuracy
        assert majority.value == score.baselines.get("majority")  # none: too few marks
        assert best.label in dock.curves.plots[head].legend_names()

    dock.settings.epochs.setValue(1)  # a new run starts with empty matrices
    dock.start_training()
    assert all(m.counts is None and m.caption.text() == NO_TARGETS
               for m in dock.confusion.heads.values())
    qtbot.waitUntil(lambda: dock.state in ("idle", "failed") and not dock.busy,
                    timeout=WAIT_MS)
