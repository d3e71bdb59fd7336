"""Exchange credentials (API key, secret, ...): given, from the environment, or remembered in
the OS keyring; never written to a file, always masked (``workstation.redact``).

Where they come from, first found wins per field:

1. ``--ccxt-options`` (credential fields there are taken out of the options and given to the
   ccxt constructor, where ccxt looks for them);
2. the environment: ``WORKSTATION_<EXCHANGE>_<FIELD>``, e.g. ``WORKSTATION_BINANCE_API_KEY``,
   ``WORKSTATION_BINANCE_SECRET``;
3. the OS keyring (the ``keyring`` package), where ``remember`` puts them when the user asks
   (``--remember-credentials``). Which exchanges and fields are remembered, never their values,
   is listed in ``credentials.json`` in the config folder, so the keyring is asked only for
   those.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from ..atomic import atomic_write_text
from ..errors import WorkstationError
from ..redact import register

# ccxt's ``requiredCredentials`` names
FIELDS = ("apiKey", "secret", "password", "uid", "login", "twofa", "privateKey",
          "walletAddress", "token")
KEYRING_SERVICE = "workstation"
INDEX_FILE = "credentials.json"


class CredentialsError(WorkstationError):
    """Credentials that cannot be used or kept; the message never holds a secret."""


def env_name(exchange_id: str, field: str) -> str:
    """``WORKSTATION_BINANCE_API_KEY`` for (``binance``, ``apiKey``)."""
    snake = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", field).upper()
    return f"WORKSTATION_{re.sub(r'[^A-Z0-9]', '_', exchange_id.upper())}_{snake}"


def split_credentials(options: Mapping | None) -> tuple[dict, dict]:
    """``options`` as (credential fields, everything else)."""
    options = dict(options or {})
    found = {name: str(options.pop(name)) for name in FIELDS if name in options}
    return found, options


def from_environment(exchange_id: str, environ: Mapping[str, str] | None = None) -> dict:
    environ = os.environ if environ is None else environ
    return {name: environ[env_name(exchange_id, name)] for name in FIELDS
            if environ.get(env_name(exchange_id, name))}


class RememberedCredentials:
    """Credentials in the OS keyring, indexed (names only) by ``index`` (a JSON file)."""

    def __init__(self, index: str | os.PathLike | None = None):
        if index is None:
            from ..paths import app_paths

            index = app_paths().config_dir / INDEX_FILE
        self.index = Path(index)

    def listing(self) -> dict[str, list[str]]:
        """Exchange id -> the fields remembered for it (no values)."""
        try:
            data = json.loads(self.index.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise CredentialsError(f"{self.index}: not a readable credentials index ({exc}); "
                                   "delete it and remember the credentials again") from None
        if not isinstance(data, dict) or not all(
                isinstance(v, list) and set(v) <= set(FIELDS) for v in data.values()):
            raise CredentialsError(f"{self.index}: not a credentials index (expected "
                                   "{exchange: [field, ...]}); delete it and remember the "
                                   "credentials again")
        return data

    def _write(self, listing: dict[str, list[str]]) -> None:
        atomic_write_text(self.index, json.dumps(listing, indent=1, sort_keys=True) + "\n")

    def get(self, exchange_id: str) -> dict:
        fields = self.listing().get(exchange_id, [])
        if not fields:
            return {}
        keyring = _keyring()
        found = {}
        for name in fields:
            try:
                value = keyring.get_password(KEYRING_SERVICE, f"{exchange_id}:{name}")
            except keyring.errors.KeyringError as exc:
                raise CredentialsError(f"cannot read the {exchange_id} credentials from the "
                                       f"OS keyring: {exc}") from None
            if value:
                found[name] = value
        return found

    def remember(self, exchange_id: str, credentials: Mapping[str, str]) -> None:
        """Put ``credentials`` in the OS keyring; nothing is stored anywhere if it cannot."""
        if not credentials:
            raise CredentialsError("no credentials to remember: give apiKey, secret ... in "
                                   "--ccxt-options or the environment")
        keyring = _keyring()
        listing = self.listing()
        for name, value in credentials.items():
            try:
                keyring.set_password(KEYRING_SERVICE, f"{exchange_id}:{name}", str(value))
            except keyring.errors.KeyringError as exc:
                raise CredentialsError(f"cannot keep the {exchange_id} credentials: the OS "
                                       f"keyring refused ({exc}); nothing was stored") from None
        listing[exchange_id] = sorted(set(listing.get(exchange_id, [])) | set(credentials))
        self._write(listing)

    def forget(self, exchange_id: str) -> list[str]:
        """Remove the exchange's credentials from the keyring; the fields that were there."""
        listing = self.listing()
        fields = listing.pop(exchange_id, [])
        if fields:
            keyring = _keyring()
            for name in fields:
                try:
                    keyring.delete_password(KEYRING_SERVICE, f"{exchange_id}:{name}")
                except keyring.errors.PasswordDeleteError:
                    pass  # already gone from the keyring: the index was stale
                except keyring.errors.KeyringError as exc:
                    raise CredentialsError(f"cannot remove the {exchange_id} credentials from "
                                           f"the OS keyring: {exc}") from None
            self._write(listing)
        return fields


def _keyring():
    import keyring
    import keyring.errors
    from keyring.backends import fail

    if isinstance(keyring.get_keyring(), fail.Keyring):
        raise CredentialsError("no OS keyring is available (on Linux: a Secret Service such as "
                               "GNOME Keyring or KWallet); give the credentials in the "
                               "environment instead; nothing was stored")
    return keyring


def exchange_credentials(exchange_id: str, given: Mapping[str, str] | None = None, *,
                         environ: Mapping[str, str] | None = None,
                         remembered: RememberedCredentials | None = None) -> dict:
    """The exchange's credentials (see the module docstring); every value is registered for
    masking before it is returned."""
    remembered = remembered or RememberedCredentials()
    merged = {**remembered.get(exchange_id), **from_environment(exchange_id, environ),
              **dict(given or {})}
    register(*merged.values())
    return merged
