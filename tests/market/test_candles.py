"""Candles: construction, validation naming row and field, append/update, merge, resample."""

import numpy as np
import pytest

from workstation.errors import WorkstationError
from workstation.market.candles import Candles, CandleUpdate, CandleValidationError
from workstation.market.timeframes import ONE_MINUTE, SUPPORTED, parse_timeframe

MIN = 60_000


def make(n, start=0, tf="1m"):
    step = parse_timeframe(tf).ms
    ts = start + np.arange(n, dtype=np.int64) * step
    close = 100 + np.arange(n, dtype=float)
    return Candles.from_arrays(ts, close - 0.5, close + 1, close - 1, close, np.full(n, 2.0),
                               parse_timeframe(tf))


def test_timeframes_parse_and_reject():
    assert [parse_timeframe(t).ms for t in ("1s", "1m", "4h", "1d")] == [
        1000, 60_000, 14_400_000, 86_400_000]
    assert len(SUPPORTED) == 9
    with pytest.raises(WorkstationError, match="unsupported timeframe '2m'"):
        parse_timeframe("2m")


def test_from_arrays_columns_are_typed_views():
    c = make(5)
    assert len(c) == 5 and c.ts.dtype == np.int64 and c.close.dtype == np.float64
    assert c.row(-1) == CandleUpdate(240_000, 103.5, 105.0, 103.0, 104.0, 2.0, True)


@pytest.mark.parametrize(
    "field, change, reason",
    [
        ("open", lambda a: a["open"].__setitem__(3, np.nan), "not a finite number"),
        ("close", lambda a: a["close"].__setitem__(3, np.inf), "not a finite number"),
        ("volume", lambda a: a["volume"].__setitem__(3, -1.0), "negative volume"),
        ("high", lambda a: a["high"].__setitem__(3, 50.0), "below max(open, close)"),
        ("low", lambda a: a["low"].__setitem__(3, 500.0), "above min(open, close)"),
        ("ts", lambda a: a["ts"].__setitem__(3, a["ts"][1]), "not sorted"),
        ("ts", lambda a: a["ts"].__setitem__(3, a["ts"][2]), "duplicate timestamp"),
        ("ts", lambda a: a["ts"].__setitem__(3, a["ts"][3] + 7), "not on the 1m grid"),
    ],
)
def test_validation_names_row_and_field(field, change, reason):
    c = make(6)
    arrays = dict(zip(("ts", "open", "high", "low", "close", "volume"),
                      (x.copy() for x in c.columns())))
    change(arrays)
    with pytest.raises(CandleValidationError) as info:
        Candles.from_arrays(*arrays.values(), timeframe=ONE_MINUTE)
    assert info.value.row == 3 and info.value.field == field
    assert reason in str(info.value) and "row 3" in str(info.value)


def test_append_grows_and_update_changes_only_last():
    c = Candles(ONE_MINUTE, capacity=2)
    for i in range(5000):
        c.append(i * MIN, 10, 11, 9, 10.5, 1)
    before = [col.copy() for col in c.columns()]
    c.update_last(10, 12, 8, 11.5, 7, closed=False)
    after = c.columns()
    for b, a in zip(before, after):
        assert np.array_equal(b[:-1], a[:-1])
    assert c.row(-1) == CandleUpdate(4999 * MIN, 10.0, 12.0, 8.0, 11.5, 7.0, False)
    assert not c.last_closed


def test_apply_feed_updates_and_rejects_bad_ones():
    c = Candles(ONE_MINUTE)
    assert c.apply(CandleUpdate(0, 10, 10, 10, 10, 0, False)) == "append"
    assert c.apply(CandleUpdate(0, 10, 12, 9, 11, 5, True)) == "update"
    assert c.apply(CandleUpdate(MIN, 11, 11, 11, 11, 1, False)) == "append"
    assert len(c) == 2 and c.close.tolist() == [11, 11]
    with pytest.raises(CandleValidationError, match="not after the last candle"):
        c.apply(CandleUpdate(-MIN, 11, 11, 11, 11, 1, True))
    with pytest.raises(CandleValidationError, match="high"):
        c.apply(CandleUpdate(MIN, 11, 10, 10, 11, 1, True))
    with pytest.raises(CandleValidationError, match="prices must be finite"):
        c.append(2 * MIN, float("nan"), 11, 10, 11, 1)
    with pytest.raises(CandleValidationError, match="grid"):
        c.append(2 * MIN + 1, 11, 11, 10, 11, 1)
    assert len(c) == 2


def test_merge_deduplicates_with_the_newer_values_winning():
    a = make(10)
    b = make(6, start=7 * MIN)
    b.close[:] += 0  # same grid, overlapping 7..9
    cols = [col.copy() for col in b.columns()]
    cols[4][0] = cols[1][0]  # close == open for the overlapping row
    b = Candles.from_arrays(*cols, timeframe=ONE_MINUTE)
    merged = a.merge(b)
    assert merged.ts.tolist() == [i * MIN for i in range(13)]
    assert merged.close[7] == b.close[0]
    early = make(3, start=-5 * MIN)
    assert len(a.merge(early)) == 13
    with pytest.raises(WorkstationError, match="cannot merge 1h"):
        a.merge(make(2, tf="1h"))


def test_resample_aggregates_and_marks_partial_bucket_forming():
    c = make(150)  # 2.5 hours of minutes
    h = c.resample(parse_timeframe("1h"))
    assert h.ts.tolist() == [0, 3_600_000, 7_200_000]
    assert h.open[0] == c.open[0] and h.close[0] == c.close[59]
    assert h.high[1] == c.high[60:120].max() and h.low[1] == c.low[60:120].min()
    assert h.volume[2] == c.volume[120:].sum()
    assert h.last_closed is False
    assert make(120).resample(parse_timeframe("1h")).last_closed is True
    with pytest.raises(WorkstationError, match="whole multiple"):
        make(10, tf="3m").resample(parse_timeframe("1h")).resample(
            parse_timeframe("1d")).resample(parse_timeframe("4h"))


def test_gaps_and_index_of():
    c = make(10)
    cols = [np.delete(col, [3, 4, 8]) for col in c.columns()]
    g = Candles.from_arrays(*cols, timeframe=ONE_MINUTE)
    assert g.gaps() == [(3 * MIN, 2), (8 * MIN, 1)]
    assert g.index_of(4 * MIN + 5) == 2 and g.index_of(-1) == -1


def test_without_drops_rows_by_index_or_mask_and_keeps_a_forming_last_candle_forming():
    ts = np.arange(6, dtype=np.int64) * 60_000
    c = Candles.from_arrays(ts, *(np.full(6, 10.0),) * 4, np.ones(6), ONE_MINUTE)
    c.last_closed = False
    gapped = c.without([1, 4])
    assert list(gapped.ts) == [0, 120_000, 180_000, 300_000] and not gapped.last_closed
    assert list(c.without(ts >= 300_000).ts) == list(ts[:5])
    assert c.without([5]).last_closed  # the forming one dropped: what is left is closed
    assert len(c) == 6  # a copy: the series itself is untouched


def test_parts_are_copied_into_one_series_sized_once():
    from workstation.market.demo import demo_candles

    whole = demo_candles(5_000, ONE_MINUTE, seed=4)
    parts = [[col[a:b] for col in whole.columns()] for a, b in ((0, 1_000), (1_000, 4_999))]
    joined = Candles.from_parts(iter(parts), 5_000, ONE_MINUTE)
    assert len(joined) == 4_999
    assert all(np.array_equal(x, y[:4_999]) for x, y in zip(joined.columns(), whole.columns()))
    assert not np.shares_memory(joined.close, whole.close)
    r = whole.row(4_999)
    joined.append(r.ts, r.open, r.high, r.low, r.close, r.volume)  # room to grow, as loaded
    assert np.array_equal(joined.close, whole.close)
    with pytest.raises(WorkstationError, match="more than the 4000 announced"):
        Candles.from_parts(iter(parts), 4_000, ONE_MINUTE)
