"""The source grammar (``market.sources.parse_source``) the CLI, the window and the live data
share."""

import pytest

from workstation.errors import WorkstationError
from workstation.market.sources import SourceSpec, parse_source


@pytest.mark.parametrize("text, spec", [
    ("demo", SourceSpec("demo")),
    (" binance ", SourceSpec("exchange", "binance")),
    ("cache", SourceSpec("cache")),
    ("cache:bybit", SourceSpec("cache", "bybit")),
    ("csv:/data/eth 1m.csv", SourceSpec("file", "/data/eth 1m.csv")),
])
def test_each_form_of_the_grammar_names_its_source(text, spec):
    assert parse_source(text) == spec


@pytest.mark.parametrize("text, says", [
    ("", "no data source given"),
    ("  ", "no data source given"),
    ("csv:", "names no FILE"),
    ("cache:", "names no NAME"),
])
def test_text_that_names_no_source_is_one_line_error(text, says):
    with pytest.raises(WorkstationError, match=says) as err:
        parse_source(text)
    assert "\n" not in str(err.value)
