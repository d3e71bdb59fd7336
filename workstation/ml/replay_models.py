"""Which saved models may predict during a blind replay: only one that learned nothing the
replay clock hides.

A run may (``why_not_blind`` is None) when its manifest (``run.json``) records what it
learned and all of it ended by the clock: the last candle it used of its data, and of its
reference asset's, closed at or before the clock (on any series: a model of another asset
learned that asset's future, and assets move together; what a run held out after its
``train_until`` was never used for any choice, so it does not count), and its labels were no
trader's marks or blind marks only (``labels.marks == "blind"``): a hindsight mark was drawn
with the future in view, so a model taught on it learned from candles after the clock. A run
without a manifest (one saved by per-candle training, or an older one) records none of this
and may not.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import WorkstationError
from ..timeparse import format_minute
from .manifest import MANIFEST_NAME, read_manifest, series_of


def why_not_blind(manifest: dict, clock: int) -> str | None:
    """Why the run of ``manifest`` may not predict with the replay clock at ``clock`` (epoch
    ms), or None when it may (see the module docstring)."""
    run = manifest.get("run_id", "?")
    until = (manifest.get("training") or {}).get("train_until")
    for section in ("data", "reference"):
        data = manifest.get(section)
        if not data:
            continue
        last = data.get("last_ts")
        if last is None:
            return f"run {run} records no candles it learned"
        used = int(last) if until is None else min(int(last), int(until))
        closed = used + series_of(manifest, section).timeframe.ms
        if closed > clock:
            return (f"run {run} learned {data.get('provenance', '?')} up to "
                    f"{format_minute(closed)} UTC, after the replay clock "
                    f"({format_minute(clock)} UTC)")
    labels = manifest.get("labels") or {}
    if manifest.get("use_annotations") and labels.get("annotations") \
            and labels.get("marks") != "blind":
        return (f"run {run} learned the trader's hindsight marks, drawn with the future in "
                "view: train it on blind marks only (Marks: blind, --marks blind)")
    return None


def blind_run(folder: Path, run_ids: Iterable[str], clock: int
              ) -> tuple[str | None, str | None]:
    """The first of ``run_ids`` (runs in the checkpoint ``folder``, e.g.
    ``CheckpointStore.with_checkpoint``) that may predict with the clock at ``clock``, and
    None; or None and why the first of them may not (None, None without runs)."""
    first_reason = None
    for run_id in run_ids:
        path = folder / run_id / MANIFEST_NAME
        reason: str | None
        if not path.is_file():
            reason = (f"run {run_id} has no manifest ({MANIFEST_NAME}), so what it learned "
                      "is unknown")
        else:
            try:
                reason = why_not_blind(read_manifest(path), clock)
            except WorkstationError as exc:
                reason = str(exc)
        if reason is None:
            return run_id, None
        first_reason = first_reason or reason
    return None, first_reason
