"""LinkGroup: charts on different timeframes follow one driver by time, once per flush."""

from __future__ import annotations

from workstation.market.demo import demo_candles
from workstation.market.timeframe_stack import TimeframeStack
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe
from workstation.viewmodel import ChartViewModel, LinkGroup, TimeMap, candle_span
from workstation.viewmodel.chart import view_limits

END = 1_767_225_600_000
MIN, HOUR = 60_000, 3_600_000


def charts(*timeframes: str):
    base = demo_candles(20_000, ONE_MINUTE, seed=3, end_ts=END)
    stack = TimeframeStack(base, [parse_timeframe(tf) for tf in timeframes])
    views = []
    for tf in ("1m", *timeframes):
        view = ChartViewModel()
        view.set_series(TimeMap.of(stack.candles(parse_timeframe(tf))))
        views.append(view)
    return views


def centre(view: ChartViewModel) -> float:
    t0, t1 = view.time_range
    return (t0 + t1) / 2


def test_followers_centre_on_the_drivers_time_keeping_their_zoom():
    m1, m15, h1 = charts("15m", "1h")
    group = LinkGroup()
    for v in (m1, m15, h1):
        group.add(v)
    widths = [v.x_range()[1] - v.x_range()[0] for v in (m15, h1)]
    m1.pan(-3000)  # 50 hours back
    group.flush()
    for view, width in zip((m15, h1), widths):
        x0, x1 = view.x_range()
        assert abs((x1 - x0) - width) < 1e-6
        # the same time at the centre, to within a rounding millisecond per edge
        assert abs(centre(view) - centre(m1)) <= view.time_map.timeframe_ms / 1000
    assert abs(centre(m15) - centre(m1)) <= 1


def test_a_follower_skips_a_move_shorter_than_its_min_follow():
    m1, h1 = charts("1h")
    group = LinkGroup()
    for v in (m1, h1):
        group.add(v)
    m1.pan(-3000)  # into the history: the hourly chart centres on it
    group.flush()
    h1.min_follow_x = 0.5  # half a pixel, in candles, as the chart sets it
    before = h1.time_range
    m1.pan(-20)  # 20 minutes: a third of an hourly candle
    group.flush()
    assert h1.time_range == before
    m1.pan(-20)  # 40 minutes from where it stands: it follows
    group.flush()
    assert h1.time_range != before
    assert abs(centre(h1) - centre(m1)) <= h1.time_map.timeframe_ms / 1000


def test_one_driver_no_feedback_and_at_most_once_per_flush():
    m1, m15, h1 = charts("15m", "1h")
    group = LinkGroup()
    for v in (m1, m15, h1):
        group.add(v)
    group.flush()  # the charts just linked line up
    moves = {id(v): 0 for v in (m1, m15, h1)}
    for v in (m1, m15, h1):
        v.range_changed.connect(lambda *_a, v=v: moves.__setitem__(id(v), moves[id(v)] + 1))
    asked = []
    group.flush_wanted.connect(lambda: asked.append(1))
    for _ in range(5):  # five pans within one frame, 83 hours back in all
        m1.pan(-1000)
    assert asked == [1]  # one flush asked for
    assert moves[id(m15)] == moves[id(h1)] == 0  # nobody follows before the flush
    group.flush()
    assert moves == {id(m1): 5, id(m15): 1, id(h1): 1}
    group.flush()  # nothing new: nothing moves, and the followers' moves drove nothing
    assert moves == {id(m1): 5, id(m15): 1, id(h1): 1}
    before = m1.time_range
    h1.pan(-10)  # another chart drives the next gesture
    group.flush()
    assert m1.time_range != before
    assert moves[id(h1)] == 2 and moves[id(m15)] == 2 and moves[id(m1)] == 6


def test_time_link_off_leaves_the_others_alone():
    m1, h1 = charts("1h")
    group = LinkGroup(time=False)
    group.add(m1)
    group.add(h1)
    before = h1.time_range
    m1.pan(-500)
    group.flush()
    assert h1.time_range == before
    assert group.windows(h1) == []


def test_crosshair_marks_the_containing_candle_on_other_timeframes():
    m1, m15, h1 = charts("15m", "1h")
    group = LinkGroup()
    for v in (m1, m15, h1):
        group.add(v)
    marked = []
    group.marks_changed.connect(marked.append)
    ts = END - 5 * HOUR + 37 * MIN
    group.request_crosshair(m1, ts)
    assert group.crosshair_span(h1) is None  # not before the flush
    group.flush()
    assert set(map(id, marked)) == {id(m1), id(m15), id(h1)}
    assert group.crosshair_span(m1) is None  # the driver marks nothing itself
    assert group.crosshair_span(h1) == (END - 5 * HOUR, END - 4 * HOUR)
    assert group.crosshair_span(m15) == (END - 5 * HOUR + 30 * MIN, END - 5 * HOUR + 45 * MIN)
    group.set_toggles(crosshair=False)
    assert group.crosshair_span(h1) is None
    group.set_toggles(crosshair=True)
    group.request_crosshair(m1, None)
    group.flush()
    assert group.crosshair_span(h1) is None
    assert candle_span(END + 1, HOUR) == (END, END + HOUR)


def test_lower_timeframe_windows_are_shaded_on_higher_ones():
    m1, m15, h1 = charts("15m", "1h")
    group = LinkGroup()
    for v in (m1, m15, h1):
        group.add(v)
    assert group.windows(m1) == []
    assert group.windows(m15) == [m1.time_range]
    assert group.windows(h1) == [m1.time_range, m15.time_range]
    group.remove(m15)
    assert group.windows(h1) == [m1.time_range]
    before = m15.time_range
    m1.pan(-200)
    group.flush()
    assert m15.time_range == before  # removed: it follows no more


def test_symbol_link():
    m1, m15 = charts("15m")
    group = LinkGroup()
    group.add(m1)
    group.add(m15)
    switched = []
    group.symbol_changed.connect(lambda view, symbol: switched.append((view, symbol)))
    assert group.request_symbol(m1, "BTC/USDT") == [m15]
    assert switched == [(m15, "BTC/USDT")]
    group.set_toggles(symbol=False)
    assert group.request_symbol(m1, "ETH/USDT") == []
    assert len(switched) == 1


def live_pair(behind: int):
    """A 1m and a 15m view in one group on a series ``behind`` candles short, and a feed
    that brings the next closed 1m candle to both."""
    base = demo_candles(20_000, ONE_MINUTE, seed=3, end_ts=END)
    stack = TimeframeStack(base.slice(0, len(base) - behind), (parse_timeframe("15m"),))
    m1, m15 = ChartViewModel(), ChartViewModel()
    m1.set_series(TimeMap.of(stack.base))
    m15.set_series(TimeMap.of(stack.candles(parse_timeframe("15m"))))
    group = LinkGroup()
    for v in (m1, m15):
        group.add(v)

    def feed(n: int) -> None:
        for _ in range(n):
            stack.apply(base.row(len(stack.base)))
            m1.extend_series(TimeMap.of(stack.base))
            m15.extend_series(TimeMap.of(stack.candles(parse_timeframe("15m"))))
            group.flush()
    return m1, m15, group, feed


def test_new_candles_never_move_the_chart_the_trader_placed():
    m1, m15, group, feed = live_pair(behind=200)
    marked = []
    group.marks_changed.connect(marked.append)
    m15.zoom(150 / 40)  # 40 candles, 10 h: room to centre on chart 1 within its limits
    m1.pan(-60)  # the trader looks an hour back: chart 1 stops following live
    group.flush()
    assert not m1.follow_live and m15.follow_live  # centred there, its right edge is ahead
    held, marked[:] = m1.time_range, []
    for _ in range(20):  # a 15m candle closes: the 15m chart scrolls, then rejoins
        feed(1)
    assert m1.time_range == held
    assert abs(centre(m15) - centre(m1)) <= m15.time_map.timeframe_ms / 1000
    assert m15 in marked  # the shaded windows were told
    m15.pan(-4)  # a gesture on the 15m chart still drives
    group.flush()
    assert m1.time_range != held
    assert abs(centre(m1) - centre(m15)) <= m1.time_map.timeframe_ms / 1000


def test_a_chart_1_that_follows_live_keeps_the_others_with_it():
    m1, m15, group, feed = live_pair(behind=200)
    m1.zoom(1 / 7)  # about 1000 candles: its centre is hours back, and it follows live
    m15.zoom(7.5)  # 20 candles: centred on chart 1, its right edge lies before its newest
    m1.go_live()
    group.flush()
    assert m1.follow_live and not m15.follow_live
    for _ in range(6):
        feed(20)
        assert abs(centre(m15) - centre(m1)) <= m15.time_map.timeframe_ms / 1000
    def follows_m15() -> bool:  # centred on it, or as near as its right limit lets it
        at_limit = m1.x_range()[1] == view_limits(len(m1.time_map)).x_max
        return at_limit or abs(centre(m1) - centre(m15)) <= m1.time_map.timeframe_ms / 1000

    m15.go_live()  # now the 15m chart leads, live, and chart 1 follows it
    group.flush()
    assert follows_m15()
    for _ in range(3):
        feed(20)
        assert m15.follow_live and follows_m15()


def test_when_the_lead_leaves_the_first_chart_leads_and_a_relinked_one_rejoins():
    m1, m15, group, feed = live_pair(behind=300)
    h1 = ChartViewModel()
    hour = parse_timeframe("1h")
    h1.set_series(TimeMap.of(TimeframeStack(demo_candles(20_000, ONE_MINUTE, seed=3, end_ts=END),
                                            (hour,)).candles(hour)))
    h1.zoom(150 / 20)  # 20 hours: room to centre on chart 1 within its limits
    m15.pan(-40)  # the trader moves the 15m chart: it leads, chart 1 follows it back
    group.flush()
    group.remove(m15)  # and unlinks it: chart 1, the first, leads now
    assert group.lead is m1
    m1.go_live()
    group.flush()
    group.add(h1)  # linked: it takes the lead's time at the flush
    group.flush()
    assert abs(centre(h1) - centre(m1)) <= h1.time_map.timeframe_ms / 1000
    for _ in range(3):
        feed(20)  # chart 1's live scrolls still carry the others
        assert abs(centre(h1) - centre(m1)) <= h1.time_map.timeframe_ms / 1000


def test_the_time_link_back_on_brings_every_chart_to_the_lead_at_once():
    m1, m15, group, _feed = live_pair(behind=300)
    m15.zoom(150 / 40)
    group.set_toggles(time=False)
    m1.pan(-600)  # ten hours back, unlinked by time: the 15m chart stays
    group.flush()
    assert abs(centre(m15) - centre(m1)) > 3 * HOUR
    group.set_toggles(time=True)
    group.flush()
    assert abs(centre(m15) - centre(m1)) <= m15.time_map.timeframe_ms / 1000
