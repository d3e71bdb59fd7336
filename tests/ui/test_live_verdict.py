"""The live suggestion carries its verdict: the badge of a position head with an edge is drawn
in the position's colour and says "edge"; one without a shown edge, or never evaluated, is
drawn in the theme's grey and says so; the legend names each trader head's verdict and the
validation it came from; a new live session's ``LiveReady`` replaces the last one's. Real tiny
model steps on a real chart offscreen, pixels read back from it."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtGui

from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.events import LiveReady
from workstation.ml.scoring import EDGE, NO_EDGE, SMALL_EDGE
from workstation.ui.theme import CHART_COLORS
from workstation.ui.training.prediction_overlay import (
    _POSITION_COLORS,
    CURRENT,
    LEGEND,
    PredictionOverlay,
    badge_text,
    muted_color,
    position_text,
    verdicts_text,
)

from conftest import shown_chart, tiny_live_steps

KEY = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
N = 120
SOURCE = "validation of run 20240101-120000-abc, epoch 3"


def ready(position: str | None, regime: str | None = None, source: str | None = SOURCE,
          train: bool = False) -> LiveReady:
    return LiveReady("20240101-120000-abc", "cpu", train, 100, 16, 5, None,
                     {"position": position, "regime": regime}, source)


@pytest.fixture(scope="module")
def live_steps():
    """Three steps of a tiny model on the last candles of the chart."""
    return tiny_live_steps(N, 3, train=False)


@pytest.fixture
def chart(qtbot, live_steps):
    widget = shown_chart(qtbot, 900, 500)
    widget.set_candles(live_steps[0], KEY)
    return widget


def corner(qtbot, chart) -> dict[tuple[int, int], int]:
    """The colour of each pixel at the price pane's top right corner, where the badge is."""
    qtbot.wait(1)
    QtCore.QCoreApplication.processEvents()
    image = chart.view.viewport().grab().toImage()
    right = chart.view.mapFromScene(chart.price_view.sceneBoundingRect().topRight())
    return {(dx, dy): image.pixel(right.x() - dx, right.y() + dy)
            for dx in range(8, 320) for dy in range(48, 75)}


def badge_pixels(qtbot, chart) -> set[int]:
    """The colours the badge painted: the corner's pixels that change when it goes."""
    shown = corner(qtbot, chart)
    chart.overlays.clear(CURRENT)
    gone = corner(qtbot, chart)
    return {c for xy, c in shown.items() if gone[xy] != c}


def rgb(color) -> int:
    return QtGui.QColor(color).rgb()


@pytest.mark.parametrize("verdict, says, muted", [
    (EDGE, "edge", False), (NO_EDGE, "no edge shown", True),
    (SMALL_EDGE, "no edge shown", True), (None, "not evaluated", True)])
def test_the_badge_shows_the_position_heads_verdict(qtbot, chart, live_steps, verdict, says,
                                                    muted):
    _, steps = live_steps
    overlay = PredictionOverlay(chart)
    overlay.show_ready(ready(verdict, EDGE))
    for step in steps:
        overlay.show_step(step)
    p = steps[-1].prediction
    badge = chart.overlays.badges[CURRENT]
    assert badge.text == badge_text(p, verdict) == f"{position_text(p)} · {says}"
    position = _POSITION_COLORS[p.position_label]
    grey = muted_color(chart.colors)
    assert grey == chart.colors.crosshair and rgb(grey) != rgb(position)
    assert badge.color.name() == (grey if muted else position)
    pixels = badge_pixels(qtbot, chart)
    assert rgb(badge.color) in pixels
    assert (rgb(position) in pixels) is not muted
    # the legend: each trader head's verdict, and the validation it came from
    rows = [r.text for r in chart.overlays.legend.rows]
    assert chart.overlays.legend.group == LEGEND
    text = f"trader heads, {SOURCE}: position {verdict or 'not evaluated'} · regime {EDGE}"
    assert text in rows and text == verdicts_text(overlay.verdicts, SOURCE)


def test_a_model_without_validation_and_one_trained_on_say_so():
    assert verdicts_text({}, None) == ("trader heads: position not evaluated · regime not "
                                       "evaluated (this model records no validation)")
    assert verdicts_text({"position": EDGE, "regime": None}, SOURCE, trained=True) == (
        f"trader heads, {SOURCE}, before per-candle training: position edge · regime not "
        f"evaluated")


def test_a_bare_step_without_a_session_is_not_evaluated(chart, live_steps):
    _, steps = live_steps
    overlay = PredictionOverlay(chart)
    overlay.show_step(steps[0])
    badge = chart.overlays.badges[CURRENT]
    assert badge.text.endswith("· not evaluated")
    assert badge.color.name() == muted_color(chart.colors)


def test_a_new_live_session_brings_its_own_verdicts(chart, live_steps):
    _, steps = live_steps
    overlay = PredictionOverlay(chart)
    overlay.show_ready(ready(EDGE))
    overlay.show_step(steps[0])
    p = steps[0].prediction
    assert chart.overlays.badges[CURRENT].color.name() == _POSITION_COLORS[p.position_label]
    # the verdicts arrive while a suggestion is shown: the badge follows at once
    overlay.show_ready(ready(NO_EDGE))
    assert chart.overlays.badges[CURRENT].text.endswith("· no edge shown")
    # live mode ends; a run of a model never validated starts
    overlay.clear()
    assert CURRENT not in chart.overlays.badges
    overlay.show_ready(ready(None, None, None, train=True))
    assert overlay.verdicts == {"position": None, "regime": None}
    overlay.show_step(steps[1])
    badge = chart.overlays.badges[CURRENT]
    assert badge.text == badge_text(steps[1].prediction, None)
    assert badge.color.name() == muted_color(chart.colors)
    assert verdicts_text({}, None) in [r.text for r in chart.overlays.legend.rows]


def test_the_muted_grey_follows_the_theme(chart, live_steps):
    _, steps = live_steps
    chart.set_colors(CHART_COLORS["light"])
    overlay = PredictionOverlay(chart)
    overlay.show_ready(ready(NO_EDGE))
    overlay.show_step(steps[0])
    light = CHART_COLORS["light"].crosshair
    assert light != CHART_COLORS["dark"].crosshair
    assert chart.overlays.badges[CURRENT].color.name() == light
