"""`workstation fetch` end to end: the CLI, the real ccxt client, a loopback fake Binance and
the candle cache; a second fetch asks only for what is missing."""

import time

import numpy as np
import pytest

from workstation.cli import main
from workstation.market.cache import CandleCache
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.paths import app_paths

from fake_exchange import FakeBinance
from fake_exchanges import FakeInThread, fetch_args

MIN = 60_000



def test_fetch_pages_into_the_cache_and_refetches_only_what_is_missing(capsys):
    now = int(time.time() * 1000)
    first = now - now % MIN - 5000 * MIN
    with FakeInThread(FakeBinance, first_ms=first - 10_000 * MIN, now_ms=now) as fake:
        since, until = first, first + 2999 * MIN
        assert main(fetch_args(fake, since, until)) == 0
        out = capsys.readouterr()
        assert "stored 3000 candles" in out.out and "fetch binance ETH/USDT 1m [" in out.err
        pages = fake.klines_requests()
        assert len(pages) == 3  # 1000 a page
        key = SeriesKey("binance", "ETH/USDT", ONE_MINUTE)
        with CandleCache(app_paths().candle_cache) as cache:
            got = cache.load(key)
            tick, said = cache.tick("binance", "ETH/USDT")  # its PRICE_FILTER tickSize
        assert tick == 0.01 and said.startswith("binance price precision, recorded at fetch ")
        expected = fake.series("ETHUSDT", "1m", since, until)
        assert np.array_equal(got.ts, expected[:, 0].astype(np.int64))
        assert np.allclose(got.close, expected[:, 4])

        # the same range again: nothing to ask for
        assert main(fetch_args(fake, since, until)) == 0
        assert "already cached" in capsys.readouterr().out
        assert len(fake.klines_requests()) == 3

        # a wider range: only the two missing ends are requested
        assert main(fetch_args(fake, since - 500 * MIN, until + 500 * MIN)) == 0
        new = fake.klines_requests()[3:]
        starts = sorted(int(q["startTime"]) for q in new)
        assert starts == [since - 500 * MIN, until + MIN]
        with CandleCache(app_paths().candle_cache) as cache:
            assert len(cache.load(key)) == 4000


def test_fetch_errors_are_one_clear_line(capsys):
    now = int(time.time() * 1000)
    with FakeInThread(FakeBinance, first_ms=now - 10_000 * MIN, now_ms=now) as fake:
        args = fetch_args(fake, now - 100 * MIN)
        args[args.index("ETH/USDT")] = "ETH/NOPE"
        assert main(args) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("workstation: error: binance has no market "
                                                   "ETH/NOPE")
        assert fake.klines_requests() == []
    assert main(["fetch", "--since", "2024-01-01", "--ccxt-urls", "{bad"]) == 1
    assert "--ccxt-urls: not valid JSON" in capsys.readouterr().err
    assert main(["fetch", "--since", "2024-02-01", "--until", "2024-01-01"]) == 1
    assert "is before --since" in capsys.readouterr().err


@pytest.mark.parametrize("text, expected", [
    ("2024-01-01", 1704067200000), ("1704067200000", 1704067200000),
    ("2024-01-01T01:00", 1704070800000), ("2024-01-01T02:00+01:00", 1704070800000)])
def test_times_parse(text, expected):
    from workstation.timeparse import parse_time_ms

    assert parse_time_ms(text) == expected
    if len(text) == 10 and "-" in text:
        assert parse_time_ms(text, end_of_day=True) == expected + 86_400_000 - 1


def test_a_price_tick_comes_from_the_precision_an_exchange_gives():
    from types import SimpleNamespace

    from ccxt.base.decimal_to_precision import DECIMAL_PLACES, SIGNIFICANT_DIGITS, TICK_SIZE

    from workstation.market.ccxt_feed import price_tick

    def tick(mode, price):
        return price_tick(SimpleNamespace(precisionMode=mode), {"precision": {"price": price}})

    assert tick(TICK_SIZE, 0.01) == 0.01 and tick(DECIMAL_PLACES, 2) == 0.01
    assert tick(SIGNIFICANT_DIGITS, 5) is None  # no fixed grid
    for bad in (None, 0, -1, float("nan"), True, "0.01"):
        assert tick(TICK_SIZE, bad) is None
    assert price_tick(SimpleNamespace(precisionMode=TICK_SIZE), {}) is None
