"""The checks that keep the layering honest, run by the test suite: import-linter's contracts
(the core imports no Qt; cli > commands > bench > ui > viewmodel > backtest > ml > annotations >
market; the window reaches torch only through ml; ml's own modules in layers, so without
cycles), ruff, and mypy over the whole package but a list of exceptions that only shrinks, all
configured in pyproject.toml; and the pre-commit hooks that run the same checks."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _run(argv, cwd=ROOT, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300, **kw)


def test_import_contracts_are_kept():
    result = _run([str(BIN / "lint-imports"), "--config", str(ROOT / "pyproject.toml")])
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "4 kept, 0 broken" in result.stdout


@pytest.mark.parametrize("module, line, contract", [
    ("workstation/ml/events.py", "import PySide6.QtCore", "The core imports no Qt"),
    ("workstation/market/series.py", "from workstation.annotations import model",
     "Layers"),
    ("workstation/ui/status.py", "import torch", "The window reaches torch only through ml"),
    ("workstation/ml/settings.py", "from workstation.ml import evaluation", "ml has no cycles"),
])
def test_each_contract_catches_a_violation(tmp_path, module, line, contract):
    shutil.copytree(ROOT / "workstation", tmp_path / "workstation",
                    ignore=shutil.ignore_patterns("__pycache__", "resources"))
    target = tmp_path / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    result = _run([str(BIN / "lint-imports"), "--config", str(ROOT / "pyproject.toml")],
                  cwd=tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": str(BIN)})
    assert result.returncode == 1, result.stdout[-3000:]
    broken = [ln for ln in result.stdout.splitlines() if ln.endswith("BROKEN")]
    assert len(broken) == 1 and broken[0].startswith(contract), result.stdout[-3000:]


def test_the_pre_commit_hooks_run_the_same_checks_from_the_project_environment():
    hooks = re.findall(r"- id: (\S+)\n\s+name: .*\n\s+entry: (\S+)",
                       (ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert [hook for hook, _ in hooks] == ["ruff", "lint-imports", "mypy"]
    for _, entry in hooks:
        assert entry.startswith(".venv/bin/") and (BIN / Path(entry).name).exists(), entry


def test_ruff_is_clean():
    result = _run([sys.executable, "-m", "ruff", "check", "workstation", "tests", "scripts",
                   "packaging"])
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


# The most modules pyproject.toml's mypy exceptions may name: lower it whenever the list
# shrinks, never raise it (a module added to the workstation package is typed clean).
MAX_MYPY_EXCEPTIONS = 4


def _ini_value(value) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _mypy_config_without_exceptions(path: Path) -> list[str]:
    """pyproject.toml's mypy settings as a mypy.ini at ``path``, less the override that
    ignores errors; returns the modules that override names."""
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    overrides = mypy.pop("overrides")
    exceptions = [o for o in overrides if o.get("ignore_errors")]
    assert len(exceptions) == 1, "one override lists the modules mypy does not pass yet"
    lines = ["[mypy]", *(f"{key} = {_ini_value(value)}" for key, value in mypy.items())]
    for override in overrides:
        if override is not exceptions[0]:
            modules = override.pop("module")
            lines += [f"[mypy-{','.join(modules)}]",
                      *(f"{key} = {_ini_value(value)}" for key, value in override.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return exceptions[0]["module"]


def test_mypy_passes_everything_but_a_list_that_only_shrinks(tmp_path):
    """mypy checks the whole package; the modules it does not pass yet are one list in
    pyproject.toml, which may name only modules that still fail, and at most
    ``MAX_MYPY_EXCEPTIONS`` of them."""
    exceptions = set(_mypy_config_without_exceptions(tmp_path / "mypy.ini"))
    result = _run([sys.executable, "-m", "mypy", "--no-incremental", "--config-file",
                   str(tmp_path / "mypy.ini")])
    failing = {line.split(":", 1)[0].removesuffix(".py").removesuffix("/__init__")
               .replace("/", ".") for line in result.stdout.splitlines() if ": error:" in line}
    assert result.returncode in (0, 1) and (failing or result.returncode == 0), (
        result.stdout[-4000:] + result.stderr[-2000:])
    unlisted = sorted(failing - exceptions)
    assert not unlisted, "mypy errors outside the exceptions list:\n" + "\n".join(
        line for line in result.stdout.splitlines()
        if any(line.startswith(m.replace(".", "/")) for m in unlisted))[-4000:]
    cleaned = sorted(exceptions - failing)
    assert not cleaned, ("typed clean now: take them off pyproject.toml's mypy exceptions "
                         f"and lower MAX_MYPY_EXCEPTIONS: {cleaned}")
    assert len(exceptions) <= MAX_MYPY_EXCEPTIONS, "the mypy exceptions list only shrinks"
