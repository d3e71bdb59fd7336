"""The control rules beside the moving-average cross: an EMA cross, a Donchian breakout and
the agreement of two crosses (``ml.controls``), their exact positions on crafted candles,
causality, their marks (end to end, or with flat gaps and a reviewed region) and shuffled, and
``workstation control-marks --rule ema-cross|donchian|ma-agree``."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from workstation.annotations.io import import_annotations, read_json
from workstation.annotations.overlap import overlapping_pairs
from workstation.annotations.store import AnnotationStore
from workstation.annotations.targets import FLAT, LONG, SHORT, trader_targets
from workstation.cli import main
from workstation.errors import WorkstationError
from workstation.indicators import compute, parse_spec
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
    level_positions,
    pivot_levels,
    review_region,
    rsi_positions,
    shuffled_marks,
)

END_TS = 1_700_000_000_000
MARKET = MarketKey("demo", "DEMO/USDT")
RULES = [ControlRule.of("ema-cross", fast=5, slow=20), ControlRule.of("donchian", window=10),
         ControlRule.of("ma-cross", fast=5, slow=20),
         ControlRule.of("ma-agree", pairs="5/20,10/40"), ControlRule.of("rsi", window=7),
         ControlRule.of("levels", window=5)]


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


def test_rsi_positions_follow_the_charts_rsi_against_50():
    candles = candles_of(600)
    rsi = compute(parse_spec("rsi 9"), candles)["value"]
    got = rsi_positions(candles, 9)
    assert (got[:9] == 0).all()  # the warm-up is flat
    assert (got[9:][rsi[9:] > 50] == 1).all() and (got[9:][rsi[9:] < 50] == -1).all()
    with pytest.raises(WorkstationError, match="at least 1 candle"):
        rsi_positions(candles, 0)


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
        ControlRule.of("macd")
    assert ControlRule.of("rsi") == ControlRule("rsi", (14,))
    assert ControlRule.of("rsi", window=7).summary == "RSI(7) above / below 50"
    with pytest.raises(WorkstationError, match="rsi takes --window"):
        ControlRule.of("rsi", fast=5)


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


def test_agreement_positions_on_crafted_closes():
    close = np.array([10.0] * 4 + [12.0] * 3 + [9.0] + [8.0] * 4)
    # pairs 1/2 and 2/4: both up at the rise (index 4: 12 > 11 and 11 > 10.5); the fast pair
    # ties at 5 and 6 while the slow one is still up: no agreement, flat (not held); both
    # down at the drop (7, 8: 9 < 10.5 and 10.5 < 11.25, ...), flat again once the closes
    # are level; the first slow - 1 = 3 candles are flat
    got = ControlRule.of("ma-agree", pairs="1/2,2/4").positions(Candles.from_arrays(
        ts=np.arange(len(close)) * 60_000, open=close, high=close, low=close, close=close,
        volume=np.ones(len(close)), timeframe=ONE_MINUTE))
    assert got.tolist() == [0, 0, 0, 0, 1, 0, 0, -1, -1, 0, 0, 0]


def test_agreement_rule_windows_and_refusals():
    rule = ControlRule.of("ma-agree")
    assert rule == ControlRule("ma-agree", (10, 50, 20, 100)) and rule.flat_gaps
    assert rule.pairs == ((10, 50), (20, 100)) and rule.tag == "ma-agree 10/50+20/100"
    assert rule.summary == "10/50+20/100 agreement"
    assert not ControlRule.of("ema-cross").flat_gaps
    for pairs in ("10/50", "10-50,20/100", "10/50/70,20/100"):
        with pytest.raises(WorkstationError, match="two or more FAST/SLOW"):
            ControlRule.of("ma-agree", pairs=pairs)
    with pytest.raises(WorkstationError, match="1 <= fast < slow"):
        ControlRule.of("ma-agree", pairs="50/10,20/100")
    with pytest.raises(WorkstationError, match="takes --pairs"):
        ControlRule.of("ma-agree", fast=5)
    with pytest.raises(WorkstationError, match="--pairs is for ma-agree"):
        ControlRule.of("ema-cross", pairs="1/2,2/4")


def test_agreement_marks_leave_flat_gaps_that_their_review_region_labels_and_shuffle():
    candles = candles_of(6000)
    rule = ControlRule.of("ma-agree", pairs="5/20,10/40")
    assert rule.positions(candles)[:39].tolist() == [0] * 39
    marks = control_marks(candles, MARKET, rule)
    region = review_region(marks, rule)
    assert (region.label, region.start_ts, region.end_ts) == ("reviewed", marks[0].entry_ts,
                                                              marks[-1].exit_ts)
    assert region.tags == ("control", rule.tag) and overlapping_pairs(marks) == []
    gaps = [b.entry_ts - a.exit_ts for a, b in pairwise(marks)]
    assert len(marks) > 50 and min(gaps) == 0 and sum(g > 0 for g in gaps) > 20
    first, last = candles.index_of(marks[0].entry_ts), candles.index_of(marks[-1].exit_ts)
    labels = trader_targets([*marks, region], candles.ts, ONE_MINUTE).position
    expected = np.select([rule.positions(candles) > 0, rule.positions(candles) < 0],
                         [LONG, SHORT], FLAT)
    assert (labels[first:last] == expected[first:last]).all()
    assert (expected[first:last] == FLAT).mean() > 0.2  # the flat candles are labels too
    shuffled = shuffled_marks(marks, candles, seed=1)
    assert overlapping_pairs(shuffled) == []
    assert sorted(b.entry_ts - a.exit_ts for a, b in pairwise(shuffled)) == sorted(gaps)
    assert (shuffled[0].entry_ts, shuffled[-1].exit_ts) == (marks[0].entry_ts,
                                                            marks[-1].exit_ts)
    moved = trader_targets([*shuffled, region], candles.ts, ONE_MINUTE).position[first:last]
    assert np.mean(moved == expected[first:last]) < 0.6
    assert np.mean(moved == FLAT) == np.mean(expected[first:last] == FLAT)  # same balance


def test_control_marks_command_writes_agreement_marks_with_their_review_region(tmp_path,
                                                                            capsys):
    csv = write_candles_csv(candles_of(3000), tmp_path / "eth.csv")
    candles, key = load_series(f"csv:{csv}", "ETH/USDT", ONE_MINUTE)
    out_file = tmp_path / "agree.json"
    assert main(["control-marks", "--source", f"csv:{csv}", "--symbol", "ETH/USDT", "--rule",
                 "ma-agree", "--pairs", "5/20,10/40", "--out", str(out_file)]) == 0
    rule = ControlRule.of("ma-agree", pairs="5/20,10/40")
    expected = control_marks(candles, key.market, rule)
    assert (f"wrote {len(expected):,} 5/20+10/40 agreement trades of ETH/USDT 1m"
            in capsys.readouterr().out)
    written = read_json(out_file)
    assert records(written[:-1]) == records(expected)
    region = review_region(expected, rule)
    assert (written[-1].id, written[-1].span, written[-1].tags) == (region.id, region.span,
                                                                   region.tags)
    with AnnotationStore(tmp_path / "a.db") as store:
        assert import_annotations(store, out_file).merge.added == len(expected) + 1
    csv_out = tmp_path / "agree.csv"
    assert main(["control-marks", "--source", f"csv:{csv}", "--symbol", "ETH/USDT", "--rule",
                 "ma-agree", "--out", str(csv_out)]) == 1
    assert "a CSV of trades cannot hold: write agree.json" in capsys.readouterr().err
    assert not csv_out.exists()


def test_the_levels_rule_draws_swings_where_they_are_first_known_and_trades_their_touches(
        tmp_path, capsys):
    from workstation.ml.level_columns import Levels

    candles = candles_of(3000)
    k = 5
    levels = pivot_levels(candles, MARKET, k)
    assert len(levels) > 100 and all(d.shape.value == "level" for d in levels)
    for d in levels[:50]:
        seen = candles.index_of(d.ts1)  # drawn k candles after its swing, at the swing's price
        swing = seen - k
        window = slice(swing - k, swing + k + 1)
        assert d.price1 in (candles.high[swing], candles.low[swing])
        assert d.price1 in (candles.high[window].max(), candles.low[window].min())
        assert d.known_at == int(candles.ts[seen]) + 60_000
    rule = ControlRule.of("levels", window=k)
    assert rule.summary == "5-candle swing level nearness"
    position = rule.positions(candles)
    assert (position == level_positions(candles, Levels.of(levels))).all()
    assert {-1, 1} <= set(position.tolist())

    csv = write_candles_csv(candles, tmp_path / "eth.csv")
    base = ["control-marks", "--source", f"csv:{csv}", "--symbol", "ETH/USDT", "--rule",
            "levels", "--window", "5"]
    assert main(base + ["--out", str(tmp_path / "l.json")]) == 0
    assert "swing levels" in capsys.readouterr().out
    with AnnotationStore(tmp_path / "a.db") as store:
        result = import_annotations(store, tmp_path / "l.json")
        loaded, key = load_series(f"csv:{csv}", "ETH/USDT", ONE_MINUTE)
        drawn = pivot_levels(loaded, key.market, k)  # of the file's candles, as it holds them
        assert result.merge.added > 20 and result.drawings[0] == len(drawn)
        assert sorted(store.drawings.list(), key=lambda d: d.id) == sorted(
            drawn, key=lambda d: d.id)
    assert main(base + ["--out", str(tmp_path / "l.csv")]) == 1
    assert "write l.json" in capsys.readouterr().err  # its region and levels need JSON
