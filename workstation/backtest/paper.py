"""Paper trading: a model's live signals traded on a simulated account, kept in SQLite.

PAPER only: this module places no order anywhere. It imports no exchange client and opens no
connection; it reads candles it is given and writes one local file
(``app_paths().paper_db``).

A ``PaperAccount`` is one series (its provenance, e.g. ``binance ETH/USDT 1m``) traded by one
model (``run``), with its starting cash, ``Costs`` and ``Sizing``, all fixed when the account is
first opened (an existing account keeps them). Its rules are the backtest engine's
(``engine.run_backtest`` with ``NEXT_OPEN`` fills), applied one candle at a time:

- ``signal(ts, wanted)``: the position wanted (+1 long, 0 flat, -1 short) after candle ``ts``
  closed; ``ts`` must be the newest candle the account has closed. Each candle is decided
  once: a second signal for it, or a signal for a candle older than the newest closed one
  (stale: its fill would have been at an open already past), is ignored.
- ``open_candle(ts, open)``: the next candle began; a wanted position that differs from the
  one held fills at its open, with the engine's slippage and fees (``Costs.entry_fill`` /
  ``exit_fill`` / ``per_unit``, ``Sizing.units_for``): the held trade is closed, the wanted one
  opened at the same open.
- ``close_candle(ts, open, close)``: candle ``ts`` closed (opening it first if it was not yet);
  the equity is marked at its close (``engine.marked_equity``).

A candle offered again (a time not after the newest one seen) changes nothing. Candles that
close without a signal of their own — several closing at once after a gap, or coalesced by a
live session that fell behind — keep the position wanted last: the account equals the engine
run on the signals carried forward over them. ``follow(candles, signal)`` is what live mode
calls with each prediction: it closes the closed candles up to the signal's (from the first
one after the newest the account has closed; a new account starts at the signal's candle),
records the signal, and fills a pending change at the next candle's open as soon as that
candle has begun. A position is held while the app is closed: when live mode starts again,
the candles since are closed first, and a pending change fills at the first of them.

Every call is one transaction (WAL, ``synchronous=FULL``): once it returns, the change
survives a crash; when the write fails (a full disk), nothing of it is kept, in the file or in
memory. Reopening the file restores the open position, cash, trades, equity and the pending
signal. A damaged or foreign file is refused with one line naming it and left as it is.
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..errors import WorkstationError
from ..market.candles import Candles
from ..storage import (
    DamagedFileError,
    DiskFullError,
    damaged,
    immediate_transaction,
    make_durable,
    rollback,
    storage_error,
    why_not_writable,
)
from ..timeparse import format_minute as when
from .engine import Costs, Sizing, marked_equity

PAPER = "PAPER"
DEFAULT_CASH = 10_000.0
SCHEMA_VERSION = 1
_SCHEMA = (
    """CREATE TABLE paper_accounts (
        id INTEGER PRIMARY KEY,
        series TEXT NOT NULL,
        run TEXT NOT NULL,
        starting_cash REAL NOT NULL CHECK (starting_cash > 0),
        fee REAL NOT NULL,
        slippage_bps REAL NOT NULL,
        fee_source TEXT NOT NULL,
        size REAL NOT NULL,
        fixed_units REAL,
        created_at INTEGER NOT NULL,
        cash REAL NOT NULL,
        equity REAL NOT NULL,
        wanted INTEGER NOT NULL CHECK (wanted IN (-1, 0, 1)),
        signal_ts INTEGER,
        opened_ts INTEGER,
        opened_price REAL,
        closed_ts INTEGER,
        direction INTEGER NOT NULL CHECK (direction IN (-1, 0, 1)),
        entry_ts INTEGER,
        entry_price REAL,
        units REAL,
        UNIQUE (series, run))""",
    """CREATE TABLE paper_trades (
        account_id INTEGER NOT NULL REFERENCES paper_accounts (id) ON DELETE CASCADE,
        n INTEGER NOT NULL,
        direction INTEGER NOT NULL CHECK (direction IN (-1, 1)),
        entry_ts INTEGER NOT NULL,
        entry_price REAL NOT NULL,
        exit_ts INTEGER NOT NULL,
        exit_price REAL NOT NULL,
        units REAL NOT NULL,
        fees REAL NOT NULL,
        pnl REAL NOT NULL,
        return_pct REAL NOT NULL,
        PRIMARY KEY (account_id, n))""",
    """CREATE TABLE paper_equity (
        account_id INTEGER NOT NULL REFERENCES paper_accounts (id) ON DELETE CASCADE,
        ts INTEGER NOT NULL,
        equity REAL NOT NULL,
        position INTEGER NOT NULL,
        PRIMARY KEY (account_id, ts)) WITHOUT ROWID""",
)
_TABLES = {"paper_accounts", "paper_trades", "paper_equity"}
_LOST = "its paper accounts start over: keep the old file to rescue their trades"
_STATE = ("cash", "equity", "wanted", "signal_ts", "opened_ts", "opened_price", "closed_ts",
          "direction", "entry_ts", "entry_price", "units")


class PaperError(WorkstationError):
    """A paper account cannot be used, or was fed candles or signals out of order."""


class DamagedPaperError(PaperError, DamagedFileError):
    """The paper trading file is damaged or not ours; it is left as it is."""


class PaperDiskFullError(PaperError, DiskFullError):
    """The disk filled during a change of a paper account; the change was not kept."""


@dataclass(frozen=True)
class Position:
    """The open trade: ``direction`` +1 long / -1 short, filled at the open of candle
    ``entry_ts`` at ``entry_price`` (after slippage), ``units`` of it."""

    direction: int
    entry_ts: int
    entry_price: float
    units: float


@dataclass(frozen=True)
class PaperTrade:
    """A closed trade, as the engine's ``Trades`` row: fills after slippage, ``fees`` of both
    sides and ``pnl`` after them in cash, ``return_pct`` per unit after fees (a fraction)."""

    direction: int
    entry_ts: int
    entry_price: float
    exit_ts: int
    exit_price: float
    units: float
    fees: float
    pnl: float
    return_pct: float


@dataclass(frozen=True)
class PaperState:
    """What an account holds. ``cash``: the starting cash plus the P&L of the closed trades
    (the engine's cash between trades); ``equity``: at the close of candle ``closed_ts``
    (the starting cash before any); ``wanted``: the newest signal's position, decided at the
    close of ``signal_ts``; ``opened_ts`` / ``opened_price``: the newest candle begun."""

    cash: float
    equity: float
    wanted: int = 0
    signal_ts: int | None = None
    opened_ts: int | None = None
    opened_price: float | None = None
    closed_ts: int | None = None
    position: Position | None = None

    @property
    def held(self) -> int:
        return self.position.direction if self.position is not None else 0

    @property
    def pending(self) -> bool:
        """A wanted position differs from the one held: it fills at the next open."""
        return self.wanted != self.held


class _Ledger:
    """The account's rules on a copy of its state, collecting the rows a change writes."""

    def __init__(self, state: PaperState, costs: Costs, sizing: Sizing):
        self.state = state
        self.costs = costs
        self.sizing = sizing
        self.trades: list[PaperTrade] = []
        self.marks: list[tuple[int, float, int]] = []  # ts, equity, position held

    def open_candle(self, ts: int, price: float) -> None:
        s = self.state
        if s.opened_ts is not None and ts <= s.opened_ts:
            return
        if s.opened_ts is not None and (s.closed_ts is None or s.opened_ts > s.closed_ts):
            raise PaperError(f"candle {when(ts)} cannot open before candle {when(s.opened_ts)} "
                             "has closed")
        _check_price(price, ts)
        self.state = replace(s, opened_ts=ts, opened_price=price)
        self._fill(ts, price)

    def close_candle(self, ts: int, open_: float, close: float) -> None:
        s = self.state
        if s.closed_ts is not None and ts <= s.closed_ts:
            return
        if s.opened_ts is None or ts > s.opened_ts:
            self.open_candle(ts, open_)
        elif ts < s.opened_ts:
            raise PaperError(f"candle {when(ts)} cannot close: candle {when(s.opened_ts)} "
                             "after it has begun")
        _check_price(close, ts)
        s = self.state
        p = s.position
        equity = s.cash if p is None else float(marked_equity(
            s.cash, p.direction, p.units, p.entry_price, close, self.costs.fee))
        self.state = replace(s, closed_ts=ts, equity=equity)
        self.marks.append((ts, equity, s.held))

    def signal(self, ts: int, wanted: int) -> None:
        if wanted not in (-1, 0, 1):
            raise PaperError(f"a signal is -1 (short), 0 (flat) or 1 (long), not {wanted!r}")
        s = self.state
        if s.signal_ts is not None and ts <= s.signal_ts:
            return  # each candle is decided once
        if s.closed_ts is None or ts > s.closed_ts:
            raise PaperError(f"a signal at the close of candle {when(ts)} needs that candle "
                             "closed in the account first")
        if ts < s.closed_ts:
            return  # stale: the open it would have filled at is past
        self.state = replace(s, wanted=wanted, signal_ts=ts)
        if s.opened_ts is not None and s.opened_ts > ts and s.opened_price is not None:
            self._fill(s.opened_ts, s.opened_price)  # the next candle has begun already

    def _fill(self, ts: int, price: float) -> None:
        """The wanted position fills at ``price``: the held trade closes, the wanted opens."""
        s = self.state
        if not s.pending:
            return
        cash, costs = s.cash, self.costs
        if (p := s.position) is not None:
            exit_price = float(costs.exit_fill(price, p.direction))
            gross, fee_per_unit = costs.per_unit(p.direction, p.entry_price, exit_price)
            pnl = p.units * (gross - fee_per_unit)
            self.trades.append(PaperTrade(
                p.direction, p.entry_ts, p.entry_price, ts, exit_price, p.units,
                p.units * fee_per_unit, pnl,
                gross / p.entry_price - fee_per_unit / p.entry_price))
            cash += pnl
        position = None
        if s.wanted:
            entry_price = float(costs.entry_fill(price, s.wanted))
            units = float(self.sizing.units_for(cash, entry_price, costs.fee))
            position = Position(s.wanted, ts, entry_price, units)
        self.state = replace(s, cash=cash, position=position)


def _check_price(price: float, ts: int) -> None:
    if not (math.isfinite(price) and price > 0):
        raise PaperError(f"candle {when(ts)} has no usable price ({price!r})")


class PaperAccount:
    """A PAPER account in the SQLite file ``path`` (see the module docstring): the one of
    ``series`` and ``run``, created with ``costs``, ``sizing`` and ``cash`` if the file has
    none yet (an existing one keeps its own, in ``costs``, ``sizing``, ``starting_cash``).
    Use it from the thread that opened it; ``close`` it (or use it as a context manager)."""

    def __init__(self, path: str | Path, series: str, run: str, *, costs: Costs,
                 sizing: Sizing = Sizing(), cash: float = DEFAULT_CASH):
        self.path = Path(path)
        self.series = str(series)
        self.run = str(run)
        if not (math.isfinite(cash) and cash > 0):
            raise PaperError(f"starting cash must be positive, got {cash!r}")
        self._conn = self._open()
        try:
            self._load(costs, sizing, float(cash))
        except BaseException:
            self._conn.close()
            raise

    @property
    def label(self) -> str:
        """``"PAPER binance ETH/USDT 1m · run 20240101-…"``: how everything names it."""
        return f"{PAPER} {self.series} · {self.run}"

    # -- opening ------------------------------------------------------------------------------
    def _refuse(self, reason: str) -> DamagedPaperError:
        return damaged(self.path, "paper trading file", reason, _LOST, DamagedPaperError)

    def _storage_error(self, exc: sqlite3.Error, *, writing: bool = True) -> PaperError:
        found = storage_error(exc, self.path, "paper trading file", _LOST, DamagedPaperError,
                              PaperDiskFullError, writing=writing)
        if isinstance(found, PaperError):
            return found
        return PaperError(f"paper trading file {self.path}: {exc}")

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(self.path, isolation_level=None)
        except sqlite3.Error as exc:
            raise PaperError(f"cannot open paper trading file {self.path}: {exc}") from exc
        try:
            conn.execute("PRAGMA busy_timeout = 5000")
            try:
                self._check_existing(conn)
            except sqlite3.DatabaseError as exc:  # not damage (refused): a full disk, a lock
                raise self._storage_error(exc, writing=False) from exc
            try:
                make_durable(conn)
                self._create(conn)
            except sqlite3.DatabaseError as exc:
                raise self._storage_error(exc) from exc
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_existing(self, conn: sqlite3.Connection) -> None:
        """Refuse, before writing anything, a file that is damaged, foreign or too new."""
        problem = why_not_writable(conn, what="paper trading file",
                                   schema_version=SCHEMA_VERSION, tables_needed=_TABLES)
        if problem is not None:
            raise self._refuse(problem)

    def _create(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise

    def _load(self, costs: Costs, sizing: Sizing, cash: float) -> None:
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO paper_accounts (series, run, starting_cash, fee, "
                "slippage_bps, fee_source, size, fixed_units, created_at, cash, equity, "
                "wanted, direction) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0)",
                (self.series, self.run, cash, costs.fee, costs.slippage_bps, costs.fee_source,
                 sizing.size, sizing.units, int(time.time() * 1000), cash, cash))
            row = conn.execute(
                "SELECT id, starting_cash, fee, slippage_bps, fee_source, size, fixed_units, "
                f"{', '.join(_STATE)} FROM paper_accounts WHERE series = ? AND run = ?",
                (self.series, self.run)).fetchone()
            trades = conn.execute(
                "SELECT direction, entry_ts, entry_price, exit_ts, exit_price, units, fees, "
                "pnl, return_pct FROM paper_trades WHERE account_id = ? ORDER BY n",
                (row[0],)).fetchall()
        (self._id, self.starting_cash, fee, slippage, fee_source, size, units,
         *state) = row
        self.costs = Costs(fee, slippage, fee_source)
        self.sizing = Sizing(size=size, units=units)
        values = dict(zip(_STATE, state))
        direction = values.pop("direction")
        entry = (values.pop("entry_ts"), values.pop("entry_price"), values.pop("units"))
        position = Position(direction, *entry) if direction else None
        self.state = PaperState(position=position, **values)
        self._trades = [PaperTrade(*t) for t in trades]

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> PaperAccount:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reading ------------------------------------------------------------------------------
    @property
    def trades(self) -> tuple[PaperTrade, ...]:
        """The closed trades, oldest first."""
        return tuple(self._trades)

    @property
    def position(self) -> Position | None:
        return self.state.position

    @property
    def equity(self) -> float:
        """At the newest close (the starting cash before any)."""
        return self.state.equity

    @property
    def pnl(self) -> float:
        """The equity less the starting cash: the closed trades' P&L after fees, plus the
        open one's mark to market less its entry fee."""
        return self.state.equity - self.starting_cash

    @property
    def return_pct(self) -> float:
        return 100.0 * self.pnl / self.starting_cash

    def equity_curve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The equity at every close the account saw: times, equity and the position held
        (+1 / 0 / -1) during that candle."""
        with self._reading() as conn:
            rows = conn.execute("SELECT ts, equity, position FROM paper_equity "
                                "WHERE account_id = ? ORDER BY ts", (self._id,)).fetchall()
        ts = np.array([r[0] for r in rows], dtype=np.int64)
        return (ts, np.array([r[1] for r in rows], dtype=np.float64),
                np.array([r[2] for r in rows], dtype=np.int8))

    # -- changing -----------------------------------------------------------------------------
    def open_candle(self, ts: int, open_: float) -> bool:
        """Candle ``ts`` began at ``open_``: a pending change fills there. Returns whether
        the account changed."""
        return self._change(lambda ledger: ledger.open_candle(int(ts), float(open_)))

    def close_candle(self, ts: int, open_: float, close: float) -> bool:
        """Candle ``ts`` closed: the equity is marked at ``close``."""
        return self._change(lambda ledger: ledger.close_candle(int(ts), float(open_),
                                                               float(close)))

    def signal(self, ts: int, wanted: int) -> bool:
        """The position ``wanted`` after candle ``ts`` (the newest closed) closed."""
        return self._change(lambda ledger: ledger.signal(int(ts), int(wanted)))

    def follow(self, candles: Candles, signal: tuple[int, int] | None = None) -> bool:
        """Live mode's call (see the module docstring): with ``signal`` ``(ts, wanted)``,
        close the closed candles of ``candles`` up to ``ts`` and record it; then fill a
        pending change at the open of the candle after the newest closed one, if it has
        begun (it may be forming)."""
        ts_all, open_, close = candles.ts, candles.open, candles.close
        closed = candles.n_closed

        def steps(ledger: _Ledger) -> None:
            if signal is not None:
                ts, wanted = int(signal[0]), int(signal[1])
                i = candles.index_of(ts)
                if not 0 <= i < closed or int(ts_all[i]) != ts:
                    raise PaperError(f"candle {when(ts)} is not a closed candle of "
                                     f"{self.series}")
                last = ledger.state.closed_ts
                first = i if last is None else int(np.searchsorted(ts_all, last, "right"))
                for j in range(first, i + 1):
                    ledger.close_candle(int(ts_all[j]), float(open_[j]), float(close[j]))
                ledger.signal(ts, wanted)
            s = ledger.state
            if s.closed_ts is not None and s.pending:
                j = int(np.searchsorted(ts_all, s.closed_ts, "right"))
                if j < len(candles):
                    ledger.open_candle(int(ts_all[j]), float(open_[j]))

        return self._change(steps)

    def _change(self, steps: Callable[[_Ledger], None]) -> bool:
        """Apply ``steps`` to a copy of the state and write what changed in one transaction;
        the account takes the new state only once it is written."""
        ledger = _Ledger(self.state, self.costs, self.sizing)
        steps(ledger)
        if ledger.state == self.state:  # every fill and mark changes it too
            return False
        s, p = ledger.state, ledger.state.position
        with self._transaction() as conn:
            conn.execute(
                f"UPDATE paper_accounts SET {', '.join(f'{c} = ?' for c in _STATE)} "
                "WHERE id = ?",
                (s.cash, s.equity, s.wanted, s.signal_ts, s.opened_ts, s.opened_price,
                 s.closed_ts, s.held, p.entry_ts if p else None,
                 p.entry_price if p else None, p.units if p else None, self._id))
            conn.executemany(
                "INSERT INTO paper_trades (account_id, n, direction, entry_ts, entry_price, "
                "exit_ts, exit_price, units, fees, pnl, return_pct) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(self._id, len(self._trades) + k, t.direction, t.entry_ts, t.entry_price,
                  t.exit_ts, t.exit_price, t.units, t.fees, t.pnl, t.return_pct)
                 for k, t in enumerate(ledger.trades)])
            conn.executemany(
                "INSERT OR REPLACE INTO paper_equity (account_id, ts, equity, position) "
                "VALUES (?, ?, ?, ?)", [(self._id, *m) for m in ledger.marks])
        self.state = s
        self._trades.extend(ledger.trades)
        return True

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        try:
            yield self._conn
        except sqlite3.ProgrammingError:  # a bug (e.g. the wrong thread), not the file
            raise
        except sqlite3.DatabaseError as exc:
            raise self._storage_error(exc, writing=False) from exc

    def _transaction(self):
        return immediate_transaction(self._conn, self._storage_error)
