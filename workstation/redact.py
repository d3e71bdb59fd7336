"""Secrets masked wherever text leaves the process: the log, error lines and the window.

Three rules, all applied by ``redact``: the value after a credential's name (``"secret": "..."``,
``apiKey=...`` in a query string, an ``Authorization: Bearer ...`` or ``X-MBX-APIKEY`` header)
and the ``user:password`` of a URL are masked in any text, and every secret value the process
has been given (``register``, ``register_in``) is masked wherever it appears, even inside an
exchange's error. ``RedactingFilter`` applies it to every log record a handler emits.
"""

from __future__ import annotations

import logging
import re
import threading

MASK = "***"
# the credential names ccxt exchanges take (``requiredCredentials``), in any spelling, and
# those of signed requests and their headers (``signature=``, ``Authorization:``)
_NAMES = (r"api[_-]?key|secret|password|passphrase|private[_-]?key|token|twofa|uid|login"
          r"|signature|authorization")
_NAMED_VALUE = re.compile(
    rf"""(?ix)
    (["']?(?:{_NAMES})["']?\s*[:=]\s*      # the name, quoted or not, then : or =
     (?:(?:bearer|basic|digest|token)\s+)?)  # an Authorization header's scheme stays
    ("(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;&}}\])"']+)  # its value: quoted, or up to a delimiter
    """)
# a setting named as a credential: ``secret``, ``api_key``, ``X-MBX-APIKEY``, not ``tokens``
_CREDENTIAL_NAME = re.compile(rf"(?i)(?:.*[-_])?(?:{_NAMES})")
_SCHEME = re.compile(r"(?i)^(?:bearer|basic|digest|token)\s+")
# a URL's user information: ``scheme://user:password@``
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^\s/?#@\"']+)@")
_MIN_SECRET = 4  # shorter values would mask ordinary text
_known: set[str] = set()
_lock = threading.Lock()


def register(*values: object) -> None:
    """Mask these values (the text of each) from now on, in this process."""
    with _lock:
        _known.update(text for text in map(str, values) if len(text) >= _MIN_SECRET)


def register_in(value: object) -> None:
    """Mask from now on every secret that ``value`` (settings such as ccxt's URLs, options or
    headers: dicts, lists and text) holds under a credential's name or in a URL."""
    if isinstance(value, dict):
        for key, item in value.items():
            named = _CREDENTIAL_NAME.fullmatch(str(key))
            if named and isinstance(item, str | int) and not isinstance(item, bool):
                register(_SCHEME.sub("", str(item)))
            register_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            register_in(item)
    elif isinstance(value, str):
        register(*(_SCHEME.sub("", m.group(2).strip("\"'"))
                   for m in _NAMED_VALUE.finditer(value)))
        register(*(m.group(2).partition(":")[2] or m.group(2)
                   for m in _URL_USERINFO.finditer(value)))


def redact(text: str) -> str:
    """``text`` with every credential value masked (see the module docstring)."""
    text = _URL_USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
    text = _NAMED_VALUE.sub(lambda m: m.group(1) + _masked(m.group(2)), text)
    with _lock:
        known = sorted(_known, key=len, reverse=True)
    for secret in known:
        text = text.replace(secret, MASK)
    return text


def _masked(value: str) -> str:
    quote = value[0] if value[0] in "\"'" else ""
    return f"{quote}{MASK}{quote}"


class RedactingFilter(logging.Filter):
    """Masks a record before its handler formats it: the message with its arguments, the
    exception's traceback and the stack; the record itself is changed, so every handler
    after this one gets it masked too."""

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True
