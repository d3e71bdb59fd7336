"""``workstation bench startup``: runs fresh processes and reports one JSON case each."""

import json

from workstation.cli import main
from workstation.market.csv_io import write_candles_csv

from conftest import make_candles


def test_bench_startup_reports_window_and_reference(capsys):
    assert main(["bench", "startup", "--cases", "window", "--runs", "1", "--json"]) == 0
    case = json.loads(capsys.readouterr().out)
    assert case["case"] == "startup" and case["seconds"] > case["reference_seconds"] > 0
    assert case["training_state_when_shown"] == "preparing"  # torch warms up after the window
    assert isinstance(case["meets_target"], bool)


def test_bench_startup_times_a_files_first_and_second_opening(capsys, tmp_path):
    path = write_candles_csv(make_candles(5000), tmp_path / "ethusdt_1m.csv.gz")
    assert main(["bench", "startup", "--cases", "csv", "--runs", "1", "--csv", str(path),
                 "--json"]) == 0
    case = json.loads(capsys.readouterr().out)
    assert case["case"] == "csv open" and case["candles"] == 5000 and case["file"] == str(path)
    assert case["first_seconds"] > 0 and case["second_seconds"] > 0  # imported, then cached
    assert case["reference_seconds"] > 0 and "demo market" in case["reference"]
    assert case["target_seconds"] == 1.5 and isinstance(case["meets_target"], bool)
