"""Build the Workstation installers: ``python packaging/build.py [--check]``.

Run with the Python that has the app installed plus PyInstaller (``pip install -e '.[package]'``).
Steps, each printed as it starts:

1. render the app icon (PNG, ICO, ICNS) from ``workstation/resources/app.svg`` with Qt;
2. freeze the app with PyInstaller into the one-folder ``dist/workstation/``
   (``packaging/workstation.spec``);
3. run the frozen app's ``--self-test`` offscreen (the build fails if it does);
4. wrap it for this platform: Linux ``.tar.gz`` and ``.deb``; Windows an Inno Setup installer
   (when ``ISCC`` is on PATH); macOS ``Workstation.app`` in a ``.dmg``;
5. split any file over ``--max-asset-size`` into parts and write ``dist/SHA256SUMS``.

``--check`` then runs the slow packaging tests (``tests/project/test_packaging.py``) on these
outputs.
Outputs go to ``dist/``, intermediate files to ``build/``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
DIST = ROOT / "dist"
BUILD = ROOT / "build"
ICONS = BUILD / "packaging" / "icons"
SELF_TEST_TIMEOUT_S = 600
GIB = 1024 ** 3
# GitHub releases (and many other hosts) refuse files of 2 GiB or more.
DEFAULT_MAX_ASSET = 2 * GIB - 64 * 1024 ** 2


class BuildError(Exception):
    """A step failed; the message says which and why."""


def version() -> str:
    spec = importlib.util.spec_from_file_location("_ws_version",
                                                  ROOT / "workstation" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.__version__


def torch_variant() -> str:
    """``cpu``, ``cu128``, ``rocm6.3`` or ``mps`` (macOS): which torch build the bundle carries."""
    import torch

    if torch.version.cuda:
        return "cu" + torch.version.cuda.replace(".", "")
    if getattr(torch.version, "hip", None):
        return "rocm" + ".".join(torch.version.hip.split(".")[:2])
    if sys.platform == "darwin" and torch.backends.mps.is_built():
        return "mps"
    return "cpu"


def machine() -> str:
    arch = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "arm64", "aarch64": "aarch64"}.get(arch, arch)


def deb_arch() -> str:
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine(), machine())


def output_names(version_: str, variant: str) -> dict[str, str]:
    """File names of everything this build writes to dist/, by kind."""
    return {
        "folder": "workstation",
        "tar": f"workstation-{version_}-linux-{machine()}-{variant}.tar.gz",
        "deb": f"workstation_{version_}+{variant}_{deb_arch()}.deb",
        "setup": f"workstation-{version_}-windows-x64-{variant}-setup.exe",
        "dmg": f"workstation-{version_}-macos-{machine()}-{variant}.dmg",
    }


def frozen_executable(dist: Path = DIST) -> Path:
    """The console executable of the frozen app (the one that prints --self-test's report)."""
    if sys.platform == "win32":
        return dist / "workstation" / "workstation-cli.exe"
    if sys.platform == "darwin":
        return dist / "Workstation.app" / "Contents" / "MacOS" / "workstation"
    return dist / "workstation" / "workstation"


def step(text: str) -> None:
    print(f"\n== {text}", flush=True)


def require_pyinstaller() -> None:
    if importlib.util.find_spec("PyInstaller") is None:
        raise BuildError(
            f"PyInstaller is not installed for {sys.executable}. Install it with\n"
            f"    {sys.executable} -m pip install -e '.[package]'\n"
            "(or pip install 'pyinstaller>=6') and run this again.")


def render_icons(out: Path = ICONS) -> dict[str, Path]:
    """The app icon as PNG (256 px, Linux), ICO (Windows) and ICNS (macOS), drawn by Qt."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 - Qt needs one
    renderer = QSvgRenderer(str(ROOT / "workstation" / "resources" / "app.svg"))
    if not renderer.isValid():
        raise BuildError("workstation/resources/app.svg is not a valid SVG")
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for suffix, size in (("png", 256), ("ico", 256), ("icns", 1024)):
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        path = out / f"workstation.{suffix}"
        if not image.save(str(path)):
            raise BuildError(f"Qt could not write {path}")
        written[suffix] = path
    return written


def freeze() -> None:
    cmd = [sys.executable, "-m", "PyInstaller", str(PACKAGING / "workstation.spec"),
           "--noconfirm", "--log-level", "WARN",
           "--distpath", str(DIST), "--workpath", str(BUILD / "pyinstaller")]
    if subprocess.run(cmd, cwd=ROOT).returncode != 0:
        raise BuildError("PyInstaller failed (its messages are above)")


def run_self_test(executable: Path, timeout_s: float = SELF_TEST_TIMEOUT_S) -> str:
    """Run ``executable --self-test`` offscreen; return its output, or raise naming the failure."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    try:
        result = subprocess.run([str(executable), "--self-test"], capture_output=True, text=True,
                                env=env, timeout=timeout_s, cwd=executable.parent)
    except subprocess.TimeoutExpired as exc:
        raise BuildError(f"{executable} --self-test did not finish in {timeout_s:.0f} s") from exc
    output = result.stdout + result.stderr
    if result.returncode != 0 or "self-test: passed" not in result.stdout:
        raise BuildError(f"{executable} --self-test exited {result.returncode}:\n{output}")
    return output


def dir_size(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() or p.is_symlink())


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def make_tarball(bundle: Path, icon_png: Path, out: Path, top: str) -> Path:
    """``top/`` holding the bundle, its desktop entry and icon, and a menu-entry installer."""
    with tarfile.open(out, "w:gz", compresslevel=6) as tar:
        tar.add(bundle, arcname=top, filter=_root_owned)
        tar.add(ROOT / "workstation" / "resources" / "workstation.desktop",
                arcname=f"{top}/share/applications/workstation.desktop", filter=_root_owned)
        tar.add(icon_png, arcname=f"{top}/share/icons/hicolor/256x256/apps/workstation.png",
                filter=_root_owned)
        tar.add(PACKAGING / "linux" / "install-desktop-entry.sh",
                arcname=f"{top}/install-desktop-entry.sh", filter=_root_owned)
    return out


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def make_deb(bundle: Path, icon_png: Path, out: Path, version_: str, variant: str) -> Path:
    """A .deb with the bundle in /opt/workstation, the launcher /usr/bin/workstation, the
    desktop entry and the icon; every file owned by root."""
    stage = BUILD / "packaging" / "deb"
    shutil.rmtree(stage, ignore_errors=True)
    shutil.copytree(bundle, stage / "opt" / "workstation", symlinks=True,
                    copy_function=_link_or_copy)
    placed = {
        "usr/bin/workstation": (PACKAGING / "linux" / "workstation.sh", 0o755),
        "usr/share/applications/workstation.desktop":
            (ROOT / "workstation" / "resources" / "workstation.desktop", 0o644),
        "usr/share/icons/hicolor/256x256/apps/workstation.png": (icon_png, 0o644),
    }
    for rel, (src, mode) in placed.items():
        dst = stage / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        dst.chmod(mode)
    for path in [stage, *stage.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    md5sums = []
    for path in sorted(p for p in stage.rglob("*") if p.is_file() and not p.is_symlink()):
        digest = hashlib.md5(path.read_bytes()).hexdigest()
        md5sums.append(f"{digest}  {path.relative_to(stage).as_posix()}\n")
    control = (PACKAGING / "linux" / "control.in").read_text(encoding="utf-8")
    maintainer = (f"{os.environ.get('DEBFULLNAME', 'Workstation developers')} "
                  f"<{os.environ.get('DEBEMAIL', 'workstation@localhost')}>")
    fields = {"@VERSION@": f"{version_}+{variant}", "@ARCH@": deb_arch(),
              "@INSTALLED_SIZE_KB@": str(dir_size(stage) // 1024 + 1),
              "@MAINTAINER@": maintainer,
              # the bundle carries this machine's libraries, built against its glibc
              "@GLIBC@": platform.libc_ver()[1],
              "@VARIANT@": "CPU" if variant == "cpu" else f"GPU ({variant})"}
    for key, value in fields.items():
        control = control.replace(key, value)
    debian = stage / "DEBIAN"
    debian.mkdir(mode=0o755)
    (debian / "control").write_text(control, encoding="utf-8")
    (debian / "md5sums").write_text("".join(md5sums), encoding="utf-8")
    for name in ("control", "md5sums"):
        (debian / name).chmod(0o644)
    cmd = ["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(stage), str(out)]
    if subprocess.run(cmd).returncode != 0:
        raise BuildError("dpkg-deb failed (its messages are above)")
    shutil.rmtree(stage)
    return out


def make_windows_installer(version_: str, variant: str, sliced: bool) -> Path | None:
    iscc = shutil.which("ISCC") or shutil.which("iscc")
    if iscc is None:
        print("Inno Setup's ISCC is not on PATH: no installer made. Install Inno Setup 6 and "
              "run this again, or run packaging/windows/workstation.iss by hand (see the top of "
              "that file).")
        return None
    cmd = [iscc, f"/DAppVersion={version_}", f"/DVariant={variant}",
           f"/DSourceDir={DIST / 'workstation'}", f"/DOutputDir={DIST}",
           str(PACKAGING / "windows" / "workstation.iss")]
    if sliced:
        cmd.insert(1, "/DSliced")
    if subprocess.run(cmd).returncode != 0:
        raise BuildError("Inno Setup failed (its messages are above)")
    return DIST / output_names(version_, variant)["setup"]


def make_dmg(version_: str, variant: str) -> Path:
    script = PACKAGING / "macos" / "build_dmg.sh"
    if subprocess.run(["sh", str(script), version_, variant]).returncode != 0:
        raise BuildError("build_dmg.sh failed (its messages are above)")
    return DIST / output_names(version_, variant)["dmg"]


def split_file(path: Path, max_size: int) -> list[Path]:
    """Cut ``path`` into ``NAME.part001``... of at most ``max_size`` bytes each (joined again
    with ``cat NAME.part* > NAME``); a file that fits is left alone and no parts are made."""
    for old in path.parent.glob(f"{path.name}.part*"):
        old.unlink()
    if path.stat().st_size <= max_size:
        return []
    parts = []
    with path.open("rb") as src:
        while chunk := src.read(max_size):
            part = path.with_name(f"{path.name}.part{len(parts) + 1:03d}")
            part.write_bytes(chunk)
            parts.append(part)
    return parts


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while block := src.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def write_checksums(files: list[Path], out: Path) -> Path:
    out.write_text("".join(f"{sha256(f)}  {f.name}\n" for f in files), encoding="utf-8")
    return out


def human(size: int) -> str:
    return f"{size / 1024 ** 2:,.0f} MiB"


def build(args) -> list[Path]:
    started = time.monotonic()
    require_pyinstaller()
    version_, variant = version(), torch_variant()
    names = output_names(version_, variant)
    print(f"Workstation {version_}, torch variant {variant}, {sys.platform} {machine()}")

    step("rendering the app icon")
    icons = render_icons()

    step("freezing with PyInstaller (several minutes)")
    freeze_started = time.monotonic()
    freeze()
    bundle = DIST / "workstation"
    print(f"dist/workstation: {human(dir_size(bundle))} in "
          f"{time.monotonic() - freeze_started:.0f} s")

    step("self-test of the frozen app")
    print(run_self_test(frozen_executable()), end="")

    step("wrapping for this platform")
    outputs: list[Path] = []
    if sys.platform.startswith("linux"):
        outputs.append(make_tarball(bundle, icons["png"], DIST / names["tar"],
                                    top=f"workstation-{version_}"))
        outputs.append(make_deb(bundle, icons["png"], DIST / names["deb"], version_, variant))
    elif sys.platform == "win32":
        setup = make_windows_installer(version_, variant,
                                       sliced=dir_size(bundle) > args.max_asset_size)
        outputs += [setup] if setup else []
    elif sys.platform == "darwin":
        outputs.append(make_dmg(version_, variant))
    release = []
    for path in outputs:
        parts = split_file(path, args.max_asset_size)
        release += [path, *parts]
        note = f" (over the asset limit: split into {len(parts)} parts)" if parts else ""
        print(f"{path.relative_to(ROOT)}: {human(path.stat().st_size)}{note}")
    if release:
        write_checksums(release, DIST / "SHA256SUMS")
    print(f"\nbuilt in {time.monotonic() - started:.0f} s")
    return release


def check() -> int:
    step("slow packaging tests (tests/project/test_packaging.py)")
    env = dict(os.environ, WORKSTATION_DIST=str(DIST))
    cmd = [sys.executable, "-m", "pytest", str(ROOT / "tests" / "project" / "test_packaging.py"),
           "-m", "slow or not slow", "-v"]
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python packaging/build.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="afterwards run the slow packaging tests on the outputs")
    parser.add_argument("--max-asset-size", type=int, default=DEFAULT_MAX_ASSET, metavar="BYTES",
                        help="split outputs bigger than this into parts (default just under "
                             "2 GiB, the common release-file limit)")
    args = parser.parse_args(argv)
    try:
        build(args)
    except BuildError as exc:
        print(f"build.py: error: {exc}", file=sys.stderr)
        return 1
    return check() if args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
