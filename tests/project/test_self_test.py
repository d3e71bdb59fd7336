"""`workstation --self-test` on the source install: the whole app offscreen, exit 0."""

import os
import re
import subprocess
import sys


def test_self_test_passes_from_the_source_install(tmp_path):
    home = tmp_path / "user-home"
    home.mkdir()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(home))
    for name in ("WORKSTATION_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
                 "XDG_CACHE_HOME"):
        env.pop(name, None)
    result = subprocess.run([sys.executable, "-m", "workstation", "--self-test"], cwd=tmp_path,
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "self-test: passed" in result.stdout
    assert "checkpoint" in result.stdout and "reloaded" in result.stdout
    temp_home = re.search(r"(\S*workstation-self-test-[^/\s]+)", result.stdout).group(1)
    assert not os.path.exists(temp_home), "the temporary data dir must be removed"
    assert list(home.iterdir()) == [], "the self-test must not touch the user's folders"
