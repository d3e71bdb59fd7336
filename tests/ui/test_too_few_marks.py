"""A trader head with too few marks to score: the Confusion tab, the metric readout (live and
recorded) and the Evaluation tab's cells say "too few marks" and show no percentage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt

from workstation.ml.events import EpochEnd, MemoryStats, SplitMetrics
from workstation.ml.history.format import record_of
from workstation.ml.history.reader import History
from workstation.ml.scoring import scored_head
from workstation.ml.targets import MASKED
from workstation.ui.training.confusion import ConfusionMatrices
from workstation.ui.training.evaluation_view import score_cells
from workstation.ui.training.metric_readout import MetricReadout

N = 300
FEW = "too few marks (2 trades, 300 reviewed candles; need 5 and 200)"


def epoch_end() -> EpochEnd:
    """A validation whose position span holds two trades and whose candle head is scored."""
    days = np.arange(N) // 50
    truth = np.zeros(N, dtype=np.int64)
    truth[[40, 41, 200, 201, 202]] = [1, 1, 2, 2, 2]
    candle = np.arange(N) % 3
    heads = {"position": scored_head("position", truth, truth, {"majority": 0 * truth}, days)[0],
             "candle": scored_head("candle", candle, candle, {"majority": 0 * candle}, days)[0],
             "trend": scored_head("trend", np.full(N, MASKED), candle, {}, days)[0]}
    val = SplitMetrics(0.5, {}, heads, N, 4)
    return EpochEnd("run", 0, 4, 4, val, val, 1e-3, 1.0, MemoryStats("cpu", 1, None, None, 2),
                    True)


def test_the_confusion_tab_and_the_readout_say_too_few_marks(qtbot):
    event = epoch_end()
    matrices = ConfusionMatrices()
    qtbot.addWidget(matrices)
    matrices.show_epoch(event)
    position = matrices.heads["position"]
    assert position.caption.text() == f"validation, epoch 1: position: {FEW}"
    cells = [position.table.item(r, c).text() for r in range(3) for c in range(3)]
    assert cells == ["295", "0", "0", "0", "2", "0", "0", "0", "3"]  # counts, no share
    assert position.table.item(0, 0).background().style() == Qt.BrushStyle.NoBrush  # untinted
    assert "%" in matrices.heads["candle"].table.item(0, 0).text()  # a scored head's shares

    readout = MetricReadout()
    qtbot.addWidget(readout)
    readout.add_events([event])
    assert readout.text("position") == f"val: {FEW}"
    assert "%" in readout.text("candle") and readout.text("trend") == "—"

    record = dict(record_of(event), wall_s=1.0)
    readout.show_recorded(History(Path("history.jsonl"), epochs=[record]))
    assert readout.text("position") == f"val: {FEW} · recorded"
    assert readout.text("candle").startswith("val 100.0%")


def test_the_evaluation_cells_of_a_head_with_too_few_marks():
    score = epoch_end().val.heads["position"]
    assert score_cells(score) == ("too few marks (2 trades)", "—", "—", "—", "—", "—",
                                  "too few marks", "—", "300")
