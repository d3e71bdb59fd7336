"""Live predictions on the chart, through its overlay API (``chart.overlays``).

One mark per predicted candle, in a lane along the bottom of the price pane under the candle
it is about, as wide as most of that candle and never under 9 px: the candle head's call for
that candle, ▲ up, ◆ flat or ▼ down in the chart theme's up, neutral and down colours
(``direction_colors``), paler the less sure the model was, never so pale that it loses its
contrast with the background (``MIN_OPACITY``). With outcomes shown (``O``), a mark whose
candle has closed is filled when the call was right and hollow when it was wrong. The
position head is the badge in the pane's top right corner, the position the model suggests
holding once the newest candle has closed, with that head's standing in the validation of
the checkpoint live mode loaded (``LiveReady.verdicts``, ``ml.head_verdicts``): "suggested LONG
72% · edge" in the position's colour; "· no edge shown" or "· not evaluated" (no verdict, or a
model never validated) muted, in the theme's grey (``muted_color``). A legend in a strip above
the plot (never over the candles) says all of that, gives each trader head's verdict and the
validation it came from, and each market head's rolling live accuracy beside its majority and
persistence baselines over the same candles (``ml.live.RollingAccuracy``, in both live modes).

The marks stay on the chart when live mode stops, and when it starts again, until the trader
clears them (``Shift+C``) or another series is shown; the badge goes when live mode stops (its
suggestion is about now).
"""

from __future__ import annotations

import numpy as np

from ...display import percent
from ...ml.events import LiveAccuracy, LiveReady, LiveStep
from ...ml.head_verdicts import NOT_EVALUATED, standing
from ...ml.live import RollingAccuracy
from ...ml.scoring import EDGE
from ...ml.targets import TRADER_HEADS
from ..chart.colors import ChartColors
from ..chart.overlays import LANE_SHAPES, LegendRow
from ..command_registry import create_command_actions

CURRENT = "prediction"  # the badge
MARKS = "prediction.marks"  # the lane marks
LEGEND = "prediction.legend"
MAX_MARKS = 2000  # the oldest marks are removed beyond this
DIRECTIONS = ("down", "flat", "up")  # the candle head's classes, in its order
_POSITION_COLORS = {"long": "#26a69a", "short": "#ef5350", "flat": "#9e9e9e"}
_SHAPES = np.array([LANE_SHAPES.index(d) for d in DIRECTIONS])  # the glyph of each class
MIN_OPACITY = 0.9  # of a mark whose call is no better than chance: 3:1 contrast in both themes
SURE = 0.8  # the confidence from which a mark is opaque
PENDING, WRONG, RIGHT = -1, 0, 1


def confidence_opacity(confidence: float, classes: int = 3) -> float:
    """A mark's opacity: ``MIN_OPACITY`` at chance (1 / ``classes``), rising to 1 at a
    confidence of ``SURE``."""
    chance = 1.0 / classes
    sure = min(max((float(confidence) - chance) / (SURE - chance), 0.0), 1.0)
    return MIN_OPACITY + (1.0 - MIN_OPACITY) * sure


def accuracy_text(score: LiveAccuracy, label: str) -> str:
    """``"candle 54% · majority 48% · persistence 51% (last 100)"`` (— without data)."""
    return (f"{label} {percent(score.accuracy, 0)} · majority {percent(score.majority, 0)} · "
            f"persistence {percent(score.persistence, 0)} (last {score.n})")


def direction_colors(colors: ChartColors) -> dict[str, str]:
    """The marks' colour of each call in a chart theme: its up and down colours, and its axis
    text for flat (a grey that keeps its contrast on either background)."""
    return {"up": colors.up, "flat": colors.axis_text, "down": colors.down}


def muted_color(colors: ChartColors) -> str:
    """The badge's colour when its head has shown no edge: the theme's crosshair grey."""
    return colors.crosshair


def verdicts_text(verdicts: dict[str, str | None], source: str | None,
                  trained: bool = False) -> str:
    """Each trader head's verdict and where it came from: ``"trader heads, validation of run
    R, epoch 3: position edge · regime no edge shown"``; ``trained``: live mode trains the
    model on, so the verdict is of the model it started from."""
    heads = " · ".join(f"{h} {verdicts.get(h) or NOT_EVALUATED}" for h in TRADER_HEADS)
    if source is None:
        return f"trader heads: {heads} (this model records no validation)"
    before = ", before per-candle training" if trained else ""
    return f"trader heads, {source}{before}: {heads}"


def legend_rows(accuracy: dict[str, LiveAccuracy], outcomes: bool, live: bool,
                trend_horizon: int | None = None,
                colors: ChartColors = ChartColors(),
                verdicts: str | None = None) -> tuple[LegendRow, ...]:
    """The legend: what the marks show (the candle head) and what the badge is (the position
    head), the outcomes toggle, each market head's rolling accuracy beside its baselines, in
    live mode the trader heads' ``verdicts`` (``verdicts_text``), and once live mode has
    stopped how to clear the marks."""
    palette = direction_colors(colors)
    glyphs = tuple((d, palette[d], False) for d in ("up", "flat", "down"))
    rows = [LegendRow("candle head: next candle up / flat / down, paler = less sure", None,
                      glyphs)]
    after = " · badge ↗: position head" if live else " · stopped: Shift+C clears"
    if outcomes:
        rows.append(LegendRow(f"right / wrong (O){after}", None,
                              (("up", "#bdbdbd", False), ("up", "#bdbdbd", True))))
    else:
        rows.append(LegendRow(f"O: show right / wrong{after}"))
    trend = f"{trend_horizon}-candle trend" if trend_horizon else "trend"
    for head, label in (("candle", "candle"), ("trend", trend)):
        if head in accuracy:
            rows.append(LegendRow(accuracy_text(accuracy[head], label)))
    if live and verdicts:
        rows.append(LegendRow(verdicts))
    return tuple(rows)


class PredictionOverlay:
    """Draws live steps on ``chart`` (see the module docstring): ``show_step`` takes an
    ``OnlineStep`` (``workstation.ml.online``) or the ``LiveStep`` event carrying one (whose
    rolling accuracy it then shows; for a bare step it scores the outcomes itself with the
    session's ``RollingAccuracy``). ``clear`` is called when live mode starts or ends and when
    another series is shown; ``clear_predictions`` is the trader's command.

    ``prediction``: the newest prediction while live mode runs (None otherwise); ``right`` /
    ``wrong``: how many of the marks on the chart were settled right / wrong; ``accuracy``: the
    rolling accuracy shown (head -> ``LiveAccuracy``); ``verdicts`` / ``verdict_source``: the
    trader heads' verdicts the badge shows, from the newest ``LiveReady`` (``show_ready``; none
    before it: not evaluated); ``show_outcomes``; ``command_actions``: the two commands'
    QActions (on the chart, also in its ``command_actions`` for the View menu)."""

    def __init__(self, chart, live_data=None):
        self.chart = chart
        self.live_data = live_data
        self.prediction = None
        self.accuracy: dict[str, LiveAccuracy] = {}
        self.verdicts: dict[str, str | None] = {}
        self.verdict_source: str | None = None
        self._trained = False  # live mode trains on: the verdicts are of its starting model
        self.show_outcomes = True
        self.live = False  # a live session is showing its steps
        self._scorer = RollingAccuracy()
        self._horizon: int | None = None
        self._shown_on = None  # the chart's candles the marks are drawn on
        # prediction ts -> [target ts, class, opacity, outcome], oldest first
        self._marks: dict[int, list] = {}
        self.command_actions = create_command_actions(chart, {
            "predictions.outcomes": self.toggle_outcomes,
            "predictions.clear": self.clear_predictions})
        outcomes = self.command_actions["predictions.outcomes"]
        outcomes.setCheckable(True)
        outcomes.setChecked(self.show_outcomes)
        chart_actions = getattr(chart, "command_actions", None)
        if isinstance(chart_actions, dict):
            chart_actions.update(self.command_actions)

    @property
    def overlays(self):
        return self.chart.overlays

    @property
    def right(self) -> int:
        return sum(1 for m in self._marks.values() if m[3] == RIGHT)

    @property
    def wrong(self) -> int:
        return sum(1 for m in self._marks.values() if m[3] == WRONG)

    @property
    def marks(self) -> int:
        """Predicted candles marked on the chart."""
        return len(self._marks)

    # -- what the dock calls ------------------------------------------------------------------
    def show_ready(self, ready: LiveReady) -> None:
        """A live session started: its model's verdicts replace the last session's."""
        self.verdicts = dict(ready.verdicts)
        self.verdict_source = ready.verdict_source
        self._trained = ready.train
        self._draw_badge()
        self._draw_legend()

    def show_step(self, step) -> None:
        """A live step: its prediction gets a mark (and the badge), its outcomes settle the
        marks of earlier ones, and the legend shows the rolling accuracy."""
        accuracy = None
        if isinstance(step, LiveStep):
            accuracy, step = step.accuracy, step.step
        self._follow_series()
        if not self.live:  # the first step of a session: its score starts over
            self.live = True
            self._scorer.reset()
        if accuracy is None:
            self._scorer.add(step.outcomes)
            accuracy = self._scorer.scores()
        self.accuracy = dict(accuracy)
        for outcome in step.outcomes:
            mark = self._marks.get(outcome.ts)
            if outcome.head == "candle" and mark is not None:
                mark[3] = RIGHT if outcome.correct else WRONG
        p = step.prediction
        self._horizon = p.trend_horizon
        self._marks.pop(p.ts, None)
        self._marks[p.ts] = [p.target_ts, DIRECTIONS.index(p.candle_label),
                             confidence_opacity(p.confidence), PENDING]
        while len(self._marks) > MAX_MARKS:
            del self._marks[next(iter(self._marks))]
        self.prediction = p
        self._draw_badge()
        self._draw_marks()
        self._draw_legend()

    def clear(self) -> None:
        """Live mode started, ended or another series is shown: the badge goes (and with
        another series the marks); the marks and the legend stay until ``clear_predictions``."""
        self.live = False
        self.prediction = None
        self.overlays.clear(CURRENT)
        self._follow_series()
        self._draw_legend()

    # -- the trader's commands ----------------------------------------------------------------
    def toggle_outcomes(self) -> None:
        self.set_show_outcomes(not self.show_outcomes)

    def set_show_outcomes(self, show: bool) -> None:
        self.show_outcomes = bool(show)
        self.command_actions["predictions.outcomes"].setChecked(self.show_outcomes)
        self._follow_series()
        self._draw_marks()
        self._draw_legend()

    def clear_predictions(self) -> None:
        """Remove every mark; in live mode the legend (and the session's score) stays."""
        self._marks.clear()
        self.overlays.set_lane_marks((), (), (), (), group=MARKS)
        if not self.live:
            self.accuracy = {}
        self._draw_legend()

    # -- drawing ------------------------------------------------------------------------------
    def _draw_badge(self) -> None:
        p = self.prediction
        if p is None:
            return
        verdict = self.verdicts.get("position")
        color = (_POSITION_COLORS[p.position_label] if standing(verdict) == EDGE
                 else muted_color(self.chart.colors))
        self.overlays.set_badge(badge_text(p, verdict), color, group=CURRENT)

    def _follow_series(self) -> None:
        """Marks belong to the candles they were drawn on: another series drops them (the chart
        has cleared its overlays already)."""
        shown = self.chart.candles
        if shown is not self._shown_on:
            self._shown_on = shown
            self._marks.clear()
            if not self.live:
                self.accuracy = {}
            self._draw_marks()

    def _draw_marks(self) -> None:
        marks, n = self._marks.values(), len(self._marks)

        def column(i: int, dtype) -> np.ndarray:
            return np.fromiter((m[i] for m in marks), dtype, n)

        cls = column(1, np.int64)
        palette = direction_colors(self.chart.colors)
        self.overlays.set_lane_marks(
            column(0, np.int64), _SHAPES[cls], cls, tuple(palette[d] for d in DIRECTIONS),
            opacity=column(2, np.float64),
            hollow=(column(3, np.int64) == WRONG) & self.show_outcomes, group=MARKS)

    def _draw_legend(self) -> None:
        if not self._marks and not self.live:
            self.overlays.set_legend((), group=LEGEND)
            return
        strip = self.overlays.legend_strip
        strip.set_colors(self.chart.colors.background, self.chart.colors.readout_text)
        verdicts = verdicts_text(self.verdicts, self.verdict_source, self._trained)
        self.overlays.set_legend(legend_rows(self.accuracy, self.show_outcomes, self.live,
                                             self._horizon, self.chart.colors, verdicts),
                                 group=LEGEND)


def position_text(p) -> str:
    """The suggestion of prediction ``p``: ``"suggested LONG 72%"``."""
    return f"suggested {p.position_label.upper()} {percent(p.position_confidence, 0)}"


def badge_text(p, verdict: str | None) -> str:
    """The badge: ``position_text`` and the position head's standing (``head_verdicts``):
    ``"suggested LONG 72% · no edge shown"``."""
    return f"{position_text(p)} · {standing(verdict)}"
