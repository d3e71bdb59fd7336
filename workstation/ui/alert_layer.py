"""``AlertLayer``: the trader's alerts in the window, made and removed by keys.

Shift+A puts an alert on the selected drawn level (again: takes it off): the price of the live
symbol crossing it, either way, sets it off, at most once per candle, wherever the level has
been moved to. Ctrl+Shift+A asks for a confidence (remembered) and puts an alert on the model's
suggested position for the live symbol: it goes off when a live prediction suggests another
position than the last one at least that sure (in live mode, with or without the PAPER
account); again: takes it off. "List the alerts" says each; "Remove every alert" empties the
book. An alert that goes off writes a log line, says so on the status bar, asks the desktop
for a notification (``DesktopNotifier``) and flashes the window in the task bar; its count and
time are kept. Alerts live in their own file (``paths.alerts_file``, ``alerts.book``) across
restarts. Levels with an alert read "alert" in their price tag. A blind replay sets off no
alert (its prices are history).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import cast

from PySide6.QtCore import QObject, QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QWidget

from ..alerts.book import Alert, AlertBook, AlertError, AlertKind
from ..alerts.watch import AlertWatch, Fired
from ..annotations.drawings import Shape
from ..market.series import MarketKey
from ..ml.events import LiveStep
from .command_registry import create_command_actions
from .drawings.layer import DrawingLayer
from .live_data import LiveData
from .number_prompt import NumberPrompt

log = logging.getLogger(__name__)
DEFAULT_THRESHOLD = 60.0  # percent


def _now() -> int:
    return time.time_ns() // 1_000_000


class AlertLayer(QObject):
    """See the module docstring. ``command_actions``: the Alerts menu's actions by id."""

    def __init__(self, window: QWidget, book_path, live: LiveData, drawings: DrawingLayer,
                 settings: QSettings, say: Callable[[str], None], notifier):
        super().__init__(window)
        self.window = window
        self.live = live
        self.drawings = drawings
        self.settings = settings
        self.say = say
        self.notifier = notifier
        self.book = AlertBook.open(book_path)
        if self.book.problem:
            log.warning("alerts: %s", self.book.problem)
            say(f"Alerts file damaged: {self.book.problem}")
        self.watch = AlertWatch()
        self.prompt = NumberPrompt(window, "alertThreshold")
        self.fired: list[Fired] = []  # this session's, oldest first
        area = drawings.area
        self.command_actions: dict[str, QAction] = create_command_actions(area.primary, {
            "alerts.level": self.toggle_level,
            "alerts.flip": self.toggle_flip,
            "alerts.list": self.list_alerts,
            "alerts.clear": self.clear,
        })
        for chart in area.charts[1:]:  # the keys act on whichever chart has the keyboard
            chart.addActions(list(self.command_actions.values()))
        live.candles_changed.connect(self._candles_changed)
        self._show()

    @property
    def market(self) -> MarketKey | None:
        key = self.live.key
        return key.market if key is not None else None

    def _show(self) -> None:
        self.drawings.set_alerted({a.drawing_id for a in self.book.list()
                                   if a.drawing_id is not None})

    def _keep(self, change: Callable[[], object], done: str) -> None:
        try:
            change()
        except (AlertError, OSError) as exc:
            self.say(f"Alerts not saved: {exc}")
            return
        self._show()
        log.info("alerts: %s", done)
        self.say(done)

    def close(self) -> None:
        """Stop hearing the live data (at shutdown)."""
        self.live.candles_changed.disconnect(self._candles_changed)

    # -- commands -------------------------------------------------------------------------
    def toggle_level(self) -> None:
        d = self.drawings.selected
        if d is None or d.shape is not Shape.LEVEL or d.price1 is None:
            self.say("Select a level first (D / Shift+D, or click it): its alert goes off when "
                     "the price crosses it")
            return
        price = self.drawings.target.format_price(d.price1)
        there = self.book.on_level(d.id)
        if there is not None:
            self._keep(lambda: self.book.remove(there.id),
                       f"Alert on the level {price} removed")
            return
        alert = Alert(kind=AlertKind.LEVEL, market=d.market, symbol=d.symbol, drawing_id=d.id)
        self._keep(lambda: self.book.add(alert),
                   f"Alert set: {d.symbol} crossing the level {price}, either way "
                   f"(Shift+A again removes it)")

    def toggle_flip(self) -> None:
        market = self.market
        if market is None:
            self.say("No live symbol: open a data source first")
            return
        there = self.book.flip_alert(market)
        if there is not None:
            self._keep(lambda: self.book.remove(there.id),
                       f"Alert on the model's position for {market.symbol} removed")
            return
        last = cast(float, self.settings.value("alerts/threshold", DEFAULT_THRESHOLD,
                                               type=float))
        self.prompt.ask(f"Alert when the model's suggested position for {market.symbol} "
                        f"changes with at least this confidence (%):", last, 34.0, 100.0,
                        lambda value: self._add_flip(market, value))

    def _add_flip(self, market: MarketKey, percent: float) -> None:
        self.settings.setValue("alerts/threshold", percent)
        alert = Alert(kind=AlertKind.FLIP, market=market.kind, symbol=market.symbol,
                      threshold=percent / 100.0)
        self._keep(lambda: self.book.add(alert),
                   f"Alert set: the model's suggested position for {market.symbol} changing "
                   f"at {percent:g} % or more (live mode; Ctrl+Shift+A again removes it)")

    def list_alerts(self) -> None:
        alerts = self.book.list()
        if not alerts:
            self.say("No alerts (Shift+A on a selected level, Ctrl+Shift+A on the model)")
            return
        levels = {d.id: d for d in self.drawings.all_drawings()}
        texts = []
        for a in alerts:
            if a.kind is AlertKind.FLIP:
                what = f"{a.symbol}: the model's position at {float(a.threshold or 0):.0%}+"
            else:
                d = levels.get(a.drawing_id or "")
                what = (f"{a.symbol}: level {d.price1:g}" if d is not None and d.price1
                        else f"{a.symbol}: a level that is deleted (silent)")
            texts.append(f"{what}, went off {a.fired}×")
        for text in texts:
            log.info("alert: %s", text)
        self.say(f"{len(alerts)} alert{'s' if len(alerts) != 1 else ''}: " + "; ".join(texts))

    def clear(self) -> None:
        n = len(self.book.list())
        self._keep(self.book.clear, f"{n} alert{'s' if n != 1 else ''} removed")

    # -- hearing prices and predictions --------------------------------------------------
    def _candles_changed(self, kind: str) -> None:
        market, candles = self.market, self.live.candles
        if kind == "reset" or market is None or candles is None or not len(candles):
            self.watch.forget()
            return
        if self.drawings.clock is not None:  # a blind replay: history, not the market now
            self.watch.forget()
            return
        alerts = self.book.list(market)
        if not any(a.kind is AlertKind.LEVEL for a in alerts):
            return
        levels = {d.id: d for d in self.drawings.on_primary()}
        fired = self.watch.price(alerts, levels, market, float(candles.close[-1]),
                                 int(candles.ts[-1]), _now(),
                                 self.drawings.area.primary.format_price)
        self._went_off(fired)

    def live_step(self, step) -> None:
        """A live prediction (``TrainingPanel.live_stepped``)."""
        market = self.market
        if market is None or self.drawings.clock is not None:
            return
        if isinstance(step, LiveStep):
            step = step.step
        alerts = self.book.list(market)
        if any(a.kind is AlertKind.FLIP for a in alerts):
            self._went_off(self.watch.prediction(alerts, market,
                                                 step.prediction.position_probs, _now()))

    def _went_off(self, fired: list[Fired]) -> None:
        for f in fired:
            alert = self.book.get(f.alert.id)
            if alert is not None:
                try:
                    self.book.put(alert.went_off(f.when))
                except (AlertError, OSError) as exc:
                    log.error("alerts: the count of an alert was not saved: %s", exc)
            self.fired.append(f)
            log.warning("ALERT: %s", f.text)
            self.say(f"ALERT: {f.text}")
            self.notifier.notify("Workstation alert", f.text)
            QApplication.alert(self.window)
