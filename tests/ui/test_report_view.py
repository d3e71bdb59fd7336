"""The Report tab: the run shown's teaching report, the very text ``workstation report``
prints, made off the GUI thread; no run shown and a failing report each say so."""

from __future__ import annotations

import json

from workstation.backtest.teaching_report import NO_HELD_OUT
from workstation.cli import main
from workstation.ui.training.report_view import HINT, ReportView
from workstation.ui.training.run_task_view import NO_RUN

WAIT_MS = 60_000  # a report on a loaded 2-core machine


def test_the_report_tab_shows_what_the_cli_prints_for_the_run_shown(qtbot, paths, capsys):
    assert main(["train", "--max-candles", "2000", "--seq-len", "32", "--batch-size", "32",
                 "--stride", "32", "--epochs", "1", "--threads", "1",
                 "--json"]) == 0  # the demo market
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


def test_a_run_on_a_file_is_reported_on_the_candles_on_screen(qtbot, paths, capsys, tmp_path):
    from workstation.market.csv_io import write_candles_csv
    from workstation.market.demo import demo_candles
    from workstation.market.sources import load_series
    from workstation.market.timeframes import ONE_MINUTE
    from workstation.ml.live import CandleSnapshot

    path = write_candles_csv(demo_candles(2000, ONE_MINUTE, seed=4, end_ts=1_700_000_040_000),
                             tmp_path / "eth.csv")
    assert main(["train", "--source", f"csv:{path}", "--symbol", "ETH/USDT", "--seq-len", "32",
                 "--stride", "32", "--batch-size", "32", "--epochs", "1", "--threads", "1",
                 "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.splitlines()[-1])["run_id"]
    assert main(["report", run_id, "--source", f"csv:{path}"]) == 0
    printed = capsys.readouterr().out.rstrip("\n")
    candles, key = load_series(f"csv:{path}", "ETH/USDT", ONE_MINUTE)
    view = ReportView(paths, lambda: run_id, lambda: (CandleSnapshot.of(candles), key))
    qtbot.addWidget(view)
    assert view.refresh()  # the run names the file only: the window's candles stand in
    qtbot.waitUntil(lambda: not view.busy, timeout=WAIT_MS)
    assert view.join(5.0)
    assert view.text.toPlainText() == printed, view.status.text()
