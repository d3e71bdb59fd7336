"""Annotation values: construction, normalisation, validation naming the field, derived P&L."""

from __future__ import annotations

import math
import subprocess
import sys
import uuid

import pytest

from workstation.annotations.model import (
    AnnotationValidationError,
    Direction,
    Kind,
    Point,
    Region,
    RegionLabel,
    Source,
    Trade,
    annotation_class,
)
from workstation.errors import WorkstationError

T0 = 1_700_000_000_000


def trade(**changes) -> Trade:
    values = dict(symbol="eth/usdt", timeframe="1m", direction="long", entry_ts=T0,
                  entry_price=2000.0, exit_ts=T0 + 3_600_000, exit_price=2100.0)
    values.update(changes)
    return Trade(**values)


def test_trade_normalises_and_fills_in_identity():
    t = trade(tags=["breakout", " retest ", "breakout"], source="model-confirmed")
    assert t.kind is Kind.TRADE
    assert t.symbol == "ETH/USDT"
    assert t.direction is Direction.LONG
    assert t.source is Source.MODEL_CONFIRMED
    assert t.tags == ("breakout", "retest")
    assert str(uuid.UUID(t.id)) == t.id
    assert t.updated_at == t.created_at > 0
    assert t.span == (T0, T0 + 3_600_000)
    assert trade().id != trade().id


def test_derived_pnl_and_holding_time():
    long = trade(entry_price=100.0, exit_price=110.0)
    short = trade(direction=Direction.SHORT, entry_price=100.0, exit_price=90.0)
    losing_short = trade(direction="short", entry_price=100.0, exit_price=105.0)
    assert long.pnl_pct == pytest.approx(10.0)
    assert short.pnl_pct == pytest.approx(10.0)
    assert losing_short.pnl_pct == pytest.approx(-5.0)
    assert long.holding_ms == 3_600_000
    assert "pnl_pct" not in Trade.__dataclass_fields__


def test_edited_keeps_identity_and_stamps_update_time():
    t = trade(created_at=T0, updated_at=T0)
    e = t.edited(notes="moved stop", stop=1950.0)
    assert (e.id, e.created_at) == (t.id, t.created_at)
    assert e.updated_at > t.updated_at
    assert e.notes == "moved stop" and e.stop == 1950.0
    with pytest.raises(AnnotationValidationError) as err:
        t.edited(exit_ts=T0 - 1)
    assert err.value.field == "entry_ts"


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"entry_ts": T0 + 10, "exit_ts": T0}, "entry_ts"),
        ({"direction": "up"}, "direction"),
        ({"entry_price": 0}, "entry_price"),
        ({"exit_price": -3.0}, "exit_price"),
        ({"entry_price": math.nan}, "entry_price"),
        ({"exit_price": math.inf}, "exit_price"),
        ({"entry_price": "2000"}, "entry_price"),
        ({"stop": 0.0}, "stop"),
        ({"target": -1}, "target"),
        ({"entry_ts": True}, "entry_ts"),
        ({"entry_ts": 1.5}, "entry_ts"),
        ({"exit_ts": -1}, "exit_ts"),
        ({"id": "not-a-uuid"}, "id"),
        ({"symbol": "  "}, "symbol"),
        ({"timeframe": "2m"}, "timeframe"),
        ({"source": "robot"}, "source"),
        ({"tags": ["a;b"]}, "tags"),
        ({"tags": "a"}, "tags"),
        ({"tags": [""]}, "tags"),
        ({"notes": None}, "notes"),
        ({"created_at": T0, "updated_at": T0 - 1}, "updated_at"),
    ],
)
def test_bad_values_raise_an_error_naming_the_field(changes, field):
    with pytest.raises(AnnotationValidationError) as err:
        trade(**changes)
    assert err.value.field == field
    assert str(err.value).startswith(f"{field}: ")
    assert isinstance(err.value, WorkstationError)


def test_entry_equal_to_exit_is_a_valid_trade():
    assert trade(exit_ts=T0).holding_ms == 0


def test_region_labels_standard_and_custom():
    up = Region(symbol="BTC/USDT", timeframe="1h", start_ts=T0, end_ts=T0 + 1,
                label=RegionLabel.UPTREND)
    custom = Region(symbol="BTC/USDT", timeframe="1h", start_ts=T0, end_ts=T0,
                    label=" accumulation ")
    assert up.label == "uptrend" and up.label_kind is RegionLabel.UPTREND
    assert custom.label == "accumulation" and custom.label_kind is RegionLabel.CUSTOM
    assert up.span == (T0, T0 + 1)
    with pytest.raises(AnnotationValidationError, match="start_ts"):
        Region(symbol="X", timeframe="1h", start_ts=T0 + 1, end_ts=T0, label="range")
    with pytest.raises(AnnotationValidationError) as err:
        Region(symbol="X", timeframe="1h", start_ts=T0, end_ts=T0, label="")
    assert err.value.field == "label"


def test_point_note():
    p = Point(symbol="ETH/USDT", timeframe="5m", ts=T0, notes="CPI print")
    assert p.kind is Kind.POINT and p.span == (T0, T0) and p.price is None
    with pytest.raises(AnnotationValidationError) as err:
        Point(symbol="ETH/USDT", timeframe="5m", ts=T0, price=0)
    assert err.value.field == "price"


def test_annotation_class_by_kind_name():
    assert annotation_class("trade") is Trade
    assert annotation_class(Kind.REGION) is Region
    with pytest.raises(AnnotationValidationError) as err:
        annotation_class("line")
    assert err.value.field == "kind"


def test_annotations_core_imports_no_qt():
    code = (
        "import sys, workstation.annotations.io, workstation.annotations.targets, "
        "workstation.commands.annotations, workstation.bench.annotations\n"
        "bad = sorted(m for m in sys.modules\n"
        "             if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'qasync'))\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
