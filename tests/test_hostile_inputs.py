"""Hostile inputs that used to give a number silently wrong (issue "Hostile inputs and
faults"): a first CSV row of quoted numbers taken for a header, text that is not UTF-8
read with replacement characters, fractional round bounds truncated, and results that
depended on the memory layout of the vote file.

Expected values are written out by hand or come from the same votes in another layout.
"""

from __future__ import annotations

import io
import sys

import pytest
from cli_runner import run_main

from pate_cli.cli.analyze import main
from pate_cli.errors import InputError
from pate_cli.inputs import load_rounds


def error_of(call, *args, **kwargs) -> str:
    """The one-line InputError message of ``call``; fails if none is raised."""
    with pytest.raises(InputError) as caught:
        call(*args, **kwargs)
    message = str(caught.value)
    assert "\n" not in message and "\r" not in message, f"not one line: {message!r}"
    return message


@pytest.fixture
def cli(capsys, monkeypatch):
    """``cli(*args, stdin=b"...")``: pate-analyze in process; ``(code, out, err)``."""

    def run(*args, stdin: bytes | None = None):
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        return run_main(main, args, capsys)

    return run


# --- round bounds are integers ----------------------------------------------------------------

def rounds_file(tmp_path, text, name="rounds.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("rows, bound, value", [
    ("0.5:10", "start", "0.5"), ("1e3:2000", "start", "1e3"), ("0:10.0", "stop", "10.0"),
    ("0:1e1", "stop", "1e1"), ("0x0:10", "start", "0x0"),
])
def test_fractional_or_exponent_round_bounds_are_refused(tmp_path, rows, bound, value):
    path = rounds_file(tmp_path, f"rows,mechanism\n0:5,gnmax\n{rows},gnmax\n")
    assert error_of(load_rounds, path) == (
        f"{path}: round 1: rows {rows!r}: {bound} {value!r} is not an integer row number")


def test_integer_round_bounds_are_read_exactly(tmp_path):
    path = rounds_file(tmp_path, "rows,mechanism\n0:1000,confident\n1000:9000,gnmax\n")
    first, second = load_rounds(path)
    assert first["rows"].tolist() == list(range(1000))
    assert second["rows"][0] == 1000 and second["rows"][-1] == 8999
    assert second["rows"].size == 8000


@pytest.mark.parametrize("rows, shown", [
    ("[0.5, 1, 2]", "row 0.5 (entry 0)"), ("[0, 1e3]", "row 1000.0 (entry 1)"),
    ("[0, 2.0]", "row 2.0 (entry 1)"), ('[0, "3"]', "row '3' (entry 1)"),
    ("[true]", "row True (entry 0)"),
])
def test_json_row_lists_hold_integers_only(tmp_path, rows, shown):
    path = rounds_file(tmp_path, f'[{{"rows": {rows}, "mechanism": "gnmax"}}]', "r.json")
    assert error_of(load_rounds, path) == (
        f"{path}: round 0: {shown} is not an integer row number")


def test_json_rounds_accept_integer_lists_and_ranges(tmp_path):
    path = rounds_file(tmp_path, '[{"rows": [3, 1, 2], "mechanism": "gnmax"},'
                                 ' {"rows": "1000:1003", "mechanism": "gnmax"}]', "r.json")
    first, second = load_rounds(path)
    assert first["rows"].tolist() == [3, 1, 2] and second["rows"].tolist() == [1000, 1001, 1002]


def test_json_round_svt_cutoff_is_not_truncated(tmp_path):
    path = rounds_file(tmp_path, '[{"rows": "0:5", "mechanism": "svt", "svt_cutoff": 2.5}]',
                       "r.json")
    assert error_of(load_rounds, path) == f"{path}: round 0: svt_cutoff 2.5 is not an integer"


def test_a_fractional_round_bound_exits_2_on_the_command_line(cli, tmp_path):
    votes = tmp_path / "votes.csv"
    votes.write_text("30,20\n" * 20)
    path = rounds_file(tmp_path, '[{"rows": [0.5, 3], "mechanism": "gnmax"}]', "r.json")
    result = cli(votes, "--rounds", path)
    assert result.code == 2
    assert result.err.strip() == (
        f"Error: {path}: round 0: row 0.5 (entry 0) is not an integer row number")
