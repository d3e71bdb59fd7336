"""``workstation annotations consistency``: a plan drawn from the labelled stretches and kept,
the fresh blind marks (their own file, apart from the trader's) scored against the old ones,
and bad flags refused in one line."""

from __future__ import annotations

import json

from workstation.annotations.model import Region, Trade
from workstation.annotations.store import AnnotationStore
from workstation.cli import main
from workstation.market.sources import load_series
from workstation.market.timeframes import parse_timeframe
from workstation.paths import app_paths

SERIES = ["--source", "demo", "--symbol", "DEMO/USDT", "--timeframe", "1h"]


def marks(ts, shift: int = 0, *, blind: bool = False) -> list:
    kw = {"market": "demo", "symbol": "DEMO/USDT", "timeframe": "1h"}
    out = [Region(**kw, start_ts=int(ts[0]), end_ts=int(ts[479]), label="reviewed")]
    for i in range(20, 460, 24):
        out.append(Trade(**kw, direction="long", entry_ts=int(ts[i + shift]), entry_price=1.0,
                         exit_ts=int(ts[i + shift + 5]), exit_price=2.0))
    return out


def test_a_plan_is_kept_and_fresh_marks_are_scored_against_the_old(capsys):
    candles, _ = load_series("demo", "DEMO/USDT", parse_timeframe("1h"))
    ts = candles.ts
    paths = app_paths()
    with AnnotationStore(paths.annotations_db) as store:
        store.merge(marks(ts))
    code = main(["annotations", "consistency", *SERIES, "--plan", "4", "--seed", "3",
                 "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    found = json.loads(out.out.splitlines()[-1])
    assert found["plan"]["seed"] == 3 and found["plan"]["done"] == [False] * 4
    assert found["overall"]["candles"] == 0  # nothing marked again yet
    assert "0 of 4 stretches of 48 candles marked again" in out.err
    # the fresh marks: one candle late on every entry, in their own file
    with AnnotationStore(paths.consistency_db) as store:
        store.merge(marks(ts, 1))
    assert main(["annotations", "consistency", *SERIES, "--window", "2", "--json"]) == 0
    out = capsys.readouterr()
    found = json.loads(out.out.splitlines()[-1])
    assert found["plan"]["done"] == [True] * 4 and found["plan"]["seed"] == 3
    assert found["overall"]["candles"] == 480
    assert 0.9 < found["overall"]["observed"] < 1.0 and found["overall"]["kappa"] < 1.0
    assert found["entries"]["recall"] == 1.0 and found["entries"]["timing"] == 1.0
    assert found["by_origin"].keys() == {"hindsight"}
    assert "Cohen's kappa" in out.err and "entries within 2 candles: old 19, fresh 19" in out.err
    with AnnotationStore(paths.annotations_db) as store:  # the trader's marks: untouched
        assert len(store.list()) == 20


def test_bad_flags_and_no_stretch_are_one_line(capsys):
    assert main(["annotations", "consistency", *SERIES, "--window", "-1"]) == 1
    assert "--window must be at least 0" in capsys.readouterr().err
    assert main(["annotations", "consistency", *SERIES, "--plan", "3"]) == 1
    assert "mark trades and reviewed regions first" in capsys.readouterr().err
