"""``workstation bench chart`` end to end on a small series (the numbers are not judged)."""

from __future__ import annotations

import json

from workstation.cli import main


def test_bench_chart_measures_each_renderer_and_view_and_the_ratio_to_ours(capsys):
    assert main(["bench", "chart", "--sizes", "3000", "--renderers",
                 "workstation,indicators,qpicture", "--reps", "3", "--ticks", "5",
                 "--json"]) == 0
    cases = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert {(c["renderer"], c["view"]) for c in cases} == {
        (r, v) for r in ("workstation", "indicators", "qpicture") for v in ("500", "all")}
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
        if c["renderer"] == "indicators":  # five indicators against the plain chart
            plain = next(o for o in cases if o["renderer"] == "workstation"
                         and o["view"] == c["view"])
            assert c["indicator_cost_pan_ms_median"] == round(
                c["pan_ms_median"] / plain["pan_ms_median"], 2)
            assert set(c["indicator_targets"]) == {"pan_ms_median_within_1.25x_plain",
                                                   "tick_ms_median_within_1.25x_plain"}


def test_the_indicator_cost_is_judged_against_the_plain_chart_and_finplot():
    from workstation.bench.chart import _indicator_cost, _table

    base = {"candles": 1_000_000, "view": "500", "visible": 500, "first_paint_ms": 80.0,
            "pan_ms_p95": 9.0, "zoom_ms_median": 3.0, "zoom_ms_p95": 4.0,
            "jump_ms_median": 5.0, "tick_ms_p95": 3.0, "peak_rss_mb": 230.0, "pan_n": 20,
            "tick_n": 1000, "load_avg": 1.0, "zoom_cpu_ms_median": 2.0}
    plain = dict(base, renderer="workstation", pan_ms_median=4.0, tick_ms_median=2.0,
                 pan_cpu_ms_median=4.0, tick_cpu_ms_median=2.0)
    five = dict(base, renderer="indicators", pan_ms_median=4.8, tick_ms_median=3.0,
                pan_cpu_ms_median=4.4, tick_cpu_ms_median=2.4)
    finplot = dict(base, renderer="finplot", pan_ms_median=40.0, tick_ms_median=2.5,
                   pan_cpu_ms_median=40.0, tick_cpu_ms_median=2.5)
    _indicator_cost(five, plain, finplot)
    assert five["indicator_cost_pan_ms_median"] == 1.2
    assert five["indicator_targets"] == {
        "pan_ms_median_within_1.25x_plain": True, "tick_ms_median_within_1.25x_plain": False,
        "pan_ms_median_ahead_of_finplot": True, "tick_ms_median_ahead_of_finplot": False}
    text = _table([plain, five, finplot])
    assert ("five indicators / plain chart at 1,000,000 candles, view 500: pan 1.2x, "
            "tick 1.5x") in text
    assert ("indicator targets at 1,000,000 candles, view 500: 2 held; missed: "
            "tick_ms_median_within_1.25x_plain, tick_ms_median_ahead_of_finplot") in text


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
