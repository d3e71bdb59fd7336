"""``workstation.display``: the one place numbers are written, "—" without data."""

import math

import pytest

from workstation import display


@pytest.mark.parametrize("missing", [None, math.nan, math.inf, -math.inf])
def test_no_value_reads_a_dash_in_every_format(missing):
    assert display.number(missing, ".0f", " ms") == display.NO_DATA
    assert display.percent(missing) == display.points(missing) == display.NO_DATA
    assert display.mebibytes(missing) == display.age(missing) == display.NO_DATA


def test_number_with_a_unit_and_memory_in_binary_units():
    assert display.number(12.4, ".0f", " ms") == "12 ms"
    assert display.number(-1.5, "+.2f", "%") == "-1.50%"
    assert display.number(1234, ",") == "1,234"
    assert display.mebibytes(512.4) == "512 MiB"
    assert display.mebibytes(1536) == "1.50 GiB"
