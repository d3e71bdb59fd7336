"""The app as a trader runs it, in a real window on an X server, with and without a window
manager, driven by the keyboard alone from launch (``real_window``): marks, a layout switch
followed by chart keys, undo and redo, quit, restart with the marks still on their candles;
the command palette starting a training run. What the app stored is read back from its
files once it has quit."""

from __future__ import annotations

import pytest

from workstation.annotations.model import Direction, Trade
from workstation.annotations.store import AnnotationStore
from workstation.market.csv_io import write_candles_csv
from workstation.paths import app_paths

from conftest import make_candles
from real_window import WINDOW_MANAGERS, App, display, needs, wait_until

pytestmark = pytest.mark.skipif(needs() is not None, reason=str(needs()))

N_CANDLES = 1200


@pytest.fixture(params=WINDOW_MANAGERS, ids=lambda wm: f"window manager: {wm}")
def screen(request):
    with display(request.param) as shown:
        yield shown


@pytest.fixture
def candle_file(tmp_path):
    return write_candles_csv(make_candles(N_CANDLES), tmp_path / "ethusdt_1m.csv")


def start(screen, home, candle_file) -> App:
    app = App(screen, home, "--source", f"csv:{candle_file}", "--symbol", "ETH/USDT",
              "--timeframe", "1m")
    try:
        app.wait_ready()
    except BaseException:
        app.kill()
        raise
    return app


def trades(home) -> list[tuple[Direction, int, int]]:
    store = AnnotationStore(app_paths(home).annotations_db)
    return sorted((a.direction, a.entry_ts, a.exit_ts) for a in store.list()
                  if isinstance(a, Trade))


def test_a_keyboard_only_session_from_launch_with_a_layout_switch_keeps_its_marks(
        screen, tmp_path, candle_file):
    home = tmp_path / "home"
    ts = make_candles(N_CANDLES).ts
    last = N_CANDLES - 1
    app = start(screen, home, candle_file)
    try:
        screen.keys("question", "Escape")  # the cheat sheet, not "…csv?" in the source field
        screen.keys("End", *["Left"] * 10, "l", *["Right"] * 5, "x")  # a long, from launch
        screen.keys("alt+4")  # four charts: chart 1 keeps the keyboard
        screen.keys("End", "Left", "Left", "Left", "s", "End", "x")  # a short on it
        screen.keys("ctrl+z")  # undo the short
        screen.keys("ctrl+shift+z")  # and redo it
        screen.keys("alt+1")
        assert app.quit() == 0, app.output()[-2000:]
    finally:
        app.kill()
    long = (Direction.LONG, int(ts[last - 10]), int(ts[last - 5]))
    short = (Direction.SHORT, int(ts[last - 3]), int(ts[last]))
    assert trades(home) == sorted([long, short])

    app = start(screen, home, candle_file)  # restarted: N finds the long on its candle
    try:
        screen.keys("Home", "n", "Delete")  # and Del deletes what is under the cursor
        assert app.quit() == 0, app.output()[-2000:]
    finally:
        app.kill()
    assert trades(home) == [short]


def test_the_palette_starts_a_training_run(screen, tmp_path, candle_file):
    home = tmp_path / "home"
    runs = app_paths(home).checkpoints_dir
    log = app_paths(home).log_file
    app = start(screen, home, candle_file)
    try:  # training can start once the devices are warmed up (the status bar names them)
        wait_until(lambda: "training panel: idle — ready" in log.read_text(errors="replace"),
                   120, "the training panel to be ready")
        screen.keys("ctrl+k")
        screen.type("start training")
        screen.keys("Return")
        wait_until(lambda: runs.is_dir() and any(runs.iterdir()), 120,
                   "a training run to be saved")
        assert app.quit() == 0, app.output()[-2000:]  # it stops at a safe point and saves
    finally:
        app.kill()
    assert [p.name for p in runs.iterdir()], "no run folder"


def test_a_blind_replay_started_with_keys_makes_a_blind_trade(screen, tmp_path, candle_file):
    home = tmp_path / "home"
    ts = make_candles(N_CANDLES).ts
    at = N_CANDLES - 1 - 100  # the cursor candle the replay starts at: the clock is its close
    app = start(screen, home, candle_file)
    try:
        screen.keys("End", *["Left"] * 100, "ctrl+shift+r")  # replay from the cursor
        screen.keys("l", "period", "period", "period", "End", "x")  # long now, out 3 later
        assert app.quit() == 0, app.output()[-2000:]
    finally:
        app.kill()
    store = AnnotationStore(app_paths(home).annotations_db)
    [trade] = [a for a in store.list() if isinstance(a, Trade)]
    [reviewed] = [a for a in store.list() if a.kind.value == "region"]
    store.close()
    minute = 60_000
    assert (trade.entry_ts, trade.exit_ts) == (int(ts[at]), int(ts[at + 3]))
    assert trade.blind and trade.decided_at == (int(ts[at]) + minute, int(ts[at + 3]) + minute)
    assert reviewed.blind and (reviewed.start_ts, reviewed.end_ts) == (int(ts[at + 1]),
                                                                       int(ts[at + 3]))


def test_drawings_made_with_keys_from_launch_are_stored(screen, tmp_path, candle_file):
    home = tmp_path / "home"
    candles = make_candles(N_CANDLES)
    at = N_CANDLES - 1 - 20
    app = start(screen, home, candle_file)
    try:  # a level on the cursor candle's high (the magnet), then a trend line moved and locked
        screen.keys("End", *["Left"] * 20, "h", "Up", "Up", "Up", "Up", "Return")
        screen.keys(*["Right"] * 5, "slash", "Return", *["Right"] * 10, "Return", "Escape")
        screen.keys("End", "shift+d", "alt+Right", "shift+l", "alt+Right")  # locked: stays
        assert app.quit() == 0, app.output()[-2000:]
    finally:
        app.kill()
    store = AnnotationStore(app_paths(home).annotations_db)
    level, trend = sorted(store.drawings.list(), key=lambda d: d.shape.value)
    store.close()
    minute = 60_000
    assert level.ts1 == int(candles.ts[at])
    assert level.price1 == pytest.approx(float(candles.high[at]), rel=1e-12)  # as the CSV holds it
    assert (trend.ts1, trend.ts2) == (int(candles.ts[at + 5]) + minute,
                                      int(candles.ts[at + 15]) + minute)
    assert (trend.price1, trend.price2) == pytest.approx((float(candles.close[at + 5]),
                                                          float(candles.close[at + 15])))
    assert trend.locked and not level.locked
