"""Benchmarks behind ``workstation bench NAME``: every module here that defines
``register(bench_subparsers)`` adds one ``NAME``. Each prints ratios against a reference
measured in the same run, and one JSON object per case with ``--json``."""

import json


def report(cases: list[dict], as_json: bool, show_table) -> int:
    """Print one JSON object per case, or call ``show_table(cases)`` for the human table."""
    if as_json:
        for case in cases:
            print(json.dumps(case))
    else:
        show_table(cases)
    return 0
