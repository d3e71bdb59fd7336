"""The checks that keep the layering honest, run by the test suite: import-linter's contracts
(the core imports no Qt; cli > commands > bench > ui > viewmodel > backtest > ml > annotations >
market; the window reaches torch only through ml; ml's own modules in layers, so without
cycles), ruff, and mypy over the whole package, all configured in pyproject.toml; and the
pre-commit hooks that run the same checks."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
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


def test_mypy_is_clean_on_the_whole_package():
    """The core, the window, the CLI, the benchmarks and the scripts: no module is exempt."""
    result = _run([sys.executable, "-m", "mypy", "--no-incremental"])
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert result.stdout.startswith("Success: no issues found")
