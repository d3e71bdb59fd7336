"""What a checkpoint's own validation said of each trader head (plain Python, no torch).

``trader_verdicts(meta)``: per trader head (``targets.TRADER_HEADS``) the verdict
(``scoring.VERDICTS``) the validation recorded in a checkpoint's meta gave it
(``meta["metrics"]["val"]["heads"][head]["verdict"]``, as ``Trainer`` saves it each epoch),
or None when the head was never evaluated: a checkpoint without validation (per-candle
training, a run stopped between validations), a head without a verdict (too few days or marks
for an interval, whatever the reason), or meta of an older or malformed shape.
``verdict_source(meta)`` says which validation that was; ``standing`` is how live mode shows a
verdict: "edge", "no edge shown" (a small edge is no usable one) or "not evaluated".
"""

from __future__ import annotations

from .scoring import EDGE, NO_EDGE, VERDICTS
from .targets import TRADER_HEADS

NOT_EVALUATED = "not evaluated"


def _validation(meta) -> dict | None:
    """The validation metrics ``meta`` records (a ``SplitMetrics`` as a dict), or None."""
    metrics = meta.get("metrics") if isinstance(meta, dict) else None
    val = metrics.get("val") if isinstance(metrics, dict) else None
    return val if isinstance(val, dict) else None


def trader_verdicts(meta) -> dict[str, str | None]:
    """See the module docstring: trader head -> its verdict, or None."""
    val = _validation(meta)
    heads = val.get("heads") if val is not None else None
    out: dict[str, str | None] = {}
    for head in TRADER_HEADS:
        score = heads.get(head) if isinstance(heads, dict) else None
        verdict = score.get("verdict") if isinstance(score, dict) else None
        out[head] = verdict if verdict in VERDICTS else None
    return out


def verdict_source(meta) -> str | None:
    """``"validation of run R, epoch E"`` (E: epochs completed when it was saved), or None
    when ``meta`` records no validation."""
    if _validation(meta) is None:
        return None
    run, epoch = meta.get("run_id"), meta.get("epoch")
    text = f"validation of run {run}" if isinstance(run, str) else "validation"
    return text + (f", epoch {epoch}" if type(epoch) is int else "")


def standing(verdict: str | None) -> str:
    """How live mode shows ``verdict``: ``EDGE``, ``NO_EDGE`` for any other verdict (too small
    an edge is none to use), ``NOT_EVALUATED`` without one."""
    if verdict is None:
        return NOT_EVALUATED
    return EDGE if verdict == EDGE else NO_EDGE
