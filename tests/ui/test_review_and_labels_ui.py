"""Reviewed ranges with the keyboard, and what the trainer learns drawn in the chart's lanes:
real chart, store and annotation layer (the labels computed on their worker thread)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtGui

from workstation.annotations import store as store_module
from workstation.annotations.model import Region, Trade
from workstation.annotations.targets import DEFAULT_REVIEW_MARGIN, trader_targets
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.job import label_series
from workstation.ml.targets import MASKED, TargetSpec
from workstation.ui import command_registry
from workstation.ui.annotations.drawing import (
    LANES_PX,
    POSITION_LANE,
    RANGE_COLOR,
    REGIME_LANE,
    REVIEWED_COLOR,
    REVIEWED_LANE,
    REVIEWED_SHADE_ALPHA,
    STRIP_PX,
    mixed,
)

from conftest import Key, make_candles

COMMON = {"symbol": "ETH/USDT", "timeframe": "1m"}



def settled(host, targets: bool | None = None) -> None:
    """Wait for the labels the layer asks after its last change."""
    labels = host.layer.labels
    host.qtbot.waitUntil(lambda: labels.settled and labels.current is not None
                         and (targets is None or (labels.current.position is not None)
                              == targets), timeout=10_000)


def covered(runs, n: int) -> np.ndarray:
    """Per candle: the code of the run holding it (MASKED where none does)."""
    out = np.full(n, MASKED)
    for a, b, code in zip(runs.start.tolist(), runs.stop.tolist(), runs.code.tolist()):
        out[a:b + 1] = code
    return out


def lane_colors(host, candles, row: int) -> list[int]:
    """The colour at ``row`` from the pane's top over the centre of each candle of
    ``candles``."""
    chart = host.chart
    host.qtbot.wait(10)
    image = chart.view.viewport().grab().toImage()
    top = chart.view.mapFromScene(chart.price_view.sceneBoundingRect().topLeft()).y()
    out = []
    for i in candles:
        x = chart.view.mapFromScene(chart.price_view.mapViewToScene(
            QtCore.QPointF(float(i), 0.0))).x()
        out.append(image.pixel(x, top + row))
    return out


def rgb(color) -> int:
    return QtGui.QColor(color).rgb()


def trade(c, direction: str, i: int, j: int) -> Trade:
    return Trade(**COMMON, direction=direction, entry_ts=int(c.ts[i]),
                 entry_price=float(c.close[i]), exit_ts=int(c.ts[j]),
                 exit_price=float(c.close[j]))


def region(c, label: str, i: int, j: int) -> Region:
    return Region(**COMMON, start_ts=int(c.ts[i]), end_ts=int(c.ts[j]), label=label)


def test_m_then_4_marks_a_reviewed_range_shaded_in_its_own_colour(host):
    c = make_candles()
    host.cursor_to(60)
    host.press(Key.Key_M)
    assert "4 (reviewed)" in host.layer.last_message
    host.cursor_to(140)
    host.press(Key.Key_4)
    (found,) = host.layer.store.list()
    assert isinstance(found, Region) and found.label == "reviewed"
    assert (found.start_ts, found.end_ts) == (int(c.ts[60]), int(c.ts[140]))
    assert host.layer.last_message.endswith("as reviewed")
    assert host.layer.model.annotations() == [found]
    assert host.layer.command_actions["annotate.undo"].text() == "Undo add reviewed region"

    host.chart.fit_all()
    low = int(host.chart.price_view.sceneBoundingRect().height()) - 8  # under every candle
    shade = rgb(mixed(REVIEWED_COLOR, host.chart.colors.background, REVIEWED_SHADE_ALPHA))
    assert lane_colors(host, [100], low) == [shade]
    assert lane_colors(host, [200], low) != [shade]

    annotate = {text: keys for keys, text in dict(command_registry.cheat_sheet())["Annotate"]}
    assert annotate["Label mark…cursor as reviewed"] == "4"
    assert annotate["Show training labels"] == "T"


def test_the_lane_shows_the_candles_the_trainer_counts_as_reviewed(host):
    c = make_candles()
    host.cursor_to(200)
    host.press(Key.Key_L)
    host.cursor_to(230)
    host.press(Key.Key_X)
    host.layer.store.add(region(c, "reviewed", 40, 90))
    host.chart.fit_all()
    settled(host)
    labels = host.layer.labels.current
    n = labels.candles
    expected = trader_targets(host.layer.store.list(market=host.layer.market), c.ts[:n],
                              ONE_MINUTE).reviewed
    assert expected[40:91].all() and expected[200 - DEFAULT_REVIEW_MARGIN:231].all()
    assert (covered(labels.reviewed, n) == 0).tolist() == expected.tolist()
    assert labels.position is None  # the training labels are hidden

    row = REVIEWED_LANE * (STRIP_PX + 1) + 1
    inside = [55, 70, 85, 195, 215, 238]
    outside = [20, 120, 160, 300, 380]
    assert lane_colors(host, inside, row) == [rgb(REVIEWED_COLOR)] * len(inside)
    assert rgb(REVIEWED_COLOR) not in lane_colors(host, outside, row)

    legend = host.layer.graphics.legend
    assert "reviewed" in legend.toolTip() and f"± {DEFAULT_REVIEW_MARGIN} candles" in \
        legend.toolTip()
    pane = host.chart.price_view.sceneBoundingRect()
    assert legend.rect().top() == pane.top() and legend.rect().height() >= LANES_PX / 2
    top = host.chart.view.mapFromScene(pane.topLeft())  # the tooltip is the lanes', only
    assert legend in host.chart.view.items(top + QtCore.QPoint(300, 10))
    assert legend not in host.chart.view.items(top + QtCore.QPoint(300, 200))

    host.press(Key.Key_Z, QtCore.Qt.KeyboardModifier.ControlModifier)  # the trade goes
    host.qtbot.waitUntil(lambda: host.layer.labels.current is not labels, timeout=10_000)
    settled(host)
    assert rgb(REVIEWED_COLOR) not in lane_colors(host, [195, 215, 238], row)
    assert lane_colors(host, [55, 70, 85], row) == [rgb(REVIEWED_COLOR)] * 3


def test_the_labels_toggle_shows_the_trainers_position_and_regime(host):
    c = make_candles()
    host.layer.store.merge([trade(c, "long", 100, 130), trade(c, "short", 150, 170),
                            region(c, "reviewed", 80, 190), region(c, "uptrend", 250, 300)])
    host.chart.fit_all()
    settled(host)
    host.focus_chart()
    host.press(Key.Key_T)
    assert host.layer.labels_shown
    settled(host, targets=True)
    labels = host.layer.labels.current
    n = labels.candles
    expected = label_series(c.slice(0, n), host.live.key, TargetSpec(),
                            annotations_db=host.paths.annotations_db)
    assert covered(labels.position, n).tolist() == expected.targets.position.tolist()
    assert covered(labels.regime, n).tolist() == expected.targets.regime.tolist()
    assert set(expected.targets.position[90:180].tolist()) == {0, 1, 2}

    colors = host.chart.colors
    lane_colours = {rgb(RANGE_COLOR), rgb(colors.up), rgb(colors.down)}
    position_row = POSITION_LANE * (STRIP_PX + 1) + 2
    # flat before the long, long while held, short while held, flat after; none unreviewed
    # (where no lane is drawn, only the background: those candles lie low on the sine)
    assert lane_colors(host, [85, 115, 160, 185], position_row) == [
        rgb(RANGE_COLOR), rgb(colors.up), rgb(colors.down), rgb(RANGE_COLOR)]
    assert not lane_colours & set(lane_colors(host, [255, 270, 295], position_row))
    regime_row = REGIME_LANE * (STRIP_PX + 1) + 2
    assert lane_colors(host, [260, 290], regime_row) == [rgb(colors.up)] * 2
    assert not lane_colours & set(lane_colors(host, [95, 120, 140], regime_row))
    assert "position it learns" in host.layer.graphics.legend.toolTip()

    host.press(Key.Key_T)  # hidden again: the reviewed band stays
    assert not host.layer.labels_shown
    settled(host, targets=False)
    assert not lane_colours & set(lane_colors(host, [95, 105, 120, 130], position_row))
    assert lane_colors(host, [115], REVIEWED_LANE * (STRIP_PX + 1) + 1) == [
        rgb(REVIEWED_COLOR)]
    assert host.layer.settings.value("annotate/show_labels", type=bool) is False


def test_a_market_whose_trades_overlap_has_no_labels_and_says_why(host):
    c = make_candles()
    conn = host.layer.store._conn  # as an older release could leave them: straight in
    for t in (trade(c, "long", 10, 50), trade(c, "short", 30, 60)):
        conn.execute(store_module._INSERT, store_module._row(t))
    host.layer.reload()
    settled(host)
    labels = host.layer.labels.current
    assert labels.problem and "overlap" in labels.problem and not len(labels.reviewed)
    assert "Nothing is labelled" in host.layer.graphics.legend.toolTip()


def test_changes_that_keep_coming_still_get_labels(qtbot, paths, monkeypatch):
    """The labels are asked once for a burst of changes, but a stream of them (a fast
    replay) does not hold the answer back beyond ``MAX_DELAY_S``."""
    from workstation.ui.annotations import labels as labels_module
    from workstation.ui.live_data import LiveData

    now = [100.0]
    monkeypatch.setattr(labels_module.time, "monotonic", lambda: now[0])
    labels = labels_module.TrainerLabels(paths.annotations_db, LiveData(paths.candle_cache))
    restarts = []
    monkeypatch.setattr(labels._timer, "start", lambda: restarts.append(now[0]))
    monkeypatch.setattr(labels._timer, "isActive", lambda: bool(restarts))  # runs once started
    for _ in range(5):  # a burst: each change restarts the wait
        labels.schedule()
        now[0] += 0.1
    assert restarts == pytest.approx([100.0, 100.1, 100.2, 100.3, 100.4])
    now[0] = 100.0 + labels_module.MAX_DELAY_S + 0.1
    labels.schedule()  # the first change waits long enough: the timer is left to run out
    assert len(restarts) == 5
    labels.close()
