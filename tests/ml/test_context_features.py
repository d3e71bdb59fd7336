"""Higher-timeframe and reference-asset inputs (``ml.context``): what each column holds, and
that no row ever sees a candle that had not closed when its own candle closed."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.errors import WorkstationError
from workstation.market.demo import demo_candles
from workstation.market.perturb import changed_after
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.ml.candle_columns import N_FEATURES, candle_features, volatility
from workstation.ml.context import (
    CLOSED_NAMES,
    FORMING_NAMES,
    as_of,
    window_candles,
    window_start,
)
from workstation.ml.features import FeatureSpec, make_features

END = 1_700_000_000_000 - 1_700_000_000_000 % 3_600_000  # on the hour
# the candle columns alone before the context, so the context's columns start at N_FEATURES
PLAIN = FeatureSpec(trend_windows=())
SPEC = FeatureSpec(higher_timeframes=("15m", "1h"), reference="BTC/USDT", trend_windows=())
H_WIDTH = len(CLOSED_NAMES) + len(FORMING_NAMES) + 1


@pytest.fixture(scope="module")
def market():
    eth = demo_candles(12_000, ONE_MINUTE, seed=5, end_ts=END)
    btc = demo_candles(12_000, ONE_MINUTE, seed=6, end_ts=END).without(np.r_[4000:4030, 7777])
    return eth.without(np.r_[9000:9003]), btc


def test_columns_are_named_and_the_plain_features_are_unchanged(market):
    eth, btc = market
    assert SPEC.n_features == N_FEATURES + 2 * H_WIDTH + len(CLOSED_NAMES) + 1
    assert SPEC.names[N_FEATURES] == "15m:open_ret" and SPEC.names[-1] == "ref:mask"
    features = make_features(eth, SPEC, btc)
    assert features.shape == (len(eth), SPEC.n_features) and np.isfinite(features).all()
    np.testing.assert_array_equal(features[:, :N_FEATURES], make_features(eth, PLAIN))
    assert FeatureSpec.from_dict(SPEC.to_dict()) == SPEC


def test_the_closed_higher_candle_is_the_last_one_that_ended_by_the_candles_close(market):
    eth, btc = market
    features = make_features(eth, SPEC, btc)
    hour = eth.resample(parse_timeframe("1h"))
    hour_columns = candle_features(hour.slice(1, len(hour)), SPEC)
    ts = eth.ts
    cols = slice(N_FEATURES + H_WIDTH, N_FEATURES + H_WIDTH + len(CLOSED_NAMES))
    mask = N_FEATURES + 2 * H_WIDTH - 1
    for row in (3000, 3059, 3060, 11_999 - 3):
        ended = int(ts[row]) + 60_000
        closed_open = ended - ended % 3_600_000 - 3_600_000
        i = int(np.searchsorted(hour.ts, closed_open)) - 1  # index in the series without bucket 0
        assert features[row, mask] == 1.0
        np.testing.assert_array_equal(features[row, cols], hour_columns[i, :len(CLOSED_NAMES)])
    # the minute that closes the hour already sees that hour as closed; the one before does not
    last_of_hour = int(np.flatnonzero((ts + 60_000) % 3_600_000 == 0)[5])
    assert not np.array_equal(features[last_of_hour, cols], features[last_of_hour - 1, cols])
    # the series' first hour (it may start inside it) and the next are never used
    assert (features[ts < ts[0] - ts[0] % 3_600_000 + 2 * 3_600_000, mask] == 0).all()


def test_the_forming_higher_candle_is_the_aggregate_of_its_base_candles_so_far(market):
    eth, btc = market
    features = make_features(eth, SPEC, btc)
    first = N_FEATURES + H_WIDTH + len(CLOSED_NAMES)  # 1h:forming_close
    hour = eth.resample(parse_timeframe("1h"))
    for row in (4321, 4322, 4379, 9003):
        ts = int(eth.ts[row])
        bucket = ts - ts % 3_600_000
        lo = int(np.searchsorted(eth.ts, bucket))
        # the forming hour up to this minute
        so_far = eth.slice(lo, row + 1).resample(parse_timeframe("1h"))
        assert len(so_far) == 1
        prev = hour.slice(0, int(np.searchsorted(hour.ts, bucket)))
        prev = prev.slice(1, len(prev))  # as the features see it: without the first hour
        scale = volatility(prev, SPEC)[-1]
        base = np.log(prev.close[-1])
        expected = [(np.log(so_far.close[0]) - base) / scale,
                    (np.log(so_far.high[0]) - base) / scale,
                    (np.log(so_far.low[0]) - base) / scale,
                    (ts + 60_000 - bucket) / 3_600_000]
        np.testing.assert_allclose(features[row, first:first + 4], expected, rtol=1e-6)


def test_a_missing_reference_candle_is_masked_never_filled_in(market):
    eth, btc = market
    features = make_features(eth, SPEC, btc)
    ref = slice(SPEC.n_features - len(CLOSED_NAMES) - 1, SPEC.n_features - 1)
    missing = ~np.isin(eth.ts, btc.ts)
    assert missing.sum() >= 31
    assert (features[missing, -1] == 0).all() and (features[missing, ref] == 0).all()
    assert (features[~missing, -1] == 1).all()
    row = int(np.searchsorted(eth.ts, btc.ts[5000]))
    np.testing.assert_array_equal(features[row, ref],
                                  candle_features(btc, SPEC)[5000, :len(CLOSED_NAMES)])
    with pytest.raises(WorkstationError, match="no BTC/USDT candles"):
        make_features(eth, SPEC)
    with pytest.raises(WorkstationError, match="must be the same"):
        make_features(eth, SPEC, btc.resample(parse_timeframe("5m")))


@pytest.mark.parametrize("ts_row", [2500, 5003, 9002, 11_000])
def test_rows_up_to_ts_do_not_depend_on_anything_after_ts(market, ts_row):
    """Perturb the future of the series and of the reference (or cut it off): every row up
    to TS stays bit for bit the same."""
    eth, btc = market
    ts = int(eth.ts[ts_row])
    full = make_features(eth, SPEC, btc)
    cut_eth, cut_btc = as_of(eth, ts, btc)
    cut = make_features(cut_eth, SPEC, cut_btc)
    changed = make_features(changed_after(eth, ts, 1, 0.1), SPEC,
                            changed_after(btc, ts, 2, 0.1))
    assert len(cut) == ts_row + 1
    np.testing.assert_array_equal(cut, full[:ts_row + 1])
    np.testing.assert_array_equal(changed[:ts_row + 1], full[:ts_row + 1])


def test_a_window_from_window_start_gives_the_full_historys_rows(market):
    eth, btc = market
    full = make_features(eth, SPEC, btc)
    for n in (900, 4100, 9010, len(eth)):
        start = window_start(eth.ts, n, SPEC, 64)
        window = make_features(eth.slice(start, n), SPEC, btc)
        np.testing.assert_array_equal(window[-64:], full[n - 64:n])
        assert n - start <= window_candles(SPEC, eth.timeframe, 64) or start == 0


def test_as_of_needs_a_closed_candle_at_ts_and_cuts_the_reference_there(market):
    eth, btc = market
    past, ref = as_of(eth, int(eth.ts[100]) + 30_000, btc)  # inside the candle: that candle
    assert past.ts[-1] == eth.ts[100] and ref.ts[-1] <= eth.ts[100]
    with pytest.raises(WorkstationError, match="no closed candle"):
        as_of(eth, int(eth.ts[9000 - 1]) + 60_000, btc)  # a missing minute
    forming = eth.copy()
    forming.last_closed = False
    with pytest.raises(WorkstationError, match="no closed candle"):
        as_of(forming, int(eth.ts[-1]))


def test_bad_context_settings_are_refused_in_one_line():
    with pytest.raises(WorkstationError, match="distinct and rising"):
        FeatureSpec(higher_timeframes=("1h", "15m"))
    with pytest.raises(WorkstationError, match="unsupported timeframe"):
        FeatureSpec(higher_timeframes=("2h",))
    with pytest.raises(WorkstationError, match="not a whole multiple above"):
        make_features(demo_candles(100, parse_timeframe("1h"), seed=1, end_ts=END), FeatureSpec(
            higher_timeframes=("15m",)))
    saved = SPEC.to_dict()
    saved["names"] = saved["names"][:-1]
    with pytest.raises(WorkstationError, match="differ from the ones"):
        FeatureSpec.from_dict(saved)
