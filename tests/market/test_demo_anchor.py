"""The demo market stays put: its history hangs on an anchor fixed at first use in the data dir,
so a candle (and an annotation's entry price on it) is the same on every launch."""

import asyncio
import json

import numpy as np
import pytest

from workstation.cli import main
from workstation.errors import WorkstationError
from workstation.market.csv_io import read_candles_csv
from workstation.market.demo import DEMO_HISTORY, DemoMarket, demo_anchor
from workstation.market.sources import demo_market, demo_seed, load_series
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.paths import app_paths

DAY = 86_400_000
FIRST_USE = 1_750_000_012_345  # the wall clock when the demo market is first used


def same(a, b) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a.columns(), b.columns()))


def overlap(a, b):
    """``b``'s candles at the open times of ``a``."""
    first = b.index_of(int(a.ts[0]))
    return b.slice(first, first + len(a))


@pytest.mark.parametrize("symbol, timeframe", [("DEMO/USDT", "1m"), ("BTC/DEMO", "1s"),
                                               ("DEMO/USDT", "1h")])
def test_two_launches_at_different_times_give_the_same_candles(symbol, timeframe):
    demo_anchor(app_paths().demo_anchor, now_ms=FIRST_USE)
    first = demo_market(symbol, parse_timeframe(timeframe)).history(FIRST_USE + 3_600_000 + 7)
    later = demo_market(symbol, parse_timeframe(timeframe)).history(FIRST_USE + 8 * DAY + 1234)
    tf = first.timeframe.ms
    assert int(first.ts[0]) == int(later.ts[0]) == tf * (FIRST_USE // tf) - DEMO_HISTORY * tf
    assert len(first) == DEMO_HISTORY + 3_600_000 // tf and len(later) > len(first)
    assert same(first, overlap(first, later))
    assert np.all(later.open[1:] == later.close[:-1])  # each open is the close before it


def test_a_candle_picked_before_a_restart_keeps_its_close():
    """What a demo annotation relies on: its entry price is the close of the candle it sits on."""
    launch, key = load_series("demo", None, ONE_MINUTE, max_candles=500)  # creates the anchor now
    assert key.is_demo and len(launch) == 500 and app_paths().demo_anchor.is_file()
    picked = launch.row(321)
    entry_price = picked.close
    anchor = json.loads(app_paths().demo_anchor.read_text())["anchor_ms"]
    restart = demo_market(None, ONE_MINUTE).history(anchor + 40 * DAY)  # a launch 40 days later
    again = restart.row(restart.index_of(picked.ts))
    assert again.ts == picked.ts and again.close == entry_price and again == picked
    assert same(launch, overlap(launch, restart))


def test_each_symbol_and_timeframe_is_its_own_market():
    demo_anchor(app_paths().demo_anchor, now_ms=FIRST_USE)
    seeds = {demo_seed(s, parse_timeframe(tf)) for s in ("DEMO/USDT", "BTC/DEMO")
             for tf in ("1m", "5m")}
    assert len(seeds) == 4
    assert demo_seed("btc/demo ", ONE_MINUTE) == demo_seed("BTC/DEMO", ONE_MINUTE)
    now = FIRST_USE + DAY
    a = demo_market("DEMO/USDT", ONE_MINUTE).history(now, 1000)
    b = demo_market("BTC/DEMO", ONE_MINUTE).history(now, 1000)
    assert np.array_equal(a.ts, b.ts) and not np.array_equal(a.close, b.close)


def test_the_anchor_is_written_once_and_reused():
    path = app_paths().demo_anchor
    assert not path.exists()
    assert demo_anchor(path, now_ms=FIRST_USE) == FIRST_USE
    written = path.read_bytes()
    assert json.loads(written) == {"anchor_ms": FIRST_USE}
    assert demo_anchor(path, now_ms=FIRST_USE + 5 * DAY) == FIRST_USE
    assert (demo_market(None, ONE_MINUTE).origin_ms
            == DemoMarket(ONE_MINUTE, anchor_ms=FIRST_USE).origin_ms)
    assert path.read_bytes() == written
    assert [p.name for p in path.parent.iterdir()] == ["demo.json"]  # no temporary left behind


@pytest.mark.parametrize("content", [b"{not json", b'{"anchor_ms": "soon"}', b"[1, 2]",
                                     b'{"anchor_ms": true}', b"\xff\xfe\x00", b""])
def test_a_corrupt_anchor_is_a_one_line_error_and_is_left_alone(content, capsys):
    path = app_paths().demo_anchor
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.raises(WorkstationError) as error:
        load_series("demo", None, ONE_MINUTE, max_candles=10)
    message = str(error.value)
    assert str(path) in message and "\n" not in message
    out = path.parent / "out.csv"
    assert main(["candles", "export", "--source", "demo", "--timeframe", "1m",
                 "--out", str(out)]) == 1
    assert str(path) in capsys.readouterr().err and not out.exists()
    assert path.read_bytes() == content


def test_export_writes_the_demo_series(tmp_path, capsys):
    demo_anchor(app_paths().demo_anchor, now_ms=FIRST_USE)
    market = demo_market(None, parse_timeframe("5m"))
    since, until = market.origin_ms + 100 * 300_000, market.origin_ms + 199 * 300_000
    out = tmp_path / "demo.csv"
    assert main(["candles", "export", "--source", "demo", "--timeframe", "5m", "--out", str(out),
                 "--since", str(since), "--until", str(until)]) == 0
    printed = capsys.readouterr().out
    assert "DEMO" in printed and "wrote 100 " in printed
    got, want = read_candles_csv(out, parse_timeframe("5m")), market.candles(since, until + 1)
    assert len(want) == 100 and np.array_equal(got.ts, want.ts)
    assert all(np.allclose(x, y, rtol=1e-14, atol=0) for x, y in zip(got.columns()[1:],
                                                                     want.columns()[1:]))
    whole = tmp_path / "whole.csv"
    assert main(["candles", "export", "--source", "demo", "--symbol", "BTC/DEMO",
                 "--timeframe", "1h", "--out", str(whole)]) == 0
    series = read_candles_csv(whole, parse_timeframe("1h"))
    assert int(series.ts[0]) == demo_market("BTC/DEMO", parse_timeframe("1h")).origin_ms
    assert len(series) >= DEMO_HISTORY
    assert main(["candles", "export", "--source", "binance", "--timeframe", "1m",
                 "--out", str(tmp_path / "x.csv")]) == 1
    assert "--symbol is needed" in capsys.readouterr().err


def test_the_stream_continues_the_history_exactly():
    market = DemoMarket(ONE_MINUTE, anchor_ms=FIRST_USE, seed=9)
    # Start two candles before a chunk boundary so the stream crosses into a new chunk.
    now = market.origin_ms + (2 * 4096 - 2) * 60_000 + 30_000
    history = market.history(now)

    async def closed_candles(n):
        out = []
        async for update in market.stream(now, speed=0, ticks_per_candle=3):
            if update.closed:
                out.append(update)
                if len(out) == n:
                    return out

    streamed = asyncio.run(closed_candles(5))
    later = DemoMarket(ONE_MINUTE, anchor_ms=FIRST_USE, seed=9).history(now + DAY)
    want = later.slice(len(history), len(history) + 5)
    assert [u.ts for u in streamed] == list(want.ts) == [
        int(history.ts[-1]) + 60_000 * k for k in range(1, 6)]
    assert [u._replace(closed=True) for u in streamed] == [want.row(i) for i in range(5)]
    assert streamed[0].open == history.close[-1]


def test_the_window_shows_the_anchored_demo_market_and_streams_on():
    from workstation.ui.live_data import LiveData

    async def run():
        live = LiveData(app_paths().candle_cache)
        await live.open("demo", "ETH/DEMO", "1m", speed=0)
        while len(live.candles) < 20_003:  # history, then three streamed candles
            await asyncio.sleep(0)
        await live.stop()
        return live

    live = asyncio.run(run())
    anchor = json.loads(app_paths().demo_anchor.read_text())["anchor_ms"]
    assert live.state == "live" and live.key.is_demo and live.key.symbol == "ETH/DEMO"
    shown = live.candles.slice(0, len(live.candles) - 1)  # the last one may still be forming
    assert same(shown, overlap(shown,
                               demo_market("ETH/DEMO", ONE_MINUTE).history(anchor + 2 * DAY)))


def test_a_demo_annotation_sits_on_its_candle_after_a_restart(monkeypatch):
    """A trade marked on demo candles with the keyboard tool's rules, stored, and found on the
    same candles, at the same prices, by a launch three days later; it is a demo mark."""
    from workstation.annotations.editing import AnnotationTools
    from workstation.annotations.store import AnnotationStore
    from workstation.market import sources

    monkeypatch.setattr(sources.time, "time", lambda: FIRST_USE / 1000)
    candles, key = load_series("demo", "ETH/USDT", ONE_MINUTE, max_candles=300)
    tools = AnnotationTools()
    tools.open("long", candles, 120)
    trade = tools.close(candles, 180, key.market, key.timeframe.name)
    with AnnotationStore(app_paths().annotations_db) as store:
        store.add(trade)

    monkeypatch.setattr(sources.time, "time", lambda: (FIRST_USE + 3 * DAY) / 1000)
    later, later_key = load_series("demo", "ETH/USDT", ONE_MINUTE)
    with AnnotationStore(app_paths().annotations_db) as store:
        (saved,) = store.list(market=later_key.market)
        assert store.list(market="real") == []
    entry = later.row(later.index_of(saved.entry_ts))
    exit_ = later.row(later.index_of(saved.exit_ts))
    assert (entry.ts, entry.close) == (int(candles.ts[120]), saved.entry_price)
    assert (exit_.ts, exit_.close) == (int(candles.ts[180]), saved.exit_price)
    assert len(later) > len(candles) and saved.market_key == key.market
