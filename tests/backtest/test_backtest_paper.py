"""Paper trading's account (``backtest.paper``): fed candle by candle it equals the backtest
engine on the same signals to 1e-9 (across a close and reopen of its SQLite file), coalesced
candles hold the last signal, costs are the engine's, a restart restores everything, a damaged
file or a full disk is one clear line that loses nothing, and it can send no order (no ccxt,
no socket)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from workstation.backtest.engine import Costs, Sizing, run_backtest
from workstation.backtest.paper import (
    DamagedPaperError,
    PaperAccount,
    PaperDiskFullError,
    PaperError,
)
from workstation.backtest.signals import model_signal, position_signal
from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE

END_TS = 1_700_000_000_000
MIN = 60_000
SERIES = "DEMO (simulated market) DEMO/USDT 1m"
COSTS = Costs(0.001, slippage_bps=2.0, fee_source="test")


def seeded_signals(n: int, seed: int, p_change: float = 0.04) -> np.ndarray:
    """A signal that holds each position for a while, as a model's calls do."""
    rng = np.random.default_rng(seed)
    signal = np.zeros(n, dtype=np.int8)
    current = 0
    for i in range(n):
        if rng.random() < p_change:
            current = int(rng.integers(-1, 2))
        signal[i] = current
    return signal


def assert_same_as_engine(account: PaperAccount, run, ts: np.ndarray) -> None:
    """The account's closed trades and equity are the engine run's, to 1e-9."""
    t = run.trades
    done = ~t.closed_at_end
    trades = account.trades
    assert len(trades) == int(done.sum())
    assert [x.direction for x in trades] == t.direction[done].tolist()
    assert [x.entry_ts for x in trades] == ts[t.entry_bar[done]].tolist()
    assert [x.exit_ts for x in trades] == ts[t.exit_bar[done]].tolist()
    for name in ("entry_price", "exit_price", "units", "fees", "pnl", "return_pct"):
        np.testing.assert_allclose([getattr(x, name) for x in trades],
                                   getattr(t, name)[done], rtol=1e-9, atol=1e-9,
                                   err_msg=name)
    curve_ts, equity, _ = account.equity_curve()
    start, stop = run.span
    assert curve_ts.tolist() == ts[start:stop].tolist()
    np.testing.assert_allclose(equity, run.equity, rtol=1e-9, atol=1e-9)


# -- the engine's equal, candle by candle ---------------------------------------------------------
@pytest.mark.parametrize("sizing", [Sizing(size=0.5), Sizing(units=2.0)], ids=["size", "units"])
def test_the_paper_account_equals_the_backtest_engine(tmp_path, sizing):
    candles = demo_candles(3000, ONE_MINUTE, seed=11, end_ts=END_TS)
    ts, o, c = candles.ts, candles.open, candles.close
    signal = seeded_signals(len(candles), seed=5)
    signal[-3:] = 0  # flat at the end: every trade closed, as the engine's last one is
    path = tmp_path / "paper.sqlite"
    rng = np.random.default_rng(1)
    account = PaperAccount(path, SERIES, "run A", costs=COSTS, sizing=sizing)
    for i in range(len(candles)):
        if i == len(candles) // 2:  # a restart midway: the file holds everything
            account.close()
            account = PaperAccount(path, SERIES, "run A", costs=Costs(0.05), sizing=Sizing(0.1),
                                   cash=5.0)
            assert account.costs == COSTS and account.sizing == sizing  # its own, kept
        if rng.random() < 0.5:  # the candle seen forming first (its open fills)
            account.open_candle(int(ts[i]), o[i])
        account.close_candle(int(ts[i]), o[i], c[i])
        account.signal(int(ts[i]), int(signal[i]))
        if rng.random() < 0.1:  # the same candle and signal offered again: nothing changes
            assert not account.close_candle(int(ts[i]), o[i], c[i])
            assert not account.signal(int(ts[i]), int(signal[i]))
            assert not account.open_candle(int(ts[i]), o[i])
    run = run_backtest(o, c, signal, costs=COSTS, sizing=sizing, cash=10_000.0)
    assert len(run.trades) > 40 and not run.trades.closed_at_end.any()
    assert_same_as_engine(account, run, ts)
    assert account.equity == pytest.approx(run.equity[-1], rel=1e-9)
    assert account.pnl == pytest.approx(run.equity[-1] - 10_000.0, rel=1e-9)
    assert account.position is None and not account.state.pending
    account.close()


def test_an_open_trade_is_the_engines_last_one_marked_to_market(tmp_path):
    candles = demo_candles(400, ONE_MINUTE, seed=2, end_ts=END_TS)
    ts, o, c = candles.ts, candles.open, candles.close
    signal = seeded_signals(len(candles), seed=9, p_change=0.08)
    signal[-40:] = 1  # long at the end
    with PaperAccount(tmp_path / "paper.sqlite", SERIES, "run A", costs=COSTS) as account:
        for i in range(len(candles)):
            account.close_candle(int(ts[i]), o[i], c[i])
            account.signal(int(ts[i]), int(signal[i]))
        run = run_backtest(o, c, signal, costs=COSTS, cash=10_000.0)
        last = run.trades
        assert last.closed_at_end[-1]
        p = account.position
        assert p is not None and p.direction == 1 and p.entry_ts == ts[last.entry_bar[-1]]
        assert p.entry_price == pytest.approx(last.entry_price[-1], rel=1e-12)
        assert p.units == pytest.approx(last.units[-1], rel=1e-9)
        # every close but the engine's last (where it closes the trade) is the same mark
        _, equity, held = account.equity_curve()
        np.testing.assert_allclose(equity[:-1], run.equity[:-1], rtol=1e-9)
        assert held[-1] == 1
        assert account.equity == pytest.approx(
            run.equity[-1] + last.units[-1] * COSTS.fee * last.exit_price[-1]
            + last.units[-1] * (c[-1] - last.exit_price[-1]), rel=1e-9)  # no exit costs yet


def test_coalesced_candles_hold_the_last_signal(tmp_path):
    """Live mode offers several closed candles at once (a session that fell behind, a gap);
    only the newest has a signal. The others hold the position wanted last: the account is
    the engine on the signals carried forward over them."""
    candles = demo_candles(1500, ONE_MINUTE, seed=4, end_ts=END_TS)
    ts = candles.ts
    raw = seeded_signals(len(candles), seed=3, p_change=0.15)
    rng = np.random.default_rng(8)
    path = tmp_path / "paper.sqlite"
    account = PaperAccount(path, SERIES, "run B", costs=COSTS)
    decided = np.zeros(len(candles), dtype=bool)
    i, last = 99, 99
    while (i := i + int(rng.integers(1, 6))) < len(candles) - 2:  # a burst of 1..5 candles
        decided[i] = last = i
        step = (int(ts[i]), int(raw[i]))
        assert account.follow(candles.slice(0, i + 1), step)
        assert not account.follow(candles.slice(0, i + 1), step)  # offered twice
        if rng.random() < 0.5:  # the next candle is forming: a pending change fills now
            forming = candles.slice(0, i + 2)
            forming.last_closed = False
            account.follow(forming)
            assert not account.state.pending
        if rng.random() < 0.05:
            account.close()
            account = PaperAccount(path, SERIES, "run B", costs=COSTS)
    signal = np.zeros(len(candles), dtype=np.int8)
    held = 0
    for j in range(len(candles)):
        held = int(raw[j]) if decided[j] else held
        signal[j] = held
    # the account starts at the first candle it was given a signal for
    run = run_backtest(candles.open, candles.close, signal, costs=COSTS, cash=10_000.0,
                       span=(int(np.flatnonzero(decided)[0]), last + 1))
    # the engine closes a trade still open at the span's end: compare the closed ones
    t = run.trades
    done = ~t.closed_at_end
    assert len(account.trades) == int(done.sum()) > 20
    np.testing.assert_allclose([x.pnl for x in account.trades], t.pnl[done], rtol=1e-9)
    assert [x.entry_ts for x in account.trades] == ts[t.entry_bar[done]].tolist()
    _, equity, _ = account.equity_curve()
    np.testing.assert_allclose(equity[:-1], run.equity[:-1], rtol=1e-9)
    account.close()


def test_a_signal_after_the_next_candle_began_fills_at_its_open(tmp_path):
    candles = demo_candles(10, ONE_MINUTE, seed=1, end_ts=END_TS)
    ts, o, c = candles.ts, candles.open, candles.close
    with PaperAccount(tmp_path / "p.sqlite", SERIES, "r", costs=COSTS) as account:
        account.close_candle(int(ts[0]), o[0], c[0])
        account.open_candle(int(ts[1]), o[1])  # began before the model decided
        account.signal(int(ts[0]), 1)
        assert account.position.entry_ts == ts[1]
        assert account.position.entry_price == pytest.approx(COSTS.entry_fill(o[1], 1))
        # a candle that closes without a signal holds; a stale signal is ignored
        account.close_candle(int(ts[1]), o[1], c[1])
        account.close_candle(int(ts[2]), o[2], c[2])
        assert not account.signal(int(ts[1]), -1)
        assert account.state.wanted == 1
        with pytest.raises(PaperError, match="needs that candle closed"):
            account.signal(int(ts[3]), 0)
        account.open_candle(int(ts[3]), o[3])
        with pytest.raises(PaperError, match="cannot open before candle"):
            account.open_candle(int(ts[4]), o[4])
        with pytest.raises(PaperError, match="-1 \\(short\\), 0 \\(flat\\) or 1"):
            account.signal(int(ts[2]), 2)


# -- costs --------------------------------------------------------------------------------------
def test_costs_are_applied_by_hand(tmp_path):
    costs = Costs(0.001, slippage_bps=10, fee_source="test")
    ts = [0, MIN, 2 * MIN, 3 * MIN]
    o, c = [100.0, 101.0, 102.0, 104.0], [100.5, 101.5, 103.0, 103.5]
    path = tmp_path / "paper.sqlite"
    with PaperAccount(path, SERIES, "with costs", costs=costs, sizing=Sizing(0.5),
                      cash=1000.0) as account, \
            PaperAccount(path, SERIES, "free", costs=Costs(0.0), sizing=Sizing(0.5),
                         cash=1000.0) as free:
        for a in (account, free):
            for i, want in enumerate([1, 1, 0, 0]):
                a.close_candle(ts[i], o[i], c[i])
                a.signal(ts[i], want)
        (trade,) = account.trades
        entry, exit_ = 101.0 * 1.001, 104.0 * 0.999  # slippage against the trade
        units = 0.5 * 1000 / (entry * 1.001)  # the entry fee comes out of the size
        assert trade.entry_price == pytest.approx(entry) and trade.exit_price == pytest.approx(
            exit_)
        assert trade.units == pytest.approx(units)
        assert trade.fees == pytest.approx(0.001 * units * (entry + exit_))
        assert trade.pnl == pytest.approx(units * (exit_ - entry) - trade.fees)
        assert account.equity == pytest.approx(1000 + trade.pnl)
        _, equity, _ = account.equity_curve()  # the entry fee is paid at entry
        assert equity[1] == pytest.approx(1000 - units * entry * 0.001 + units * (101.5 - entry))
        (gross,) = free.trades
        assert gross.fees == 0 and gross.pnl == pytest.approx(gross.units * 3.0)
        assert account.pnl < free.pnl


def test_the_live_threshold_rule_is_the_backtests():
    probs = np.array([[0.2, 0.7, 0.1], [0.2, 0.45, 0.35], [0.1, 0.3, 0.6], [0.6, 0.3, 0.1]])
    expected = model_signal("position", probs.argmax(1), probs.max(1), 0.5)
    assert [position_signal(p, 0.5) for p in probs] == expected.tolist() == [1, 0, -1, 0]
    assert position_signal(probs[1], 0.4) == 1


# -- persistence --------------------------------------------------------------------------------
def test_a_restart_restores_the_position_cash_trades_and_pending_signal(tmp_path):
    candles = demo_candles(30, ONE_MINUTE, seed=6, end_ts=END_TS)
    ts, o, c = candles.ts, candles.open, candles.close
    path = tmp_path / "paper.sqlite"
    with PaperAccount(path, SERIES, "run A", costs=COSTS) as account:
        for i, want in enumerate([1, 1, -1, -1, 1]):
            account.close_candle(int(ts[i]), o[i], c[i])
            account.signal(int(ts[i]), want)
        # another run's account in the same file is its own
        with PaperAccount(path, SERIES, "run B", costs=Costs(0.0)) as other:
            assert other.trades == () and other.equity == 10_000.0
        before = (account.state, account.trades, account.equity_curve())
    assert before[0].pending and before[0].wanted == 1 and before[0].position.direction == -1
    assert len(before[1]) == 1
    with PaperAccount(path, SERIES, "run A", costs=Costs(0.0)) as again:
        assert again.state == before[0] and again.trades == before[1]
        for got, was in zip(again.equity_curve(), before[2]):
            assert got.tolist() == was.tolist()
        again.follow(candles.slice(0, 6))  # the pending long fills at the next open
        assert again.position.direction == 1 and again.position.entry_ts == ts[5]
        assert len(again.trades) == 2 and again.trades[-1].exit_ts == ts[5]


def test_a_damaged_paper_file_is_one_line_naming_it_and_is_left_alone(tmp_path):
    path = tmp_path / "paper.sqlite"
    candles = demo_candles(2000, ONE_MINUTE, seed=6, end_ts=END_TS)
    with PaperAccount(path, SERIES, "run A", costs=COSTS) as account:
        for i in range(len(candles)):
            account.close_candle(int(candles.ts[i]), candles.open[i], candles.close[i])
    for suffix in ("-wal", "-shm"):
        assert not path.with_name(path.name + suffix).exists() or \
            path.with_name(path.name + suffix).stat().st_size == 0
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    for at in range(2 * page, len(data), page):
        data[at:at + page] = bytes([0x5A]) * page
    path.write_bytes(bytes(data))
    with pytest.raises(DamagedPaperError) as info:
        PaperAccount(path, SERIES, "run A", costs=COSTS)
    message = str(info.value)
    assert len(message.splitlines()) == 1
    assert message.startswith(f"paper trading file {path} cannot be used: damaged")
    assert "nothing was written to it" in message and "Move it aside" in message
    assert path.read_bytes() == bytes(data)


def test_a_foreign_database_is_not_turned_into_a_paper_file(tmp_path):
    path = tmp_path / "paper.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE invoices (id INTEGER)")
    db.close()
    before = path.read_bytes()
    with pytest.raises(DamagedPaperError, match=r"not a Workstation paper trading file "
                                                r"\(tables: invoices\)"):
        PaperAccount(path, SERIES, "run A", costs=COSTS)
    assert path.read_bytes() == before


def test_a_full_disk_keeps_what_was_saved_in_the_file_and_in_memory(tmp_path):
    path = tmp_path / "paper.sqlite"
    candles = demo_candles(3000, ONE_MINUTE, seed=6, end_ts=END_TS)
    ts, o, c = candles.ts, candles.open, candles.close
    with PaperAccount(path, SERIES, "run A", costs=COSTS) as account:
        account.close_candle(int(ts[0]), o[0], c[0])
        account.signal(int(ts[0]), 1)
        saved = account.state
        pages = account._conn.execute("PRAGMA page_count").fetchone()[0]
        account._conn.execute(f"PRAGMA max_page_count = {pages}")  # the file may not grow
        with pytest.raises(PaperDiskFullError) as info:
            account.follow(candles, (int(ts[-1]), -1))  # thousands of marks at once
        assert str(info.value).startswith(f"disk full: cannot write {path}; nothing of this "
                                          "change was stored")
        assert account.state == saved and account.trades == ()
    with PaperAccount(path, SERIES, "run A", costs=COSTS) as again:
        assert again.state == saved and len(again.equity_curve()[0]) == 1


# -- it cannot trade ----------------------------------------------------------------------------
def test_paper_trading_imports_no_exchange_client_and_opens_no_socket(tmp_path):
    """In a fresh interpreter with sockets made to fail: a whole paper session leaves ccxt
    (and every exchange feed of the app) unimported."""
    code = textwrap.dedent(f"""
        import socket, sys
        def refuse(*args, **kwargs):
            raise AssertionError("paper trading opened a socket")
        socket.socket.connect = socket.socket.connect_ex = socket.socket.sendto = refuse
        socket.create_connection = socket.getaddrinfo = refuse
        from workstation.backtest.engine import Costs
        from workstation.backtest.paper import PaperAccount
        from workstation.market.demo import demo_candles
        from workstation.market.timeframes import ONE_MINUTE
        candles = demo_candles(200, ONE_MINUTE, seed=1, end_ts={END_TS})
        with PaperAccount({str(tmp_path / "paper.sqlite")!r}, "binance ETH/USDT 1m", "run",
                          costs=Costs(0.001)) as account:
            for i in range(len(candles)):
                account.follow(candles.slice(0, i + 1), (int(candles.ts[i]), (i // 20) % 3 - 1))
            assert len(account.trades) > 3
        bad = sorted(m for m in sys.modules if m.split(".")[0] in ("ccxt", "aiohttp",
                     "websockets", "requests") or m in ("workstation.market.ccxt_feed",
                     "workstation.backtest.costs", "workstation.market.credentials"))
        print(",".join(bad))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "", f"paper trading imported {result.stdout}"
