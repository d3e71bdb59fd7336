"""``workstation bench startup``: runs fresh processes and reports one JSON case."""

import json

from workstation.cli import main


def test_bench_startup_reports_window_and_reference(capsys):
    assert main(["bench", "startup", "--runs", "1", "--json"]) == 0
    case = json.loads(capsys.readouterr().out)
    assert case["case"] == "startup" and case["seconds"] > case["reference_seconds"] > 0
    assert case["training_state_when_shown"] == "preparing"  # torch warms up after the window
    assert isinstance(case["meets_target"], bool)
