"""`workstation --self-test` on the source install: the whole app offscreen, exit 0."""

import os
import subprocess
import sys


def test_self_test_passes_from_the_source_install(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    result = subprocess.run([sys.executable, "-m", "workstation", "--self-test"], cwd=tmp_path,
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "self-test: passed" in result.stdout
    assert "checkpoint" in result.stdout and "reloaded" in result.stdout
    assert not any(p.name.startswith("workstation-self-test") for p in tmp_path.iterdir())
