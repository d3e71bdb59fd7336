"""Benchmarks behind ``workstation bench NAME``: every module here that defines
``register(bench_subparsers)`` adds one ``NAME``. Each prints ratios against a reference
measured in the same run, and one JSON object per case with ``--json``."""
