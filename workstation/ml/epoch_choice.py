"""Which epoch a run keeps as its best: the rule (``TrainConfig.choose_epoch_by``) and the
validation loss it compares.

- ``auto`` (the default): the validation loss of the trader's heads (position and regime)
  that have targets in the validation span, else the total loss. A run on marks is for the
  marks: the market heads overfit within a few hundred steps on most series (their loss then
  rises) while the position head is still learning, so the total would keep an early epoch
  that knows little of the marks (measured: docs/evaluation.md, "What holds the position
  head back");
- ``total``: the weighted sum of every head's validation loss;
- a head's name: that head's validation loss alone (a walk-forward run's primary head).
"""

from __future__ import annotations

from ..errors import WorkstationError
from .events import SplitMetrics
from .targets import CLASS_HEADS, TRADER_HEADS

EPOCH_CHOICES = ("auto", "total") + CLASS_HEADS


def check_choice(rule: str) -> None:
    if rule not in EPOCH_CHOICES:
        raise WorkstationError(f"the epoch is chosen by one of {', '.join(EPOCH_CHOICES)}, got "
                               f"{rule!r}")


def describe_choice(loss: float | None, chosen_by: str) -> str:
    """" · position loss 0.3120" where epochs are chosen by another loss than the total (which
    the line shows anyway), else ""."""
    if not chosen_by or chosen_by == "total loss" or loss is None:
        return ""
    return f" · {chosen_by} {loss:.4f}"


def choice_loss(val: SplitMetrics, rule: str) -> tuple[float | None, str]:
    """The validation loss ``rule`` compares epochs by (None: none to compare) and its name."""
    if rule == "auto":
        present = {h: loss for h in TRADER_HEADS
                   if (loss := val.head_losses.get(h)) is not None}
        if present:
            return sum(present.values()), " + ".join(present) + " loss"
        return val.loss, "total loss"
    if rule == "total":
        return val.loss, "total loss"
    return val.head_losses.get(rule), f"{rule} loss"
