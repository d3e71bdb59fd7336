"""One writer per run (an OS lock a second writer is refused by, naming the holder; the lock
of a killed process is taken over), and stores that many processes may create at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from workstation.locking import FileLock, LockedError
from workstation.ml.checkpoints import CheckpointStore

from saved_runs import save_run

HOLD = """
import sys, time
from workstation.ml.checkpoints import CheckpointStore
lock = CheckpointStore(sys.argv[1]).lock(sys.argv[2]).acquire()
print("held", flush=True)
time.sleep(600)
"""


def holder(root, run_id) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(root), run_id],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_writer_is_refused_naming_the_holder_until_it_dies():
    store = CheckpointStore()
    run = save_run(store, 1)
    proc = holder(store.root, run)
    try:
        with pytest.raises(LockedError, match=rf"run {run} is in use by pid {proc.pid} "
                                              r"\(.*-c .*\)"):
            store.lock(run).acquire()
        with pytest.raises(LockedError):
            store.delete_run(run)
        assert run in store.run_ids()  # nothing was deleted
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with store.lock(run) as lock:  # the dead holder's lock is taken over
        assert lock.held
    assert store.delete_run(run) > 0 and run not in store.run_ids()


def test_two_trainers_on_one_run_one_is_refused_at_once(capsys):
    from workstation.cli import main

    store = CheckpointStore()
    argv = ["train", "--source", "demo", "--max-candles", "3000", "--seq-len", "32",
            "--stride", "32", "--batch-size", "16", "--epochs", "1", "--threads", "1"]
    assert main(argv) == 0
    (run,) = store.run_ids()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    first = subprocess.Popen([sys.executable, "-m", "workstation", *argv[:-4], "--resume", run,
                              "--epochs", "400", "--threads", "1"], env=env,
                             stderr=subprocess.PIPE, text=True)
    try:
        for line in first.stderr:  # it is training: it holds the run
            if line.startswith("run ") or "epoch" in line:
                break
        time.sleep(0.5)
        capsys.readouterr()
        assert main(["train", "--source", "demo", "--max-candles", "3000", "--resume", run,
                     "--epochs", "400"]) == 1
        err = capsys.readouterr().err
        assert f"run {run} is in use by pid {first.pid}" in err and "--resume" in err
    finally:
        first.send_signal(signal.SIGINT)
        assert first.wait(timeout=60) == 130
    assert store.load(run).meta["reason"] == "stopped"  # the first saved as a stop saves


def test_clear_stops_at_a_locked_run_and_says_which(capsys):
    from workstation.cli import main

    store = CheckpointStore()
    runs = [save_run(store, 1), save_run(store, 2)]
    proc = holder(store.root, runs[1])
    try:
        assert main(["checkpoints", "clear", "--yes"]) == 1
        assert f"run {runs[1]} is in use by pid {proc.pid}" in capsys.readouterr().err
        assert store.run_ids() == runs  # all or nothing: not even the free run went
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


OPEN = """
import os, sys, time
from workstation.annotations.store import AnnotationStore
from workstation.market.cache import CandleCache
kind, path, go = sys.argv[1:]
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.001)
try:
    (AnnotationStore if kind == "annotations" else CandleCache)(path).close()
    print("ok")
except Exception as exc:
    print(f"{type(exc).__name__}: {exc}")
"""


@pytest.mark.parametrize("kind", ["annotations", "cache"])
def test_ten_processes_may_create_a_store_at_once(tmp_path, kind):
    """The window and a CLI import at first launch open a new file at the same moment."""
    path, go = tmp_path / f"{kind}.sqlite", tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", OPEN, kind, str(path), str(go)],
                              stdout=subprocess.PIPE, text=True) for _ in range(10)]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    go.touch()  # all at once
    assert [p.communicate(timeout=120)[0].strip() for p in procs] == ["ok"] * 10


def test_a_file_lock_names_no_one_when_its_holder_wrote_nothing(tmp_path):
    path = tmp_path / "x.lock"
    with FileLock(path, "the thing"):
        path.write_text("")  # the holder's note lost: still refused, naming no pid
        with pytest.raises(LockedError, match="the thing is in use by another process"):
            FileLock(path, "the thing").acquire()
