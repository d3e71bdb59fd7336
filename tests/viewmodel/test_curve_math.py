"""The training curves' arithmetic without Qt (``viewmodel.curve_math``): TensorBoard's
smoothing, tick labels, the spacing of time ticks and the readout's numbers."""

import math

import numpy as np

from workstation.viewmodel.curve_math import (
    Smoother,
    elapsed_text,
    percent_value,
    smooth,
    tick_text,
    time_spacing,
    value_text,
)


def test_smoothing_is_tensorboards_debiased_moving_average():
    values = [2.0, 1.5, 1.8, 1.1, 0.9, 1.0]
    w = 0.6
    expected, last = [], 0.0
    for i, v in enumerate(values, 1):
        last = w * last + (1 - w) * v
        expected.append(last / (1 - w ** i))
    assert np.allclose(smooth(values, w), expected)
    assert smooth(values, w)[0] == values[0]  # the first point is not pulled towards 0
    assert np.allclose(smooth(values, 0.0), values)  # weight 0: the values
    state = Smoother(w)  # one value at a time: the same line
    assert np.allclose([state.add(v) for v in values], expected)
    assert len(smooth([], w)) == 0


def test_tick_labels_are_short():
    assert tick_text(0.00015, 0.00005) == "1.5e-4" and tick_text(12_500, 500) == "12.5k"
    assert tick_text(0.25, 0.05) == "0.25" and tick_text(3, 1) == "3"
    assert elapsed_text(3725) == "1:02:05" and elapsed_text(65.5, 0.5) == "1:05.5"
    assert tick_text(0, 1) == "0" and tick_text(math.nan, 1) == ""
    assert tick_text(20_000, 1000) == "20k" and elapsed_text(-65) == "-1:05"


def test_time_ticks_take_the_smallest_round_spacing_that_fits():
    assert time_spacing(60, 3) == 30  # 15 s would put 4 ticks on a minute
    assert time_spacing(60, 60) == 1
    assert time_spacing(3 * 3600, 4) == 3600
    assert time_spacing(1e7, 1) is None  # weeks: none of the round spacings


def test_readout_numbers_and_percentages():
    assert value_text(0.5) == "0.5000" and value_text(0) == "0.0000"
    assert value_text(123.456) == "123.5" and value_text(1e-4) == "1.000e-04"
    assert value_text(2.5e6) == "2.500e+06"
    assert percent_value(0.25) == 25.0 and percent_value(None) is None
