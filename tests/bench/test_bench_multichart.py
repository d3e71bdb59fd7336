"""``workstation bench multichart`` end to end on a small series (the numbers are not judged),
and its report when the reference is missing or ran out of time."""

from __future__ import annotations

import json
import sys

from workstation.bench.multichart import TARGETS, _summary, _table
from workstation.cli import main


def test_bench_multichart_measures_four_linked_charts(capsys):
    # finplot is not installed here: its worker reports itself skipped, never a crash
    assert main(["bench", "multichart", "--candles", "100000", "--reps", "3", "--ticks", "4",
                 "--repeats", "1", "--finplot-python", sys.executable, "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    ours = next(r for r in rows if r.get("renderer") == "workstation")
    assert ours["timeframes"] == ["1m", "15m", "1h", "1d"] and ours["candles"] == 100_000
    assert ours["pan_n"] == 3 and ours["tick_n"] == 4 and "incomplete" not in ours
    assert 0 < ours["pan_ms_median"] <= ours["pan_ms_p95"]
    assert 0 < ours["tick_ms_median"] <= ours["tick_ms_p95"] and ours["peak_rss_mb"] > 0
    finplot = next(r for r in rows if r.get("renderer") == "finplot")
    assert "not importable" in finplot["skipped"]
    summary = next(r for r in rows if r.get("summary"))
    assert set(summary["targets"]) == set(TARGETS)
    assert summary["workstation_pan_ms_median_range"][0] == ours["pan_ms_median"]
    assert "pan_ratio" not in summary


def test_the_report_says_a_reference_is_incomplete_and_gives_ratios_of_what_was_measured():
    def case(renderer, run, pan, tick, **extra):
        return {"renderer": renderer, "run": run, "pan_ms_median": pan, "pan_ms_p95": pan * 2,
                "tick_ms_median": tick, "tick_ms_p95": tick * 2, "first_paint_ms": 100.0,
                "peak_rss_mb": 200.0, "pan_n": 40, "tick_n": 300, "load_avg": 1.0, **extra}

    cases = [case("workstation", 1, 8.0, 4.0), case("workstation", 2, 10.0, 5.0),
             case("finplot", 1, 80.0, 500.0, incomplete="stopped by the 20 s budget: tick 39 "
                                                        "of 300"),
             {"renderer": "finplot", "run": 2, "incomplete": "worker took longer than 600 s"}]
    summary = _summary(cases)
    assert summary["workstation_pan_ms_median_range"] == [8.0, 10.0]
    assert summary["pan_ratio"] == 8.9 and summary["tick_ratio"] == 111.1  # 80 / 9, 500 / 4.5
    assert summary["targets"]["pan_ms_median"] and not summary["targets"]["pan_ms_p95"]
    text = _table(cases, summary)
    assert "finplot: incomplete (worker took longer than 600 s)" in text
    assert "finplot: incomplete (stopped by the 20 s budget" in text
    assert "8.0-10.0" in text and "pan 8.9x" in text and "peak memory 1.0x" in text
    assert "held in: pan_ms_p95 1 of 2 runs" in text  # 16 ms held, 20 ms did not
