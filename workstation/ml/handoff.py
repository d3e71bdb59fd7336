"""A run packed for another machine (``workstation runs export RUN --for-cluster DIR``).

The folder holds what ``train --config`` needs there and nothing else: the run's manifest
(``run.json``), the very candles it trained on (``candles.csv.gz``, checked against the
manifest's SHA-256 before they are written; its reference asset's in ``reference.csv.gz``
when its features read one) and its market's marks (``marks.json``, which
give the labels the manifest records), with ``train.sh``: the commands that import the marks
and start the run under ``torchrun`` (one process per node by default; set ``NPROC`` and the
rendezvous for more). Demo runs are refused: demo candles are made on each machine from its
own anchor, so another machine's would not be the same.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from ..atomic import atomic_write_text
from ..errors import WorkstationError
from ..market.candles import Candles
from .manifest import MANIFEST_NAME, check_candles, read_manifest, series_of

CANDLES_FILE = "candles.csv.gz"
REFERENCE_FILE = "reference.csv.gz"
MARKS_FILE = "marks.json"
SCRIPT_FILE = "train.sh"


@dataclass(frozen=True)
class Packed:
    folder: Path
    candles: int
    marks: int
    command: str


def train_command(series_symbol: str, timeframe: str, reference: bool = False) -> str:
    """The launch line ``train.sh`` runs (in the packed folder)."""
    return ("torchrun --nnodes \"${NNODES:-1}\" --nproc-per-node \"${NPROC:-1}\" "
            "--rdzv-backend c10d --rdzv-endpoint \"${RDZV:-localhost:29500}\" "
            f"-m workstation train --config {MANIFEST_NAME} --source csv:{CANDLES_FILE} "
            f"--symbol {shlex.quote(series_symbol)} --timeframe {timeframe}"
            + (f" --reference-source csv:{REFERENCE_FILE}" if reference else ""))


def pack_for_cluster(run_dir: Path, folder: Path, candles: Candles, annotations,
                     reference: Candles | None = None) -> Packed:
    """Write the run in ``run_dir`` into ``folder`` (see the module docstring); ``candles``:
    the series it trained on (any span containing its own), ``annotations``: its market's,
    ``reference``: its reference asset's candles (any span containing the run's) if it had one."""
    from ..annotations.io import write_json
    from ..market.csv_io import write_candles_csv

    manifest = read_manifest(run_dir)
    series = series_of(manifest)
    if series.is_demo:
        raise WorkstationError(f"run {manifest.get('run_id')} trained on demo candles, which each "
                               "machine makes from its own anchor: pack a run on real candles")
    span = check_candles(manifest, candles)
    reference_span = None
    if manifest.get("reference"):
        if reference is None:
            raise WorkstationError(f"run {manifest.get('run_id')} also read a reference asset: "
                                   "its candles are needed to pack it")
        reference_span = check_candles(manifest, reference, "reference")
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / MANIFEST_NAME, (run_dir / MANIFEST_NAME).read_text())
    write_candles_csv(span, folder / CANDLES_FILE)
    if reference_span is not None:
        write_candles_csv(reference_span, folder / REFERENCE_FILE)
    marks = write_json(list(annotations), folder / MARKS_FILE)
    command = train_command(series.symbol, series.timeframe.name, reference_span is not None)
    atomic_write_text(folder / SCRIPT_FILE, "\n".join([
        "#!/bin/sh",
        f"# run {manifest.get('run_id')} of {series.provenance}, packed by Workstation",
        "# NNODES, NPROC (processes per node) and RDZV (host:port of the rendezvous) may be set",
        "set -e",
        'cd "$(dirname "$0")"',
        'export WORKSTATION_HOME="${WORKSTATION_HOME:-$PWD/workstation-home}"',
        f"workstation annotations import {MARKS_FILE}",
        command, ""]))
    (folder / SCRIPT_FILE).chmod(0o700)
    return Packed(folder, len(span), marks, command)
