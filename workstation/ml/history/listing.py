"""Every run of a checkpoint store as ``runs list`` and the run list show it
(``RunSummary``, ``summarize``, ``list_runs``): newest first; a run whose history cannot be
read shows why instead, and a run whose checkpoint fails the store's check says so."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..checkpoints import CheckpointError, read_meta
from .format import HistoryError, has_history, preset_of
from .reader import read_history


@dataclass(frozen=True)
class RunSummary:
    """One run as ``runs list`` shows it. ``problem`` says why its history could not be read
    (or that it has none); the other fields are then what its checkpoint says, if anything.
    ``damaged`` says why its checkpoint fails ``CheckpointStore.problem`` (None: it passes, or
    the run has no checkpoint yet)."""

    run_id: str
    model: str
    started: int | None
    provenance: str | None
    preset: str | None
    steps: int | None
    epochs: int | None
    best_val_loss: float | None
    verdicts: dict[str, str | None]
    verdict_source: str | None
    state: str
    problem: str | None = None
    damaged: str | None = None

    @property
    def verdict(self) -> str | None:
        """The verdicts in a few words: which heads show an edge, else the best verdict."""
        from ..scoring import EDGE, NO_EDGE, SMALL_EDGE

        given = {h: v for h, v in self.verdicts.items() if v}
        if not given:
            return None
        for verdict, short in ((EDGE, "edge"), (SMALL_EDGE, "edge too small")):
            heads = [h for h, v in given.items() if v == verdict]
            if heads:
                return f"{short}: {', '.join(heads)}"
        return NO_EDGE if all(v == NO_EDGE for v in given.values()) else \
            "; ".join(f"{h} {v}" for h, v in given.items())

    def to_dict(self) -> dict:
        return dict(asdict(self), verdict=self.verdict)


def _from_checkpoint(store, run_id: str) -> dict:
    """What a run's latest checkpoint says, for a run without a readable history."""
    try:
        meta = read_meta(store.snapshot_dir(run_id))
    except CheckpointError:
        return {}
    metrics = meta.get("metrics") or {}
    best = metrics.get("best_val_loss")
    return {"provenance": meta.get("provenance"), "preset": preset_of(meta.get("config")),
            "steps": meta.get("step"), "epochs": meta.get("epoch"),
            "best_val_loss": best if isinstance(best, float) else None}


def _started_of(run_id: str) -> int | None:
    import datetime as dt

    try:
        stamp = dt.datetime.strptime(run_id[:19], "%Y%m%d-%H%M%S-%f").replace(tzinfo=dt.UTC)
    except ValueError:
        return None
    return int(stamp.timestamp() * 1000)


def summarize(store, run_id: str) -> RunSummary:
    """One run of ``store`` (a ``CheckpointStore``) as a ``RunSummary``; never raises for a
    damaged or missing history (``problem`` says what is wrong) or checkpoint (``damaged``)."""
    run_dir = store.run_dir(run_id)
    damaged = store.problem(run_id) if store.has_checkpoint(run_id) else None
    try:
        h = read_history(run_dir)
    except HistoryError as exc:
        problem = str(exc) if has_history(run_dir) else \
            "no history (saved before run histories were kept, or not by batch training)"
        known = _from_checkpoint(store, run_id)
        return RunSummary(run_id=run_id, model=store.model, started=_started_of(run_id),
                          provenance=known.get("provenance"), preset=known.get("preset"),
                          steps=known.get("steps"), epochs=known.get("epochs"),
                          best_val_loss=known.get("best_val_loss"), verdicts={},
                          verdict_source=None, state="unknown", problem=problem,
                          damaged=damaged)
    return RunSummary(run_id=run_id, model=store.model,
                      started=h.started if h.started is not None else _started_of(run_id),
                      provenance=h.provenance, preset=h.preset, steps=h.steps,
                      epochs=len(h.epochs), best_val_loss=h.best_val_loss,
                      verdicts=h.verdicts, verdict_source=h.verdict_source, state=h.state,
                      damaged=damaged)


def list_runs(store) -> list[RunSummary]:
    """Every run of ``store`` (a ``CheckpointStore``), newest first; a run whose history is
    damaged or missing shows why (``RunSummary.problem``) and never stops the listing."""
    return [summarize(store, run_id) for run_id in reversed(store.run_ids())]
