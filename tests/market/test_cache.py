"""CandleCache: round trip, merge, coverage for incremental fetches, kill-safety, bad files."""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from workstation.market.cache import BLOCK_CANDLES, CacheError, CandleCache
from workstation.market.candles import Candles
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE

KEY = SeriesKey("binance", "eth/usdt", ONE_MINUTE)
MIN = 60_000


def same(a: Candles, b: Candles) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a.columns(), b.columns()))


def test_round_trip_across_blocks_and_ranges(tmp_path):
    candles = demo_candles(3 * BLOCK_CANDLES + 17, ONE_MINUTE, seed=1, end_ts=10**12)
    with CandleCache(tmp_path / "c.sqlite") as cache:
        assert cache.put(KEY, candles) == len(candles)
    with CandleCache(tmp_path / "c.sqlite") as cache:
        assert same(cache.load(KEY), candles)
        lo, hi = int(candles.ts[100]), int(candles.ts[5000])
        assert same(cache.load(KEY, since=lo, until=hi), candles.slice(100, 5001))
        assert len(cache.load(SeriesKey("binance", "BTC/USDT", ONE_MINUTE))) == 0
        [summary] = cache.series()
        assert (summary.count, summary.gaps, summary.first_ts) == (len(candles), 0, candles.ts[0])


def test_merge_overwrites_overlap_and_keeps_the_rest(tmp_path):
    candles = demo_candles(5000, ONE_MINUTE, seed=2, end_ts=10**12)
    with CandleCache(tmp_path / "c.sqlite") as cache:
        cache.put(KEY, candles.slice(0, 3000))
        newer = candles.slice(2500, 5000)
        cols = [c.copy() for c in newer.columns()]
        cols[5][:] = 1.0  # different volume on the overlap wins
        cache.put(KEY, Candles.from_arrays(*cols, timeframe=ONE_MINUTE))
        got = cache.load(KEY)
        assert got.ts.tolist() == candles.ts.tolist()
        assert np.array_equal(got.volume[:2500], candles.volume[:2500])
        assert np.all(got.volume[2500:] == 1.0)


def test_forming_candle_is_not_stored(tmp_path):
    candles = demo_candles(10, ONE_MINUTE, seed=3, end_ts=10**12)
    candles.last_closed = False
    with CandleCache(tmp_path / "c.sqlite") as cache:
        assert cache.put(KEY, candles) == 9
        assert len(cache.load(KEY)) == 9
        last = int(candles.ts[-1])
        assert cache.missing(KEY, int(candles.ts[0]), last) == [(last, last)]


def test_missing_spans_follow_coverage_including_empty_stretches(tmp_path):
    with CandleCache(tmp_path / "c.sqlite") as cache:
        assert cache.missing(KEY, 0, 99 * MIN) == [(0, 99 * MIN)]
        # fetched 10..39, and the exchange had nothing for 40..49: still covered
        part = demo_candles(30, ONE_MINUTE, seed=4, end_ts=40 * MIN)
        cache.put(KEY, part, covered=(10 * MIN, 49 * MIN))
        assert cache.missing(KEY, 0, 99 * MIN) == [(0, 9 * MIN), (50 * MIN, 99 * MIN)]
        cache.put(KEY, Candles(ONE_MINUTE), covered=(50 * MIN, 60 * MIN))
        assert cache.missing(KEY, 0, 99 * MIN + 5) == [(0, 9 * MIN), (61 * MIN, 99 * MIN)]
        assert cache.missing(KEY, 20 * MIN, 55 * MIN) == []


def test_not_a_database_is_a_clear_error_and_untouched(tmp_path):
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    before = path.read_bytes()
    with pytest.raises(CacheError, match=r"cannot be used: damaged \(file is not a database"):
        CandleCache(path)
    assert path.read_bytes() == before


def test_kill_during_a_write_leaves_the_previous_state(tmp_path):
    path = tmp_path / "c.sqlite"
    first = demo_candles(4000, ONE_MINUTE, seed=5, end_ts=10**12)
    with CandleCache(path) as cache:
        cache.put(KEY, first)
    # The child writes a second series block by block and stops, mid-transaction, after the
    # first blocks are written; then it is killed.
    script = textwrap.dedent(f"""
        import time
        from workstation.market import cache as cache_module
        from workstation.market.demo import demo_candles
        from workstation.market.series import SeriesKey
        from workstation.market.timeframes import ONE_MINUTE
        merge = cache_module.CandleCache._merge_block
        written = []
        def slow_merge(self, *args):
            merge(self, *args)
            written.append(1)
            if len(written) == 3:
                print("mid-write", flush=True)
                time.sleep(60)
        cache_module.CandleCache._merge_block = slow_merge
        more = demo_candles(20_000, ONE_MINUTE, seed=6, end_ts=10**12 + 10**9)
        key = SeriesKey("binance", "ETH/USDT", ONE_MINUTE)
        cache_module.CandleCache({str(path)!r}).put(key, more)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "mid-write"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    with CandleCache(path) as cache:
        assert same(cache.load(KEY), first)
        assert cache.missing(KEY, int(first.ts[0]), int(first.ts[-1])) == []
