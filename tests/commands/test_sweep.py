"""``workstation sweep --grid FILE``: every combination evaluated as ``evaluate`` evaluates it,
the best chosen by validation loss alone, and a bad grid refused in one line naming the file
and the key."""

from __future__ import annotations

import json

import pytest

from workstation.cli import main

TINY = ["--source", "demo", "--timeframe", "1h", "--max-candles", "1500", "--seq-len", "16",
        "--batch-size", "32", "--folds", "2", "--epochs", "1", "--stride", "16", "--threads",
        "1", "--seeds", "1", "--json"]


def objects_of(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def test_a_sweep_scores_each_combination_as_evaluate_and_picks_by_validation(capsys, tmp_path):
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"lr": [0.001, 0.0003]}))
    assert main(["sweep", "--grid", str(grid), *TINY, "--workers", "1"]) == 0
    out = capsys.readouterr()
    *rows, best = objects_of(out.out)
    assert [row["settings"] for row in rows] == [{"lr": 0.001}, {"lr": 0.0003}]
    assert all(row["validation_runs"] == 2 and row["chosen_by"] == "total loss"
               for row in rows)
    lowest = min(rows, key=lambda row: row["validation_loss"])
    assert [row["best"] for row in rows] == [row is lowest for row in rows]
    assert best["sweep_best"] == lowest["settings"] and "test spans chose nothing" in (
        best["chosen_by"])
    assert "[best by validation]" in out.err and "combination 2/2 (lr=0.0003): fold 2/2 " \
                                                  "scored" in out.err
    assert main(["evaluate", *TINY, "--workers", "1", "--lr", "0.0003"]) == 0
    (summary,) = [o for o in objects_of(capsys.readouterr().out) if o.get("summary")]
    assert rows[1]["heads"] == summary["heads"]  # the same scores as evaluate's, exactly


@pytest.mark.parametrize("text, words", [
    ('{"lr": [0.001', "not valid JSON: "),
    ('[1, 2]', "a grid is an object of settings to lists of values"),
    ('{"learning_rate": [0.001]}', "unknown setting 'learning_rate'; a sweep varies preset, "
                                   "lr, epochs"),
    ('{"lr": 0.001}', "lr: a list of one value or more, got 0.001"),
    ('{"epochs": [1, 2.5]}', "epochs: 2.5 is not a whole number"),
    ('{"lr": [true]}', "lr: True is not a number"),
    ('{"preset": ["huge"]}', "preset=huge: "),
])
def test_a_malformed_grid_is_refused_in_one_line_naming_the_file_and_key(capsys, tmp_path, text,
                                                                         words):
    grid = tmp_path / "grid.json"
    grid.write_text(text)
    assert main(["sweep", "--grid", str(grid), *TINY]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"workstation: error: {grid}: ") and words in err, err
    assert len(err.strip().splitlines()) == 1


def test_a_setting_in_the_grid_and_a_flag_is_refused(capsys, tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text("lr = [0.001]\nseq_len = [16, 32]\n")
    assert main(["sweep", "--grid", str(grid), *TINY]) == 1
    assert f"{grid}: seq_len is in the grid and given as --seq-len" in capsys.readouterr().err
    assert main(["sweep", "--grid", str(tmp_path / "none.json"), *TINY]) == 1
    assert "none.json: cannot read the grid: No such file or directory" in (
        capsys.readouterr().err)
