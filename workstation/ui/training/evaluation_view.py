"""The Evaluation tab of the training dock: walk-forward evaluation of the panel's settings.

Its settings are the folds (test spans, oldest first), the epochs each fold trains and the
seeds (models a fold); the run / stop command is the dock's (``train.evaluate``). While it runs
it says in words which fold trains and how far it is; each ``FoldScored`` adds a row per class
head (unadjusted), and ``EvaluationFinished`` puts every fold's rows again with their
Holm-adjusted verdicts and adds the pooled rows ("all"): accuracy, the best baseline and its
accuracy, the margin over it with its 95 % interval, the bootstrap's block length in days, the
verdict (``ml.scoring.VERDICTS``: "edge" only when the interval excludes 0 and the margin is
worth having; without an interval: too few days), whether it is the primary verdict or
adjusted, and the candles scored. A row's tooltip is the head's score in the CLI's words
(``ml.scoring.describe``), that of its baseline cells every baseline's accuracy
(``ml.scoring.describe_baselines``: the best of them all is the bar); below the table, how
far the trader's labels read ahead and the hindsight check (``ml.hindsight.describe_reach``).
Beneath, "Entries and exits": per fold and pooled ("all"), the position head's entries and
exits as events (``ml.entry_events``): the trader's and the model's counts, recall and
precision within ``EVENT_WINDOW`` candles each beside random events at the model's rate with
the margin's 95 % interval, and the median timing error; a row's tooltip says it in the CLI's
words (``entry_events.describe_match``). Where the evaluation also scored them against the
trader's blind marks only (``ml.blind_marks``), each fold's and the pooled entries and exits
are followed by the same rows "vs blind marks" ("—" throughout without a blind mark there).
Last, "Backtest of the test spans" (``backtest.walk_forward``, as ``workstation evaluate
--backtest``): each fold's model trades its own test span after the market's default costs,
every head that can signal at the default confidence beside the trader's blind marks, their
hindsight marks (where the spans hold a mark) and buy & hold, in the Backtest view's metrics
table (``ui.backtest.result_tables``), with the hindsight gap (hindsight minus blind: return,
win rate, mean trade) per fold and over every span ("all"). Between the labels' words and the
backtest, when the trader has marks, the likely label errors (``suspect_list``): the marks the
held-out models read otherwise, with keep / fix / delete on keys. Everything below the
settings scrolls. The "Ray cluster" setting says where the folds train (empty: in this process;
``local``: on a Ray cluster started here; else at that address); a fold that failed on Ray and
runs again is said in the progress line and the log.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...annotations.suspects import SuspectReport
from ...backtest.report import prices_line, summary
from ...backtest.walk_forward import WalkForwardBacktest
from ...display import NO_DATA, number, percent, points
from ...ml.blind_marks import NO_BLIND_MARKS, VS_BLIND, blind_of
from ...ml.config import DEFAULT_SEEDS
from ...ml.entry_events import EVENT_WINDOW, describe_match, interval_text, too_few_text
from ...ml.events import (
    BatchEnd,
    EpochEnd,
    EvaluationFinished,
    EventMatch,
    FoldRetried,
    FoldScored,
    FoldStarted,
    HeadScore,
    RunStarted,
    TradeEvents,
)
from ...ml.hindsight import describe_reach
from ...ml.scoring import EDGE, describe, describe_baselines, mark_words
from ...ml.targets import CLASS_HEADS, TRADER_HEADS
from ..backtest.result_tables import (
    GAP_TITLE,
    fill_gaps,
    fill_metrics,
    gap_table,
    metric_cell,
    metrics_table,
)
from ..tables import cell_texts, rows_table
from .suspect_list import SuspectList

log = logging.getLogger(__name__)
COLUMNS = ("Fold", "Head", "Accuracy", "Best baseline", "Baseline", "Margin", "95 % interval",
           "Block (days)", "Verdict", "Multiplicity", "n")
DEFAULT_FOLDS = 4
DEFAULT_EPOCHS = 3
TOO_FEW_DAYS = "too few days"
TOO_FEW_MARKS = "too few marks"
_EDGE_COLOR, _NO_EDGE_COLOR = QColor("#26a69a"), QColor("#9e9e9e")


def score_cells(score: HeadScore) -> tuple[str, ...]:
    """Accuracy, best baseline, its accuracy, margin, interval, block length, verdict,
    multiplicity and n of ``score``; with too few marks, "too few marks (n)" for the
    accuracy and the verdict, "—" between."""
    if score.marks is not None and score.too_few:
        few = f"{TOO_FEW_MARKS} ({mark_words(score.marks)})"
        return (few, *(NO_DATA,) * 5, TOO_FEW_MARKS, NO_DATA, f"{score.n:,}")
    interval = NO_DATA if score.interval is None else \
        f"[{score.interval[0] * 100:+.2f}, {score.interval[1] * 100:+.2f}] pp"
    verdict = score.verdict or (TOO_FEW_DAYS if score.margin is not None else NO_DATA)
    return (percent(score.accuracy), score.best_baseline or NO_DATA,
            percent(score.best_baseline_accuracy), points(score.margin), interval,
            number(score.block_days, ".1f"), verdict, score.multiplicity or NO_DATA,
            f"{score.n:,}")


EVENT_COLUMNS = ("Fold", "Events", "Trader", "Model", "Recall", "Random recall",
                 "Recall margin", "Recall 95 %", "Precision", "Random precision",
                 "Precision margin", "Precision 95 %", "Timing (candles)", "|Timing|")


def event_cells(m: EventMatch) -> tuple[str, ...]:
    """The trader's and the model's event counts, recall, its random baseline, margin and
    interval, the same of precision, and the median timing errors of ``m``; with too few
    trader's events "too few entries (n)" for the recall, "—" after it."""
    few = too_few_text(m)
    if few is not None:
        return (f"{m.true:,}", f"{m.predicted:,}", few, *(NO_DATA,) * 9)

    def bar(interval: tuple[float, float] | None) -> str:
        return TOO_FEW_DAYS if interval is None else f"{interval_text(interval)} pp"

    return (f"{m.true:,}", f"{m.predicted:,}", percent(m.recall), percent(m.random_recall),
            points(m.recall_margin), bar(m.recall_interval), percent(m.precision),
            percent(m.random_precision), points(m.precision_margin),
            bar(m.precision_interval) if m.precision_margin is not None else NO_DATA,
            number(m.timing, "+.1f"), number(m.abs_timing, ".1f"))


def blind_kind(kind: str) -> str:
    """The Events cell of a row against the blind marks ("entries vs blind marks")."""
    return f"{kind} {VS_BLIND}"


def blind_event_cells(m: EventMatch | None) -> tuple[str, ...]:
    """``event_cells`` of a match against the blind marks; "—" throughout without one."""
    return event_cells(m) if m is not None else (NO_DATA,) * (len(EVENT_COLUMNS) - 2)


def retry_words(event: FoldRetried) -> str:
    """A fold's Ray task that failed and runs again, in words."""
    return (f"fold {event.fold + 1} of {event.folds}, seed {event.seed}, failed on Ray "
            f"({event.message}); running it again (attempt {event.attempt})")


class EvaluationView(QWidget):
    """See the module docstring. ``run_button`` takes the dock's command; ``rows()`` gives the
    table's texts, ``event_rows()`` those of the entries and exits, ``backtest_metric`` and
    ``gap_rows()`` those of the backtest (``backtest``: the one shown, or None)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.folds = QSpinBox()
        self.folds.setRange(2, 50)
        self.folds.setValue(DEFAULT_FOLDS)
        self.folds.setToolTip("Test spans, oldest first: fold k trains on everything before "
                              "span k and is tested on it")
        self.epochs = QSpinBox()
        self.epochs.setRange(1, 10000)
        self.epochs.setValue(DEFAULT_EPOCHS)
        self.epochs.setToolTip("Epochs each fold trains (the best on its own validation slice "
                               "is the one tested)")
        self.seeds = QSpinBox()
        self.seeds.setRange(1, 100)
        self.seeds.setValue(DEFAULT_SEEDS)
        self.seeds.setToolTip("Models trained per fold (seeds seed, seed + 1, ...): the margin is "
                              "their mean and the interval covers their spread")
        self.ray = QLineEdit()
        self.ray.setPlaceholderText("this process")
        self.ray.setToolTip("Train every fold and seed as a task on a Ray cluster: empty, in "
                            "this process; local, on one started on this machine; otherwise "
                            "at this address (host:port). The scores are the same. Ray is an "
                            'optional extra: pip install "workstation[ray]"')
        self.run_button = QToolButton()
        self.run_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.run_button.setSizePolicy(QSizePolicy.Policy.Expanding,
                                      QSizePolicy.Policy.Preferred)
        self.progress = QLabel("Trains a fresh model per fold with the panel's settings on the "
                               "closed candles on screen, and tests it on the next span")
        self.progress.setWordWrap(True)
        self.progress.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = rows_table("evaluationTable", COLUMNS)
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.labels = QLabel()
        self.labels.setWordWrap(True)
        self.labels.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        events_title = QLabel(f"Entries and exits of the position head, within {EVENT_WINDOW} "
                              f"candles, beside random ones at the model's rate")
        events_title.setWordWrap(True)
        self.events_table = rows_table("entryEventsTable", EVENT_COLUMNS)
        self.backtest: WalkForwardBacktest | None = None
        self.backtest_title = QLabel("Backtest of the test spans, each traded by the fold's own "
                                     "model after costs, beside the trader's marks and "
                                     "buy & hold")
        self.backtest_title.setWordWrap(True)
        self.backtest_words = QLabel()
        self.backtest_words.setObjectName("evaluationBacktestAssumptions")
        self.backtest_words.setWordWrap(True)
        self.backtest_words.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse)
        self.backtest_metrics = metrics_table("evaluationBacktest")
        self.gap_title = QLabel(f"{GAP_TITLE}, per test span")
        self.gap_title.setWordWrap(True)
        self.gap = gap_table("evaluationHindsightGap")
        self.suspects = SuspectList()
        self._verdicts: dict[str, str | None] = {}
        form = QFormLayout()
        form.addRow("Folds", self.folds)
        form.addRow("Epochs per fold", self.epochs)
        form.addRow("Seeds per fold", self.seeds)
        form.addRow("Ray cluster", self.ray)
        top = QHBoxLayout()
        top.addLayout(form)
        top.addWidget(self.run_button, 1)
        self.table.setMinimumHeight(160)
        self.events_table.setMinimumHeight(120)
        results = QWidget()
        column = QVBoxLayout(results)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.table, 2)
        column.addWidget(events_title)
        column.addWidget(self.events_table, 1)
        column.addWidget(self.labels)
        column.addWidget(self.suspects)
        for widget in (self.backtest_title, self.backtest_words, self.backtest_metrics,
                       self.gap_title, self.gap):
            column.addWidget(widget)
        self._show_backtest(None)
        scroll = QScrollArea()
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidgetResizable(True)
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab: the tables inside it
        scroll.setWidget(results)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.progress)
        layout.addWidget(scroll, 1)
        self._folds = 0
        self._fold = 0  # the fold training now, 1-based
        self._scored = 0
        self._epochs: int | None = None

    def start(self, folds: int) -> None:
        """A new evaluation of ``folds`` folds: the table empties."""
        self.table.setRowCount(0)
        self.events_table.setRowCount(0)
        self.labels.clear()
        self.suspects.show_report(None)
        self._show_backtest(None)
        self._folds, self._fold, self._scored, self._epochs = folds, 0, 0, None
        self.progress.setText(f"preparing {folds} folds…")

    def set_settings_enabled(self, enabled: bool) -> None:
        self.folds.setEnabled(enabled)
        self.epochs.setEnabled(enabled)
        self.seeds.setEnabled(enabled)
        self.ray.setEnabled(enabled)

    def add_events(self, events) -> None:
        """The events of one delivery: progress, fold rows and the pooled rows."""
        for event in events:
            match event:
                case FoldStarted():
                    self._fold = event.fold + 1
                case FoldRetried():
                    text = retry_words(event)
                    log.warning("walk-forward evaluation: %s", text)
                    self.progress.setText(text)
                case RunStarted():
                    self._epochs = event.train_config.get("epochs")
                    self._say(f"training on {event.train_windows} windows "
                              f"({event.candles:,} candles)")
                case BatchEnd():
                    self._say(f"epoch {event.epoch + 1}/{self._epochs} · batch {event.batch}/"
                              f"{event.batches_per_epoch} · loss {number(event.metrics.loss)}")
                case EpochEnd():
                    self._say(f"epoch {event.epoch + 1}/{self._epochs} done · validation loss "
                              f"{number(event.val.loss)}")
                case FoldScored():
                    self._scored += 1
                    for head in CLASS_HEADS:
                        self._add_row(f"{event.fold + 1}/{event.folds}", head,
                                      event.heads[head])
                    if event.trade_events is not None:
                        self._add_events(f"{event.fold + 1}/{event.folds}", event.trade_events)
                    self._say(f"tested on candles {event.test[0]:,}–{event.test[1]:,} "
                              f"(epoch {event.epoch}; embargo {event.embargo_words})")
                case EvaluationFinished():
                    self.table.setRowCount(0)
                    for k, heads in enumerate(event.fold_heads):
                        for head in CLASS_HEADS:
                            self._add_row(f"{k + 1}/{event.folds}", head, heads[head])
                    for head in CLASS_HEADS:
                        self._add_row("all", head, event.summary[head])
                    self.events_table.setRowCount(0)
                    for k, events in enumerate(event.fold_trade_events):
                        self._add_events(f"{k + 1}/{event.folds}", events)
                    if event.trade_events is not None:
                        self._add_events("all", event.trade_events)
                    self.labels.setText("\n".join(describe_reach(r) for r in event.labels))
                    self._verdicts = {head: event.summary[head].verdict
                                      for head in TRADER_HEADS}
                    self.progress.setText(f"{event.folds} folds in {event.elapsed_s:.0f} s; "
                                          f"the rows \u201call\u201d pool every test span")
                case SuspectReport():
                    self.suspects.show_report(event, self._verdicts)
                case WalkForwardBacktest():
                    self._show_backtest(event)

    def failed(self, message: str) -> None:
        """Say that the evaluation failed, and why (the table holds what it scored)."""
        self.progress.setText(f"evaluation failed: {message}")

    def stopped(self) -> str:
        """Say that the evaluation was stopped (and what the table holds); returns the words."""
        text = (f"evaluation stopped in fold {max(self._fold, 1)} of {self._folds}: "
                f"{self._scored} scored fold{'s' if self._scored != 1 else ''} in the table, "
                f"no pooled rows")
        self.progress.setText(text)
        return text

    def rows(self) -> list[tuple[str, ...]]:
        return cell_texts(self.table)

    def event_rows(self) -> list[tuple[str, ...]]:
        return cell_texts(self.events_table)

    def backtest_metric(self, label: str, name: str) -> str:
        """The backtest's text for metric ``label`` of signal ``name``."""
        assert self.backtest is not None  # a backtest is shown
        return metric_cell(self.backtest_metrics, self.backtest.results, label, name)

    def gap_rows(self) -> list[tuple[str, ...]]:
        """The hindsight gap's texts, a tuple a span (none without marks on the spans)."""
        return cell_texts(self.gap)

    def _show_backtest(self, backtest: WalkForwardBacktest | None) -> None:
        """The backtest of the test spans, or nothing (hidden)."""
        self.backtest = backtest
        for widget in (self.backtest_title, self.backtest_words, self.backtest_metrics):
            widget.setVisible(backtest is not None)
        gaps = backtest is not None and bool(backtest.gaps)
        self.gap_title.setVisible(gaps)
        self.gap.setVisible(gaps)
        if backtest is None:
            self.backtest_metrics.clear()
            fill_gaps(self.gap, [])
            return
        first = backtest.results[0]
        lines = [*first.assumptions.lines(), prices_line(first),
                 *(f"{r.name}: {r.assumptions.sample}" for r in backtest.results),
                 summary(backtest.results)]
        self.backtest_words.setText("\n".join(lines))
        fill_metrics(self.backtest_metrics, backtest.results)
        fill_gaps(self.gap, backtest.gaps)

    def _say(self, text: str) -> None:
        self.progress.setText(f"fold {max(self._fold, 1)} of {self._folds}: {text}")

    def _add_row(self, fold: str, head: str, score: HeadScore) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        tip, every = describe(head, score), describe_baselines(score)
        for column, text in enumerate((fold, head, *score_cells(score))):
            item = QTableWidgetItem(text)
            item.setToolTip(every if COLUMNS[column] in ("Best baseline", "Baseline") else tip)
            if COLUMNS[column] == "Verdict" and score.verdict is not None:
                item.setForeground(_EDGE_COLOR if score.verdict == EDGE else _NO_EDGE_COLOR)
            if fold == "all":
                font = item.font()
                font.setBold(True)
                item.setFont(font)
            self.table.setItem(row, column, item)
        self.table.scrollToBottom()

    def _add_events(self, fold: str, events: TradeEvents) -> None:
        rows = [((fold, m.kind, *event_cells(m)), describe_match(m))
                for m in (events.entries, events.exits)]
        scored, blind = blind_of(events)
        if scored:
            pairs: tuple[tuple[str, EventMatch | None], ...] = (
                (events.entries.kind, None if blind is None else blind.entries),
                (events.exits.kind, None if blind is None else blind.exits))
            for kind, m in pairs:
                tip = f"{VS_BLIND}: " + (describe_match(m) if m is not None
                                         else f"{NO_DATA} ({NO_BLIND_MARKS})")
                rows.append(((fold, blind_kind(kind), *blind_event_cells(m)), tip))
        for texts, tip in rows:
            row = self.events_table.rowCount()
            self.events_table.insertRow(row)
            for column, text in enumerate(texts):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                if fold == "all":
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.events_table.setItem(row, column, item)
