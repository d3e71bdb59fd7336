"""PAPER trading in live mode, in the training workspace: off by default (no account, no
file), on (Ctrl+F6, remembered) the live steps' position calls trade an account shown on the
chart and in the Live tab, equal to the backtest engine on the same calls, with no exchange
order method called and no socket opened; after a restart the account shows again as it was
left. A real LiveData, chart and worker thread (tiny preset, CPU), as test_training_live."""

from __future__ import annotations

import re
import socket
from types import SimpleNamespace

import ccxt
import ccxt.async_support
import pytest
from PySide6.QtWidgets import QWidget

from workstation.backtest.engine import Costs
from workstation.backtest.paper import PaperAccount
from workstation.market.demo import demo_candles
from workstation.market.replay import forming_ticks
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ui.chart.chart_widget import ChartWidget
from workstation.ui.training.paper_view import BADGE, OFF, ON, SETTING, PaperTrading
from workstation.ui.training.prediction_overlay import CURRENT

from conftest import END_TS, WAIT_MS, demo_live
from live_replay import (
    Replay,
    assert_paper_is_the_engine,
    script_position_calls,
    wait_live,
)

BINANCE = SeriesKey("binance", "ETH/USDT", ONE_MINUTE)
BADGE_TEXT = re.compile(r"PAPER (flat|long|short)( → (flat|long|short) at next open)? · equity "
                        r"[\d,]+\.\d\d \([+-]\d+\.\d\d %\) · \d+ trades?")
@pytest.fixture
def replay(paths, qtbot):
    r = Replay(paths)
    qtbot.addWidget(r.chart)
    return r


@pytest.fixture
def scripted_calls(monkeypatch):
    return script_position_calls(monkeypatch)


@pytest.fixture
def no_orders(monkeypatch):
    """Every order method of every ccxt exchange, and every socket connection, fails and is
    recorded."""
    calls: list[str] = []

    def refuse(name):
        def refused(*_args, **_kwargs):
            calls.append(name)
            raise AssertionError(f"{name} was called")
        return refused

    for base in (ccxt.Exchange, ccxt.async_support.Exchange):
        for name in dir(base):
            if ((name.startswith(("create_", "cancel_", "edit_")) and "order" in name)
                    or name in ("withdraw", "transfer")):
                monkeypatch.setattr(base, name, refuse(f"{base.__module__}.{name}"))
    monkeypatch.setattr(socket.socket, "connect", refuse("socket.connect"))
    monkeypatch.setattr(socket, "create_connection", refuse("socket.create_connection"))
    return calls


def finish(qtbot, dock) -> None:
    dock.stop()
    qtbot.waitUntil(lambda: dock.state == "idle" and not dock.busy, timeout=WAIT_MS)


def test_paper_trading_is_off_by_default_and_creates_nothing(qtbot, replay, make_dock, paths):
    dock = make_dock(replay.live, replay.chart, epochs=1)
    paper = dock.paper
    assert not paper.enabled and not paper.checkbox.isChecked()
    assert not dock.command_actions["train.paper"].isChecked()
    assert paper.view.summary.text() == OFF
    dock.start_live_training()
    wait_live(qtbot, dock)
    replay.feed(4, qtbot, dock=dock)
    qtbot.waitUntil(lambda: dock.events_seen["LiveStep"] >= 3, timeout=WAIT_MS)
    assert paper.account is None and not paths.paper_db.exists()
    assert BADGE not in replay.chart.overlays.badges
    assert replay.chart.overlays.badge.group == CURRENT  # the suggestion alone
    finish(qtbot, dock)
    assert not paths.paper_db.exists()


def test_live_signals_trade_a_paper_account_on_the_chart_and_in_the_live_tab(
        qtbot, replay, make_dock, paths, scripted_calls, no_orders):
    replay.show(replay.live.candles, BINANCE)  # costs from ccxt's fee table: no network
    dock = make_dock(replay.live, replay.chart, epochs=1)
    paper, overlays = dock.paper, replay.chart.overlays
    dock.command_actions["train.paper"].trigger()  # Ctrl+F6
    assert paper.enabled and paper.checkbox.isChecked() and paper.account is None
    assert paper.settings.value(SETTING, type=bool)
    dock.start_live_training()
    wait_live(qtbot, dock)
    # a new account shows at once, before any step
    assert overlays.badges[BADGE].text == "PAPER flat · equity 10,000.00 (+0.00 %) · 0 trades"
    replay.feed(45, qtbot, dock=dock)
    qtbot.waitUntil(lambda: paper.account is not None and len(paper.account.trades) >= 4,
                    timeout=WAIT_MS)
    fed = int(replay.live.candles.ts[-1])  # the last candle fed, closed
    # every fed candle reached the account
    qtbot.waitUntil(lambda: paper.account.state.closed_ts == fed, timeout=WAIT_MS)
    account = paper.account
    # the chart: the suggestion, and below it the PAPER badge
    assert list(overlays.badges) == [CURRENT, BADGE]
    badge = overlays.badges[BADGE].text
    assert BADGE_TEXT.fullmatch(badge), badge
    assert f"· {len(account.trades)} trades" in badge
    # the Live tab: the account in words and its trades, newest first, all PAPER
    view = paper.view
    assert dock.curves.live_page.isAncestorOf(view) and view.title().startswith("PAPER")
    text = view.summary.text()
    assert text.startswith("PAPER binance ETH/USDT 1m · a fresh model started ")
    assert "no order is ever sent" in text and "binance taker fee (ccxt)" in text
    rows = view.rows()
    assert len(rows) == len(account.trades)
    assert [int(r[0]) for r in rows] == list(range(len(rows), 0, -1))
    assert all(r[1] in ("PAPER long", "PAPER short") for r in rows)
    run = dock._live_account
    finish(qtbot, dock)
    assert BADGE not in overlays.badges and paper.account is None
    assert "live mode stopped: the account is saved" in view.summary.text()
    assert no_orders == []

    # what was saved is the backtest engine on the same calls (carried over coalesced ones)
    with PaperAccount(paths.paper_db, BINANCE.provenance, run, costs=Costs(0.0)) as saved:
        assert saved.costs.fee_source == "binance taker fee (ccxt)"
        assert assert_paper_is_the_engine(saved, replay.live.candles, scripted_calls) >= 4


def test_after_a_restart_the_paper_account_shows_again(qtbot, replay, make_dock, paths,
                                                       scripted_calls):
    first = make_dock(replay.live, replay.chart, epochs=1)
    first.start_live_training()  # a run to infer with: saved at Stop
    wait_live(qtbot, first)
    replay.feed(4, qtbot, dock=first)
    qtbot.waitUntil(lambda: first.events_seen["LiveStep"] >= 3, timeout=WAIT_MS)
    finish(qtbot, first)
    trained = first.current_run_id
    first.paper.set_enabled(True)  # the checkbox's way
    first.start_live()
    wait_live(qtbot, first)
    replay.feed(12, qtbot, dock=first)
    qtbot.waitUntil(lambda: first.paper.account is not None
                    and len(first.paper.account.trades) >= 1, timeout=WAIT_MS)
    finish(qtbot, first)
    left = replay.chart.overlays  # the badge went with live mode; the Live tab keeps it
    assert BADGE not in left.badges
    before = first.paper.view.rows()
    assert before and first._live_account == f"run {trained}"
    assert first.shutdown(60.0)

    again = make_dock(replay.live, replay.chart, epochs=1)  # a new window: remembered on
    assert again.paper.enabled and again.paper.checkbox.isChecked()
    again.current_run_id = trained
    again.start_live()
    wait_live(qtbot, again)
    assert again.paper.account is not None
    assert again.paper.view.rows() == before
    with PaperAccount(paths.paper_db, replay.live.key.provenance, f"run {trained}",
                      costs=Costs(0.0)) as saved:
        assert left.badges[BADGE].text.endswith(f"· {len(saved.trades)} trade"
                                                f"{'' if len(saved.trades) == 1 else 's'}")
        assert again.paper.account.state == saved.state
    finish(qtbot, again)


# -- the toggle and a damaged file, without a live session --------------------------------------
@pytest.fixture
def bare(qtbot, paths):
    """PaperTrading on a LiveData of 300 demo candles and a chart, the 301st candle to come."""
    live = demo_live(paths, n=300)
    chart = ChartWidget()
    qtbot.addWidget(chart)
    chart.set_candles(live.candles, live.key)
    host = QWidget()
    qtbot.addWidget(host)
    yield PaperTrading(paths, live, chart, host), live, chart
    host.close()


def step_at(ts: int, probs) -> SimpleNamespace:
    """What ``PaperTrading.step`` reads of an ``online.OnlineStep``."""
    return SimpleNamespace(prediction=SimpleNamespace(ts=ts, position_probs=probs))


def test_turning_paper_trading_on_and_off_in_live_mode(bare, paths):
    paper, live, chart = bare
    paper.start(live.key, "run X")  # off: nothing opens
    assert paper.account is None and not paths.paper_db.exists()
    paper.set_enabled(True)  # on in live mode: the account opens now
    assert paper.account is not None and paper.view.summary.text().startswith(
        "PAPER DEMO (simulated market) DEMO/USDT 1m · run X")
    newest = int(live.candles.ts[-1])
    paper.step(step_at(newest, (0.1, 0.8, 0.1)))  # long, to fill at the next open
    assert chart.overlays.badges[BADGE].text == ("PAPER flat → long at next open · equity "
                                                 "10,000.00 (+0.00 %) · 0 trades")
    nxt = demo_candles(301, seed=3, end_ts=END_TS + 60_000).row(300)
    assert nxt.ts == newest + 60_000
    live.candles.apply(forming_ticks(nxt, 2)[0])  # the next candle begins
    live.candles_changed.emit("append")
    assert paper.account.position.direction == 1 and paper.account.position.entry_ts == nxt.ts
    assert chart.overlays.badges[BADGE].text.startswith("PAPER long · equity 10,000.00")
    paper.set_enabled(False)
    assert paper.account is None and BADGE not in chart.overlays.badges
    assert paper.view.summary.text().endswith("PAPER trading turned off: the account is saved")
    paper.stop()
    paper.set_enabled(True)  # outside live mode: remembered, nothing opens
    assert paper.account is None and paper.view.summary.text() == ON
    with PaperAccount(paths.paper_db, live.key.provenance, "run X", costs=Costs(0.0)) as saved:
        assert saved.position.entry_ts == nxt.ts and saved.costs.fee == 0.001


def test_a_damaged_paper_file_stops_paper_trading_with_one_line_and_is_kept(bare, paths):
    paper, live, chart = bare
    paths.paper_db.write_bytes(b"not a database, " * 512)
    before = paths.paper_db.read_bytes()
    paper.set_enabled(True)
    paper.start(live.key, "run X")
    assert paper.account is None and paper.error is not None
    text = paper.view.summary.text()
    assert text.startswith(f"PAPER trading stopped: paper trading file {paths.paper_db} cannot "
                           "be used: not a readable SQLite database")
    assert len(text.splitlines()) == 1 and "Move it aside" in text
    assert BADGE not in chart.overlays.badges
    paper.step(step_at(int(live.candles.ts[-1]), (0.1, 0.8, 0.1)))  # nothing to trade on
    assert paths.paper_db.read_bytes() == before
