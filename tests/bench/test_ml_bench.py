"""``workstation bench train`` / ``bench infer`` / ``bench features``: a tiny smoke run of each,
as JSON."""

from __future__ import annotations

import json
import math

from workstation.cli import main


def run_json(capsys, argv) -> list[dict]:
    assert main(argv) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_bench_train_prints_one_json_object_per_case(capsys):
    cases = run_json(capsys, ["bench", "train", "--preset", "tiny", "--device", "cpu",
                              "--seq-len", "32", "--batch-size", "4", "--steps", "2",
                              "--warmup", "1", "--threads", "1", "--json"])
    assert [c["case"] for c in cases] == ["reference", "optimized", "optimized+checkpointing",
                                          "trainer"]
    for c in cases:
        assert c["device"] == "cpu" and c["preset"] == "tiny"
        for key in ("ms_per_step", "samples_per_s", "mfu", "peak_mem_mb", "activation_mb"):
            assert c[key] > 0 and math.isfinite(c[key]), key
        assert c["peak_kind"].startswith("fp32 matmul, CPU")
        assert c["mfu_datasheet"] is None  # no datasheet peak for a CPU
    assert cases[3]["compiled"] is False  # the Trainer compiles on CUDA only, by default
    assert cases[3]["params"] == cases[1]["params"]
    assert cases[0]["speedup_vs_reference"] == 1.0
    assert cases[2]["activation_mb"] < cases[1]["activation_mb"]


def test_bench_infer_reports_latency_percentiles(capsys):
    cases = run_json(capsys, ["bench", "infer", "--preset", "tiny", "--device", "cpu",
                              "--seq-len", "32", "--runs", "10", "--threads", "1", "--json"])
    assert [c["case"] for c in cases] == ["reference", "infer", "infer+features", "predictor"]
    for c in cases:
        assert 0 < c["p50_ms"] <= c["p99_ms"] and c["samples_per_s"] > 0
        assert c["mfu"] > 0 and c["peak_mem_mb"] > 0


def test_bench_text_output_names_the_ratio(capsys):
    assert main(["bench", "infer", "--device", "cpu", "--seq-len", "16", "--runs", "5",
                 "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "speedup_vs_reference" in out and "fp32 matmul" in out


def test_bench_features_times_ours_beside_the_per_candle_reference(capsys):
    (case,) = run_json(capsys, ["bench", "features", "--candles", "3000",
                                "--reference-candles", "500", "--runs", "1", "--json"])
    assert case["case"] == "make_features" and case["candles"] == 3000
    assert case["finite"] and case["max_abs_diff"] < 1e-5  # the reference computes the same rows
    for key in ("seconds", "reference_seconds", "ratio_vs_reference"):
        assert case[key] > 0 and math.isfinite(case[key]), key
    assert isinstance(case["meets_target"], bool)
    assert main(["bench", "features", "--candles", "1000", "--reference-candles", "200",
                 "--runs", "1"]) == 0
    assert "per-candle Python loop over 200 candles" in capsys.readouterr().out


def test_building_the_cli_does_not_import_torch():
    """Every bench and command module is imported to build the parser; torch (seconds to
    import) must wait until a command that needs it runs."""
    import subprocess
    import sys

    code = ("import sys; from workstation.cli import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_unknown_preset_is_a_clear_error(capsys):
    assert main(["bench", "train", "--preset", "huge", "--device", "cpu"]) == 1
    assert "unknown model preset 'huge'" in capsys.readouterr().err
