"""The training panel's state machine, without Qt: its state, the words beside it, and what
each state allows.

The panel is always in one of ``STATES``:

- ``preparing``: the device warms up (at startup), or a run builds its data and model;
- ``compiling``: torch.compile builds the training step (the first steps take longer);
- ``training``: a ``Trainer`` runs on the worker thread;
- ``live``: each closed candle goes to an ``OnlineLearner`` on the worker thread (with or
  without per-candle training); its predictions are drawn on the chart, the suggested
  position among them, and with PAPER trading on (``paper_view``) its signals trade a
  simulated account shown on the chart and in the Live tab;
- ``evaluating``: a walk-forward evaluation (``ml.evaluation``) runs on the worker thread,
  its folds and verdicts filling the Evaluation tab;
- ``stopping``: a stop was asked for; the worker ends at its next safe point and saves;
- ``failed``: the last run ended on an error, shown with its traceback (also in the log);
- ``idle``: nothing runs.

Its transitions, as the panel makes them:

- a new job (training, live, evaluation) starts only from ``IDLE`` with the devices ready and
  no worker running (``can_start``): to ``preparing``, or straight to ``evaluating``;
- a running worker can be asked to stop unless it already was (``can_stop``): to
  ``stopping``, which progress no longer overrides (``takes_progress``);
- the worker's end goes to ``idle`` or ``failed``;
- in ``live``, the other live command switches: live inference (F6) and live inference with
  per-candle training (Shift+F6) stop the live mode that runs and start themselves
  (``live_command``); the one that runs already says so.

``enabled`` says which commands each state allows; the panel asks and shows the answer.
"""

from __future__ import annotations

STATES = ("idle", "preparing", "compiling", "training", "live", "evaluating", "stopping",
          "failed")
IDLE = ("idle", "failed")  # where a new job may start
START, SWITCH = "start", "switch"  # what a live command does (``live_command``)
ACTIVE = ("preparing", "compiling", "training", "live", "evaluating", "stopping")  # gauges run
COLORS = {"idle": "#b2b5be", "preparing": "#f5a623", "training": "#26a69a",
          "live": "#42a5f5", "evaluating": "#ab47bc", "stopping": "#f5a623",
          "failed": "#ef5350"}  # the state's name is drawn in its colour


class TrainingSession:
    """The state (one of ``STATES``) and ``detail``, the words shown beside it. ``ready``:
    the compute devices are known; ``busy``: a worker runs."""

    def __init__(self) -> None:
        self.state = "preparing"
        self.detail = "preparing device (loading torch)"
        self.live_train = False  # the live mode last started trains on each candle

    def move(self, state: str, detail: str = "") -> bool:
        """Enter ``state`` with ``detail``; True if the state changed (False: progress, only
        the words change). An unknown state raises ``ValueError``."""
        if state not in STATES:
            raise ValueError(f"unknown training state {state!r}")
        changed = state != self.state
        self.state, self.detail = state, detail
        return changed

    @property
    def color(self) -> str:
        return COLORS[self.state]

    @property
    def takes_progress(self) -> bool:
        """Whether a job's progress may set the state (not once a stop was asked for)."""
        return self.state != "stopping"

    def can_start(self, ready: bool, busy: bool) -> bool:
        """Whether a new job may start (and the settings be edited)."""
        return ready and not busy and self.state in IDLE

    def can_stop(self, busy: bool) -> bool:
        return busy and self.state != "stopping"

    def live_command(self, ready: bool, busy: bool, train: bool) -> str:
        """What live inference (``train`` False) or live inference with per-candle training
        (True) does now: ``START``, ``SWITCH`` (stop the other live mode, then start), or a
        line that says why it does nothing."""
        wanted = "live inference" + (" with per-candle training" if train else "")
        if self.can_start(ready, busy):
            return START
        if self.state == "live" and busy:
            return SWITCH if train != self.live_train else f"{wanted} is running already"
        if not ready:
            return f"{wanted} can start once the device is ready"
        return f"{wanted} can start once {self.state} has ended (Stop: Shift+F5)"

    def gauges_run(self, busy: bool) -> bool:
        """Whether the device gauges sample: while a worker is at work."""
        return self.state in ACTIVE and busy

    def enabled(self, ready: bool, busy: bool) -> dict[str, bool]:
        """Command id -> whether it is enabled now."""
        idle = self.state in IDLE and not busy
        live = self.state == "live" and busy  # the other live command switches
        return {
            "train.start": ready and idle,
            "train.live": ready and (idle or live),
            "train.live_train": ready and (idle or live),
            "train.stop": self.can_stop(busy),
            "train.restart": ready and self.state != "stopping",
            "train.resume": ready and idle,
            "train.clear": ready and self.state != "stopping",
            "train.evaluate": ready and (idle or self.state == "evaluating"),
            "train.until_cursor": self.can_start(ready, busy),
            "train.paper": True,
        }


def restart_settings(markers: list[dict]) -> dict | None:
    """The settings Restart takes from a run's recorded history: its latest start or resume
    record, or None if it has none."""
    return next((m for m in reversed(markers) if m.get("type") in ("start", "resume")), None)
