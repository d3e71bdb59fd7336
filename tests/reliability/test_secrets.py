"""API keys never in plain text: masked in the log, on screen and in errors; given to the
exchange, not its options; kept only in the OS keyring when asked; and the data folders and
files readable by the user only."""

from __future__ import annotations

import json
import logging
import os
import stat
import time

import keyring
import keyring.errors
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail

from workstation.cli import describe_error, main
from workstation.errors import WorkstationError
from workstation.market.ccxt_feed import CcxtFeed
from workstation.market.credentials import RememberedCredentials, env_name
from workstation.market.timeframes import ONE_MINUTE
from workstation.paths import app_paths
from workstation.redact import redact, register, register_in

from fake_exchange import FakeBinance
from fake_exchanges import FakeInThread

MIN = 60_000
KEY, SECRET = "AKIATESTKEY123", "s3cr3t-XYZ-987"
# binance loads margin pairs and currencies by private calls once it has keys; the loopback
# fake serves public market data only
PUBLIC_ONLY = {"fetchCurrencies": False, "fetchMargins": False}


class MemoryKeyring(KeyringBackend):
    """A keyring backend in memory (this machine has no Secret Service); the code under test
    goes through the real ``keyring`` API."""

    priority = 1  # type: ignore[assignment]

    def __init__(self):
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.items.get((service, username))

    def set_password(self, service, username, password):
        self.items[(service, username)] = password

    def delete_password(self, service, username):
        if self.items.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError(username)


@pytest.fixture
def os_keyring():
    before = keyring.get_keyring()
    memory = MemoryKeyring()
    keyring.set_keyring(memory)
    yield memory
    keyring.set_keyring(before)


@pytest.fixture
def no_keyring():
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(before)


def every_file_text(folder) -> str:
    return "".join(p.read_bytes().decode("latin-1") for p in folder.rglob("*") if p.is_file())


def fetch(fake, *extra, options=None):
    now = int(time.time() * 1000)
    since = now - now % MIN - 100 * MIN
    return main(["fetch", "--exchange", "binance", "--symbol", "ETH/USDT", "--timeframe", "1m",
                 "--since", str(since), "--ccxt-urls", json.dumps(fake.ccxt_urls()),
                 "--ccxt-options", json.dumps({**fake.ccxt_options(), **PUBLIC_ONLY,
                                               **(options or {})}), *extra])


def fake_exchange():
    now = int(time.time() * 1000)
    return FakeInThread(FakeBinance, first_ms=now - now % MIN - 1000 * MIN, now_ms=now)


def test_keys_in_ccxt_options_reach_the_exchange_and_nothing_else(capsys, workstation_home):
    with fake_exchange() as fake:
        assert fetch(fake, options={"apiKey": KEY, "secret": SECRET}) == 0
    out = capsys.readouterr()
    assert "stored 100 candles" in out.out
    log = app_paths().log_file.read_text()
    assert '"apiKey": "***", "secret": "***"' in log  # the command line, masked
    for text in (out.out, out.err, every_file_text(workstation_home)):
        assert KEY not in text and SECRET not in text


def test_credentials_go_to_the_ccxt_constructor_from_options_or_environment(monkeypatch):
    feed = CcxtFeed("binance", "ETH/USDT", ONE_MINUTE, options={"apiKey": KEY, "secret": SECRET,
                                                          "defaultType": "spot"})
    assert (feed.exchange.apiKey, feed.exchange.secret) == (KEY, SECRET)
    assert "apiKey" not in feed.exchange.options and feed.exchange.options["defaultType"] == "spot"
    monkeypatch.setenv(env_name("binance", "apiKey"), "ENVKEY-4567")
    monkeypatch.setenv("WORKSTATION_BINANCE_SECRET", "ENVSECRET-890")
    from_env = CcxtFeed("binance", "ETH/USDT", ONE_MINUTE)
    assert (from_env.exchange.apiKey, from_env.exchange.secret) == ("ENVKEY-4567", "ENVSECRET-890")
    given = CcxtFeed("binance", "ETH/USDT", ONE_MINUTE, options={"apiKey": KEY})
    assert given.exchange.apiKey == KEY and given.exchange.secret == "ENVSECRET-890"
    assert redact("the key ENVSECRET-890 was refused") == "the key *** was refused"


def test_errors_that_quote_a_secret_are_masked(capsys):
    assert main(["fetch", "--since", "2024-01-01", "--ccxt-options",
                 '{"apiKey": "AKIA-in-bad-json", "secret": "oops-9876",']) == 1
    err = capsys.readouterr().err
    assert "not valid JSON" in err and "AKIA-in-bad-json" not in err and "oops-9876" not in err
    register("signed-5432")
    exc = RuntimeError("binance GET https://x/api?apiKey=signed-5432&signature=abc 401")
    assert "signed-5432" not in describe_error(exc)
    assert "signed-5432" not in describe_error(WorkstationError("refused signed-5432"))


def test_remembered_credentials_live_in_the_keyring_only(os_keyring, workstation_home, capsys):
    with fake_exchange() as fake:
        assert fetch(fake, "--remember-credentials",
                     options={"apiKey": KEY, "secret": SECRET}) == 0
        assert os_keyring.items == {("workstation", "binance:apiKey"): KEY,
                                    ("workstation", "binance:secret"): SECRET}
        assert SECRET not in every_file_text(workstation_home)
        feed = CcxtFeed("binance", "ETH/USDT", ONE_MINUTE)  # a later run, nothing given
        assert (feed.exchange.apiKey, feed.exchange.secret) == (KEY, SECRET)
        assert fetch(fake) == 0
    capsys.readouterr()
    assert main(["credentials", "list"]) == 0
    assert capsys.readouterr().out.strip() == "binance: apiKey, secret"
    assert main(["credentials", "forget", "binance"]) == 0
    assert "forgot apiKey, secret" in capsys.readouterr().out
    assert os_keyring.items == {} and RememberedCredentials().listing() == {}
    assert CcxtFeed("binance", "ETH/USDT", ONE_MINUTE).exchange.apiKey in (None, "")


def test_credentials_remember_takes_them_from_the_environment(os_keyring, monkeypatch, capsys):
    monkeypatch.setenv("WORKSTATION_KRAKEN_API_KEY", "KRAKENKEY-11")
    monkeypatch.setenv("WORKSTATION_KRAKEN_SECRET", "KRAKENSECRET-22")
    assert main(["credentials", "remember", "kraken"]) == 0
    out = capsys.readouterr().out
    assert "kraken: apiKey, secret kept in the OS keyring" in out and "KRAKEN" not in out
    assert os_keyring.items[("workstation", "kraken:secret")] == "KRAKENSECRET-22"


def test_without_a_keyring_remembering_fails_clearly_and_stores_nothing(no_keyring, capsys,
                                                                       workstation_home):
    with fake_exchange() as fake:
        assert fetch(fake, "--remember-credentials",
                     options={"apiKey": KEY, "secret": SECRET}) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no OS keyring is available" in err
    assert "nothing was stored" in err and SECRET not in err
    assert SECRET not in every_file_text(workstation_home)
    assert not (app_paths().config_dir / "credentials.json").exists()


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
def test_the_data_folders_and_files_are_the_users_only(tmp_path, workstation_home):
    paths = app_paths()
    paths.data_dir.mkdir(parents=True, mode=0o755)
    os.chmod(paths.data_dir, 0o755)  # as an older version left it
    notes = tmp_path / "marks.json"
    notes.write_text('{"version": 2, "annotations": []}')
    assert main(["annotations", "import", str(notes)]) == 0
    assert main(["candles", "list"]) == 0
    for folder in (paths.config_dir, paths.data_dir, paths.log_dir):
        assert mode(folder) == 0o700, folder
    assert mode(paths.log_file) == 0o600
    assert mode(paths.annotations_db) == 0o600 and mode(paths.candle_cache) == 0o600


@pytest.mark.parametrize("text, secret", [
    ('--ccxt-options {"apiKey": "OPT-KEY-101", "secret": "OPT-SECRET-102"}', "OPT-"),
    ("http://trader:URL-PASS-103@127.0.0.1:8080/api/v3", "URL-PASS-103"),
    ("yarl URL('wss://trader:URL-PASS-104@stream.example/ws')", "URL-PASS-104"),
    ("{'X-MBX-APIKEY': 'HEADER-KEY-105', 'Accept': 'json'}", "HEADER-KEY-105"),
    ("Authorization: Bearer BEARER-106", "BEARER-106"),
    ('"Authorization": "Basic QkFTSUMtMTA3"', "QkFTSUMtMTA3"),
    ("GET https://x/api/v3/order?apiKey=QUERY-KEY-108&timestamp=1&signature=SIG-109 401",
     "-10"),
    ('{"public": "http://x/api?token=QUERY-TOKEN-110", "private": "http://x"}',
     "QUERY-TOKEN-110"),
])
def test_one_mask_covers_every_form_a_secret_takes(text, secret):
    masked = redact(text)
    assert secret not in masked and "***" in masked
    assert redact("GET http://127.0.0.1:8080/api/v3/klines?symbol=ETHUSDT&limit=100 200") == \
        "GET http://127.0.0.1:8080/api/v3/klines?symbol=ETHUSDT&limit=100 200"


def test_secrets_in_settings_are_masked_wherever_they_reappear():
    register_in({"public": "http://trader:SETTING-PASS-201@host/api", "headers": {
        "X-MBX-APIKEY": "SETTING-KEY-202", "Authorization": "Bearer SETTING-BEARER-203"},
        "tokens": 1000, "private": "http://host/api?signature=SETTING-SIG-204"})
    text = redact("SETTING-PASS-201 SETTING-KEY-202 SETTING-BEARER-203 SETTING-SIG-204 1000")
    assert text == "*** *** *** *** 1000"


def test_the_log_dock_shows_every_secret_masked(qtbot):
    from workstation.ui.log_dock import LogDock

    dock = LogDock()
    qtbot.addWidget(dock)
    logger = logging.getLogger("workstation.test_log_dock")
    dock.attach(logger)
    try:
        logger.warning("feed failed: GET %s", "http://trader:DOCK-PASS-301@host/api?apiKey=DK")
        try:
            raise RuntimeError("Authorization: Bearer DOCK-BEARER-302")
        except RuntimeError:
            logger.exception("request failed")
        qtbot.waitUntil(lambda: "request failed" in dock.view.toPlainText())
    finally:
        dock.detach(logger)
    shown = dock.view.toPlainText()
    assert "http://***@host/api?apiKey=***" in shown and "Bearer ***" in shown
    assert "DOCK-PASS-301" not in shown and "DOCK-BEARER-302" not in shown


URL_PASS, HEADER_KEY, BEARER = "url-pass-PW401", "HDR-APIKEY-402", "bearer-tok-403"
QUERY_TOKEN, SIGNATURE = "query-tok-404", "sig-nature-405"
ENV_SECRET, KEYRING_UID = "env-secret-406", "keyring-uid-407"


def session_fetch(fake, since_min: int, until_min: int | None = None, *, urls=None,
                  options=None) -> int:
    """``workstation fetch`` of ETH/USDT 1m from ``since_min`` minutes ago (to ``until_min``
    minutes ago), through ``urls`` (default: the fake's)."""
    now = int(time.time() * 1000)
    now -= now % MIN
    span = ["--since", str(now - since_min * MIN)]
    if until_min is not None:
        span += ["--until", str(now - until_min * MIN)]
    return main(["fetch", "--exchange", "binance", "--symbol", "ETH/USDT", "--timeframe", "1m",
                 *span, "--ccxt-urls", json.dumps(urls or fake.ccxt_urls()),
                 "--ccxt-options", json.dumps({**fake.ccxt_options(), **PUBLIC_ONLY,
                                               **(options or {})})])


def with_userinfo(url: str, suffix: str = "") -> str:
    return url.replace("http://", f"http://trader:{URL_PASS}@") + suffix


def test_a_session_leaves_no_secret_in_any_file_or_output(os_keyring, monkeypatch, capsys,
                                                          workstation_home, tmp_path):
    RememberedCredentials().remember("binance", {"uid": KEYRING_UID})
    monkeypatch.setenv("WORKSTATION_BINANCE_SECRET", ENV_SECRET)
    with fake_exchange() as fake:
        urls = fake.ccxt_urls()
        # options, the environment, the keyring, a URL's user:password and a header
        assert session_fetch(fake, 900, 601, urls={**urls, "public": with_userinfo(urls[
            "public"])}, options={"apiKey": KEY, "headers": {"X-MBX-APIKEY": HEADER_KEY}}) == 0
        assert session_fetch(fake, 600, options={"headers": {
            "Authorization": f"Bearer {BEARER}"}}) == 0
        # failing requests whose errors quote the URL: with a password, a query string
        fake.fail_next(1, 404, "<html>gone</html>")
        assert session_fetch(fake, 1000, 901, urls={**urls, "public": with_userinfo(
            urls["public"])}) == 1
        fake.fail_next(1, 404, "<html>gone</html>")
        assert session_fetch(fake, 1000, 901, urls={**urls, "public": with_userinfo(
            urls["public"], f"?token={QUERY_TOKEN}&signature={SIGNATURE}")}) == 1
    failed = capsys.readouterr()
    assert "GET http://***@127.0.0.1" in failed.err and "token=***&signature=***" in failed.err
    assert main(["train", "--source", "binance", "--symbol", "ETH/USDT", "--seq-len", "32",
                 "--stride", "32", "--batch-size", "16", "--epochs", "1", "--threads", "1"]) == 0
    assert list(workstation_home.rglob("run.json"))  # the run's manifest
    marks = tmp_path / "marks.json"
    marks.write_text('{"version": 2, "annotations": []}')
    exports = tmp_path / "exports"
    exports.mkdir()
    assert main(["annotations", "import", str(marks)]) == 0
    assert main(["annotations", "export", str(exports / "marks.csv")]) == 0
    assert main(["candles", "export", "--source", "binance", "--symbol", "ETH/USDT",
                 "--timeframe", "1m", "--out", str(exports / "candles.csv")]) == 0
    out = capsys.readouterr()
    log = app_paths().log_file.read_text()
    assert "http://***@127.0.0.1" in log and '"X-MBX-APIKEY": "***"' in log
    everything = (failed.out + failed.err + out.out + out.err + every_file_text(workstation_home)
                  + every_file_text(exports))
    for secret in (KEY, URL_PASS, HEADER_KEY, BEARER, QUERY_TOKEN, SIGNATURE, ENV_SECRET,
                   KEYRING_UID):
        assert secret not in everything, secret


def test_headers_in_the_options_go_to_the_exchange():
    feed = CcxtFeed("binance", "ETH/USDT", ONE_MINUTE,
                    options={"headers": {"X-MBX-APIKEY": HEADER_KEY}, "defaultType": "spot"})
    assert feed.exchange.headers == {"X-MBX-APIKEY": HEADER_KEY}
    assert "headers" not in feed.exchange.options
