"""The control rules beside the moving-average cross: an EMA cross and a Donchian breakout
(``ml.controls``), their exact positions on crafted candles, causality, their marks end to
end and shuffled, and ``workstation control-marks --rule ema-cross|donchian``."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from workstation.annotations.io import import_annotations, read_json
from workstation.annotations.overlap import overlapping_pairs
from workstation.annotations.store import AnnotationStore
from workstation.annotations.targets import LONG, SHORT, trader_targets
from workstation.cli import main
from workstation.errors import WorkstationError
from workstation.market.candles import Candles
from workstation.market.csv_io import write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.perturb import changed_after
from workstation.market.series import MarketKey
from workstation.market.sources import load_series
from workstation.market.timeframes import ONE_MINUTE
from workstation.ml.controls import (
    ControlRule,
    control_marks,
    donchian_positions,
    ema,
    ema_cross_positions,
    shuffled_marks,
)

END_TS = 1_700_000_000_000
MARKET = MarketKey("demo", "DEMO/USDT")
RULES = [ControlRule.of("ema-cross", fast=5, slow=20), ControlRule.of("donchian", window=10),
         ControlRule.of("ma-cross", fast=5, slow=20)]


def candles_of(n: int, seed: int = 7) -> Candles:
    return demo_candles(n, ONE_MINUTE, seed=seed, end_ts=END_TS)


def records(trades) -> list[tuple]:
    return [(t.id, t.entry_ts, t.entry_price, t.exit_ts, t.exit_price, t.direction, t.tags,
             t.notes) for t in trades]


def test_ema_is_the_recursive_average_seeded_with_the_first_value():
    assert ema(np.array([1.0, 2.0, 3.0]), 3) == pytest.approx([1.0, 1.5, 2.25])
    assert ema(np.array([4.0, 4.0]), 1).tolist() == [4.0, 4.0]
    assert len(ema(np.zeros(0), 5)) == 0


def test_ema_cross_positions_on_crafted_closes():
    close = np.array([10.0] * 5 + [11.0] * 5 + [9.0] * 5 + [9.0] * 3)
    got = ema_cross_positions(close, 2, 4)
    # equal averages give no signal: flat until the rise, then long, short from the drop on,
    # and the flat closes after the drop keep it short (the fast average stays below)
    assert got.tolist() == [0] * 5 + [1] * 5 + [-1] * 8
    # the first slow - 1 candles are flat even if the averages differ there
    assert ema_cross_positions(np.array([10.0, 11.0, 12.0, 13.0, 14.0]), 2, 4).tolist() == [
        0, 0, 0, 1, 1]
    with pytest.raises(WorkstationError, match="1 <= fast < slow"):
        ema_cross_positions(close, 4, 4)


def test_donchian_positions_on_crafted_candles():
    close = np.array([10.0, 10.0, 10.0, 10.2, 11.0, 10.8, 10.6, 9.0, 9.5, 12.0])
    high, low = close + 0.5, close - 0.5
    # channels of the previous 3 candles: [9.5, 10.5] at 3 (inside), [9.5, 10.7] at 4 (11.0
    # breaks up), [9.5, 11.5] at 5 and [9.7, 11.5] at 6 (inside: held), [10.1, 11.5] at 7
    # (9.0 breaks down), [8.5, 11.3] at 8 (held), [8.5, 11.1] at 9 (12.0 breaks up)
    assert donchian_positions(high, low, close, 3).tolist() == [0, 0, 0, 0, 1, 1, 1, -1, -1, 1]
    # a close equal to the channel's high is no breakout; the candle's own high is not in it
    equal = np.array([10.0, 10.0, 10.5])
    assert donchian_positions(equal + 0.5, equal - 0.5, equal, 2).tolist() == [0, 0, 0]
    with pytest.raises(WorkstationError, match="at least 1 candle"):
        donchian_positions(high, low, close, 0)


def test_rules_have_their_defaults_and_refuse_windows_they_do_not_take():
    assert ControlRule.of("ema-cross") == ControlRule("ema-cross", (20, 50))
    assert ControlRule.of("donchian") == ControlRule("donchian", (20,))
    assert ControlRule.of("ma-cross", slow=60) == ControlRule("ma-cross", (10, 60))
    assert ControlRule.of("ema-cross").tag == "ema-cross 20/50"
    assert ControlRule.of("donchian", window=30).summary == "30-candle Donchian breakout"
    for bad, match in ((dict(window=5), "--window is for donchian"),
                       (dict(fast=60), "1 <= fast < slow")):
        with pytest.raises(WorkstationError, match=match):
            ControlRule.of("ema-cross", **bad)
    with pytest.raises(WorkstationError, match="--fast and --slow are for the crosses"):
        ControlRule.of("donchian", fast=5)
    with pytest.raises(WorkstationError, match="unknown control rule"):
        ControlRule.of("rsi")


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.name)
def test_rules_are_causal_later_candles_change_nothing_before_them(rule):
    candles = candles_of(3000)
    t, ts = 2000, candles.ts
    changed = changed_after(candles, int(ts[t]), seed=0, drop=0.0)
    assert not (rule.positions(changed)[t + 1:] == rule.positions(candles)[t + 1:]).all()
    assert (rule.positions(changed)[:t + 1] == rule.positions(candles)[:t + 1]).all()
    before = [m for m in control_marks(candles, MARKET, rule) if m.exit_ts <= ts[t]]
    after = [m for m in control_marks(changed, MARKET, rule) if m.exit_ts <= ts[t]]
    assert len(before) > 20 and records(before) == records(after)


def test_an_ema_cross_of_a_later_start_agrees_once_its_seed_has_faded():
    candles = candles_of(3000)
    full = ema_cross_positions(candles.close, 5, 20)
    later = ema_cross_positions(candles.close[700:], 5, 20)
    assert (later[400:] == full[1100:]).all()  # 400 candles: the seed's weight is < 1e-8


@pytest.mark.parametrize("rule", RULES[:2], ids=lambda rule: rule.name)
def test_rule_marks_touch_end_to_end_label_the_rule_and_shuffle(rule):
    candles = candles_of(3000)
    marks = control_marks(candles, MARKET, rule)
    assert len(marks) > 30 and overlapping_pairs(marks) == []
    assert all(a.exit_ts == b.entry_ts and a.direction != b.direction
               for a, b in pairwise(marks))
    assert all(m.tags == ("control", rule.tag) and m.notes == rule.notes for m in marks)
    assert all(m.entry_price == candles.close[candles.index_of(m.entry_ts)] for m in marks)
    first, last = candles.index_of(marks[0].entry_ts), candles.index_of(marks[-1].exit_ts)
    labels = trader_targets(marks, candles.ts, ONE_MINUTE).position
    expected = np.where(rule.positions(candles) > 0, LONG, SHORT)
    assert (labels[first:last] == expected[first:last]).all()
    shuffled = shuffled_marks(marks, candles, seed=1)
    assert sorted((m.holding_ms, m.direction.value) for m in shuffled) == sorted(
        (m.holding_ms, m.direction.value) for m in marks)
    assert all(a.exit_ts == b.entry_ts for a, b in pairwise(shuffled))
    assert all(rule.tag in m.tags and "shuffled seed 1" in m.tags for m in shuffled)
    moved = trader_targets(shuffled, candles.ts, ONE_MINUTE).position[first:last]
    assert np.mean(moved == expected[first:last]) < 0.65  # the rule no longer holds


def test_control_marks_command_writes_rule_marks_that_import(tmp_path, capsys):
    csv = write_candles_csv(candles_of(2000), tmp_path / "eth.csv")
    candles, key = load_series(f"csv:{csv}", "ETH/USDT", ONE_MINUTE)
    base = ["control-marks", "--source", f"csv:{csv}", "--symbol", "ETH/USDT"]
    for flags, rule in ((["--rule", "ema-cross"], ControlRule("ema-cross", (20, 50))),
                        (["--rule", "donchian", "--window", "15"], ControlRule("donchian",
                                                                               (15,)))):
        out_file, shuffled_file = tmp_path / f"{rule.name}.json", tmp_path / f"{rule.name}.csv"
        assert main(base + flags + ["--out", str(out_file)]) == 0
        expected = control_marks(candles, key.market, rule)
        assert (f"wrote {len(expected):,} {rule.summary} trades of ETH/USDT 1m"
                in capsys.readouterr().out)
        assert records(read_json(out_file)) == records(expected)
        assert main(base + flags + ["--shuffle", "--seed", "2", "--out",
                                    str(shuffled_file)]) == 0
        assert "shuffled " + rule.summary in capsys.readouterr().out
        for path in (out_file, shuffled_file):  # the two overlap: one store each
            with AnnotationStore(tmp_path / f"{path.name}.db") as store:
                assert import_annotations(store, path).merge.added == len(expected)
    assert main(base + ["--rule", "donchian", "--slow", "30", "--out", str(out_file)]) == 1
    assert "--fast and --slow are for the crosses" in capsys.readouterr().err
    assert main(base + ["--rule", "ema-cross", "--window", "30", "--out", str(out_file)]) == 1
    assert "--window is for donchian" in capsys.readouterr().err
