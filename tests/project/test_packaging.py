"""Installers (packaging/build.py): the frozen app passes its self-test, loads its resources
from the bundle, and the Linux .tar.gz and .deb install, launch and uninstall cleanly.

The ``slow`` tests use the outputs in $WORKSTATION_DIST (``python packaging/build.py --check``
sets it); without it they build the outputs first (several minutes).
"""

from __future__ import annotations

import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

from workstation import __version__

ROOT = Path(__file__).resolve().parents[2]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux packages")


def _load_build_script():
    spec = importlib.util.spec_from_file_location("packaging_build",
                                                  ROOT / "packaging" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load_build_script()


@pytest.fixture(scope="module")
def dist() -> Path:
    if os.environ.get("WORKSTATION_DIST"):
        return Path(os.environ["WORKSTATION_DIST"])
    result = subprocess.run([sys.executable, str(ROOT / "packaging" / "build.py")], cwd=ROOT,
                            capture_output=True, text=True, timeout=3600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return build.DIST


@pytest.fixture(scope="module")
def names() -> dict[str, str]:
    return build.output_names(__version__, build.torch_variant())


def self_test(executable: Path) -> str:
    """Run the frozen app's --self-test and return its report; the app's resources must come
    from inside the folder the executable was installed to."""
    output = build.run_self_test(executable)
    resources = Path(re.search(r"resources loaded from (.+?): style sheet and SVG icons",
                               output).group(1))
    install_dir = executable.resolve().parent
    assert resources.is_relative_to(install_dir), (resources, install_dir)
    assert f'window "Workstation {__version__}' in output
    assert re.search(r"checkpoint \S+ reloaded", output)
    home = re.search(r"(\S*workstation-self-test-[^/\s]+)", output).group(1)
    assert not os.path.exists(home), "the self-test must remove its temporary data dir"
    return output


def test_split_file_cuts_parts_that_join_back_and_leaves_small_files(tmp_path):
    data = os.urandom(2500)
    big = tmp_path / "bundle.tar.gz"
    big.write_bytes(data)
    parts = build.split_file(big, 1000)
    assert [p.name for p in parts] == [f"bundle.tar.gz.part00{i}" for i in (1, 2, 3)]
    assert [p.stat().st_size for p in parts] == [1000, 1000, 500]
    assert b"".join(p.read_bytes() for p in parts) == data
    sums = build.write_checksums([big, *parts], tmp_path / "SHA256SUMS").read_text()
    assert sums.splitlines()[0] == f"{build.sha256(big)}  bundle.tar.gz"
    assert len(sums.splitlines()) == 4
    assert build.split_file(big, 5000) == []
    assert not list(tmp_path.glob("*.part*")), "parts of an earlier split are removed"


def test_icons_render_from_the_app_svg(tmp_path, qapp):
    from PySide6.QtGui import QImage

    icons = build.render_icons(tmp_path)
    png = QImage(str(icons["png"]))
    assert (png.width(), png.height()) == (256, 256)
    assert png.pixelColor(128, 128).alpha() > 0, "the icon has a drawing in its middle"
    assert icons["ico"].stat().st_size > 1000 and icons["icns"].stat().st_size > 1000


def test_version_comes_from_the_package_into_names_and_about():
    from workstation.ui.help import about_text

    names = build.output_names(__version__, "cpu")
    assert all(__version__ in name for kind, name in names.items() if kind != "folder")
    assert f"Workstation {__version__}" in about_text()
    assert build.version() == __version__


@pytest.mark.slow
def test_frozen_app_passes_its_self_test_with_bundled_resources(dist):
    executable = build.frozen_executable(dist)
    self_test(executable)
    result = subprocess.run([str(executable), "--version"], capture_output=True, text=True,
                            timeout=120)
    assert result.stdout.strip() == f"workstation {__version__}"


@pytest.mark.slow
@linux_only
def test_tarball_unpacks_to_a_working_app_with_menu_entry(dist, names, tmp_path):
    with tarfile.open(dist / names["tar"]) as tar:
        members = tar.getnames()
        top = f"workstation-{__version__}"
        assert all(m == top or m.startswith(f"{top}/") for m in members)
        assert {f"{top}/workstation", f"{top}/install-desktop-entry.sh",
                f"{top}/share/applications/workstation.desktop",
                f"{top}/share/icons/hicolor/256x256/apps/workstation.png"} <= set(members)
        tar.extractall(tmp_path / "unpacked", filter="tar")
    folder = tmp_path / "unpacked" / top
    self_test(folder / "workstation")

    env = dict(os.environ, HOME=str(tmp_path / "home"))
    env.pop("XDG_DATA_HOME", None)
    subprocess.run([str(folder / "install-desktop-entry.sh")], env=env, check=True)
    share = tmp_path / "home" / ".local" / "share"
    entry = (share / "applications" / "workstation.desktop").read_text()
    assert f'Exec="{folder}/workstation"' in entry
    assert (share / "icons" / "hicolor" / "256x256" / "apps" / "workstation.png").is_file()
    subprocess.run([str(folder / "install-desktop-entry.sh"), "--remove"], env=env, check=True)
    assert not [p for p in share.rglob("*") if p.is_file()]


def deb_listing(deb: Path) -> list[tuple[str, str]]:
    """(owner/group, path) of each entry in the .deb's data, paths as installed ("/opt/...")."""
    lines = subprocess.run(["dpkg-deb", "--contents", str(deb)], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    entries = []
    for line in lines:
        fields = line.split(None, 5)
        entries.append((fields[1], fields[5].split(" -> ")[0].removeprefix(".").rstrip("/")))
    return entries


@pytest.mark.slow
@linux_only
def test_deb_holds_root_owned_files_in_opt_and_usr_only(dist, names):
    deb = dist / names["deb"]
    field = lambda name: subprocess.run(  # noqa: E731
        ["dpkg-deb", "--field", str(deb), name], capture_output=True, text=True,
        check=True).stdout.strip()
    assert field("Package") == "workstation"
    assert field("Version") == f"{__version__}+{build.torch_variant()}"
    assert field("Architecture") == build.deb_arch()
    assert f"libc6 (>= {platform.libc_ver()[1]})" in field("Depends")
    entries = deb_listing(deb)
    assert {owner for owner, _ in entries} == {"root/root"}
    modes = subprocess.run(["dpkg-deb", "--contents", str(deb)], capture_output=True,
                           text=True, check=True).stdout.split("\n")
    unreadable = [m for m in modes if m and (m[7] != "r" or (m[0] == "d" and m[9] != "x"))]
    assert not unreadable, f"files other users cannot read: {unreadable[:3]}"
    paths = {path for _, path in entries}
    assert {"/opt/workstation/workstation", "/usr/bin/workstation",
            "/usr/share/applications/workstation.desktop",
            "/usr/share/icons/hicolor/256x256/apps/workstation.png"} <= paths
    allowed = ("/opt/workstation", "/usr/bin/workstation", "/usr/share/applications/",
               "/usr/share/icons/hicolor/256x256/apps/")
    shared_dirs = {"", "/opt", "/usr", "/usr/bin", "/usr/share", "/usr/share/applications",
                   "/usr/share/icons", "/usr/share/icons/hicolor",
                   "/usr/share/icons/hicolor/256x256", "/usr/share/icons/hicolor/256x256/apps"}
    assert not [p for p in paths - shared_dirs if not p.startswith(allowed)]


@pytest.mark.slow
@linux_only
def test_deb_extracted_to_a_folder_launches_and_passes_self_test(dist, names, tmp_path):
    subprocess.run(["dpkg", "-x", str(dist / names["deb"]), str(tmp_path)], check=True)
    launcher = tmp_path / "usr" / "bin" / "workstation"
    output = build.run_self_test(launcher)
    resources = re.search(r"resources loaded from (.+?): ", output).group(1)
    assert Path(resources).is_relative_to(tmp_path / "opt" / "workstation")


def run_as_nobody(*command: str) -> subprocess.CompletedProcess:
    """Run ``command`` as user nobody, with a home of its own."""
    home = Path(tempfile.mkdtemp(prefix="workstation-nobody-"))
    try:
        home.chmod(0o777)
        return subprocess.run(["runuser", "-u", "nobody", "--", "env", f"HOME={home}",
                               f"WORKSTATION_HOME={home / 'data'}", "QT_QPA_PLATFORM=offscreen",
                               *command], capture_output=True, text=True, timeout=600, cwd=home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.slow
@linux_only
def test_deb_installs_runs_and_uninstalls_without_leftovers(dist, names):
    if os.geteuid() != 0 or not (shutil.which("dpkg") and shutil.which("runuser")):
        pytest.skip("installing a .deb needs root, dpkg and runuser")
    if subprocess.run(["dpkg", "-s", "workstation"], capture_output=True).returncode == 0:
        pytest.skip("a workstation package is installed on this machine; not touching it")
    deb = dist / names["deb"]
    packaged = {path for _, path in deb_listing(deb)}
    try:
        subprocess.run(["dpkg", "-i", str(deb)], check=True, capture_output=True)
        installed = subprocess.run(["dpkg", "-L", "workstation"], capture_output=True,
                                   text=True, check=True).stdout.splitlines()
        owned = [Path(p) for p in installed if p.startswith(("/opt/workstation", "/usr/bin/",
                                                             "/usr/share/applications/",
                                                             "/usr/share/icons/"))]
        assert all(p.exists() for p in owned)
        output = build.run_self_test(Path("/usr/bin/workstation"))
        assert "resources loaded from /opt/workstation/" in output
        as_user = run_as_nobody("/usr/bin/workstation", "--self-test")
        assert as_user.returncode == 0 and "self-test: passed" in as_user.stdout, \
            "a user other than root runs the installed app: " + as_user.stdout + as_user.stderr
        after_run = {str(p) for p in Path("/opt/workstation").rglob("*")}
        assert after_run <= packaged, f"the app wrote into its install folder: " \
                                      f"{sorted(after_run - packaged)[:5]}"
    finally:
        removed = subprocess.run(["dpkg", "--purge", "workstation"], capture_output=True,
                                 text=True)
    assert removed.returncode == 0, removed.stderr
    left = [p for p in owned if p.exists() and not p.is_dir()]
    assert not left, f"uninstall left {left[:5]}"
    assert not Path("/opt/workstation").exists()
    assert not Path("/usr/bin/workstation").exists()
