"""CSV import of Binance kline and generic files (gzip, zip, headers, µs) and export."""

import gzip
import warnings
import zipfile

import numpy as np
import pytest

from workstation.market.csv_io import CsvFormatError, read_candles_csv, write_candles_csv
from workstation.market.demo import demo_candles
from workstation.market.timeframes import ONE_MINUTE, parse_timeframe

HEADER = "ts_ms,open,high,low,close,volume\n"

ROWS = [
    (1704067200000, 2281.0, 2290.5, 2280.1, 2288.2, 1500.25),
    (1704067260000, 2288.2, 2289.0, 2284.0, 2285.0, 820.5),
    (1704067320000, 2285.0, 2286.0, 2279.0, 2280.0, 990.0),
]


def binance_line(ts, o, h, l, c, v, scale=1):
    return (f"{ts * scale},{o:.8f},{h:.8f},{l:.8f},{c:.8f},{v:.8f},{(ts + 59_999) * scale},"
            f"123.4,42,1.0,2.0,0")


def check_rows(candles):
    assert candles.ts.tolist() == [r[0] for r in ROWS]
    assert np.allclose(np.column_stack(list(candles.columns()[1:])), [r[1:] for r in ROWS])


@pytest.mark.parametrize("scale", [1, 1000], ids=["ms", "us"])
@pytest.mark.parametrize("header", [False, True])
@pytest.mark.parametrize("compress", ["plain", "gzip", "zip"])
def test_binance_klines(tmp_path, scale, header, compress):
    lines = [binance_line(*r, scale=scale) for r in ROWS]
    if header:
        lines.insert(0, "open_time,open,high,low,close,volume,close_time,quote_volume,count,"
                        "taker_buy_volume,taker_buy_quote_volume,ignore")
    text = "\n".join(lines) + "\n"
    path = tmp_path / "ETHUSDT-1m-2024-01-01.csv"
    if compress == "gzip":
        path = path.with_suffix(".csv.gz")
        path.write_bytes(gzip.compress(text.encode()))
    elif compress == "zip":
        path = path.with_suffix(".zip")
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("ETHUSDT-1m-2024-01-01.csv", text)
    else:
        path.write_text(text)
    check_rows(read_candles_csv(path, ONE_MINUTE))


def test_generic_file_with_reordered_header(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("ts,volume,open,high,low,close\n" + "".join(
        f"{r[0]},{r[5]},{r[1]},{r[2]},{r[3]},{r[4]}\n" for r in ROWS))
    check_rows(read_candles_csv(path, ONE_MINUTE))


@pytest.mark.parametrize(
    "body, message",
    [
        ("ts_ms,open,high,low,close,volume\n1704067200000,1,2,0.5,1.5,3\n1704067260000,1,abc,1,1,1\n",
         "line 3: high: 'abc' is not a number"),
        ("ts_ms,open,high,low,close,volume\n1704067200000,1,2,0.5,1.5,3\n1704067260000,1,2\n",
         "line 3: 3 columns, the file has 6"),
        # strict rows: one column too many, junk after a number, a short Binance row
        ("ts_ms,open,high,low,close,volume\n1704067200000,1,2,0.5,1.5,3\n1704067260000,1,2,0.5,1.5,3,7\n",
         "line 3: 7 columns, the file has 6"),
        ("ts_ms,open,high,low,close,volume\n1704067200000,1,2,0.5,1.5,3\n1704067260000,1,2#x,1,1,1\n",
         "line 3: high: '2#x' is not a number"),
        ("ts_ms,open,high,low,close,volume\n1704067200000,1_0,2,0.5,1.5,3\n",
         "line 2: open: '1_0' is not a number"),
        (binance_line(*ROWS[0]) + "\n" + binance_line(*ROWS[1]).rsplit(",", 1)[0] + "\n",
         "line 2: 11 columns, the file has 12"),
        # blank and comment lines are skipped but counted
        ("# exported by hand\nts_ms,open,high,low,close,volume\n\n1704067200000,1,2,0.5,1.5,3\n"
         "   \n# a note\n1704067260000,1,abc,1,1,1\n", "line 7: high: 'abc' is not a number"),
        ("\n# no header here\n1,2,3\n", "line 3: 3 columns without a header"),
        # timestamps that are not timestamps, without a numpy warning
        (HEADER + "nan,1,2,0.5,1.5,3\n", "line 2: ts: nan is not a timestamp"),
        ("ts_ms,open,high,low,close,volume\n1704067200000,1,2,0.5,1.5,3\ninf,1,2,0.5,1.5,3\n",
         "line 3: ts: inf is not a timestamp"),
        (HEADER + "1e30,1,2,0.5,1.5,3\n", "line 2: ts: 1e+30 is not a timestamp"),
        (HEADER + "-60000,1,2,0.5,1.5,3\n", "line 2: ts: -60000.0 is not a"),
        ("ts_ms,open,high,low,close,volume\n1704067200000.5,1,2,0.5,1.5,3\n",
         "line 2: ts: 1704067200000.5 is not a whole number"),
        ("ts_ms,open,high,low,close,volume\n1704067200000,1,2,0.5,1.5,3\n1704067260000,1,2,0.5,1.5,-3\n",
         "line 3: volume: negative volume"),
        ("ts_ms,open,high,low,close,volume\n1704067260000,1,2,0.5,1.5,3\n1704067200000,1,2,0.5,1.5,3\n",
         "line 3: ts: timestamps not sorted"),
        (HEADER + "".join(f"{ts},1,2,0.5,1.5,3\n" for ts in (1704067200000, 1704067260000,
                                                            1704067320000, 1704067350000)),
         "line 5: ts: timestamp 1704067350000 is not on the 1m grid"),
        ("ts_ms,open,high,low,close,volume\n1704067200000,1,1.2,0.5,1.5,3\n",
         "line 2: high: high 1.2 is below max(open, close)"),
        ("ts_ms,open,high,low,close,volume\n1704067200000,1,2,0.5,nan,3\n",
         "line 2: close: not a finite number"),
        ("date,price\n2024-01-01,3\n", "line 1: header has no ts column"),
        ("1,2,3\n", "line 1: 3 columns without a header"),
        ("ts_ms,open,high,low,close,volume\n", "a header but no candles"),
        ("", "holds no candles"),
    ],
)
def test_bad_files_name_the_line(tmp_path, body, message):
    path = tmp_path / "bad.csv"
    path.write_text(body)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning would reach the user's stderr
        with pytest.raises(CsvFormatError) as info:
            read_candles_csv(path, ONE_MINUTE)
    assert message in str(info.value) and str(path) in str(info.value)


def test_blank_and_comment_lines_are_skipped(tmp_path):
    path = tmp_path / "notes.csv"
    body = "".join(f"{r[0]},{r[1]},{r[2]},{r[3]},{r[4]},{r[5]}\n\n# checked\n" for r in ROWS)
    path.write_text("# from my notebook\nts_ms,open,high,low,close,volume\n" + body)
    check_rows(read_candles_csv(path, ONE_MINUTE))


def excel_csv(lines: list[str]) -> bytes:
    """What Excel's "CSV UTF-8" writes: a BOM, CRLF line ends, and here a blank last line."""
    return b"\xef\xbb\xbf" + "".join(line + "\r\n" for line in [*lines, ""]).encode()


@pytest.mark.parametrize("compress", ["plain", "gzip"])
def test_an_excel_saved_file_reads(tmp_path, compress):
    data = excel_csv(["ts,open,high,low,close,volume",
                      *(",".join(map(str, r)) for r in ROWS)])
    path = tmp_path / "from-excel.csv"
    if compress == "gzip":
        path, data = path.with_suffix(".csv.gz"), gzip.compress(data)
    path.write_bytes(data)
    check_rows(read_candles_csv(path, ONE_MINUTE))


def test_corrupt_gzip_and_missing_file(tmp_path):
    path = tmp_path / "x.csv.gz"
    path.write_bytes(gzip.compress(b"ts_ms,open\n" * 100)[:40])
    with pytest.raises(CsvFormatError, match="corrupt gzip"):
        read_candles_csv(path, ONE_MINUTE)
    with pytest.raises(CsvFormatError, match="cannot read"):
        read_candles_csv(tmp_path / "nope.csv", ONE_MINUTE)


@pytest.mark.parametrize("name", ["out.csv", "out.csv.gz"])
def test_export_round_trip_is_exact(tmp_path, name):
    candles = demo_candles(5000, parse_timeframe("5m"), seed=3)
    path = write_candles_csv(candles, tmp_path / name)
    again = read_candles_csv(path, parse_timeframe("5m"))
    for a, b in zip(candles.columns(), again.columns()):
        if a.dtype == np.int64:
            assert np.array_equal(a, b)
        else:
            assert np.allclose(a, b, rtol=1e-14, atol=0)
    with gzip.open(path, "rt") if name.endswith(".gz") else open(path) as handle:
        first = handle.readline().strip()
    assert first == "ts_ms,open,high,low,close,volume"
