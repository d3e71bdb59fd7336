"""How an exchange pages candle history through ccxt, and collecting a whole range with honest
coverage.

ccxt's ``fetch_ohlcv(since, limit)`` means different things on different exchanges:

- ``START`` (Binance, Bybit and most others): the first ``limit`` candles at or after
  ``since``. An empty answer means the exchange has nothing from ``since`` on; candles that
  start later than ``since`` mean there were none before them.
- ``WINDOW`` (OKX, Coinbase, Bitget, KuCoin, Gate): the candles of the fixed window
  ``[since, since + limit * timeframe)``. An empty answer says only that this window is
  empty: later windows may hold candles (an outage longer than a page, quiet hours, a
  ``since`` before the listing), so paging moves on window by window to the requested end.
- ``RECENT`` (Kraken): only the newest N candles exist there (N = its page size); older
  history comes back as nothing, without an error.

``collect`` pages ``[start, last]`` in the exchange's style and reports, besides the rows, the
spans the exchange answered for (``covered``): with candles, or with an emptiness the style
justifies (before the market's listing time, a window the exchange confirmed empty, nothing
at or after ``since`` on a start-based exchange). A stretch the exchange did not serve is left
out of ``covered`` and explained in ``notes``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from ..timeparse import format_ms
from .candles import Candles
from .timeframes import SUPPORTED

START, WINDOW, RECENT = "start", "window", "recent"
DEFAULT_PAGE_LIMIT = 500  # when ccxt does not know the exchange's maximum
MAX_PAGE_LIMIT = 5000  # a page size ccxt reports above this is not trusted

# ccxt classes (and their subclasses: myokx, gateio, coinbaseadvanced, kucoinfutures ...)
# whose fetch_ohlcv asks for the fixed window [since, since + limit * timeframe).
_WINDOW_CLASSES = frozenset({"okx", "coinbase", "coinbaseexchange", "bitget", "kucoin", "gate"})
_RECENT_CLASSES = frozenset({"kraken"})  # serves only its newest N candles

Page = Callable[[int, int], Awaitable[Sequence[Sequence]]]


def paging_style(exchange) -> str:
    """``START``, ``WINDOW`` or ``RECENT`` for a ccxt exchange instance."""
    names = {cls.__name__ for cls in type(exchange).__mro__}
    if names & _RECENT_CLASSES:
        return RECENT
    if names & _WINDOW_CLASSES:
        return WINDOW
    return START


def page_limit(exchange, market: dict) -> int:
    """Most candles one ``fetch_ohlcv`` returns for this market, from ccxt's ``features``
    (per market type and sub-type); ``DEFAULT_PAGE_LIMIT`` where ccxt does not say."""
    by_type = (getattr(exchange, "features", None) or {}).get(market.get("type")) or {}
    if market.get("subType") in by_type:
        by_type = by_type[market["subType"]] or {}
    limit = (by_type.get("fetchOHLCV") or {}).get("limit") if isinstance(by_type, dict) else None
    try:
        value = int(limit) if limit else 0
    except (TypeError, ValueError):
        value = 0
    return value if 0 < value <= MAX_PAGE_LIMIT else DEFAULT_PAGE_LIMIT


def recent_page_limit(exchange, market: dict, timeframe: str, since: int, now: int,
                      base: int) -> int:
    """The page size for a page starting at ``since``: Bitget serves up to 1000 candles a
    page from its "recent" endpoint (the last ``maxRecentDaysPerTimeframe`` days, capped per
    timeframe), 200 from its history endpoint (what ccxt's ``features`` says); else ``base``."""
    if "bitget" not in {cls.__name__ for cls in type(exchange).__mro__}:
        return base
    options = (getattr(exchange, "options", None) or {}).get("fetchOHLCV") or {}
    days = (options.get("maxRecentDaysPerTimeframe") or {}).get(timeframe)
    if not days or since <= now - (int(days) - 2) * 86_400_000:  # a day's margin for clocks
        return base
    per_type = options.get("spot" if market.get("spot") else "swap") or {}
    cap = (per_type.get("maxLimitPerTimeframe") or {}).get(timeframe) or 1000
    return max(base, min(1000, int(cap)))


def offered_timeframes(exchange) -> tuple[str, ...]:
    """The timeframes both the exchange (ccxt's ``timeframes``) and Workstation support, in
    Workstation's order (all of Workstation's when ccxt lists none)."""
    offered = getattr(exchange, "timeframes", None) or {}
    if not offered:
        return SUPPORTED
    return tuple(name for name in SUPPORTED if name in offered)


@dataclass
class Collected:
    """What ``collect`` got: ``rows`` (``[ts, o, h, l, c, v]``, ascending), ``covered``
    (merged inclusive spans of open times the exchange answered for), ``notes`` (by kind,
    ``"listed"`` or ``"recent"``: why a requested stretch is empty or not covered) and, for a
    recent-only exchange whose history ends before the request began, ``served_from``: the
    oldest candle it serves (nothing older is worth asking for)."""

    rows: list[list] = field(default_factory=list)
    covered: list[tuple[int, int]] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)
    served_from: int | None = None

    def cover(self, start: int, end: int, tf: int) -> None:
        if end < start:
            return
        if self.covered and start <= self.covered[-1][1] + tf:
            s, e = self.covered[-1]
            self.covered[-1] = (min(s, start), max(e, end))
        else:
            self.covered.append((start, end))


@dataclass
class History:
    """``CcxtFeed.fetch_range``'s answer: the candles, the spans of closed candles the
    exchange answered for, and notes on what it did not serve."""

    candles: Candles
    covered: list[tuple[int, int]]
    notes: dict[str, str]
    served_from: int | None = None


def newer(rows: Sequence[Sequence], after_ts: int | None, last_ts: int | None) -> list[list]:
    """Rows with ``after_ts < ts <= last_ts`` (None: unbounded), strictly ascending."""
    out: list[list] = []
    for row in sorted(rows, key=lambda r: int(r[0])):
        ts = int(row[0])
        if after_ts is not None and ts <= after_ts:
            continue
        if last_ts is not None and ts > last_ts:
            continue
        if out and ts <= out[-1][0]:
            continue
        out.append([ts, *row[1:6]])
    return out


async def collect(start: int, last: int, tf: int, page: Page, *, style: str = START,
                  limit_at: Callable[[int], int] = lambda since: DEFAULT_PAGE_LIMIT,
                  listed: int | None = None, progress: Callable[[int, int], None] | None = None,
                  what: str = "the exchange") -> Collected:
    """Rows with open time in ``[start, last]`` (both on the ``tf`` grid), page after page
    in ``style``; ``page(since, limit)`` fetches one page, ``limit_at(since)`` is the page
    size there, ``listed`` the market's listing time (ms) where known. ``what`` names the
    series in notes. ``progress(done_ms, total_ms)`` is called after each page."""
    out = Collected()
    total = max(last + tf - start, 0)
    since = start
    if listed is not None and listed > start:
        first_slot = listed + (-listed) % tf
        out.cover(start, min(first_slot - tf, last), tf)
        if first_slot > start:
            out.notes["listed"] = (f"{what} was listed {format_ms(listed)}: no candles "
                                   f"before that")
        since = first_slot
    first_page = True
    while since <= last:
        base = limit_at(since)
        if style == RECENT and first_page:
            raw = newer(await page(since, base), since - 1, None)
            first_page = False
            fresh = [row for row in raw if row[0] <= last]
            if not raw:
                out.cover(since, last, tf)  # nothing at or after since
                break
            if raw[0][0] > since and len(raw) >= base:
                out.notes["recent"] = (
                    f"{what}: the exchange serves only its newest {base} candles (from "
                    f"{format_ms(raw[0][0])}); older candles are not available there")
                out.served_from = since = raw[0][0]
            if not fresh:
                break
            out.cover(since, fresh[-1][0], tf)
            out.rows.extend(fresh)
            since = fresh[-1][0] + tf
            if len(raw) > len(fresh) or len(raw) < base:
                out.cover(since, last, tf)  # the exchange answered through the newest candle
                break
        else:
            limit = min(base, (last - since) // tf + 1)
            raw = newer(await page(since, limit), since - 1, None)
            fresh = [row for row in raw if row[0] <= last]
            if style == WINDOW:
                window_end = since + (limit - 1) * tf
                end = max(window_end, fresh[-1][0]) if fresh else window_end
                out.cover(since, end, tf)  # the window's empty stretches are confirmed
                out.rows.extend(fresh)
                since = end + tf
            else:
                if not fresh or len(raw) > len(fresh):
                    # nothing at or after since, or the next candle is after last
                    out.rows.extend(fresh)
                    out.cover(since, last, tf)
                    break
                out.cover(since, fresh[-1][0], tf)
                out.rows.extend(fresh)
                since = fresh[-1][0] + tf
        if progress is not None:
            progress(min(since - start, total), total)
    return out


def clip(spans: list[tuple[int, int]], last: int) -> list[tuple[int, int]]:
    """``spans`` cut off after ``last``."""
    return [(s, min(e, last)) for s, e in spans if s <= last]
