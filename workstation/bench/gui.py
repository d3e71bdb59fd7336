"""``workstation bench gui``: how late the GUI thread's timers fire while a model trains.

A precise 5 ms QTimer on the GUI thread records how much later than due each tick arrives.
Reference: the same measure with the training dock open and idle. Cases: the dock training a
``small`` model (the heavy compute), then a ``tiny`` one (the most progress events: the
curves, readout and gauges update up to 20 times a second) on the CPU in its worker thread
on DEMO candles. Target: no tick more than 50 ms late. Runs offscreen unless
``QT_QPA_PLATFORM`` says otherwise; checkpoints go to a temporary folder.
"""

from __future__ import annotations

import gc
import json
import os
import tempfile
import time

TARGET_MAX_MS = 50.0
_TICK_MS = 5


def register(names) -> None:
    parser = names.add_parser("gui", help="GUI timer latency while a model trains (p50/p99/max)")
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="measured seconds of training per preset (default 10)")
    parser.add_argument("--idle-seconds", type=float, default=3.0,
                        help="measured seconds of the idle reference (default 3)")
    parser.add_argument("--presets", default="small,tiny",
                        help="model presets to train, comma-separated (default small,tiny)")
    parser.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N (default cpu)")
    parser.add_argument("--candles", type=int, default=20_000, help="DEMO candles (20000)")
    parser.add_argument("--json", action="store_true", help="one JSON object per case")
    parser.set_defaults(func=run)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def _spin(seconds: float, until=None) -> bool:
    """Run the Qt event loop (sleeping when idle, as ``exec`` does) for ``seconds`` or until
    ``until()`` is true; returns whether ``until`` became true."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    done = [False]

    def check() -> None:
        if until is not None and until():
            done[0] = True
            loop.quit()

    poll = QTimer()
    poll.setInterval(20)
    poll.timeout.connect(check)
    if until is not None:
        poll.start()
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.timeout.connect(loop.quit)
    deadline.start(int(seconds * 1000))
    check()
    if not done[0]:
        loop.exec()
    poll.stop()
    deadline.stop()
    return done[0]


def _wait(condition, timeout_s: float, what: str) -> None:
    from ..errors import WorkstationError

    if not _spin(timeout_s, condition):
        raise WorkstationError(f"bench gui: {what} did not happen within {timeout_s:.0f} s")


def measure_latency(seconds: float) -> list[float]:
    """Lateness (ms) of each tick of a precise ``_TICK_MS`` timer over ``seconds``."""
    from PySide6.QtCore import QObject, Qt, QTimer, Slot

    class Probe(QObject):
        def __init__(self):
            super().__init__()
            self.late: list[float] = []
            self.last = time.perf_counter()

        @Slot()
        def tick(self) -> None:
            now = time.perf_counter()
            self.late.append(max(0.0, (now - self.last) * 1000.0 - _TICK_MS))
            self.last = now

    probe = Probe()
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(_TICK_MS)
    timer.timeout.connect(probe.tick)
    probe.last = time.perf_counter()
    timer.start()
    _spin(seconds)
    timer.stop()
    return probe.late


def _case(name: str, late: list[float], **extra) -> dict:
    return dict(case=name, ticks=len(late), tick_ms=_TICK_MS,
                p50_ms=_percentile(late, 0.5), p99_ms=_percentile(late, 0.99),
                max_ms=max(late) if late else float("nan"), **extra)


def bench(seconds: float, idle_seconds: float, presets=("small", "tiny"), device: str = "cpu",
          n_candles: int = 20_000) -> list[dict]:
    """The idle reference and one case per preset (see the module docstring)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("QT_API", "pyside6")
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    from PySide6.QtWidgets import QApplication

    from ..errors import WorkstationError
    from ..market.demo import demo_candles
    from ..market.series import SeriesKey
    from ..market.timeframes import ONE_MINUTE
    from ..paths import app_paths
    from ..ui.live_data import LiveData
    from ..ui.training.panel import TrainingPanel

    app = QApplication.instance() or QApplication([])  # noqa: F841 - kept alive for the run
    cases = []
    with tempfile.TemporaryDirectory(prefix="workstation-bench-gui-") as tmp:
        paths = app_paths(tmp).ensure()
        live = LiveData(paths.candle_cache)
        live.candles = demo_candles(n_candles, seed=11)
        live.key = SeriesKey("demo", "DEMO/USDT", ONE_MINUTE)
        dock = TrainingPanel(paths, live)
        dock.resize(1160, 640)  # its room as a tab of a 1500 x 900 window
        dock.show()
        try:
            _wait(lambda: dock.state == "idle", 120, "device warm-up")
            reference = _case("idle (reference)", measure_latency(idle_seconds))
            cases.append(reference)
            for preset in presets:
                s = dock.settings
                s.preset.setCurrentText(preset)
                s.device.setCurrentIndex(max(0, s.device.findData(device)))
                s.epochs.setValue(100_000)
                dock.start_training()
                _wait(lambda: dock.state in ("training", "failed"), 300, "the start of training")
                if dock.state == "failed":
                    raise WorkstationError(f"bench gui: training failed: {dock.detail}")
                before = dict(dock.events_seen)
                late = measure_latency(seconds)
                events = {k: dock.events_seen[k] - before.get(k, 0)
                          for k in ("BatchEnd", "EpochEnd")}
                detail = dock.detail
                dock.stop()
                _wait(lambda: not dock.busy, 120, "the end of training")
                case = _case(f"training {preset} on {device}", late,
                             batch_reports=events["BatchEnd"], epochs=events["EpochEnd"],
                             deliveries=dock.relay.deliveries, progress=detail,
                             cpu_threads=_cpu_threads())
                case["p99_ratio_vs_idle"] = case["p99_ms"] / max(reference["p99_ms"], 1e-3)
                case["target_max_ms"] = TARGET_MAX_MS
                case["meets_target"] = case["max_ms"] <= TARGET_MAX_MS
                cases.append(case)
        finally:
            dock.shutdown(120)
            dock.close()
            # drop the last reference before collecting (never used again: not Optional)
            dock = None  # type: ignore[assignment]
            gc.collect()  # Qt objects in cycles go on this (the GUI) thread
    return cases


def _cpu_threads() -> int:
    import torch

    return torch.get_num_threads()


def run(args) -> int:
    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    cases = bench(args.seconds, args.idle_seconds, presets, args.device, args.candles)
    if args.json:
        for case in cases:
            print(json.dumps(case))
        return 0
    print(f"{'case':<26} {'ticks':>6} {'p50':>8} {'p99':>8} {'max':>8} {'p99/idle':>9} "
          f"{'reports':>8}")
    for c in cases:
        ratio = f"{c['p99_ratio_vs_idle']:.1f}x" if "p99_ratio_vs_idle" in c else ""
        verdict = "" if "meets_target" not in c else ("  ok" if c["meets_target"] else "  MISSED")
        print(f"{c['case']:<26} {c['ticks']:>6} {c['p50_ms']:>6.2f}ms {c['p99_ms']:>6.2f}ms "
              f"{c['max_ms']:>6.1f}ms {ratio:>9} {c.get('batch_reports', ''):>8}{verdict}")
    print(f"target: no tick more than {TARGET_MAX_MS:.0f} ms late; {os.cpu_count()} CPU "
          f"cores, torch {cases[-1].get('cpu_threads', '?')} threads")
    return 0
