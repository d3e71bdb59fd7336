"""The Report tab: the run shown's teaching report, the very text ``workstation report``
prints, made off the GUI thread; no run shown and a failing report each say so."""

from __future__ import annotations

import json

from workstation.backtest.teaching_report import NO_HELD_OUT
from workstation.cli import main
from workstation.ui.training.report_view import HINT, NO_RUN, ReportView

WAIT_MS = 60_000  # a report on a loaded 2-core machine


def test_the_report_tab_shows_what_the_cli_prints_for_the_run_shown(qtbot, paths, capsys):
    assert main(["train", "--max-candles", "2000", "--seq-len", "32", "--batch-size", "32",
                 "--epochs", "1", "--threads", "1", "--json"]) == 0  # the demo market
    run_id = json.loads(capsys.readouterr().out.splitlines()[-1])["run_id"]
    assert main(["report", run_id]) == 0
    printed = capsys.readouterr().out.rstrip("\n")
    shown: list[str | None] = [None]
    view = ReportView(paths, lambda: shown[0])
    qtbot.addWidget(view)
    assert view.status.text() == HINT and view.text.isReadOnly()
    assert not view.refresh() and view.status.text() == NO_RUN

    shown[0] = run_id
    assert view.refresh() and view.busy and not view.button.isEnabled()
    assert not view.refresh()  # one report at a time
    qtbot.waitUntil(lambda: not view.busy, timeout=WAIT_MS)
    assert view.join(5.0)
    assert view.text.toPlainText() == printed
    assert printed.splitlines()[1] == f"WARNING: {NO_HELD_OUT}"
    assert view.status.text() == f"run {run_id}, as `workstation report {run_id}` prints it"
    assert view.button.isEnabled()

    shown[0] = "20200101-000000-000-abcd"
    assert view.refresh()
    qtbot.waitUntil(lambda: not view.busy, timeout=WAIT_MS)
    assert view.join(5.0)
    assert view.status.text() == (f"the report on run {shown[0]} failed: no run {shown[0]} "
                                  f"(see `workstation runs list`)")
    assert view.text.toPlainText() == ""
