"""``workstation annotations export|import|targets|list|replays|suspects|review-next|
consistency``: annotations to and from files, the targets training reads, the blind replay
sessions, the likely label errors (``suspects``, ``commands.evaluate``), what to review next
(``commands.review_next``) and the trader's consistency, blind (``commands.consistency``),
headless."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

from ..annotations.io import FORMATS, export_annotations, import_annotations
from ..annotations.model import Region, Trade
from ..annotations.origin_filter import MARKS, label_origins, marks_used
from ..annotations.replay_sessions import ReplaySession, ReplaySessions
from ..annotations.store import AnnotationStore
from ..annotations.totals import Totals
from ..annotations.without_candles import no_candles_note
from ..atomic import atomic_write_bytes
from ..market.timeframes import parse_timeframe
from ..paths import app_paths
from .consistency import register_consistency
from .evaluate import register_suspects
from .flags import add_series_flags, flagged_series
from .review_next import register_review_next


def register(sub) -> None:
    parser = sub.add_parser("annotations", help="export, import and list annotations")
    actions = parser.add_subparsers(dest="annotations_command", metavar="ACTION", required=True)

    export = actions.add_parser(
        "export", help="write annotations to a JSON file (all kinds) or a CSV file (trades)")
    export.add_argument("file", help="output file; .json or .csv chooses the format")
    _add_series_options(export, "export only")
    export.add_argument("--format", choices=FORMATS,
                        help="json (every kind and the drawings), csv (trades) or drawings-csv "
                             "(the drawings); default: from the extension")
    export.set_defaults(func=run_export)

    imp = actions.add_parser(
        "import", help="read a JSON or CSV file into the store; nothing if any record is bad")
    imp.add_argument("file", help="input file; .json or .csv chooses the format")
    _add_series_options(imp, "import only; fills in CSV rows without one,")
    imp.add_argument("--format", choices=FORMATS, help="file format (default: from extension)")
    imp.set_defaults(func=run_import)

    targets = actions.add_parser(
        "targets", help="write, per candle, the targets and masks training uses (CSV)")
    add_series_flags(targets)
    targets.add_argument("--run", metavar="RUN",
                         help="with that run's target settings (default: today's defaults)")
    targets.add_argument("--marks", choices=MARKS, default="all",
                         help="the trader's marks used: all (default) or the blind ones")
    targets.add_argument("--out", required=True, help="FILE.csv")
    targets.set_defaults(func=run_targets)

    lst = actions.add_parser("list", help="print the stored annotations")
    _add_series_options(lst, "list only")
    lst.add_argument("--kind", choices=("trade", "region", "point"), help="list only this kind")
    lst.set_defaults(func=run_list)

    replays = actions.add_parser(
        "replays", help="print the blind replay sessions: span, clock, speed, decisions and "
                        "the paper account's results")
    replays.add_argument("--json", action="store_true", help="one JSON object per session")
    replays.set_defaults(func=run_replays)
    register_suspects(actions)
    register_review_next(actions)
    register_consistency(actions)


def _add_series_options(parser, what: str) -> None:
    parser.add_argument("--market", choices=("real", "demo"),
                        help=f"{what} the marks of this market (real venues or the demo)")
    parser.add_argument("--symbol", help=f"{what} this symbol (e.g. ETH/USDT)")
    parser.add_argument("--timeframe", help=f"{what} this timeframe (e.g. 1m)")


def _timeframe(args) -> str | None:
    return parse_timeframe(args.timeframe).name if args.timeframe else None


def run_export(args) -> int:
    timeframe = _timeframe(args)
    with AnnotationStore() as store:
        result = export_annotations(store, args.file, market=args.market, symbol=args.symbol,
                                    timeframe=timeframe, format=args.format)
    drawn = f" and {result.drawings} drawing(s)" if result.drawings else ""
    if args.format == "drawings-csv":
        print(f"wrote {result.drawings} drawing(s) to {args.file}")
    else:
        print(f"wrote {result.written} annotation(s){drawn} to {args.file}")
    if result.skipped:
        print(f"left out {result.skipped} region(s)/point(s): a CSV file holds trades only; "
              "use JSON for every kind")
    return 0


def run_import(args) -> int:
    timeframe = _timeframe(args)
    with AnnotationStore() as store:
        result = import_annotations(store, args.file, market=args.market, symbol=args.symbol,
                                    timeframe=timeframe, format=args.format)
    merge = result.merge
    print(f"read {result.read} annotation(s) from {args.file}")
    if result.selected < result.read:
        print(f"skipped {result.read - result.selected} of another market, symbol or "
              f"timeframe")
    print(f"added {merge.added}, updated {merge.updated}, unchanged {merge.unchanged}, "
          f"kept {merge.kept_newer} (the store's copy was newer)")
    if any(result.drawings):
        added, updated, left = result.drawings
        print(f"drawings: added {added}, updated {updated}, {left} as they were")
    note = no_candles_note(result.annotations, app_paths().candle_cache)
    if note:
        print(note)
    return 0


def run_targets(args) -> int:
    from ..ml.checkpoints import CheckpointStore
    from ..ml.job import label_series, market_annotations
    from ..ml.targets import CLASSES, MASKED, TargetSpec

    spec = CheckpointStore().settings(args.run)[2] if args.run else TargetSpec()
    candles, key = flagged_series(args)
    n = candles.n_closed
    candles = candles.slice(0, n)
    db = app_paths().annotations_db
    labelled = label_series(candles, key, spec, annotations_db=db, marks=args.marks)
    t = labelled.targets
    origins = label_origins(marks_used(market_annotations(db, key.market), args.marks),
                            candles.ts, candles.timeframe, review_margin=spec.review_margin)

    def name(head: str, code: int) -> str:
        return "" if code == MASKED else CLASSES[head][code]

    columns = ("ts", "time_utc", "position", "regime", "reviewed", "candle", "trend", "origin")
    rows = [",".join(columns)]
    for i in range(n):
        rows.append(",".join((str(int(candles.ts[i])), _when(int(candles.ts[i])),
                              name("position", int(t.position[i])),
                              name("regime", int(t.regime[i])),
                              "1" if labelled.reviewed[i] else "0",
                              name("candle", int(t.candle[i])), name("trend", int(t.trend[i])),
                              origins[i])))
    atomic_write_bytes(Path(args.out), ("\n".join(rows) + "\n").encode("utf-8"))
    print(f"wrote {n} candles of {key.provenance} to {args.out}: {labelled.annotations} "
          f"annotations of {labelled.market}, {int(labelled.reviewed.sum())} candles reviewed, "
          f"{int((t.position != MASKED).sum())} position and {int((t.regime != MASKED).sum())} "
          f"regime labels; empty cells are masked (not learned)")
    return 0


def _when(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def _detail(ann) -> str:
    if isinstance(ann, Trade):
        return (f"{ann.direction.value} {ann.entry_price:g} -> {ann.exit_price:g} "
                f"({ann.pnl_pct:+.2f}%)")
    if isinstance(ann, Region):
        return ann.label
    return f"at {ann.price:g}" if ann.price is not None else ""


def run_list(args) -> int:
    timeframe = _timeframe(args)
    with AnnotationStore() as store:
        annotations = store.list(market=args.market, symbol=args.symbol, timeframe=timeframe,
                                 kind=args.kind)
    if not annotations:
        print("no annotations")
        return 0
    for ann in annotations:
        start, end = ann.span
        when = _when(start) if start == end else f"{_when(start)} .. {_when(end)}"
        parts = [ann.id, ann.kind.value, str(ann.market_key), ann.timeframe, when,
                 _detail(ann)]
        if ann.tags:
            parts.append("[" + ", ".join(ann.tags) + "]")
        if ann.notes:
            parts.append(repr(ann.notes))
        print("  ".join(part for part in parts if part))
    print(Totals.of(annotations).text())
    return 0


def run_replays(args) -> int:
    found: list[tuple[ReplaySession, list]] = []
    path = app_paths().replay_db
    if path.exists():
        sessions = ReplaySessions(path)
        try:
            found = [(s, sessions.paper(s.id)) for s in sessions.all() if s.id is not None]
        finally:
            sessions.close()
    if args.json:
        for session, paper in found:
            print(json.dumps({**dataclasses.asdict(session),
                              "paper": [dataclasses.asdict(p) for p in paper]},
                             allow_nan=False))
        return 0
    if not found:
        print("no blind replay sessions")
        return 0
    for session, paper in found:
        print(_replay_line(session))
        for p in paper:
            print(f"    {p.account}: {p.trades} trades ({p.wins} won) · P&L {p.pnl:+,.2f} "
                  f"({p.return_pct:+.2f} %) · equity {p.equity:,.2f}"
                  + (f" at the close of {_when(p.marked_ts)}" if p.marked_ts else ""))
    return 0


def _replay_line(s: ReplaySession) -> str:
    span = "" if s.span is None else f" · random starts from {_when(s.span[0])} .. " \
                                     f"{_when(s.span[1])}"
    state = (f"ended {_when(s.ended_at)}" if s.ended_at is not None
             else "not ended: workstation --replay-from resume goes on")
    return (f"replay {s.id}  {s.source} {s.symbol} {s.timeframe}  clock {_when(s.started_clock)}"
            f" .. {_when(s.clock)} · {s.speed} · {s.decisions} decisions{span} · started "
            f"{_when(s.started_at)}, {state}")
