"""``workstation bench gui``: a short smoke run through the real CLI (tiny preset, CPU)."""

from __future__ import annotations

import json

from workstation.cli import main


def test_bench_gui_prints_one_json_object_per_case(qapp, capsys):
    status = main(["bench", "gui", "--json", "--seconds", "1", "--idle-seconds", "0.3",
                   "--presets", "tiny", "--candles", "3000"])
    assert status == 0
    cases = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    assert [c["case"] for c in cases] == ["idle (reference)", "training tiny on cpu"]
    for case in cases:
        assert case["ticks"] >= 2  # timings measured (judged by the bench, not here)
        assert 0 <= case["p50_ms"] <= case["p99_ms"] <= case["max_ms"]
    training = cases[1]
    assert training["target_max_ms"] == 50.0
    assert isinstance(training["meets_target"], bool)
    assert training["p99_ratio_vs_idle"] > 0
