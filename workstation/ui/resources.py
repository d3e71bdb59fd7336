"""Icons, the app icon and the style sheets, loaded the same way from a source install and
from a frozen bundle (they ship inside the package: ``workstation/resources``)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtGui import QIcon

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
THEMES = ("dark", "light")


def resource_path(name: str) -> Path:
    path = RESOURCES / name
    if not path.exists():
        raise FileNotFoundError(f"missing resource {path}")
    return path


@cache
def icon(name: str) -> QIcon:
    """The SVG icon ``resources/icons/NAME.svg``."""
    return QIcon(str(resource_path(f"icons/{name}.svg")))


def app_icon() -> QIcon:
    return QIcon(str(resource_path("app.svg")))


def style_sheet(theme: str) -> str:
    if theme not in THEMES:
        raise ValueError(f"unknown theme {theme!r}; use one of {', '.join(THEMES)}")
    return resource_path(f"{theme}.qss").read_text(encoding="utf-8")
