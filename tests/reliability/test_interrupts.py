"""Ctrl-C and SIGTERM at random moments of real commands in subprocesses: they stop at a safe
point, keep what a stop keeps (a loadable "stopped" checkpoint; all or nothing of an import;
the spans a fetch stored), print one line and exit 130 (143): no traceback, no abort."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from workstation.market.cache import CandleCache
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.checkpoints import CheckpointStore
from workstation.paths import app_paths

from fake_exchange import FakeBinance
from fake_exchanges import FakeInThread, fetch_args

MIN = 60_000
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}


def start(home, *argv) -> subprocess.Popen:
    env = dict(os.environ, WORKSTATION_HOME=str(home), PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "workstation", *argv], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def handles_signals(proc: subprocess.Popen) -> bool:
    """Whether the command has taken over SIGTERM (and so SIGINT): from then on a signal is
    its to handle. Before, the interpreter is still starting and a signal simply ends it."""
    with open(f"/proc/{proc.pid}/status") as status:
        caught = next(line for line in status if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (signal.SIGTERM - 1) & 1)


def signalled(procs: list[tuple[subprocess.Popen, int, float]], ready=handles_signals,
              ) -> list[tuple[int, str]]:
    """Send each process its signal ``delay`` seconds after ``ready(proc)`` holds for it (by
    default: it took over the signals), all running at once; their exit codes and stderr."""
    deadline = time.monotonic() + 60
    ready_at: dict[int, float] = {}
    waiting = list(procs)
    while waiting:
        now = time.monotonic()
        for item in list(waiting):
            proc, signum, delay = item
            if proc.pid not in ready_at:
                assert now < deadline and proc.poll() is None
                if handles_signals(proc) and ready(proc):
                    ready_at[proc.pid] = now
            if proc.pid in ready_at and now >= ready_at[proc.pid] + delay:
                proc.send_signal(signum)
                waiting.remove(item)
        time.sleep(0.005)
    return [(proc.wait(timeout=120), proc.stderr.read()) for proc, _, _ in procs]


def check_ending(code: int, err: str, signum: int) -> None:
    assert code == STATUS[signum], err[-3000:]
    assert "Traceback" not in err and "terminate called" not in err, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith(("workstation: interrupted", "workstation: terminated",
                            "stopped after", "workstation: evaluation stopped")), err[-2000:]


def test_train_stops_at_a_safe_point_whenever_the_signal_comes(tmp_path):
    rng = np.random.default_rng(7)
    # The first signal comes as soon as the command handles signals (it may still be setting
    # up); the others a random moment after the run has trained and recorded a step.
    moments = [0.0, *sorted(rng.uniform(0.0, 2.0, 4))]
    homes = [tmp_path / f"run{i}" for i in range(5)]
    procs = [(start(home, "train", "--source", "demo", "--max-candles", "4000", "--seq-len",
                    "32", "--batch-size", "16", "--epochs", "500", "--threads", "1"),
              signal.SIGINT if i % 2 == 0 else signal.SIGTERM, moment)
             for i, (home, moment) in enumerate(zip(homes, moments))]
    home_of = {proc.pid: home for (proc, _, _), home in zip(procs, homes)}
    first = procs[0][0].pid

    def trained_a_step(proc) -> bool:  # each process is timed from its own ready moment
        checkpoints = app_paths(home_of[proc.pid]).checkpoints_dir
        return proc.pid == first or any(checkpoints.glob("*/*/history.jsonl"))

    endings = signalled(procs, ready=trained_a_step)
    for (code, err), (_, signum, _), home in zip(endings, procs, homes):
        check_ending(code, err, signum)
        store = CheckpointStore(app_paths(home).checkpoints_dir)
        for run in store.run_ids():  # whatever was saved loads, and a stop saved last
            loaded = store.load(run)
            if "stopped after" in err:
                assert loaded.meta["reason"] == "stopped" and loaded.step > 0
    assert all("stopped after" in err for _, err in endings[1:])  # mid-training: all saved


def test_evaluate_stops_between_batches(tmp_path):
    procs = [(start(tmp_path / f"e{i}", "evaluate", "--source", "demo", "--timeframe", "1h",
                    "--max-candles", "4000", "--seq-len", "32", "--folds", "2", "--epochs",
                    "200", "--threads", "1", "--stride", "32"), signum, delay)
             for i, (signum, delay) in enumerate(((signal.SIGINT, 1.0),
                                                  (signal.SIGTERM, 4.0)))]
    for (code, err), (_, signum, _) in zip(signalled(procs), procs):
        check_ending(code, err, signum)


def write_csv(path, n: int) -> None:
    ts = 1_600_000_020_000 + MIN * np.arange(n, dtype=np.int64)  # on the minute grid
    close = 100 + np.cumsum(np.random.default_rng(0).normal(0, 0.1, n))
    rows = np.column_stack([ts, close, close + 0.5, close - 0.5, close, np.ones(n)])
    np.savetxt(path, rows, fmt=["%d", "%.4f", "%.4f", "%.4f", "%.4f", "%.1f"], delimiter=",",
               header="ts,open,high,low,close,volume", comments="")


def test_an_interrupted_import_keeps_all_or_nothing(tmp_path):
    csv = tmp_path / "big.csv"
    write_csv(csv, 600_000)
    rng = np.random.default_rng(3)
    moments = sorted(rng.uniform(0.3, 3.0, 3))
    homes = [tmp_path / f"i{i}" for i in range(3)]
    procs = [(start(home, "import-candles", str(csv), "--symbol", "ETH/USDT", "--timeframe",
                    "1m"), signal.SIGINT if i != 1 else signal.SIGTERM, moment)
             for i, (home, moment) in enumerate(zip(homes, moments))]
    for (code, err), (_, signum, _), home in zip(signalled(procs), procs, homes):
        if code == 0:  # it finished before the signal: all of it is there
            expected = 600_000
        else:
            check_ending(code, err, signum)
            expected = 0
        path = app_paths(home).candle_cache
        if path.exists():
            with CandleCache(path) as cache:
                assert len(cache.load(SeriesKey("csv", "ETH/USDT", ONE_MINUTE))) == expected
        else:
            assert expected == 0


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_fetch_keeps_the_spans_it_stored(tmp_path, signum):
    now = int(time.time() * 1000)
    first = now - now % MIN - 60_000 * MIN
    with FakeInThread(FakeBinance, first_ms=first, now_ms=now) as fake:
        home = tmp_path / "f"
        proc = start(home, *fetch_args(fake, first))
        key = SeriesKey("binance", "ETH/USDT", ONE_MINUTE)

        def stored_a_batch(_proc) -> bool:  # the signal then lands mid-fetch, never before
            path = app_paths(home).candle_cache
            if not path.exists():
                return False
            with CandleCache(path) as cache:
                return len(cache.load(key)) > 0

        delay = float(np.random.default_rng(signum).uniform(0.0, 0.4))
        ((code, err),) = signalled([(proc, signum, delay)], ready=stored_a_batch)
        check_ending(code, err, signum)
        with CandleCache(app_paths(home).candle_cache) as cache:
            candles = cache.load(key)
            missing = cache.missing(key, first, now - now % MIN - MIN)
        # whole batches were kept, from the start, with no gap; the rest is still missing
        assert len(candles) >= 5000 and len(candles) % 5000 == 0, len(candles)
        assert int(candles.ts[0]) == first and np.all(np.diff(candles.ts) == MIN)
        assert missing and missing[0][0] == int(candles.ts[-1]) + MIN
        rerun = start(home, *fetch_args(fake, first))  # continues where it stopped
        assert rerun.wait(timeout=120) == 0, rerun.stderr.read()[-2000:]
        with CandleCache(app_paths(home).candle_cache) as cache:
            assert not cache.missing(key, first, int(cache.load(key).ts[-1]))
