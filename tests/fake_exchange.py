"""A loopback fake of Binance's public spot API for tests of the ccxt feed.

``FakeBinance`` is an aiohttp server on 127.0.0.1 (random port), started inside the test's
event loop. It serves what ccxt's ``binance`` calls for public market data:

- ``GET /api/v3/exchangeInfo``: ETHUSDT and BTCUSDT spot markets with the usual filters;
- ``GET /api/v3/klines``: a deterministic candle series (Binance's 12-field rows) honouring
  ``symbol interval startTime endTime limit`` (limit at most 1000), up to the fake's clock,
  the last row being the still-forming candle;
- ``/api/v3/time`` and ``/api/v3/ping``;
- a kline websocket under ``/stream/ws/<n>`` that answers ccxt's ``SUBSCRIBE`` requests and
  pushes Binance ``kline`` events when the test advances the clock. (ccxt's binance decides
  "spot" by finding ``/stream`` in the socket URL, hence the path.)

Like Binance (which sends the forming kline every 1-2 s), the socket repeats the forming
kline every ``repeat_s`` of real time: ccxt only hands a message to a caller that is already
waiting, so without repeats the last event of a burst would surface only with the next one.

The test controls time (``advance``), injects faults (``fail_next``: any status, body and
headers such as ``Retry-After``), drops sockets (``drop_websockets``), refuses new ones
(``ws_accepting``), leaves their handshake unanswered (``ws_stalled``) or stalls them
(``ws_muted``).
Every HTTP request is logged in ``requests``; unknown paths answer 404 and are logged in
``unknown_paths``.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field

import numpy as np
from aiohttp import WSMsgType, web

INTERVAL_MS = {"1s": 1_000, "1m": 60_000, "3m": 180_000, "5m": 300_000, "15m": 900_000,
               "30m": 1_800_000, "1h": 3_600_000, "4h": 14_400_000, "1d": 86_400_000}
SYMBOLS = {"ETHUSDT": ("ETH", "USDT", 2000.0), "BTCUSDT": ("BTC", "USDT", 60000.0)}
UNKNOWN_ERROR = {"code": -1000, "msg": "An unknown error occurred while processing the request."}
ILLEGAL_PARAMETER = {"code": -1100, "msg": "Illegal characters found in parameter 'symbol'."}


def _price(symbol: str, k: int) -> float:
    """A smooth deterministic price path for candle number ``k``."""
    base = SYMBOLS[symbol][2]
    return base * (1.0 + 0.1 * math.sin(k / 500.0) + 0.01 * math.sin(k / 7.0))


def final_candle(symbol: str, ts: int, interval_ms: int) -> tuple[float, ...]:
    """The closed candle ``(o, h, l, c, v)`` at open time ``ts``; every value has an exact
    short decimal form, so a value that went through Binance's strings compares with ``==``."""
    k = ts // interval_ms
    o = round(_price(symbol, k), 2)
    c = round(_price(symbol, k + 1), 2)
    h = round(max(o, c) + (k * 7 % 13) / 10.0, 2)
    l = round(min(o, c) - (k * 11 % 17) / 10.0, 2)
    v = round(1.0 + (k * 7919 % 1000) / 8.0, 3)
    return o, h, l, c, v


def forming_candle(symbol: str, ts: int, interval_ms: int, elapsed_ms: int):
    """Candle ``ts`` as it looks ``elapsed_ms`` after it opened (the final one at the end)."""
    o, h, l, c, v = final_candle(symbol, ts, interval_ms)
    p = min(max(elapsed_ms / interval_ms, 0.0), 1.0)
    c_now = round(o + (c - o) * p, 2)
    h_now = round(max(o, c_now) + (h - max(o, c)) * p, 2)
    l_now = round(min(o, c_now) - (min(o, c) - l) * p, 2)
    return o, h_now, l_now, c_now, round(v * p, 3)


def _fmt(x: float, places: int = 2) -> str:
    return f"{x:.{places}f}"


@dataclass
class _Fault:
    status: int
    body: dict | str | None  # a dict is sent as JSON, a str as it is
    path: str | None  # only requests to this path fail; None: any request
    headers: dict[str, str] | None = None


@dataclass
class _Subscriber:
    ws: web.WebSocketResponse
    streams: set[str] = field(default_factory=set)


class FakeBinance:
    """See the module docstring. ``first_ms``: open time of the first candle that exists;
    ``now_ms``: the fake's clock (exchange time) at start."""

    def __init__(self, *, first_ms: int, now_ms: int, repeat_s: float = 0.02):
        self.first_ms = first_ms
        self.now_ms = now_ms
        self.repeat_s = repeat_s
        self._repeater: asyncio.Task | None = None
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.unknown_paths: list[str] = []
        self.ws_accepting = True
        self.ws_refusal_status = 503  # what a refused websocket handshake answers
        self.ws_muted = False  # connected sockets get nothing (a stalled stream)
        self.ws_stalled = False  # new sockets get no handshake answer until it is False again
        self.ws_connections = 0
        self.ws_pushed: list[tuple[int, bool]] = []  # (open time, closed) of every kline sent
        self.subscriptions: list[list[str]] = []
        self._faults: list[_Fault] = []
        self._subscribers: list[_Subscriber] = []
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    # -- lifecycle ----------------------------------------------------------------------
    async def __aenter__(self) -> FakeBinance:
        app = web.Application()
        app.router.add_get("/api/v3/exchangeInfo", self._exchange_info)
        app.router.add_get("/api/v3/klines", self._klines)
        app.router.add_get("/api/v3/time", self._time)
        app.router.add_get("/api/v3/ping", self._ping)
        app.router.add_get("/stream/ws/{n}", self._websocket)
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        app.middlewares.append(self._log_and_fail)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        self._repeater = asyncio.ensure_future(self._repeat_forming())
        return self

    async def __aexit__(self, *exc) -> None:
        self._repeater.cancel()
        await asyncio.wait({self._repeater})
        await self.drop_websockets()
        await self._runner.cleanup()

    # -- what a ccxt client needs to talk to this fake ------------------------------------
    @property
    def rest_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v3"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/stream/ws"

    def ccxt_urls(self) -> dict:
        """Overrides for ccxt binance's ``urls['api']``."""
        return {"public": self.rest_url, "private": self.rest_url,
                "ws": {"spot": self.ws_url}}

    @staticmethod
    def ccxt_options() -> dict:
        """Overrides for ccxt binance's ``options``: spot markets only (no fapi/dapi calls)."""
        return {"fetchMarkets": {"types": ["spot"]}}

    def clock(self) -> int:
        return self.now_ms

    # -- test controls ----------------------------------------------------------------------
    def fail_next(self, n: int, status: int, body: dict | str | None = None,
                  path: str | None = None, *, headers: dict[str, str] | None = None):
        """The next ``n`` requests (to ``path`` if given) answer ``status`` with ``body`` (a
        dict: as JSON; a str: as it is, e.g. another exchange's error body) and ``headers``
        (e.g. ``{"Retry-After": "2"}``)."""
        self._faults.extend(_Fault(status, body, path, headers) for _ in range(n))

    def klines_requests(self) -> list[dict[str, str]]:
        return [query for path, query in self.requests if path == "/api/v3/klines"]

    def series(self, symbol: str, interval: str, start_ms: int, end_ms: int) -> np.ndarray:
        """Closed candles with open time in ``[start_ms, end_ms]`` as rows ``ts o h l c v``."""
        step = INTERVAL_MS[interval]
        first = max(start_ms + (-start_ms) % step, self.first_ms)
        rows = [(ts, *final_candle(symbol, ts, step)) for ts in range(first, end_ms + 1, step)]
        return np.array(rows, dtype=np.float64).reshape(-1, 6)

    async def advance(self, ms: int) -> None:
        """Move the clock; subscribed sockets get the klines Binance would have sent: the
        final (``x: true``) event of every candle that closed, then the forming candle."""
        old = self.now_ms
        self.now_ms += ms
        for sub in list(self._subscribers):
            for stream in sub.streams:
                market_id, interval = stream.split("@kline_")
                symbol, step = market_id.upper(), INTERVAL_MS[interval]
                for ts in range(old - old % step, self.now_ms - self.now_ms % step, step):
                    await self._push(sub, symbol, interval, ts, closed=True)
        await self._push_forming()

    async def _push_forming(self) -> None:
        for sub in list(self._subscribers):
            for stream in sub.streams:
                market_id, interval = stream.split("@kline_")
                step = INTERVAL_MS[interval]
                await self._push(sub, market_id.upper(), interval,
                                 self.now_ms - self.now_ms % step, closed=False)

    async def _repeat_forming(self) -> None:
        while True:
            await asyncio.sleep(self.repeat_s)
            await self._push_forming()

    async def drop_websockets(self) -> None:
        """Close every open socket abruptly (as a dropped connection looks to the client)."""
        subscribers, self._subscribers = self._subscribers, []
        for sub in subscribers:
            await sub.ws.close(code=1006)

    # -- websocket ---------------------------------------------------------------------------
    async def _push(self, sub: _Subscriber, symbol: str, interval: str, ts: int, closed: bool):
        step = INTERVAL_MS[interval]
        if closed:
            o, h, l, c, v = final_candle(symbol, ts, step)
        else:
            o, h, l, c, v = forming_candle(symbol, ts, step, self.now_ms - ts)
        event = {
            "e": "kline", "E": self.now_ms, "s": symbol,
            "k": {"t": ts, "T": ts + step - 1, "s": symbol, "i": interval, "f": 100, "L": 200,
                  "o": _fmt(o), "c": _fmt(c), "h": _fmt(h), "l": _fmt(l), "v": _fmt(v, 3),
                  "n": 100, "x": closed, "q": _fmt(v * c), "V": _fmt(v / 2, 3),
                  "Q": _fmt(v * c / 2), "B": "0"},
        }
        if sub.ws.closed or self.ws_muted:
            return
        try:
            await sub.ws.send_str(json.dumps(event))
        except ConnectionResetError:  # the client went away meanwhile
            return
        self.ws_pushed.append((ts, closed))

    async def _websocket(self, request: web.Request):
        if not self.ws_accepting:
            return web.Response(status=self.ws_refusal_status,
                                text="websocket refused by the test")
        while self.ws_stalled:  # a connection that hangs (a proxy, a firewall)
            await asyncio.sleep(0.01)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.ws_connections += 1
        sub = _Subscriber(ws)
        self._subscribers.append(sub)
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                data = json.loads(msg.data)
                if data.get("method") == "SUBSCRIBE":
                    sub.streams.update(data["params"])
                    self.subscriptions.append(list(data["params"]))
                    await ws.send_str(json.dumps({"result": None, "id": data["id"]}))
        finally:
            if sub in self._subscribers:
                self._subscribers.remove(sub)
        return ws

    # -- REST ----------------------------------------------------------------------------------
    @web.middleware
    async def _log_and_fail(self, request: web.Request, handler):
        self.requests.append((request.path, dict(request.query)))
        for i, fault in enumerate(self._faults):
            if fault.path is None or fault.path == request.path:
                del self._faults[i]
                if fault.body is None:
                    return web.Response(status=fault.status, text="fault injected by the test",
                                        headers=fault.headers)
                if isinstance(fault.body, str):
                    return web.Response(status=fault.status, text=fault.body,
                                        headers=fault.headers)
                return web.json_response(fault.body, status=fault.status, headers=fault.headers)
        return await handler(request)

    async def _unknown(self, request: web.Request):
        self.unknown_paths.append(request.path)
        return web.json_response({"code": -1, "msg": f"fake has no {request.path}"}, status=404)

    async def _time(self, request: web.Request):
        return web.json_response({"serverTime": self.now_ms})

    async def _ping(self, request: web.Request):
        return web.json_response({})

    async def _exchange_info(self, request: web.Request):
        symbols = []
        for market_id, (base, quote, _) in SYMBOLS.items():
            symbols.append({
                "symbol": market_id, "status": "TRADING",
                "baseAsset": base, "baseAssetPrecision": 8,
                "quoteAsset": quote, "quotePrecision": 8, "quoteAssetPrecision": 8,
                "baseCommissionPrecision": 8, "quoteCommissionPrecision": 8,
                "orderTypes": ["LIMIT", "LIMIT_MAKER", "MARKET"],
                "icebergAllowed": True, "ocoAllowed": True,
                "quoteOrderQtyMarketAllowed": True, "allowTrailingStop": True,
                "isSpotTradingAllowed": True, "isMarginTradingAllowed": True,
                "filters": [
                    {"filterType": "PRICE_FILTER", "minPrice": "0.01000000",
                     "maxPrice": "1000000.00000000", "tickSize": "0.01000000"},
                    {"filterType": "LOT_SIZE", "minQty": "0.00010000",
                     "maxQty": "9000.00000000", "stepSize": "0.00010000"},
                    {"filterType": "NOTIONAL", "minNotional": "5.00000000",
                     "applyMinToMarket": True, "maxNotional": "9000000.00000000",
                     "applyMaxToMarket": False, "avgPriceMins": 5},
                    {"filterType": "MARKET_LOT_SIZE", "minQty": "0.00000000",
                     "maxQty": "1000.00000000", "stepSize": "0.00000000"},
                    {"filterType": "MAX_NUM_ORDERS", "maxNumOrders": 200},
                ],
                "permissions": [], "permissionSets": [["SPOT", "MARGIN"]],
            })
        return web.json_response({
            "timezone": "UTC", "serverTime": self.now_ms,
            "rateLimits": [{"rateLimitType": "REQUEST_WEIGHT", "interval": "MINUTE",
                            "intervalNum": 1, "limit": 6000}],
            "exchangeFilters": [], "symbols": symbols,
        })

    async def _klines(self, request: web.Request):
        q = request.query
        symbol, interval = q.get("symbol"), q.get("interval")
        if symbol not in SYMBOLS:
            return web.json_response({"code": -1121, "msg": "Invalid symbol."}, status=400)
        if interval not in INTERVAL_MS:
            return web.json_response({"code": -1120, "msg": "Invalid interval."}, status=400)
        step = INTERVAL_MS[interval]
        limit = min(int(q.get("limit", 500)), 1000)
        newest = self.now_ms - self.now_ms % step  # the forming candle
        last = min(newest, int(q["endTime"])) if "endTime" in q else newest
        last -= last % step
        if "startTime" in q:
            start = int(q["startTime"])
            first = max(start + (-start) % step, self.first_ms)
            last = min(last, first + (limit - 1) * step)
        else:
            first = max(last - (limit - 1) * step, self.first_ms)
        rows = []
        for ts in range(first, last + 1, step):
            if ts == newest:
                o, h, l, c, v = forming_candle(symbol, ts, step, self.now_ms - ts)
            else:
                o, h, l, c, v = final_candle(symbol, ts, step)
            rows.append([ts, _fmt(o), _fmt(h), _fmt(l), _fmt(c), _fmt(v, 3), ts + step - 1,
                         _fmt(v * c), 100, _fmt(v / 2, 3), _fmt(v * c / 2), "0"])
        return web.json_response(rows)
