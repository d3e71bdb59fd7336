"""``workstation.display``: the one place numbers are written, "—" without data."""

import math

import pytest

from workstation import display


@pytest.mark.parametrize("missing", [None, math.nan, math.inf, -math.inf])
def test_no_value_reads_a_dash_in_every_format(missing):
    assert display.number(missing, ".0f", " ms") == display.NO_DATA
    assert display.percent(missing) == display.points(missing) == display.NO_DATA
    assert display.mebibytes(missing) == display.age(missing) == display.NO_DATA
    assert display.size(missing) == display.file_size(missing) == display.NO_DATA
    assert display.volume(missing) == display.measure(missing) == display.NO_DATA
    assert display.significant(missing) == display.NO_DATA


def test_number_with_a_unit_and_memory_in_binary_units():
    assert display.number(12.4, ".0f", " ms") == "12 ms"
    assert display.number(-1.5, "+.2f", "%") == "-1.50%"
    assert display.number(1234, ",") == "1,234"
    assert display.mebibytes(512.4) == "512 MiB"
    assert display.mebibytes(1536) == "1.50 GiB"


def test_sizes_volumes_and_benchmark_figures():
    assert display.size(1_234_567) == "1.2 MB" and display.size(12) == "12 bytes"
    assert display.file_size(512) == "512 B" and display.file_size(1536) == "1.5 KB"
    assert display.file_size(3 * 1024**3) == "3.0 GB"
    assert display.volume(3200) == "3.20K" and display.volume(1_050_000) == "1.05M"
    assert display.volume(12.5) == "12.50" and display.volume(0.012345) == "0.01235"
    assert display.measure(3.14159) == "3.1" and display.measure(2.5, 2) == "2.50"
    assert display.measure(12_345.6) == "12,346"
    assert display.significant(0.012345) == "0.0123" and display.significant(98_765.4) == "98,765"
    assert display.significant(42) == "42" and display.significant("cpu") == "cpu"


def test_a_step_between_candles_reads_in_its_largest_whole_unit():
    assert [display.step(ms) for ms in (60_000, 7_200_000, 90_000, 86_400_000, 250)] == \
        ["1m", "2h", "90s", "1d", "250 ms"]
