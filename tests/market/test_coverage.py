"""`workstation fetch` and `candles list` with honest coverage, end to end through the CLI, the
real ccxt clients and loopback fakes of three paging styles (``fake_exchanges``)."""

import json
import sqlite3
import time

import numpy as np

from workstation.cli import main
from workstation.market.cache import CandleCache
from workstation.market.candles import Candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.paths import app_paths

from fake_exchanges import FakeBinanceGaps, FakeInThread, FakeKraken, FakeOKX

MIN = 60_000


def now_floor() -> tuple[int, int]:
    now = int(time.time() * 1000)
    return now, now - now % MIN


def fetch(fake, exchange, symbol, since, until) -> int:
    return main(["fetch", "--exchange", exchange, "--symbol", symbol, "--timeframe", "1m",
                 "--since", str(since), "--until", str(until),
                 "--ccxt-urls", json.dumps(fake.ccxt_urls()),
                 "--ccxt-options", json.dumps(fake.ccxt_options())])


def cached(key: SeriesKey):
    with CandleCache(app_paths().candle_cache) as cache:
        return cache.load(key), cache


def assert_stored_equals_served(key, expected):
    with CandleCache(app_paths().candle_cache) as cache:
        got = cache.load(key)
    assert len(got) == len(expected)
    for col, want in zip(got.columns(), expected.T):
        assert np.array_equal(col, want)


def missing(key, since, until):
    with CandleCache(app_paths().candle_cache) as cache:
        return cache.missing(key, since, until)


def test_fixed_windows_fetch_the_whole_range_across_a_gap_and_before_the_listing(capsys):
    now, nf = now_floor()
    listed = nf - 1500 * MIN
    gap = (nf - 1200 * MIN, nf - 601 * MIN)  # 600 candles: two 300-candle windows
    with FakeInThread(FakeOKX, first_ms=listed, now_ms=now, gaps=[gap],
                      list_time=False) as fake:
        since, until = listed - 400 * MIN, nf - 2 * MIN
        assert fetch(fake, "okx", "ETH/USDT", since, until) == 0
        out = capsys.readouterr().out
        assert "stored 899 candles" in out and "not covered" not in out
        key = SeriesKey("okx", "ETH/USDT", ONE_MINUTE)
        assert_stored_equals_served(key, fake.series("1m", since, until))
        assert missing(key, since, until) == []

        asked = len(fake.candle_requests)
        assert fetch(fake, "okx", "ETH/USDT", since, until) == 0
        assert "already cached" in capsys.readouterr().out
        assert len(fake.candle_requests) == asked

        assert main(["candles", "list"]) == 0
        table = capsys.readouterr().out.splitlines()
        assert table[0].split()[-1] == "uncovered"
        assert table[1].split()[-1] == "0" and "(600 candles)" in table[1]  # the gap


def test_a_range_before_the_listing_stores_nothing_and_exits_non_zero(capsys):
    now, nf = now_floor()
    listed = nf - 500 * MIN
    with FakeInThread(FakeOKX, first_ms=listed, now_ms=now) as fake:
        assert fetch(fake, "okx", "ETH/USDT", listed - 400 * MIN, listed - 100 * MIN) == 1
        err = capsys.readouterr().err
        assert "stored no candles" in err and "was listed" in err
        assert fake.candle_requests == []  # the listing time says it all
        assert fetch(fake, "okx", "ETH/USDT", listed - 400 * MIN, listed - 100 * MIN) == 1
        assert "has no candles" in capsys.readouterr().err


def test_recent_only_history_is_stored_said_and_asked_for_again(capsys):
    now, nf = now_floor()
    gap = (nf - 1000 * MIN, nf - 201 * MIN)  # 800 candles: longer than its 720 page
    with FakeInThread(FakeKraken, first_ms=nf - 50_000 * MIN, now_ms=now, gaps=[gap]) as fake:
        since, until = nf - 12_000 * MIN, nf - 2 * MIN
        assert fetch(fake, "kraken", "ETH/USD", since, until) == 0
        out = capsys.readouterr().out
        assert "serves only its newest 720 candles" in out
        assert "stored 718 candles" in out and "not covered" in out
        key = SeriesKey("kraken", "ETH/USD", ONE_MINUTE)
        oldest = fake.kept(MIN)[0]
        assert_stored_equals_served(key, fake.series("1m", oldest, until))
        assert missing(key, since, until) == [(since, oldest - MIN)]
        # the oldest batch finds where its history begins; the next older ones are not asked
        assert len(fake.candle_requests) == 2

        # a later fetch asks again; it still has nothing older: non-zero, and why
        assert fetch(fake, "kraken", "ETH/USD", since, until) == 1
        err = capsys.readouterr().err
        assert "stored no candles" in err and "serves only its newest 720 candles" in err
        assert len(fake.candle_requests) == 3


def test_over_claimed_coverage_of_an_old_cache_is_repaired(capsys):
    now, nf = now_floor()
    first = nf - 1000 * MIN
    gap = (first + 300 * MIN, first + 499 * MIN)
    with FakeInThread(FakeBinanceGaps, first_ms=first, now_ms=now, gaps=[gap]) as fake:
        key = SeriesKey("binance", "ETH/USDT", ONE_MINUTE)
        rows = fake.series("1m", first, first + 899 * MIN)
        stored = rows[(rows[:, 0] < first + 200 * MIN) | (rows[:, 0] >= first + 500 * MIN)]
        candles = Candles.from_columns(list(stored.T), ONE_MINUTE)
        path = app_paths().candle_cache
        with CandleCache(path) as cache:  # as an older fetch wrote it: all of it "covered"
            cache.put(key, candles, covered=(first, first + 899 * MIN))
        with sqlite3.connect(path) as db:
            db.execute("DELETE FROM repairs")  # a file from before the repair existed
        db.close()

        assert main(["candles", "list"]) == 0
        out = capsys.readouterr().out
        assert "1 (300 candles)" in out  # gap and uncovered: the same 300 candles
        assert "not covered (fetch asks again)" in out
        assert missing(key, first, first + 899 * MIN) == [(first + 200 * MIN,
                                                           first + 499 * MIN)]

        assert fetch(fake, "binance", "ETH/USDT", first, first + 899 * MIN) == 0
        assert "stored 100 candles (1 missing span(s) fetched)" in capsys.readouterr().out
        assert missing(key, first, first + 899 * MIN) == []
        starts = [int(q["startTime"]) for q in fake.candle_requests]
        assert starts == [first + 200 * MIN]
        assert_stored_equals_served(key, fake.series("1m", first, first + 899 * MIN))

        # repaired once: coverage the exchange confirmed (the gap) stays covered
        assert main(["candles", "list"]) == 0
        out = capsys.readouterr().out
        assert "not covered" not in out and out.splitlines()[1].split()[-1] == "0"
