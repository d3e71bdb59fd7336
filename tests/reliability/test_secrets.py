"""API keys never in plain text: masked in the log, on screen and in errors; given to the
exchange, not its options; kept only in the OS keyring when asked; and the data folders and
files readable by the user only."""

from __future__ import annotations

import json
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
from workstation.redact import redact, register

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
