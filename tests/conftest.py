"""Fixtures shared by every test folder (the suite's one conftest.py).

``cli``
    The console scripts, run in-process through their entry points (which exit with the
    real status) with stdout/stderr captured: ``cli.analyze(*args, stdin=b"...")``,
    ``cli.sweep(*args)``, ``cli.plot(*args)`` return ``Result(code, out, err)``.
    ``cli.script("pate-sweep")`` is the installed script, for tests that need a process.
``paper_votes``
    The papers' released teacher votes: ``../shared/paper_votes`` beside the repository
    (read-only, not in git). ``PATE_SHARED=/path/to/shared`` points elsewhere, e.g. from a
    git worktree: ``PATE_SHARED=/work/shared make test``. When the folder is missing the
    test is skipped with the reason, except under ``CI=true``, where it fails.
"""

from __future__ import annotations

import importlib
import io
import os
import shutil
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from tests import ROOT

ENTRY_POINTS = {"pate-analyze": "pate_cli.cli.analyze", "pate-sweep": "pate_cli.cli.sweep",
                "pate-plot": "pate_cli.cli.plot"}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def unavailable(reason: str) -> None:
    """Skip the test for a missing resource; under ``CI=true`` a missing resource fails."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: every resource must be present)", pytrace=False)
    pytest.skip(reason)


# --- the command line ----------------------------------------------------------------------

class Result(NamedTuple):
    """Exit status and captured output of one run (unpacks as ``code, out, err``)."""

    code: int
    out: str
    err: str


class CommandLine:
    def __init__(self, capsys, monkeypatch):
        self._capsys, self._monkeypatch = capsys, monkeypatch

    def run(self, command: str, *args, stdin: bytes | None = None) -> Result:
        """Call ``command``'s entry point with ``args`` and capture what it printed."""
        main = importlib.import_module(ENTRY_POINTS[command]).main
        if stdin is not None:
            self._monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        self._capsys.readouterr()
        with pytest.raises(SystemExit) as done:
            main([str(a) for a in args])
        captured = self._capsys.readouterr()
        return Result(done.value.code, captured.out, captured.err)

    def analyze(self, *args, stdin: bytes | None = None) -> Result:
        return self.run("pate-analyze", *args, stdin=stdin)

    def sweep(self, *args, stdin: bytes | None = None) -> Result:
        return self.run("pate-sweep", *args, stdin=stdin)

    def plot(self, *args, stdin: bytes | None = None) -> Result:
        return self.run("pate-plot", *args, stdin=stdin)

    @staticmethod
    def script(name: str) -> str:
        """The installed console script ``name`` (beside this Python, else on PATH)."""
        beside = Path(sys.executable).parent / name
        found = str(beside) if beside.exists() else shutil.which(name)
        if found is None:
            unavailable(f"the {name} console script is not installed")
        return found


@pytest.fixture
def cli(capsys, monkeypatch) -> CommandLine:
    return CommandLine(capsys, monkeypatch)


# --- shared data -----------------------------------------------------------------------------

def shared_folder() -> Path:
    """The read-only ``shared`` folder beside the repository, or ``$PATE_SHARED``."""
    return Path(os.environ.get("PATE_SHARED") or ROOT.parent / "shared")


@pytest.fixture(scope="session")
def paper_votes() -> Path:
    folder = shared_folder() / "paper_votes"
    if not folder.is_dir():
        unavailable(f"{folder} not found: the paper votes live in ../shared/paper_votes "
                    "beside the repository (set PATE_SHARED=/path/to/shared)")
    return folder
