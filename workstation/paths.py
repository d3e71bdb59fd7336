"""Where Workstation keeps its files: platform folders, or one folder chosen by the user.

``WORKSTATION_HOME`` (or the CLI's global ``--data-dir``) puts config, data and logs under one
folder so that tests and users can keep separate workspaces.
"""

from __future__ import annotations

import os
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
        for folder in (self.config_dir, self.data_dir, self.log_dir):
            folder.mkdir(parents=True, exist_ok=True)
        return self


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
