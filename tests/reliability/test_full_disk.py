"""A full disk, for real: a small tmpfs filled to leave nothing, one page or 64 KiB free, under
every write path (candle import and fetch, annotation import and edits, exports, training's
checkpoints and history, the paper account) and the reads. Each ends with one line that says the
disk is full, names the file or folder and says what is intact; what was saved before reads
back the same; a healthy file is never called damaged."""

from __future__ import annotations

import shutil
import time

import pytest
import torch

from workstation.annotations.io import export_annotations
from workstation.annotations.model import Point
from workstation.annotations.store import AnnotationsDiskFullError, AnnotationStore
from workstation.backtest.engine import Costs
from workstation.backtest.paper import PaperAccount, PaperDiskFullError
from workstation.cli import main
from workstation.market.cache import CandleCache
from workstation.market.csv_io import write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.series import SeriesKey
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.checkpoints import CheckpointStore
from workstation.ml.history.reader import read_history
from workstation.paths import app_paths
from workstation.storage import DiskFullError, is_disk_full

from fake_exchange import FakeBinance
from fake_exchanges import FakeInThread, fetch_args
from full_disk import LEVELS, small_tmpfs

T0 = 1_700_000_000_000
MIN = 60_000
PAGE = 4096
SHM_BYTES = 32 * 1024  # what SQLite's -shm needs before it reads anything
TRAIN = ["train", "--source", "demo", "--max-candles", "3000", "--seq-len", "32", "--stride", "4",
         "--batch-size", "16", "--threads", "1", "--preset", "tiny"]


@pytest.fixture
def disk(tmp_path):
    with small_tmpfs(tmp_path / "disk") as mounted:
        yield mounted


@pytest.fixture
def on_disk(disk, monkeypatch):
    """The app's home on the small disk: ``--data-dir`` for the CLI (and for the core)."""
    home = disk.root / "home"
    monkeypatch.setenv("WORKSTATION_HOME", str(home))
    return ["--data-dir", str(home)]


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A tiny run trained for one epoch by the CLI in a home of its own: its folder (the
    demo market's anchor is in its home's ``data``)."""
    home = tmp_path_factory.mktemp("trained") / "home"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORKSTATION_HOME", str(home))
        assert main([*TRAIN, "--epochs", "1", "--log-every", "1"]) == 0
        store = CheckpointStore()
        (run,) = store.run_ids()
        return store.run_dir(run)


def cli(capsys, *argv: str) -> tuple[int, str, list[str]]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, [line for line in err.replace("\r", "\n").splitlines() if line.strip()]


def said_full(err: list[str], path, intact: str = "intact") -> str:
    """The command ended with one line saying the disk is full, naming ``path`` and what is
    ``intact``; no line calls a file damaged or shows a raw OS error. Returns that line."""
    assert err, "the command said nothing"
    last = err[-1]
    assert last.startswith("workstation: error: ") and "disk full: " in last, err
    assert str(path) in last and intact in last, last
    for line in err:
        assert "damaged" not in line and "Move it aside" not in line, line
        assert "Traceback" not in line and "Errno" not in line and "os error" not in line, line
    return last


def point(i: int, notes: str = "") -> Point:
    return Point(symbol="ETH/USDT", timeframe="1m", ts=T0 + i * MIN, notes=notes,
                 created_at=T0, updated_at=T0)


def marks_file(path, first: int, n: int, note_bytes: int = 2000):
    """A JSON export of ``n`` points with long notes (``n * note_bytes`` bytes of them)."""
    with AnnotationStore(path.with_suffix(".sqlite")) as store:
        store.merge([point(first + i, "n" * note_bytes) for i in range(n)])
        export_annotations(store, path)
    return path


def candles_file(path, n: int, seed: int, end_ts: int = T0):
    return write_candles_csv(demo_candles(n, ONE_MINUTE, seed=seed, end_ts=end_ts), path)


# -- reads ------------------------------------------------------------------------------------

@pytest.mark.parametrize("leave", LEVELS)
def test_reads_on_a_full_disk_say_so_and_never_call_a_healthy_file_damaged(
        on_disk, disk, tmp_path, capsys, leave):
    csv = candles_file(tmp_path / "c.csv", 500, seed=1)
    assert cli(capsys, *on_disk, "import-candles", str(csv), "--symbol", "ETH/USDT",
               "--timeframe", "1m")[0] == 0
    assert cli(capsys, *on_disk, "annotations", "import",
               str(marks_file(tmp_path / "m.json", 0, 10)))[0] == 0
    paths = app_paths()
    reads = {("candles", "list"): paths.candle_cache,
             ("annotations", "list"): paths.annotations_db}
    listed = {argv: cli(capsys, *on_disk, *argv)[1] for argv in reads}
    files = {path: path.read_bytes() for path in reads.values()}
    disk.fill(leave)
    for argv, path in reads.items():
        status, out, err = cli(capsys, *on_disk, *argv)
        if leave < SHM_BYTES:
            assert status == 1 and out == ""
            line = said_full(err, path, "the file is intact and nothing was changed")
            assert "cannot read" in line
        else:
            assert status == 0 and out == listed[argv]
    disk.unfill()
    assert {path: path.read_bytes() for path in files} == files
    assert {argv: cli(capsys, *on_disk, *argv)[1] for argv in reads} == listed


# -- candles ------------------------------------------------------------------------------------

@pytest.mark.parametrize("leave", LEVELS)
def test_candle_import_and_fetch_on_a_full_disk_say_so_and_keep_the_cache(
        on_disk, disk, tmp_path, capsys, leave):
    first = candles_file(tmp_path / "first.csv", 500, seed=1)
    assert cli(capsys, *on_disk, "import-candles", str(first), "--symbol", "ETH/USDT",
               "--timeframe", "1m")[0] == 0
    cache_path = app_paths().candle_cache
    key = SeriesKey("csv", "ETH/USDT", ONE_MINUTE)
    with CandleCache(cache_path) as cache:
        before = cache.load(key)
    big = candles_file(tmp_path / "big.csv", 20_000, seed=2, end_ts=T0 + 10**9)  # ~1 MB stored
    now = int(time.time() * 1000)
    since = now - now % MIN - 5000 * MIN
    with FakeInThread(FakeBinance, first_ms=since - 10_000 * MIN, now_ms=now) as fake:
        disk.fill(leave)
        status, _, err = cli(capsys, *on_disk, "import-candles", str(big), "--symbol",
                             "BTC/USDT", "--timeframe", "1m", "--symbol-mismatch-ok")
        assert status == 1
        said_full(err, cache_path)
        status, _, err = cli(capsys, *on_disk, *fetch_args(fake, since, since + 2999 * MIN))
        assert status == 1
        said_full(err, cache_path)
    disk.unfill()
    with CandleCache(cache_path) as cache:
        assert cache.keys() == [key]
        after = cache.load(key)
    assert after.ts.tolist() == before.ts.tolist()
    assert after.close.tolist() == before.close.tolist()


# -- annotations --------------------------------------------------------------------------------

@pytest.mark.parametrize("leave", LEVELS)
def test_annotation_import_and_edits_on_a_full_disk_say_so_and_keep_the_marks(
        on_disk, disk, tmp_path, capsys, leave):
    assert cli(capsys, *on_disk, "annotations", "import",
               str(marks_file(tmp_path / "small.json", 0, 5)))[0] == 0
    db = app_paths().annotations_db
    with AnnotationStore(db) as store:
        before = store.list()
    big = marks_file(tmp_path / "big.json", 100, 80)  # 160 KB of notes
    disk.fill(leave)
    status, _, err = cli(capsys, *on_disk, "annotations", "import", str(big))
    assert status == 1
    said_full(err, db)
    disk.unfill()
    with AnnotationStore(db) as store:  # open, as the window holds it, when the disk fills
        disk.fill(leave)
        with pytest.raises(AnnotationsDiskFullError) as info:
            store.merge([point(200 + i, "e" * 2000) for i in range(80)])
        assert str(info.value).startswith(f"disk full: cannot write {db}; nothing of this "
                                          "change was stored, everything before is intact")
        assert store.list() == before
    disk.unfill()
    with AnnotationStore(db) as store:
        assert store.list() == before


# -- exports ------------------------------------------------------------------------------------

@pytest.mark.parametrize("room", ["none", "a page", "all but a page"])
def test_exports_on_a_full_disk_name_the_file_and_keep_the_previous_one(
        disk, tmp_path, capsys, trained_run, room):
    """The stores are on a disk with room; the exports go to the full one, over an earlier
    export each."""
    assert main(["import-candles", str(candles_file(tmp_path / "c.csv", 3000, seed=3)),
                 "--symbol", "ETH/USDT", "--timeframe", "1m"]) == 0
    assert main(["annotations", "import", str(marks_file(tmp_path / "m.json", 0, 40))]) == 0
    run_dir = CheckpointStore().run_dir(trained_run.name)
    shutil.copytree(trained_run, run_dir)
    out = disk.root
    exports = [
        (["candles", "export", "--source", "csv", "--symbol", "ETH/USDT", "--timeframe", "1m",
          "--out", str(out / "c.csv")], out / "c.csv"),
        (["annotations", "export", str(out / "m.json")], out / "m.json"),
        (["runs", "export", run_dir.name, "--csv", str(out / "h.csv")], out / "h.csv"),
        (["runs", "export", run_dir.name, "--tensorboard", str(out / "tb")],
         out / "tb" / run_dir.name),
    ]
    for argv, _ in exports:
        assert cli(capsys, *argv)[0] == 0
    earlier = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    for argv, target in exports:
        size = sum(p.stat().st_size for p in [target, *target.rglob("*")] if p.is_file())
        assert size > 2 * PAGE
        disk.fill({"none": 0, "a page": PAGE, "all but a page": size // PAGE * PAGE - PAGE}[room])
        status, _, err = cli(capsys, *argv)
        assert status == 1, argv
        said_full(err, target, "as it was")
        disk.unfill()
        assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == earlier, argv


# -- training: checkpoints (the optimizer state too) and the run's history ----------------------

@pytest.mark.parametrize("leave", LEVELS)
def test_training_on_a_full_disk_says_so_and_keeps_the_last_checkpoint(
        on_disk, disk, capsys, trained_run, leave):
    store = CheckpointStore()
    run_dir = store.run_dir(trained_run.name)
    shutil.copytree(trained_run, run_dir)
    demo_anchor = trained_run.parents[2] / "demo.json"  # what the run's market was
    shutil.copy(demo_anchor, app_paths().data_dir / demo_anchor.name)
    saved = store.load(run_dir.name)
    recorded = read_history(run_dir)
    disk.fill(leave)
    status, _, err = cli(capsys, *on_disk, *TRAIN, "--resume", run_dir.name, "--epochs", "2")
    assert status == 1
    last = said_full(err, run_dir)
    assert "the previous checkpoint is intact (epoch 1, " in last or \
        "the history recorded before is intact" in last, last
    disk.unfill()
    again = store.load(run_dir.name)
    assert again.meta == saved.meta
    assert all(torch.equal(again.weights[n], saved.weights[n]) for n in saved.weights)
    history = read_history(run_dir)  # every record whole: a torn one was cut off
    assert history.batches[:len(recorded.batches)] == recorded.batches
    assert [p.name for p in run_dir.iterdir() if p.name.startswith(".")] == []
    assert len(list((run_dir / "snapshots").iterdir())) == 1


def test_a_checkpoint_save_that_meets_a_full_disk_anywhere_keeps_the_previous_one(disk):
    """Full before the weights, in them, in the optimizer state (torch's writer ends with
    "unexpected pos" there), in meta.json and at the pointer: the same one line each time."""
    store = CheckpointStore(disk.root / "checkpoints")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 8))
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.randn(4, 64)).sum().backward()
    optimizer.step()
    run = store.new_run_id()
    folder = store.save(run, model, optimizer, meta={"step": 1, "epoch": 1})
    sizes = [(folder / name).stat().st_size for name in
             ("model.safetensors", "training_state.pt", "meta.json")]
    before = {n: t.clone() for n, t in model.state_dict().items()}
    pages = [-(-size // PAGE) * PAGE for size in sizes]
    room = [0, PAGE, pages[0] + PAGE, pages[0] + pages[1] // 2, pages[0] + pages[1],
            sum(pages)]
    with torch.no_grad():
        model[0].weight.add_(1.0)
    for leave in room:
        disk.fill(leave)
        with pytest.raises(DiskFullError) as info:
            store.save(run, model, optimizer, meta={"step": 2, "epoch": 2})
        assert str(info.value) == (
            f"disk full: cannot write {store.run_dir(run)}; the previous checkpoint is intact "
            f"(epoch 1, step 1); this save (epoch 2, step 2) was discarded (free some space and "
            f"retry)"), leave
        disk.unfill()
        loaded = store.load(run)
        assert loaded.meta["step"] == 1
        assert all(torch.equal(loaded.weights[n], before[n]) for n in before)
        assert loaded.optimizer_state is not None
        assert [p.name for p in store.run_dir(run).iterdir() if p.name.startswith(".")] == []
        assert len(list((store.run_dir(run) / "snapshots").iterdir())) == 1
    assert store.save(run, model, optimizer, meta={"step": 2, "epoch": 2}).is_dir()


def test_torchs_writer_error_is_a_full_disk_only_where_no_space_is_left(disk, tmp_path):
    writer_error = RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos "
                                "12160 vs 12052")
    assert not is_disk_full(writer_error, tmp_path)  # a disk with room: some other fault
    disk.fill(0)
    assert is_disk_full(writer_error, disk.root / "checkpoints" / "run")


# -- the paper account --------------------------------------------------------------------------

@pytest.mark.parametrize("leave", LEVELS)
def test_the_paper_account_on_a_full_disk_says_so_and_keeps_its_state(disk, leave):
    path = disk.root / "paper.sqlite"
    candles = demo_candles(3000, ONE_MINUTE, seed=6, end_ts=T0)
    ts, o, c = candles.ts, candles.open, candles.close
    costs = Costs(0.001, slippage_bps=2.0, fee_source="test")
    series = "DEMO (simulated market) DEMO/USDT 1m"
    with PaperAccount(path, series, "run A", costs=costs) as account:
        account.close_candle(int(ts[0]), o[0], c[0])
        account.signal(int(ts[0]), 1)
        saved = account.state
    disk.fill(leave)
    try:
        with PaperAccount(path, series, "run A", costs=costs) as account:
            assert account.state == saved
            with pytest.raises(PaperDiskFullError) as info:
                account.follow(candles, (int(ts[-1]), -1))  # thousands of marks at once
            assert str(info.value).startswith(f"disk full: cannot write {path}; nothing of "
                                              "this change was stored")
            assert account.state == saved and account.trades == ()
    except PaperDiskFullError as exc:  # too full even to open it
        assert leave < SHM_BYTES
        assert str(exc).startswith(f"disk full: cannot read paper trading file {path} ")
        assert "the file is intact" in str(exc)
    else:
        assert leave >= SHM_BYTES
    disk.unfill()
    with PaperAccount(path, series, "run A", costs=costs) as again:
        assert again.state == saved and len(again.equity_curve()[0]) == 1
