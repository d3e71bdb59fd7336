"""``workstation bench scale`` end to end on a short series (the numbers are not judged)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workstation.bench.scale import TARGETS, _compare, generated_candles, parse_size
from workstation.cli import main
from workstation.errors import WorkstationError
from workstation.market.candles import find_problem


def test_sizes_read_as_a_trader_writes_them():
    assert parse_size("31.5M") == 31_500_000 and parse_size("year") == 31_536_000
    assert parse_size("250k") == 250_000 and parse_size("12000") == 12_000
    for bad in ("lots", "1k", "M"):
        with pytest.raises(WorkstationError):
            parse_size(bad)


def test_the_generated_series_is_valid_one_second_candles():
    c = generated_candles(20_000)
    assert c.timeframe.name == "1s" and len(c) == 20_000
    assert np.all(np.diff(c.ts) == 1000)
    assert find_problem(*c.columns(), timeframe=c.timeframe) is None


def test_bench_scale_imports_and_reopens_in_fresh_processes(capsys, tmp_path):
    assert main(["bench", "scale", "--sizes", "20k", "--training-sizes", "none", "--repeats",
                 "1", "--reps", "3", "--ticks", "5", "--file", str(tmp_path / "none.csv"),
                 "--work", str(tmp_path / "work"), "--json"]) == 0
    (case,) = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    assert case["candles"] == 20_000 and case["data"] == "generated 1s"
    assert case["cache_bytes_per_candle"] >= 48  # six 8-byte columns, and the blocks' keys
    assert 0 < case["open_s"] <= case["reopen_s"] and case["all_reopen_s"] > 0
    assert case["rss_mb"] * 2**20 / 20_000 == pytest.approx(case["bytes_per_candle"], 1e-2)
    for field in ("pan_ms_median", "tick_ms_p95", "all_pan_ms_p95", "import_s"):
        assert case[field] > 0, field
    assert "batch_ms" not in case and "train_peak_mb" not in case
    # no 1M case to face, no second training length to grow from
    assert set(case["targets"]) == set(TARGETS) - {"chart_vs_1m", "train_growth",
                                                   "evaluate_growth"}
    assert (tmp_path / "work" / "gen_1s_20000.csv").exists()  # kept for the next run


def test_the_training_measurements_run_the_real_commands(tmp_path):
    from workstation.bench.scale import _batch, _command, _prepare

    csv = str(_prepare(tmp_path, 20_000, None)["csv"])
    home = str(tmp_path / "home")
    batch = _batch(csv, home)
    assert batch["batch_ms"] > 0 and batch["features_s"] > 0 and batch["batch_rss_mb"] > 0
    train = _command("train", csv, home, "1s", 600.0)
    assert train["train_s"] > 0 and train["train_peak_mb"] > 100  # torch and the data
    assert 50 < train["train_anon_peak_mb"] <= train["train_peak_mb"]
    with pytest.raises(WorkstationError, match="workstation evaluate exited with 1"):
        _command("evaluate", csv, home, "1h", 600.0)  # 20,000 s are 6 hours: too few folds


def test_growth_is_the_memory_each_added_candle_costs_and_faces_the_candles_own():
    def case(n, train, evaluate):
        return {"candles": n, "data": "generated 1s", "train_anon_peak_mb": train,
                "evaluate_anon_peak_mb": evaluate}

    cases = [case(1_000_000, 600.0, 1000.0), case(4_000_000, 600.0 + 3 * 40 / 1.048576,
                                                   1000.0 + 3 * 120 / 1.048576)]
    _compare(cases)
    longest = cases[1]
    assert longest["train_growth_bytes_per_candle"] == pytest.approx(40, abs=0.1)
    assert longest["evaluate_growth_bytes_per_candle"] == pytest.approx(120, abs=0.1)
    assert longest["targets"]["train_growth"] == {"target": 48.0, "met": True}
    assert longest["targets"]["evaluate_growth"] == {"target": 48.0, "met": False}
    assert "train_growth_bytes_per_candle" not in cases[0]
