"""PAPER trading in live mode (opt-in): the model's live signals trade a simulated account.

With the toggle on (``train.paper``, Ctrl+F6, the panel's checkbox; remembered, off by
default), each live step's position prediction becomes a signal by the backtest's rule
(``backtest.signals.position_signal`` at ``DEFAULT_THRESHOLD``) and drives the series' and
model's ``backtest.paper.PaperAccount`` in ``paper.sqlite``: fills at the next candle's open
with the series' costs (``backtest.costs.costs_for``), the equity marked at each close. No
order is ever sent: the account is a local file.

The chart shows the account as a badge below the suggested position ("PAPER long · equity
10,012.40 (+0.12 %) · 3 trades") while live mode runs; the Live tab of the training workspace
shows it in words and its trades, newest first (``PaperView``). The account of the same series
and model shows again, as it was left, the next time live mode starts on them. A paper file
that cannot be used (damaged, disk full) stops paper trading for the session with its one-line
error in the Live tab; live mode goes on.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QSettings, Qt, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QLabel,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...backtest.costs import costs_for
from ...backtest.paper import PAPER, PaperAccount, PaperTrade
from ...backtest.signals import DEFAULT_THRESHOLD, position_signal
from ...errors import WorkstationError
from ...market.series import SeriesKey
from ...paths import AppPaths
from ...storage import DamagedFileError, DiskFullError
from ...timeparse import format_minute
from ..command_registry import command, create_command_actions
from ..live_data import LiveData
from ..tables import cell_texts, rows_table

log = logging.getLogger(__name__)
BADGE = "paper"  # the chart overlay group of the badge
BADGE_COLOR = "#ffb300"  # amber: a simulated account, not the model's suggestion
SETTING = "paper/enabled"
SIDES = {1: "long", 0: "flat", -1: "short"}
MAX_ROWS = 500  # the newest trades listed; the summary counts them all
COLUMNS = ("#", "Side", "Entry (UTC)", "Entry price", "Exit (UTC)", "Exit price", "Units",
           "Fees", "P&L", "Return %")

OFF = (f"{PAPER} trading is off: turn it on ({command('train.paper').keys[0]}) to trade the "
       "model's live signals on a simulated account")
ON = (f"{PAPER} trading is on: in live mode (F6 / Shift+F6) the model's signals trade a "
      "simulated account; no order is ever sent")


def position_words(account: PaperAccount) -> str:
    """``"long"``, or ``"flat → long at next open"`` while a change waits for its fill."""
    s = account.state
    held = SIDES[s.held]
    return f"{held} → {SIDES[s.wanted]} at next open" if s.pending else held


def badge_text(account: PaperAccount) -> str:
    """``"PAPER long · equity 10,012.40 (+0.12 %) · 3 trades"``."""
    n = len(account.trades)
    return (f"{PAPER} {position_words(account)} · equity {account.equity:,.2f} "
            f"({account.return_pct:+.2f} %) · {n} trade{'' if n == 1 else 's'}")


def summary_text(account: PaperAccount) -> str:
    """The account in words: what it is, what it assumes, where it stands."""
    c, s = account.costs, account.sizing
    size = (f"{s.units:g} units a trade" if s.units is not None
            else f"{s.size * 100:g} % of equity a trade")
    p = account.position
    held = (f"{SIDES[p.direction]} {p.units:,.6g} from {p.entry_price:,.2f} "
            f"({format_minute(p.entry_ts)} UTC)" if p is not None else "flat")
    pending = (f" · {SIDES[account.state.wanted]} at the next open"
               if account.state.pending else "")
    marked = account.state.closed_ts
    at = f" at the close of {format_minute(marked)} UTC" if marked is not None else ""
    fees = sum(t.fees for t in account.trades)
    return (f"{account.label} — simulated, no order is ever sent\n"
            f"signals: position head ≥ {DEFAULT_THRESHOLD:.0%} confidence, else flat; filled "
            f"at the next candle's open · fee {c.fee * 100:g} % ({c.fee_source}), slippage "
            f"{c.slippage_bps:g} bps · {size} · starting cash {account.starting_cash:,.2f}\n"
            f"{held}{pending} · equity {account.equity:,.2f}{at} · P&L {account.pnl:+,.2f} "
            f"({account.return_pct:+.2f} %) · {len(account.trades)} trades, fees "
            f"{fees:,.2f}")


def trade_cells(n: int, t: PaperTrade) -> tuple[str, ...]:
    return (str(n), f"{PAPER} {SIDES[t.direction]}", format_minute(t.entry_ts),
            f"{t.entry_price:,.2f}", format_minute(t.exit_ts), f"{t.exit_price:,.2f}",
            f"{t.units:,.6g}", f"{t.fees:,.2f}", f"{t.pnl:+,.2f}", f"{t.return_pct * 100:+.2f}")


class PaperView(QGroupBox):
    """The Live tab's PAPER box: the account in words (``summary``) and its trades, newest
    first (``table``, at most ``MAX_ROWS``; ``rows()`` gives its texts)."""

    def __init__(self, parent=None):
        super().__init__(f"{PAPER} trading (live signals)", parent)
        self.setObjectName("paperTrading")
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = rows_table("paperTrades", COLUMNS)
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setStretchLastSection(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        self.setMaximumHeight(260)
        self._listed: tuple | None = None  # the account and trade count the table shows

    def say(self, text: str, error: bool = False) -> None:
        self.summary.setText(text)
        self.summary.setStyleSheet("color: #ef5350" if error else "")

    def show_account(self, account: PaperAccount, note: str = "") -> None:
        self.say(summary_text(account) + note)
        trades = account.trades
        listed = (account.label, len(trades))
        if listed == self._listed:
            return
        self._listed = listed
        newest = list(enumerate(trades, 1))[-MAX_ROWS:]
        self.table.setRowCount(len(newest))
        for r, (n, trade) in enumerate(reversed(newest)):
            for c, text in enumerate(trade_cells(n, trade)):
                item = QTableWidgetItem(text)
                if c >= COLUMNS.index("P&L"):
                    item.setForeground(QColor("#26a69a" if trade.pnl >= 0 else "#ef5350"))
                self.table.setItem(r, c, item)

    def rows(self) -> list[tuple[str, ...]]:
        return cell_texts(self.table)


class PaperTrading(QObject):
    """See the module docstring. The training panel calls ``start`` when live mode is ready
    (and again when another series is shown), ``step`` with each live step of the series
    shown and ``stop`` when live mode ends. ``enabled``: the toggle; ``account``: the open
    account (None when off, outside live mode or after an error); ``error``: the error that
    stopped paper trading this session; ``checkbox``, ``view`` and ``action`` are its
    widgets. ``changed`` carries the account each time it changed or closes (a blind replay
    keeps its results)."""

    changed = Signal(object)  # the PaperAccount

    def __init__(self, paths: AppPaths, live_data: LiveData, chart, parent: QWidget):
        super().__init__(parent)
        self.paths = paths
        self.live_data = live_data
        self.chart = chart
        self.settings = QSettings(str(paths.config_dir / "workstation.ini"),
                                  QSettings.Format.IniFormat)
        self.enabled = bool(self.settings.value(SETTING, False, type=bool))
        self.account: PaperAccount | None = None
        self.error: str | None = None
        self._session: tuple[SeriesKey, str] | None = None  # what live mode trades now
        self.view = PaperView()
        self.checkbox = QCheckBox(command("train.paper").text)
        self.checkbox.setObjectName("paperToggle")
        self.action = create_command_actions(
            parent, {"train.paper": self.toggle},
            context=Qt.ShortcutContext.WindowShortcut)["train.paper"]
        self.action.setCheckable(True)
        self.action.setChecked(self.enabled)
        self.checkbox.setChecked(self.enabled)
        self.checkbox.setToolTip(self.action.toolTip())
        self.checkbox.toggled.connect(self.set_enabled)
        self.view.say(ON if self.enabled else OFF)
        live_data.candles_changed.connect(self._candles_changed)

    # -- the toggle ---------------------------------------------------------------------------
    def toggle(self) -> None:
        self.set_enabled(not self.enabled)

    @Slot(bool)
    def set_enabled(self, on: bool) -> None:
        """Turn paper trading on or off (remembered); in live mode it starts or stops now."""
        on = bool(on)
        self.action.setChecked(on)
        self.checkbox.setChecked(on)
        if on == self.enabled:
            return
        self.enabled = on
        self.settings.setValue(SETTING, on)
        log.info("%s trading %s", PAPER, "on" if on else "off")
        if self.account is None:
            self.view.say(ON if on else OFF)
        if not on:
            self._close("turned off")
        elif self._session is not None:
            self._open()

    # -- live mode ----------------------------------------------------------------------------
    def start(self, key: SeriesKey, run: str) -> None:
        """Live mode trades ``key`` with the model ``run`` names: its account opens (when
        paper trading is on), as it was left."""
        self._close()
        self._session = (key, run)
        self.error = None
        if self.enabled:
            self._open()

    def step(self, step) -> None:
        """A live step (``ml.online.OnlineStep``) of the series shown: its position
        prediction is the account's signal after its candle."""
        if self.account is None:
            return
        p = step.prediction
        wanted = position_signal(p.position_probs, DEFAULT_THRESHOLD)
        self._follow((int(p.ts), wanted))

    def stop(self) -> None:
        """Live mode ended: the account closes (everything is saved) and its badge goes."""
        self._close("live mode stopped")
        self._session = None

    # -- plumbing -----------------------------------------------------------------------------
    def _open(self) -> None:
        assert self._session is not None
        key, run = self._session
        try:
            self.account = PaperAccount(self.paths.paper_db, key.provenance, run,
                                        costs=costs_for(key))
        except WorkstationError as exc:
            self._failed(exc)
            return
        log.info("%s: %s trades, equity %.2f", self.account.label, len(self.account.trades),
                 self.account.equity)
        self._follow(None)

    @Slot(str)
    def _candles_changed(self, kind: str) -> None:
        """A candle began: a pending change fills at its open."""
        if kind == "append" and self.account is not None and self.account.state.pending:
            self._follow(None)

    def _follow(self, signal: tuple[int, int] | None) -> None:
        account = self.account
        assert account is not None
        try:
            account.follow(self.live_data.candles, signal)
        except (DiskFullError, DamagedFileError) as exc:
            self._failed(exc)
            return
        except WorkstationError as exc:  # candles it cannot place: this step is skipped
            log.warning("%s: %s", account.label, exc)
        self._show()

    def _show(self) -> None:
        if self.account is None:
            return
        self.changed.emit(self.account)
        self.view.show_account(self.account)
        if self.chart is not None:
            overlays = self.chart.overlays
            overlays.clear(BADGE)  # set again: below the suggested position
            overlays.set_badge(badge_text(self.account), BADGE_COLOR, group=BADGE)

    def _close(self, why: str = "") -> None:
        account, self.account = self.account, None
        if self.chart is not None:
            self.chart.overlays.clear(BADGE)
        if account is None:
            return
        if why:
            self.view.show_account(account, f"\n{PAPER} trading {why}: the account is saved")
        account.close()

    def _failed(self, exc: WorkstationError) -> None:
        self._close()
        self.error = str(exc)
        log.error("%s trading stopped: %s", PAPER, exc)
        self.view.say(f"{PAPER} trading stopped: {exc}", error=True)
