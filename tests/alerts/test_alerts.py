"""Alerts without a window: a level alert goes off once per candle when the price crosses the
level (either way, wherever the level has moved to, silent once it is deleted); a flip alert
when the model's sure position changes; the book keeps them in a file across restarts and
moves a damaged file aside instead of overwriting it."""

from __future__ import annotations

import dataclasses
import json

import pytest

from workstation.alerts.book import Alert, AlertBook, AlertError, read_alerts
from workstation.alerts.watch import AlertWatch, crossed, sure_position
from workstation.annotations.drawings import Drawing
from workstation.market.series import MarketKey

ETH = MarketKey("real", "ETH/USDT")
BTC = MarketKey("real", "BTC/USDT")


def level(price: float) -> Drawing:
    return Drawing(shape="level", symbol="ETH/USDT", timeframe="1m", ts1=60_000, price1=price)


def test_crossed_either_way_touching_counts():
    assert crossed(100.0, 99.0, 100.0) == 1 and crossed(100.0, 99.0, 101.0) == 1
    assert crossed(100.0, 101.0, 100.0) == -1 and crossed(100.0, 100.5, 99.0) == -1
    assert crossed(100.0, 100.0, 101.0) == 0  # it was there already
    assert crossed(100.0, 98.0, 99.0) == 0


def test_a_level_alert_goes_off_once_per_candle_and_follows_its_level():
    d = level(100.0)
    alert = Alert(kind="level", market="real", symbol="ETH/USDT", drawing_id=d.id)
    other = Alert(kind="level", market="real", symbol="BTC/USDT", drawing_id=d.id)
    watch, levels = AlertWatch(), {d.id: d}
    assert watch.price([alert, other], levels, ETH, 101.0, 0, 1) == []  # only remembered
    (fired,) = watch.price([alert, other], levels, ETH, 99.5, 0, 2)
    assert fired.alert is alert and "crossed the level 100.0 downward" in fired.text
    assert watch.price([alert], levels, ETH, 100.5, 0, 3) == []  # the same candle: once
    (down,) = watch.price([alert], levels, ETH, 99.0, 60_000, 4)  # the next candle: again
    (up,) = watch.price([alert], levels, ETH, 100.0, 120_000, 5)
    assert "downward" in down.text and "upward" in up.text and up.when == 5
    moved = {d.id: dataclasses.replace(d, price1=90.0)}
    assert watch.price([alert], moved, ETH, 99.0, 180_000, 6) == []  # 100 is no longer it
    assert len(watch.price([alert], moved, ETH, 89.0, 180_000, 7)) == 1
    assert watch.price([alert], {}, ETH, 95.0, 240_000, 8) == []  # deleted: silent
    watch.forget(ETH)
    assert watch.price([alert], moved, ETH, 85.0, 300_000, 9) == []  # a fresh start


def test_a_flip_alert_needs_a_sure_new_position():
    alert = Alert(kind="flip", market="real", symbol="ETH/USDT", threshold=0.6)
    watch = AlertWatch()
    assert sure_position((0.2, 0.7, 0.1), 0.6) == ("long", 0.7)
    assert sure_position((0.4, 0.35, 0.25), 0.6) is None
    assert watch.prediction([alert], ETH, (0.1, 0.2, 0.7), 1) == []  # the first sure one
    assert watch.prediction([alert], ETH, (0.3, 0.5, 0.2), 2) == []  # long, but not sure
    assert watch.prediction([alert], ETH, (0.1, 0.2, 0.7), 3) == []  # short again
    (fired,) = watch.prediction([alert], ETH, (0.05, 0.9, 0.05), 4)
    assert "flipped to LONG 90% (was SHORT; alert at 60%)" in fired.text
    assert watch.prediction([alert], BTC, (0.1, 0.1, 0.8), 5) == []  # another market's


@pytest.mark.parametrize("values, says", [
    (dict(kind="level", drawing_id=None), "drawing_id"),
    (dict(kind="flip", threshold=1.5), "threshold"),
    (dict(kind="flip", threshold=True), "threshold"),
    (dict(kind="bell"), "bell"),
    (dict(kind="flip", threshold=0.5, symbol=" "), "symbol"),
])
def test_a_bad_alert_names_what_is_wrong(values, says):
    fields = dict(market="real", symbol="ETH/USDT") | values
    with pytest.raises(AlertError, match=says):
        Alert(**fields)


def test_the_book_keeps_alerts_across_reopening(tmp_path):
    path = tmp_path / "alerts.json"
    book = AlertBook.open(path)
    assert book.list() == [] and book.problem == ""
    a = book.add(Alert(kind="level", market="real", symbol="ETH/USDT", drawing_id="x" * 36))
    b = book.add(Alert(kind="flip", market="demo", symbol="DEMO/USDT", threshold=0.7))
    book.put(a.went_off(123))
    again = AlertBook.open(path)
    assert sorted(x.id for x in again.list()) == sorted([a.id, b.id])
    assert again.get(a.id).fired == 1 and again.get(a.id).last_fired_at == 123
    assert again.on_level("x" * 36).id == a.id
    assert again.flip_alert(MarketKey("demo", "DEMO/USDT")).id == b.id
    assert again.remove(b.id) == b and len(AlertBook.open(path).list()) == 1
    assert again.clear() == 1 and read_alerts(path) == []


@pytest.mark.parametrize("text, says", [
    ("{not json", "not JSON"),
    ('{"version": 9, "alerts": []}', "not an alerts file"),
    ('{"version": 1, "alerts": [{"id": "a"}]}', r"alerts\[0\]: missing"),
])
def test_a_damaged_file_is_moved_aside_not_overwritten(tmp_path, text, says):
    path = tmp_path / "alerts.json"
    path.write_text(text)
    with pytest.raises(AlertError, match=says):
        read_alerts(path)
    book = AlertBook.open(path)
    assert book.list() == [] and "moved to alerts.json.damaged" in book.problem
    assert (tmp_path / "alerts.json.damaged").read_text() == text  # nothing lost
    book.add(Alert(kind="flip", market="real", symbol="ETH/USDT", threshold=0.5))
    assert json.loads(path.read_text())["version"] == 1
