""""Teach a rule" and "Teach shuffled marks": the teaching loop on the demo market, in minutes.

Each puts a lesson (``ml.lessons``: the trades of a rule the model can learn, or the same
trades shuffled in time) in place of the demo market's marks, holds out the newest days
(Train until), trains a new run with the window's settings, and when it has completed shows
the report on it ("Did it learn my marks?", Shift+F7): the position head on the held-out days
beside every baseline, its margin, interval and verdict. The demo marks it replaces are
written to a JSON file first (named in the status bar; File > Import annotations puts them
back), and nothing is replaced if that file cannot be written. Real markets are refused:
their marks are the trader's (``workstation control-marks`` makes rule marks for them).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

from PySide6.QtCore import QObject, Qt

from ..annotations.io import write_json
from ..annotations.store import AnnotationStore
from ..errors import WorkstationError
from ..market.series import MarketKind
from ..ml.live import CandleSnapshot
from ..paths import AppPaths
from ..timeparse import format_minute
from .command_registry import create_command_actions
from .live_data import LiveData
from .training.panel import TrainingPanel


class Teacher(QObject):
    """See the module docstring. ``command_actions``: ``train.teach_rule`` and
    ``train.teach_shuffled`` (on ``window``, for its Train menu); ``say(text)`` puts a line
    in the status bar; ``show_report()`` brings the Report tab forward and reports on the run
    shown."""

    def __init__(self, window, paths: AppPaths, live: LiveData, store: AnnotationStore,
                 panel: TrainingPanel, show_report: Callable[[], None],
                 say: Callable[[str], None]):
        super().__init__(window)
        self.paths, self.live, self.store, self.panel = paths, live, store, panel
        self.show_report, self.say = show_report, say
        self.command_actions = create_command_actions(window, {
            "train.teach_rule": partial(self.teach, False),
            "train.teach_shuffled": partial(self.teach, True)},
            Qt.ShortcutContext.WindowShortcut)

    def teach(self, shuffled: bool) -> None:
        """Replace the demo marks by a lesson, hold out its newest days and train."""
        from ..ml.lessons import HELD_OUT_DAYS, lesson

        key = self.live.key
        if key is None or key.market.kind is not MarketKind.DEMO:
            self.say("Teach a rule works on the demo market (its marks are demo marks): open "
                     "it with the data bar; for real candles use `workstation control-marks`")
            return
        if self.panel.busy:
            self.say("Teach a rule: the training workspace is busy; stop it first (Shift+F5)")
            return
        try:
            taught = lesson(CandleSnapshot.of(self.live.candles).candles(), key.market,
                            shuffled=shuffled)
            backup = self._replace_marks(key.market, taught.marks)
        except (WorkstationError, OSError) as exc:
            self.say(f"Teach a rule: {exc}")
            return
        self.panel.settings.set_train_until(taught.train_until)
        kept = f"; your demo marks are in {backup}" if backup else ""
        if self.panel.train_then(lambda _run_id: self.show_report()):
            self.say(f"Teaching {taught.words} (demo marks): training until "
                     f"{format_minute(taught.train_until)}, the last {HELD_OUT_DAYS:g} days "
                     f"held out for the report{kept}")

    def _replace_marks(self, market, marks) -> str | None:
        """Put ``marks`` in place of ``market``'s annotations, after writing those to a file
        (returned; None when there were none)."""
        old = self.store.list(market=market)
        path = None
        if old:
            stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
            path = self.paths.data_dir / f"demo-marks-before-teaching-{stamp}.json"
            write_json(old, path)
        self.store.replace_market(market, marks)
        return str(path) if path is not None else None
