"""Where Workstation keeps its files: platform folders, or one folder chosen by the user.

``WORKSTATION_HOME`` (or the CLI's global ``--data-dir``) puts config, data and logs under one
folder so that tests and users can keep separate workspaces. The three folders are readable by
the user only (0700, tightened if an older version made them wider), and the command line
creates every file 0600 (``private_files``): trade notes and command lines are nobody else's.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "workstation"
HOME_ENV = "WORKSTATION_HOME"


@dataclass(frozen=True)
class AppPaths:
    config_dir: Path
    data_dir: Path
    log_dir: Path

    @property
    def candle_cache(self) -> Path:
        return self.data_dir / "cache.sqlite"

    @property
    def annotations_db(self) -> Path:
        return self.data_dir / "annotations.sqlite"

    @property
    def consistency_db(self) -> Path:
        """The fresh blind marks of consistency checks, kept apart from the trader's marks
        (``annotations.consistency_plan``): training never reads them."""
        return self.data_dir / "consistency.sqlite"

    @property
    def consistency_plan(self) -> Path:
        """The stretches each series' consistency check marks again."""
        return self.data_dir / "consistency.json"

    @property
    def replay_db(self) -> Path:
        """Blind replay sessions (``annotations.replay_sessions``)."""
        return self.data_dir / "replay.sqlite"

    @property
    def paper_db(self) -> Path:
        """Paper trading's accounts, trades and equity (``backtest.paper``)."""
        return self.data_dir / "paper.sqlite"

    @property
    def alerts_file(self) -> Path:
        """The trader's alerts (``alerts.book``)."""
        return self.data_dir / "alerts.json"

    @property
    def demo_anchor(self) -> Path:
        """The demo market's anchor, fixed at first use (see ``market.demo.demo_anchor``)."""
        return self.data_dir / "demo.json"

    @property
    def checkpoints_dir(self) -> Path:
        return self.data_dir / "checkpoints"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "workstation.log"

    def ensure(self) -> AppPaths:
        """Create the folders (0700) and tighten them to 0700 if they are wider."""
        for folder in (self.config_dir, self.data_dir, self.log_dir):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            private(folder)
        return self


def private(path: str | os.PathLike) -> None:
    """Make ``path`` (a folder: 0700, a file: 0600) the user's only, if it is wider; a no-op on
    Windows, where the user's profile folders already are."""
    if os.name == "nt":
        return
    mode = os.stat(path).st_mode
    wanted = 0o700 if stat.S_ISDIR(mode) else 0o600
    if stat.S_IMODE(mode) & ~wanted:
        os.chmod(path, stat.S_IMODE(mode) & wanted)


def private_files() -> None:
    """From now on this process creates files 0600 and folders 0700 (the umask)."""
    if os.name != "nt":
        os.umask(0o077)


def app_paths(home: str | os.PathLike | None = None) -> AppPaths:
    """Paths for this process: ``home`` (or ``$WORKSTATION_HOME``) if set, else platform dirs."""
    home = home or os.environ.get(HOME_ENV) or None
    if home:
        root = Path(home).expanduser().resolve()
        return AppPaths(root / "config", root / "data", root / "logs")
    return AppPaths(
        Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
        Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
        Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)),
    )


def use_home(home: str | os.PathLike) -> None:
    """Make every later ``app_paths()`` in this process (and its children) use ``home``."""
    os.environ[HOME_ENV] = str(Path(home).expanduser().resolve())
