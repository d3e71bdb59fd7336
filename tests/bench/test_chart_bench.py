"""``workstation bench chart`` end to end on a small series (the numbers are not judged)."""

from __future__ import annotations

import json

from workstation.cli import main


def test_bench_chart_measures_each_renderer_and_view_and_the_ratio_to_ours(capsys):
    assert main(["bench", "chart", "--sizes", "3000", "--renderers", "workstation,qpicture",
                 "--reps", "3", "--ticks", "5", "--json"]) == 0
    cases = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert {(c["renderer"], c["view"]) for c in cases} == {
        (r, v) for r in ("workstation", "qpicture") for v in ("500", "all")}
    for c in cases:
        assert c["candles"] == 3000 and c["pan_n"] == 3 and c["tick_n"] == 5
        assert 0 < c["pan_ms_median"] <= c["pan_ms_p95"]
        assert c["pan_cpu_ms_median"] > 0 and c["peak_rss_mb"] > 0
        if c["renderer"] == "qpicture":  # measured against ours in the same run
            ours = next(o for o in cases if o["renderer"] == "workstation"
                        and o["view"] == c["view"])
            ratio = c["pan_ms_median"] / ours["pan_ms_median"]
            assert abs(c["pan_median_ratio"] - ratio) <= 0.051  # printed to one decimal
        else:
            assert c["visible"] == (500 if c["view"] == "500" else 2960)


def test_a_reference_that_ran_out_of_time_is_reported_incomplete_not_a_key_error():
    from workstation.bench.chart import TARGETS, _add_ratios, _table

    ours = {"renderer": "workstation", "candles": 1_000_000, "view": "500", "visible": 500,
            "first_paint_ms": 80.0, "pan_ms_median": 4.0, "pan_ms_p95": 9.0,
            "zoom_ms_median": 3.0, "zoom_ms_p95": 4.0, "jump_ms_median": 5.0,
            "tick_ms_median": 2.0, "tick_ms_p95": 3.0, "peak_rss_mb": 230.0, "pan_n": 20,
            "tick_n": 1000, "load_avg": 2.0, "pan_cpu_ms_median": 3.0,
            "zoom_cpu_ms_median": 2.0, "tick_cpu_ms_median": 1.0}
    timed_out = {"renderer": "finplot", "candles": 1_000_000, "view": "500",
                 "incomplete": "worker took longer than 600 s: nothing measured"}
    cases = [ours, timed_out]
    _add_ratios(cases)
    assert set(ours["targets"]) == set(TARGETS)  # no ratio to finplot is judged
    assert "finplot: reference incomplete" in ours["targets_not_judged"][0]
    text = _table(cases)
    assert "finplot at 1,000,000 candles, view 500: incomplete (worker took longer" in text
    assert "not judged against finplot: reference incomplete" in text
