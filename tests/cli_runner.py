"""Running a console-script entry point in-process, as the command-line tests do."""

from __future__ import annotations

from typing import NamedTuple

import pytest


class Result(NamedTuple):
    """Exit status and captured output of one run (unpacks as ``code, out, err``)."""

    code: int
    out: str
    err: str


def run_main(main, args, capsys) -> Result:
    """Call ``main(args)`` (which exits with the real status) and capture its output."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in args])
    captured = capsys.readouterr()
    return Result(done.value.code, captured.out, captured.err)
