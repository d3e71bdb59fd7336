"""Loopback fakes of three ways exchanges page candle history, for tests of ``market.paging``
through the real ccxt clients (``ccxt.binance``, ``ccxt.okx``, ``ccxt.kraken``).

Every fake serves one market (ETH/USDT; Kraken: ETH/USD) whose candles exist from ``first_ms``
(the listing) to the fake's clock ``now_ms``, except in ``gaps`` (inclusive open-time spans
with no candles: an outage, quiet hours). Values are ``fake_exchange.final_candle``'s, sent as
the exchange's decimal strings, so stored values compare with ``==``; the newest candle is the
forming one.

- ``FakeBinanceGaps``: start-based paging (``FakeBinance`` with gaps): ``startTime`` +
  ``limit`` answer the first ``limit`` candles at or after ``startTime``.
- ``FakeOKX``: fixed windows: ``/api/v5/market/candles`` and ``history-candles`` answer the
  candles with ``before < ts < after``, newest first, at most ``limit`` (300). An empty window
  is an empty list. ``listTime`` of the instrument is the listing unless ``list_time=False``.
- ``FakeKraken``: recent only: ``/0/public/OHLC`` answers, of its newest ``keep`` (720)
  candles, those after ``since`` (seconds), however old ``since`` is.

Each logs its candle requests in ``candle_requests`` and unknown paths in ``unknown_paths``.
``FakeInThread(cls, **kwargs)`` runs one on its own loop for CLI tests.
"""

from __future__ import annotations

import asyncio
import json
import threading

import numpy as np
from aiohttp import web

from fake_exchange import INTERVAL_MS, FakeBinance, _fmt, final_candle, forming_candle

PRICE_SYMBOL = "ETHUSDT"  # the price path every fake serves


class _Candles:
    """The candles that exist: from ``first_ms`` to ``now_ms`` (forming), minus ``gaps``."""

    first_ms: int
    now_ms: int
    gaps: list[tuple[int, int]]

    def exists(self, ts: int) -> bool:
        return ts >= self.first_ms and not any(s <= ts <= e for s, e in self.gaps)

    def values(self, ts: int, step: int) -> tuple[float, ...]:
        newest = self.now_ms - self.now_ms % step
        if ts == newest:
            return forming_candle(PRICE_SYMBOL, ts, step, self.now_ms - ts)
        return final_candle(PRICE_SYMBOL, ts, step)

    def open_times(self, step: int, start: int, end: int) -> list[int]:
        """Existing open times in ``[start, end]`` (end capped at the forming candle)."""
        newest = self.now_ms - self.now_ms % step
        first = max(start + (-start) % step, self.first_ms + (-self.first_ms) % step)
        return [ts for ts in range(first, min(end, newest) + 1, step) if self.exists(ts)]

    def series(self, interval: str, start_ms: int, end_ms: int) -> np.ndarray:
        """Closed candles with open time in ``[start_ms, end_ms]`` as rows ``ts o h l c v``."""
        step = INTERVAL_MS[interval]
        newest = self.now_ms - self.now_ms % step
        rows = [(ts, *final_candle(PRICE_SYMBOL, ts, step))
                for ts in self.open_times(step, start_ms, min(end_ms, newest - step))]
        return np.array(rows, dtype=np.float64).reshape(-1, 6)


class FakeBinanceGaps(_Candles, FakeBinance):
    """``FakeBinance`` (start-based paging) whose candles have ``gaps``."""

    def __init__(self, *, first_ms: int, now_ms: int, gaps=(), **kwargs):
        FakeBinance.__init__(self, first_ms=first_ms, now_ms=now_ms, **kwargs)
        self.gaps = list(gaps)

    @property
    def candle_requests(self) -> list[dict[str, str]]:
        return self.klines_requests()

    def series(self, *args) -> np.ndarray:  # type: ignore[override]
        """``series(interval, start, end)`` (or FakeBinance's ``(symbol, interval, ...)``)."""
        return _Candles.series(self, *args[-3:])

    async def _klines(self, request: web.Request):
        q = request.query
        step = INTERVAL_MS[q["interval"]]
        limit = min(int(q.get("limit", 500)), 1000)
        end = int(q.get("endTime", self.now_ms))
        times = self.open_times(step, int(q.get("startTime", 0)), end)
        times = times[:limit] if "startTime" in q else times[-limit:]
        rows = []
        for ts in times:
            o, h, l, c, v = self.values(ts, step)
            rows.append([ts, _fmt(o), _fmt(h), _fmt(l), _fmt(c), _fmt(v, 3), ts + step - 1,
                         _fmt(v * c), 100, _fmt(v / 2, 3), _fmt(v * c / 2), "0"])
        return web.json_response(rows)


class _Loopback(_Candles):
    """An aiohttp server on 127.0.0.1 (random port) with the routes of ``routes()``."""

    candle_path = ""

    def __init__(self, *, first_ms: int, now_ms: int, gaps=()):
        self.first_ms, self.now_ms, self.gaps = first_ms, now_ms, list(gaps)
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.unknown_paths: list[str] = []
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    def routes(self) -> list[tuple[str, object]]:
        raise NotImplementedError

    @property
    def candle_requests(self) -> list[dict[str, str]]:
        return [q for path, q in self.requests if path.startswith(self.candle_path)]

    async def __aenter__(self):
        app = web.Application(middlewares=[self._log])
        for path, handler in self.routes():
            app.router.add_get(path, handler)
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc) -> None:
        await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def clock(self) -> int:
        return self.now_ms

    @web.middleware
    async def _log(self, request: web.Request, handler):
        self.requests.append((request.path, dict(request.query)))
        return await handler(request)

    async def _unknown(self, request: web.Request):
        self.unknown_paths.append(request.path)
        return web.json_response({"error": f"fake has no {request.path}"}, status=404)


OKX_BARS = {"1m": "1m", "3m": "3m", "5m": "5m", "15m": "15m", "30m": "30m", "1H": "1h",
            "4H": "4h", "1Dutc": "1d"}


class FakeOKX(_Loopback):
    """OKX v5: fixed windows (see the module docstring)."""

    candle_path = "/api/v5/market/"

    def __init__(self, *, first_ms: int, now_ms: int, gaps=(), list_time: bool = True):
        super().__init__(first_ms=first_ms, now_ms=now_ms, gaps=gaps)
        self.list_time = list_time

    def routes(self):
        return [("/api/v5/public/instruments", self._instruments),
                ("/api/v5/market/candles", self._candles),
                ("/api/v5/market/history-candles", self._candles)]

    def ccxt_urls(self) -> dict:
        return {"rest": self.base_url}

    @staticmethod
    def ccxt_options() -> dict:
        return {"fetchMarkets": {"types": ["spot"]}}

    async def _instruments(self, request: web.Request):
        market = {"instType": "SPOT", "instId": "ETH-USDT", "baseCcy": "ETH", "quoteCcy": "USDT",
                  "settleCcy": "", "ctVal": "", "tickSz": "0.01", "lotSz": "0.000001",
                  "minSz": "0.0001", "maxLmtSz": "1000000", "maxMktSz": "1000000",
                  "state": "live", "lever": "10", "uly": "", "instFamily": ""}
        if self.list_time:
            market["listTime"] = str(self.first_ms)
        return web.json_response({"code": "0", "msg": "", "data": [market]})

    async def _candles(self, request: web.Request):
        q = request.query
        if q.get("instId") != "ETH-USDT" or q.get("bar") not in OKX_BARS:
            return web.json_response({"code": "51000", "msg": "Parameter error", "data": []})
        step = INTERVAL_MS[OKX_BARS[q["bar"]]]
        limit = min(int(q.get("limit", 100)), 300)
        before = int(q.get("before", -1))
        after = int(q.get("after", self.now_ms + step))
        times = self.open_times(step, before + 1, after - 1)[-limit:]
        newest = self.now_ms - self.now_ms % step
        rows = []
        for ts in reversed(times):
            o, h, l, c, v = self.values(ts, step)
            rows.append([str(ts), _fmt(o), _fmt(h), _fmt(l), _fmt(c), _fmt(v, 3), _fmt(v * c),
                         _fmt(v * c), "0" if ts == newest else "1"])
        return web.json_response({"code": "0", "msg": "", "data": rows})


class FakeKraken(_Loopback):
    """Kraken: only the newest ``keep`` candles (see the module docstring)."""

    candle_path = "/0/public/OHLC"

    def __init__(self, *, first_ms: int, now_ms: int, gaps=(), keep: int = 720):
        super().__init__(first_ms=first_ms, now_ms=now_ms, gaps=gaps)
        self.keep = keep

    def routes(self):
        return [("/0/public/AssetPairs", self._pairs), ("/0/public/Assets", self._assets),
                ("/0/public/OHLC", self._ohlc)]

    def ccxt_urls(self) -> dict:
        return {"public": self.base_url, "private": self.base_url}

    @staticmethod
    def ccxt_options() -> dict:
        return {}

    def kept(self, step: int) -> list[int]:
        """Open times of the newest ``keep`` candles (the forming one last)."""
        return self.open_times(step, self.first_ms, self.now_ms)[-self.keep:]

    async def _assets(self, request: web.Request):
        asset = {"aclass": "currency", "decimals": 10, "display_decimals": 5, "status": "enabled"}
        return web.json_response({"error": [], "result": {
            "XETH": {**asset, "altname": "ETH"}, "ZUSD": {**asset, "altname": "USD",
                                                         "decimals": 4}}})

    async def _pairs(self, request: web.Request):
        pair = {"altname": "ETHUSD", "wsname": "ETH/USD", "aclass_base": "currency",
                "base": "XETH", "aclass_quote": "currency", "quote": "ZUSD", "lot": "unit",
                "cost_decimals": 5, "pair_decimals": 2, "lot_decimals": 8, "lot_multiplier": 1,
                "leverage_buy": [], "leverage_sell": [], "fees": [[0, 0.26]],
                "fees_maker": [[0, 0.16]], "fee_volume_currency": "ZUSD", "margin_call": 80,
                "margin_stop": 40, "ordermin": "0.002", "costmin": "0.5", "tick_size": "0.01",
                "status": "online"}
        return web.json_response({"error": [], "result": {"XETHZUSD": pair}})

    async def _ohlc(self, request: web.Request):
        q = request.query
        if q.get("pair") != "XETHZUSD":
            return web.json_response({"error": ["EQuery:Unknown asset pair"]})
        minutes = int(q.get("interval", 1))
        step = minutes * 60_000
        since_ms = int(q["since"]) * 1000 if "since" in q else None
        rows = []
        for ts in self.kept(step):
            if since_ms is not None and ts <= since_ms:
                continue
            o, h, l, c, v = self.values(ts, step)
            rows.append([ts // 1000, _fmt(o), _fmt(h), _fmt(l), _fmt(c), _fmt(c), _fmt(v, 3), 7])
        last = rows[-2][0] if len(rows) > 1 else 0
        return web.json_response({"error": [], "result": {"XETHZUSD": rows, "last": last}})


class FakeInThread:
    """A fake (``cls(**kwargs)``) on its own event loop in a thread (the CLI runs its own)."""

    def __init__(self, cls, **kwargs):
        self.cls, self.kwargs = cls, kwargs
        self.ready = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)

    async def _serve(self):
        self.loop = asyncio.get_running_loop()
        self.stop = asyncio.Event()
        async with self.cls(**self.kwargs) as fake:
            self.fake = fake
            self.ready.set()
            await self.stop.wait()

    def __enter__(self):
        self.thread.start()
        assert self.ready.wait(10), "fake exchange did not start"
        return self.fake

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(10)


def fetch_args(fake, since, until=None) -> list[str]:
    """``workstation fetch``'s arguments for ETH/USDT 1m from the fake Binance ``fake``."""
    args = ["fetch", "--exchange", "binance", "--symbol", "ETH/USDT", "--timeframe", "1m",
            "--since", str(since), "--ccxt-urls", json.dumps(fake.ccxt_urls()),
            "--ccxt-options", json.dumps(fake.ccxt_options())]
    return args + (["--until", str(until)] if until is not None else [])
