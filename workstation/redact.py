"""Secrets masked wherever text leaves the process: the log, error lines and the window.

Two rules, both applied by ``redact``: the value after a credential's name (``"secret": "..."``,
``apiKey=...``) is masked in any text, and every secret value the process has been given
(``register``) is masked wherever it appears, even inside a URL or an exchange's error.
"""

from __future__ import annotations

import logging
import re
import threading

MASK = "***"
# the credential names ccxt exchanges take (``requiredCredentials``), in any spelling
_NAMES = r"api[_-]?key|secret|password|passphrase|private[_-]?key|token|twofa|uid|login"
_NAMED_VALUE = re.compile(
    rf"""(?ix)
    (["']?(?:{_NAMES})["']?\s*[:=]\s*)      # the name, quoted or not, then : or =
    ("(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;&}}\])]+)  # its value: quoted, or up to a delimiter
    """)
_MIN_SECRET = 4  # shorter values would mask ordinary text
_known: set[str] = set()
_lock = threading.Lock()


def register(*values: object) -> None:
    """Mask these values (the text of each) from now on, in this process."""
    with _lock:
        _known.update(text for text in map(str, values) if len(text) >= _MIN_SECRET)


def redact(text: str) -> str:
    """``text`` with every credential value masked (see the module docstring)."""
    text = _NAMED_VALUE.sub(lambda m: m.group(1) + _masked(m.group(2)), text)
    with _lock:
        known = sorted(_known, key=len, reverse=True)
    for secret in known:
        text = text.replace(secret, MASK)
    return text


def _masked(value: str) -> str:
    quote = value[0] if value[0] in "\"'" else ""
    return f"{quote}{MASK}{quote}"


class RedactingFormatter(logging.Formatter):
    """A formatter whose every line (message, arguments, traceback) is ``redact``-ed."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))
