"""``workstation annotations export|import|list|replays`` through the real CLI entry point."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

from workstation.annotations.io import write_json
from workstation.annotations.model import Point, Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.cli import main

T0 = 1_700_000_000_000


def sample():
    return [
        Trade(symbol="ETH/USDT", timeframe="1m", direction="long", entry_ts=T0, entry_price=100.0,
              exit_ts=T0 + 60_000, exit_price=102.0, tags=("a",), notes="first"),
        Region(symbol="ETH/USDT", timeframe="1m", start_ts=T0, end_ts=T0 + 600_000, label="range"),
        Point(symbol="BTC/USDT", timeframe="1h", ts=T0, price=43000.0),
    ]


def test_import_list_export_round_trip(tmp_path, capsys):
    src = tmp_path / "in.json"
    write_json(sample(), src)
    assert main(["annotations", "import", str(src)]) == 0
    out = capsys.readouterr().out
    assert "read 3 annotation(s)" in out and "added 3" in out

    assert main(["annotations", "import", str(src)]) == 0
    assert "added 0, updated 0, unchanged 3" in capsys.readouterr().out

    assert main(["annotations", "list", "--symbol", "eth/usdt"]) == 0
    out = capsys.readouterr().out
    trade = sample()[0]
    assert "long 100 -> 102 (+2.00%)" in out and "[a]" in out and "'first'" in out
    assert "range" in out and "BTC/USDT" not in out
    assert "2 annotations · 1 trade · win rate 100.0% · mean P&L +2.00%" in out
    assert main(["annotations", "list", "--market", "demo"]) == 0
    assert capsys.readouterr().out == "no annotations\n"

    json_out, csv_out = tmp_path / "out.json", tmp_path / "out.csv"
    assert main(["annotations", "export", str(json_out), "--timeframe", "1m"]) == 0
    assert "wrote 2 annotation(s)" in capsys.readouterr().out
    doc = json.loads(json_out.read_text(encoding="utf-8"))
    assert {r["kind"] for r in doc["annotations"]} == {"trade", "region"}

    assert main(["annotations", "export", str(csv_out)]) == 0
    out = capsys.readouterr().out
    assert "wrote 1 annotation(s)" in out and "left out 2 region(s)/point(s)" in out
    assert trade.symbol in csv_out.read_text(encoding="utf-8")


def test_a_malformed_import_fails_with_the_record_and_field_and_imports_nothing(tmp_path, capsys):
    write_json(sample(), tmp_path / "good.json")
    doc = json.loads((tmp_path / "good.json").read_text(encoding="utf-8"))
    doc["annotations"][2]["price"] = -1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["annotations", "import", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}: annotations[2] (id {doc['annotations'][2]['id']}): price:" in err
    assert main(["annotations", "list"]) == 0
    assert "no annotations" in capsys.readouterr().out


def test_csv_import_takes_symbol_and_timeframe_from_options(tmp_path, capsys):
    path = tmp_path / "trades.csv"
    path.write_text("direction,entry_ts,entry_price,exit_ts,exit_price\n"
                    f"short,{T0},100,{T0 + 60_000},99\n", encoding="utf-8")
    assert main(["annotations", "import", str(path)]) == 1
    assert "symbol: missing" in capsys.readouterr().err
    assert main(["annotations", "import", str(path), "--symbol", "sol/usdt",
                 "--timeframe", "15m"]) == 0
    with AnnotationStore() as store:
        (trade,) = store.list()
    assert (trade.symbol, trade.timeframe, trade.pnl_pct) == ("SOL/USDT", "15m", 1.0)


def test_bad_options_are_clear_errors(tmp_path, capsys):
    assert main(["annotations", "list", "--timeframe", "7m"]) == 1
    assert "unsupported timeframe '7m'" in capsys.readouterr().err
    assert main(["annotations", "export", str(tmp_path / "x.txt")]) == 1
    assert "--format" in capsys.readouterr().err
    assert main(["annotations", "export", str(tmp_path / "x.txt"), "--format", "json"]) == 0


def test_the_installed_command_runs(tmp_path):
    done = subprocess.run([sys.executable, "-m", "workstation", "--data-dir", str(tmp_path / "h"),
                           "annotations", "list"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no annotations"
    assert (tmp_path / "h" / "data" / "annotations.sqlite").exists()


def excel_csv(lines: list[str]) -> bytes:
    """What Excel's "CSV UTF-8" writes: a BOM, CRLF line ends, and here a blank last line."""
    return b"\xef\xbb\xbf" + "".join(line + "\r\n" for line in [*lines, ""]).encode()


def test_excel_files_import_and_marks_without_candles_are_kept_with_one_line(tmp_path, capsys):
    marks = tmp_path / "sol-marks.csv"
    marks.write_bytes(excel_csv(
        ["symbol,timeframe,direction,entry_ts,entry_price,exit_ts,exit_price"]
        + [f"SOL/USDT,1m,long,{T0 + i * 600_000},100,{T0 + i * 600_000 + 60_000},101"
           for i in range(3)]))
    assert main(["annotations", "import", str(marks)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == ("3 annotations of SOL/USDT imported; no candles of SOL/USDT are in the "
                       "cache yet")
    assert "added 3" in out[-2]
    with AnnotationStore() as store:
        assert len(store.list(symbol="SOL/USDT")) == 3  # kept: the candles may come later
    candles = tmp_path / "sol-candles.csv"
    candles.write_bytes(excel_csv(["ts,open,high,low,close,volume"] + [
        f"{T0 - T0 % 60_000 + i * 60_000},100,101,99,100.5,{10 + i}" for i in range(30)]))
    assert main(["import-candles", str(candles), "--symbol", "SOL/USDT", "--timeframe",
                 "1m"]) == 0
    assert "SOL/USDT 1m: imported 30 candles" in capsys.readouterr().out
    assert main(["annotations", "import", str(marks)]) == 0
    assert "no candles" not in capsys.readouterr().out


def test_replays_lists_each_session_with_its_paper_accounts(capsys):
    from workstation.annotations.replay_sessions import PaperResult, ReplaySession, ReplaySessions
    from workstation.paths import app_paths

    path = app_paths().replay_db
    assert main(["annotations", "replays"]) == 0
    assert capsys.readouterr().out == "no blind replay sessions\n" and not path.exists()
    sessions = ReplaySessions(path)
    ended = sessions.save(ReplaySession(
        source="csv:/d/eth.csv", market="real", symbol="ETH/USDT", timeframe="1h",
        started_clock=T0, clock=T0 + 7_200_000, speed="60x", decisions=3,
        span_from=T0 - 86_400_000, span_to=T0 + 86_400_000, started_at=T0, ended_at=T0 + 1))
    sessions.save(ReplaySession(source="demo", market="demo", symbol="DEMO/USDT",
                                timeframe="1m", started_clock=T0, clock=T0, speed="5/s",
                                started_at=T0))
    paper = PaperResult("PAPER binance ETH/USDT 1h · run r · blind replay 1", 4, 3, 12.5,
                        0.125, 10_012.5, -1, T0 + 3_600_000)
    sessions.record_paper(ended.id, paper)
    sessions.close()
    assert main(["annotations", "replays"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "replay 1  csv:/d/eth.csv ETH/USDT 1h  clock 2023-11-14 22:13:20 .. 2023-11-15 00:13:20"
        " · 60x · 3 decisions · random starts from 2023-11-13 22:13:20 .. 2023-11-15 22:13:20"
        " · started 2023-11-14 22:13:20, ended 2023-11-14 22:13:20",
        "    PAPER binance ETH/USDT 1h · run r · blind replay 1: 4 trades (3 won) · P&L +12.50"
        " (+0.12 %) · equity 10,012.50 at the close of 2023-11-14 23:13:20",
        "replay 2  demo DEMO/USDT 1m  clock 2023-11-14 22:13:20 .. 2023-11-14 22:13:20 · 5/s"
        " · 0 decisions · started 2023-11-14 22:13:20, not ended: workstation --replay-from"
        " resume goes on"]
    assert main(["annotations", "replays", "--json"]) == 0
    first, second = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert first["paper"] == [dataclasses.asdict(paper)] and first["decisions"] == 3
    assert second["paper"] == [] and second["ended_at"] is None
