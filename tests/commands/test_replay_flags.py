"""``workstation --replay-from TS|random|resume [--replay-span FROM..TO] [--replay-speed S]``
(issue 27): what cannot be read is refused in one line before any window opens."""

import pytest

from workstation.cli import build_parser


@pytest.mark.parametrize("argv, problem", [
    (["--replay-from", "yesterday"], "cannot read 'yesterday' as a time"),
    (["--replay-from", "random", "--replay-span", "2024-02-01..2024-01-01"],
     "FROM must be before TO"),
    (["--replay-from", "random", "--replay-span", "2024-02-01"], "write FROM..TO"),
    (["--replay-from", "random", "--replay-speed", "5000x"], "real time runs 1x to 1000x"),
])
def test_bad_replay_flags_are_refused_in_one_line(argv, problem, capsys):
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert problem in err and "Traceback" not in err


def test_good_replay_flags_are_kept_as_typed():
    args = build_parser().parse_args(["--replay-from", "2024-01-05T12:00", "--replay-span",
                                      "2024-01-01..2024-01-31", "--replay-speed", "60x"])
    assert (args.replay_from, args.replay_span, args.replay_speed) == (
        "2024-01-05T12:00", "2024-01-01..2024-01-31", "60x")
    assert build_parser().parse_args(["--replay-from", "resume"]).replay_from == "resume"
