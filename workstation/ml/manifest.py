"""A run's manifest, ``run.json`` beside its checkpoints: everything that made it (torch is
imported only to record its version).

It records the model, training, feature and target settings, the seed, the code's versions,
the world size, and the data: the series, the span and count of its candles with a SHA-256 of
their values, and a SHA-256 of the trader's labels the run learned (position, regime and
reviewed per candle, made from the market's marks; none when it learned no marks).
``workstation train --config run.json`` plans the same run from it (``plan_of``) and trains it
only on data that hashes the same (``check_candles``, ``check_labels``): a changed candle or
mark is refused in words, never trained on silently.

The manifest is written once, when the run's folder is made (its first step); a resumed run
keeps it.
"""

from __future__ import annotations

import hashlib
import json
import platform
from pathlib import Path

import numpy as np

from .. import __version__
from ..atomic import atomic_write_text
from ..errors import WorkstationError
from ..market.candles import Candles
from ..market.series import SeriesKey

MANIFEST_NAME = "run.json"
MANIFEST_VERSION = 1
_SECTIONS = ("model", "training", "features", "targets", "data", "labels", "seed", "code",
             "world_size", "use_annotations", "device")


class ManifestError(WorkstationError):
    """A manifest that cannot be read or used, or data that differs from it."""


def candles_sha256(candles: Candles) -> str:
    """A SHA-256 of the candles' timeframe, times and values (little-endian bytes)."""
    digest = hashlib.sha256(str(candles.timeframe).encode())
    for column in (candles.ts, candles.open, candles.high, candles.low, candles.close,
                   candles.volume):
        digest.update(np.ascontiguousarray(column, dtype=column.dtype.newbyteorder("<"))
                      .tobytes())
    return digest.hexdigest()


def labels_sha256(position: np.ndarray, regime: np.ndarray, reviewed: np.ndarray) -> str:
    """A SHA-256 of the trader's labels per candle, as training uses them."""
    digest = hashlib.sha256()
    for column in (position, regime, reviewed):
        digest.update(np.ascontiguousarray(column, dtype=np.int8).tobytes())
    return digest.hexdigest()


def make_manifest(*, run_id: str | None, model: dict, training: dict, features: dict,
                  targets: dict, use_annotations: bool, device: str, series: SeriesKey,
                  candles: Candles, labels: str | None, annotations: int,
                  marks: str = "all", world_size: int = 1,
                  reference: tuple[SeriesKey, Candles] | None = None
                  ) -> dict:
    """The manifest of a run on ``candles`` of ``series`` (settings as their ``to_dict``);
    ``reference``: the reference asset's series and the span of its candles the run used."""
    import torch

    return {
        "manifest_version": MANIFEST_VERSION, "run_id": run_id,
        "model": model, "training": training, "features": features, "targets": targets,
        "use_annotations": use_annotations, "device": device, "seed": training.get("seed"),
        "world_size": world_size,
        "code": {"workstation": __version__, "torch": torch.__version__,
                 "python": platform.python_version(), "numpy": np.__version__},
        "data": _data_section(series, candles),
        "reference": _data_section(*reference) if reference is not None else None,
        "labels": {"market": str(series.market), "annotations": annotations,
                   "sha256": labels, "marks": marks},
    }


def _data_section(series: SeriesKey, candles: Candles) -> dict:
    return {"series": series.to_dict(), "provenance": series.provenance,
            "candles": len(candles),
            "first_ts": int(candles.ts[0]) if len(candles) else None,
            "last_ts": int(candles.ts[-1]) if len(candles) else None,
            "sha256": candles_sha256(candles)}


def write_manifest(run_dir: str | Path, manifest: dict) -> Path:
    """``run.json`` in ``run_dir``, written atomically unless the run already has one."""
    path = Path(run_dir) / MANIFEST_NAME
    if not path.exists():
        atomic_write_text(path, json.dumps(manifest, indent=2, allow_nan=False) + "\n")
    return path


def read_manifest(path: str | Path) -> dict:
    """A manifest file, checked: readable JSON, a version this code reads, every section."""
    path = Path(path)
    if path.is_dir():
        path = path / MANIFEST_NAME
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManifestError(f"run manifest {path} cannot be read: "
                            f"{exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" \
            if isinstance(exc, json.JSONDecodeError) else ""
        raise ManifestError(f"run manifest {path} is not valid JSON{where}") from None
    if not isinstance(manifest, dict):
        raise ManifestError(f"run manifest {path} is not a JSON object")
    version = manifest.get("manifest_version")
    if not isinstance(version, int) or version > MANIFEST_VERSION:
        raise ManifestError(f"run manifest {path} has version {version!r}; this Workstation "
                            f"reads version {MANIFEST_VERSION}")
    missing = [name for name in _SECTIONS if name not in manifest]
    if missing:
        raise ManifestError(f"run manifest {path} lacks {', '.join(missing)}")
    if not isinstance(manifest["data"], dict) or "series" not in manifest["data"]:
        raise ManifestError(f"run manifest {path}: its data section names no series")
    return manifest


def series_of(manifest: dict, section: str = "data") -> SeriesKey:
    """The series of the manifest's candles (``section`` "reference": of its reference's)."""
    try:
        return SeriesKey.from_dict(manifest[section]["series"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ManifestError(f"the run manifest's series cannot be read: {exc}") from None


def check_candles(manifest: dict, candles: Candles, section: str = "data") -> Candles:
    """The manifest's span of ``candles``, refused unless it is the very data the run had
    (``section`` "reference": the reference asset's candles)."""
    data = manifest[section]
    first, last = data.get("first_ts"), data.get("last_ts")
    if first is None or last is None:
        raise ManifestError("the run manifest records no candles")
    lo = int(np.searchsorted(candles.ts, int(first), side="left"))
    hi = int(np.searchsorted(candles.ts, int(last), side="right"))
    span = candles.slice(lo, hi)
    where = f"{data.get('provenance')} {_when(first)} .. {_when(last)}"
    if len(span) != data.get("candles"):
        raise ManifestError(f"the run was trained on {data.get('candles'):,} candles of "
                            f"{where}; this source has {len(span):,} there")
    if candles_sha256(span) != data.get("sha256"):
        raise ManifestError(f"the candles of {where} differ from the ones the run was trained "
                            "on (their SHA-256 does not match): it cannot be reproduced on them")
    return span


def check_labels(manifest: dict, labels: str | None) -> None:
    """Refuse marks that give other labels than the run learned."""
    recorded = manifest["labels"].get("sha256")
    if recorded != labels:
        had = "no marks" if recorded is None else "other marks"
        has = "none" if labels is None else "different labels"
        raise ManifestError(f"the run learned {had} of {manifest['labels'].get('market')} "
                            f"than the annotations here give ({has}): import the marks it "
                            "was trained on to reproduce it")


def _when(ms: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(int(ms) / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M")
