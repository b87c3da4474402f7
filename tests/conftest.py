"""Fixtures shared by every test folder (the suite's one conftest.py).

``cli``
    The console scripts, run in-process through their entry points (which exit with the
    real status) with stdout/stderr captured: ``cli.analyze(*args, stdin=b"...")``,
    ``cli.sweep(*args)``, ``cli.plot(*args)`` return ``Result(code, out, err)``.
    ``cli.script("pate-sweep")`` is the installed script, for tests that need a process.
``paper_votes``
    The papers' released teacher votes: ``../shared/paper_votes`` beside the repository
    (read-only, not in git). ``PATE_SHARED=/path/to/shared`` points elsewhere, e.g. from a
    git worktree: ``PATE_SHARED=/path/to/shared make test``. When the folder is missing the
    test is skipped with the reason, except under ``CI=true``, where it fails.
``dask_timeout``
    Seconds a test waits for a Dask scheduler: ``PATE_TEST_DASK_TIMEOUT``, default 20. It
    replaces the 10 s that ``pate-sweep --scheduler`` waits (fixed in pate_cli/sweep/executors.py).
    A client reaches a cluster the test started in well under a second on quiet cores, and
    a refused connection fails at once, so 20 s (over 10 times that) is never waited for
    unless something hangs, and a loaded machine cannot reach it.
``plot_runs``
    Per-query tables and summaries of a few runs on the MNIST sample votes (and a made-up
    sweep table), written once per session for the figure and pate-plot tests.
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
from hypothesis import HealthCheck, settings

from tests import ROOT, SAMPLES

# No property test fails on time: Hypothesis' deadline per example (200 ms) and its
# too-slow health check are wall-clock bounds that a loaded machine breaks. A test's own
# @settings keeps these unless it names them.
settings.register_profile("pate", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("pate")

ENTRY_POINTS = {"pate-analyze": "pate_cli.cli.analyze", "pate-sweep": "pate_cli.cli.sweep",
                "pate-plot": "pate_cli.cli.plot", "pate-calibrate": "pate_cli.cli.calibrate",
                "pate-report": "pate_cli.cli.report", "pate-audit": "pate_cli.cli.audit"}


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

    def calibrate(self, *args, stdin: bytes | None = None) -> Result:
        return self.run("pate-calibrate", *args, stdin=stdin)

    def audit(self, *args) -> Result:
        return self.run("pate-audit", *args)

    def report(self, *args, stdin: bytes | None = None) -> Result:
        return self.run("pate-report", *args, stdin=stdin)

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


# --- Dask ----------------------------------------------------------------------------------

@pytest.fixture
def small_stream_chunks(monkeypatch) -> None:
    """Chunks of a per-query table's passes made small (2,048 rows, curves kept up to
    1 MB, counted chunks of 32,768 values, file pieces of 8,192 rows), so that a memory
    test's tables of a few 10^4 queries span several."""
    from pate_cli import work_sizes
    from pate_cli.analysis import grouped_run, per_query_stream
    from pate_cli.outputs import files
    monkeypatch.setattr(per_query_stream, "CURVE_CACHE_BYTES", 1 << 20)
    monkeypatch.setattr(work_sizes, "CHUNK_ROWS", 2048)
    monkeypatch.setattr(work_sizes, "TABLE_ROWS", 2048)
    monkeypatch.setattr(grouped_run, "READ_VALUES", 4 * 8192)
    monkeypatch.setattr(files, "TABLE_ROWS", 8192)


@pytest.fixture
def dask_timeout(monkeypatch) -> float:
    """``PATE_TEST_DASK_TIMEOUT`` seconds, also the wait of ``pate-sweep --scheduler``.

    The command connects with ``distributed.Client(address, timeout="10s")``; here the
    Client it imports gets the test's timeout instead.
    """
    seconds = float(os.environ.get("PATE_TEST_DASK_TIMEOUT", "20"))
    try:
        import distributed
    except ImportError:  # the tests of the message without Dask need no timeout
        return seconds
    real = distributed.Client

    def client(*args, **kwargs):
        kwargs["timeout"] = seconds
        return real(*args, **kwargs)

    monkeypatch.setattr(distributed, "Client", client)
    return seconds


# --- runs for the figures and pate-plot ----------------------------------------------------

def write_run(directory: Path, name: str, result, extension: str = ".csv") -> tuple[Path, Path]:
    """Write ``result``'s per-query table and JSON summary as pate-analyze would."""
    from pate_cli.outputs.files import per_query_bytes
    from pate_cli.outputs.summary import render
    from pate_cli.outputs.summary_json import summary_dict
    from pate_cli.query_table import per_query_frame

    table = directory / f"{name}{extension}"
    table.write_bytes(per_query_bytes(per_query_frame(result), str(table)))
    summary = directory / f"{name}.json"
    summary.write_text(render(summary_dict(result), "json"))
    return table, summary


@pytest.fixture(scope="session")
def plot_runs(tmp_path_factory) -> dict:
    """Small per-query tables and summaries: Confident, LNMax, an individualized run."""
    import pandas as pd

    import pate_cli

    directory = tmp_path_factory.mktemp("runs")
    votes = pate_cli.load_votes(SAMPLES / "mnist_250_votes.npy")
    confident = pate_cli.analyze(votes, "confident", queries=300, delta=1e-6)
    lnmax = pate_cli.analyze(votes, "lnmax", queries=200, delta=1e-6)
    parameters = pate_cli.derive_parameters(pate_cli.load_groups(SAMPLES / "mnist_250_groups.csv"),
                                            variant="upsampling")
    groups = pate_cli.analyze_individualized(
        votes.votes, pate_cli.ConfidentGNMax(threshold=200, sigma_threshold=150, sigma=40),
        parameters, queries=400, source=votes)
    paths = {}
    for name, result in (("confident", confident), ("lnmax", lnmax), ("groups", groups)):
        paths[name], paths[f"{name}_json"] = write_run(directory, name, result)
    paths["confident_jsonl"], _ = write_run(directory, "confident_lines", confident, ".jsonl")
    sweep = pd.DataFrame({
        "file": "v.npy", "mechanism": ["gnmax", "gnmax", "gnmax", "lnmax", "lnmax"],
        "sigma": [40, 20, 60, None, None], "threshold": None, "sigma_threshold": None,
        "laplace_scale": [None, None, None, 20, 40], "queries": 100,
        "teachers": [250, 250, 250, 100, 100], "answered": [100, 100, 100, 100, 100],
        "answered_std": 0.0, "epsilon": [3.0, 5.0, 2.0, 7.0, 4.0],
        "epsilon_std": [0.1, 0.0, 0.2, 0.0, 0.0], "order": 10,
        "epsilon_data_independent": 20.0, "label_accuracy": [0.9, 0.95, 0.8, 0.85, 0.7],
        "label_accuracy_std": [0.01, 0.0, 0.02, 0.0, 0.0], "repeats": 3, "seed": 0})
    paths["sweep"] = directory / "sweep.csv"
    sweep.to_csv(paths["sweep"], index=False)
    paths["sweep_frame"] = sweep
    paths["groups_result"] = groups
    paths["confident_result"] = confident
    return paths
