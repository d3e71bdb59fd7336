"""Marks of a symbol that has no candles yet: imported annotations of a real market that no
series of the candle cache holds. They are stored all the same (the candles may come later);
this is the one line that says so, in the CLI and the window alike. Demo marks always have
candles: the demo market makes any symbol."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from ..market.cache import CacheError, CandleCache
from ..market.series import MarketKind
from .model import Annotation


def symbols_without_candles(annotations: Iterable[Annotation], cache_path: str | Path
                            ) -> dict[str, int]:
    """Symbol -> how many of the real-market ``annotations`` have it, for every symbol that
    no series of the cache at ``cache_path`` holds (a cache that cannot be read holds none
    that can be shown either)."""
    counts = Counter(ann.symbol for ann in annotations if ann.market is MarketKind.REAL)
    if not counts:
        return {}
    held: set[str] = set()
    if Path(cache_path).exists():
        try:
            with CandleCache(cache_path) as cache:
                keys = cache.keys()  # a list of keys, not a mapping
            held = {key.symbol for key in keys if not key.is_demo}
        except CacheError:
            pass
    return {symbol: n for symbol, n in sorted(counts.items()) if symbol not in held}


def no_candles_note(annotations: Iterable[Annotation], cache_path: str | Path) -> str | None:
    """``3 annotations of SOL/USDT imported; no candles of SOL/USDT are in the cache yet``,
    or None when every symbol has candles."""
    missing = symbols_without_candles(annotations, cache_path)
    if not missing:
        return None
    (first, n), *rest = missing.items()
    counts = [f"{n} annotation{'' if n == 1 else 's'} of {first}"]
    counts += [f"{count} of {symbol}" for symbol, count in rest]
    return (f"{_joined(counts, 'and')} imported; no candles of {_joined(list(missing), 'or')} "
            f"are in the cache yet")


def _joined(parts: list[str], word: str) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} {word} {parts[-1]}"
