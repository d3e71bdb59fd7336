"""Use the real app as a trader would, on a virtual screen, and save a screenshot.

Starts Xvfb, opens ``workstation --source demo`` in a fresh data dir, and drives it with keys
only (xdotool): marks two trades and a region on the chart and saves the screen (the chart),
shows four linked charts (1m / 15m / 1h / 1d, Alt+4) with the mouse on the first and saves
the screen, goes back to one chart (Alt+1), starts training (the training workspace comes
forward), waits, saves the screen again (the workspace), stops it, and backtests the marks
after costs (F9, Ctrl+Enter) for the last.
Needs Debian's ``xvfb``, ``xdotool`` and ``imagemagick``.

    python scripts/trader_session.py [--out docs/screenshot.png] [--chart-out docs/chart.png]
                                     [--backtest-out docs/backtest.png] [--train-seconds 25]
                                     [--multichart-out docs/multichart.png]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DISPLAY = ":97"


def xdo(*args: str) -> str:
    return subprocess.run(["xdotool", *args], check=True, capture_output=True, text=True,
                          env=dict(os.environ, DISPLAY=DISPLAY)).stdout.strip()


def keys(*names: str, repeat: int = 1, pause: float = 0.12) -> None:
    for _ in range(repeat):
        for name in names:
            xdo("key", "--clearmodifiers", name)
            time.sleep(pause)


def shot(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["import", "-display", DISPLAY, "-window", "root", str(path)], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshot.png"))
    parser.add_argument("--chart-out", type=Path, default=Path("docs/chart.png"))
    parser.add_argument("--backtest-out", type=Path, default=Path("docs/backtest.png"))
    parser.add_argument("--multichart-out", type=Path, default=Path("docs/multichart.png"))
    parser.add_argument("--train-seconds", type=float, default=25.0)
    args = parser.parse_args()
    for tool in ("Xvfb", "xdotool", "import"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is missing: apt-get install xvfb xdotool imagemagick")
    home = tempfile.mkdtemp(prefix="workstation-session-")
    xvfb = subprocess.Popen(["Xvfb", DISPLAY, "-screen", "0", "1500x900x24", "-nolisten", "tcp"])
    app = None
    try:
        time.sleep(1.0)
        env = dict(os.environ, DISPLAY=DISPLAY, WORKSTATION_HOME=home)
        env.pop("QT_QPA_PLATFORM", None)
        app = subprocess.Popen([sys.executable, "-m", "workstation", "--source", "demo",
                                "--speed", "30"], env=env)
        window = xdo("search", "--sync", "--name", "Workstation").splitlines()[0]
        xdo("windowsize", window, "1500", "900")
        xdo("windowmove", window, "0", "0")
        xdo("windowfocus", window)  # no window manager on Xvfb: focus directly
        time.sleep(4.0)  # the demo history loads and the device warms up
        xdo("mousemove", "700", "450")
        xdo("click", "1")  # focus the chart (click-to-annotate is off: no trade is made)
        time.sleep(0.5)
        keys("End")
        keys("shift+Left", repeat=40, pause=0.02)  # 400 candles back
        keys("l")                             # enter long at the cursor candle's close
        keys("Right", repeat=12, pause=0.02)
        keys("x")                             # exit: the first trade (training learns it)
        keys("shift+Right", repeat=30, pause=0.02)
        keys("s")                             # enter short (the newest: it validates)
        keys("Right", repeat=15, pause=0.02)
        keys("Return")                        # exit: the second trade
        keys("Right", repeat=5, pause=0.02)
        keys("m")                             # mark, then label a range as uptrend
        keys("Right", repeat=10, pause=0.02)
        keys("1")
        time.sleep(1.0)
        shot(args.chart_out)
        keys("alt+4")                         # four charts, linked by time and crosshair
        time.sleep(2.0)
        xdo("mousemove", "380", "300")        # the crosshair on chart 1 marks the others
        time.sleep(1.0)
        shot(args.multichart_out)
        keys("alt+1")                         # back to one chart for the rest
        time.sleep(1.0)
        keys("F5")                            # Start training: its workspace comes forward
        time.sleep(args.train_seconds)
        shot(args.out)
        keys("shift+F5")                      # Stop (saves a checkpoint)
        time.sleep(3.0)
        keys("F9")                            # the Backtest view: the marks after costs
        time.sleep(1.0)
        keys("ctrl+Return")
        time.sleep(4.0)
        shot(args.backtest_out)
        keys("ctrl+q")
        app.wait(60)
        print(f"screenshots: {args.chart_out}, {args.multichart_out}, {args.out}, "
              f"{args.backtest_out}; "
              f"app exited with {app.returncode}")
        return 0 if app.returncode == 0 else 1
    finally:
        if app is not None and app.poll() is None:
            app.kill()
        xvfb.terminate()
        xvfb.wait(10)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
