"""Fast start (issue 14 item 4), progress on long work (item 6), chunks by elements (item 3).

``import pate_cli`` and every command's ``--help``/``--version`` load none of the heavy
libraries (checked in a fresh interpreter); the choices ``-h`` lists equal the core's;
``analyze(progress=...)`` reports each chunk; ``--progress`` forces lines onto a pipe and
the default prints nothing there; the default chunk is bounded in elements and changes no
number. Timings are in ``make bench``, not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pate_cli
from pate_cli.cli import choices
from pate_cli.work_sizes import CHUNK_ROWS, READ_VALUES, chunk_rows

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("scipy", "pandas", "matplotlib", "dask", "distributed", "pyarrow", "jinja2",
         "dp_accounting")
VOTES = ROOT / "sample_votes" / "mnist_250_votes.npy"


def loaded_after_each(steps: dict[str, str]) -> dict:
    """``{step: {"heavy": [...], "numpy": bool}}``: what is loaded after each step's code,
    the steps run one after another in one fresh interpreter. Modules only accumulate, so
    a step's list holds what it or an earlier step loaded: an empty list says that none of
    them loaded anything, as each would in an interpreter of its own."""
    probe = (f"import json, sys\nsteps = {list(steps.items())!r}\nfound = {{}}\n"
             "for name, code in steps:\n"
             "    exec(code, {})\n"
             f"    heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
             "    found[name] = {'heavy': heavy, 'numpy': 'numpy' in sys.modules}\n"
             "print(json.dumps(found))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def help_code(module: str) -> str:
    return (f"from pate_cli.cli.{module} import main\n"
            "for args in (['--help'], ['-h'], ['--version']):\n"
            "    try:\n        main(args)\n    except SystemExit as done:\n"
            "        assert done.code in (0, None), done.code\n")


def test_import_help_and_a_small_analysis_load_no_heavy_library():
    """``import pate_cli`` and each command's ``--help``, ``-h`` and ``--version`` load no
    numerics; pate-plot's kinds' ``--help`` nothing heavy; a small analysis neither pandas,
    matplotlib, dask nor pyarrow (one fresh interpreter, in that order)."""
    steps = {"import": "import pate_cli\n"}
    steps.update({module: help_code(module)
                  for module in ("analyze", "sweep", "plot", "audit", "report", "calibrate")})
    steps["plot kinds"] = (
        "from pate_cli.cli.plot import main\n"
        "for kind in ('history', 'groups', 'tradeoff', 'selection', 'partition',\n"
        "             'tradeoff-curve'):\n"
        "    try:\n        main([kind, '--help'])\n    except SystemExit:\n        pass\n")
    steps["small analysis"] = (
        "from pate_cli.cli.analyze import main\n"
        f"try:\n    main([{str(VOTES)!r}, '-n', '10', '-f', 'json'])\n"
        "except SystemExit:\n    pass\n")
    after = loaded_after_each(steps)
    for step in ("import", "analyze", "sweep", "plot", "audit", "report", "calibrate"):
        assert after[step] == {"heavy": [], "numpy": False}, step
    assert after["plot kinds"]["heavy"] == []
    assert not set(after["small analysis"]["heavy"]) & {"pandas", "matplotlib", "dask",
                                                         "pyarrow"}


def test_the_public_api_is_unchanged():
    namespace: dict = {}
    exec("from pate_cli import *", namespace)  # noqa: S102 - the star import users write
    assert set(pate_cli.__all__) <= set(namespace)
    assert set(pate_cli.__all__) <= set(dir(pate_cli))
    from pate_cli import AnalysisResult, analyze
    from pate_cli.analysis.result import AnalysisResult as Defined
    assert AnalysisResult is Defined and callable(analyze)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        pate_cli.nothing  # noqa: B018


def test_the_choices_help_lists_are_the_cores():
    from pate_cli.accounting.conversion import CONVERSIONS
    from pate_cli.accounting.q_bound import Q_BOUNDS
    from pate_cli.analysis.individualized import VARIANTS
    from pate_cli.mechanisms import MECHANISMS
    from pate_cli.orders import AUTO
    from pate_cli.sweep.table import TABLE_FORMATS
    assert choices.MECHANISMS == tuple(MECHANISMS)
    assert choices.VARIANTS == VARIANTS
    assert choices.CONVERSIONS == CONVERSIONS
    assert choices.TABLE_FORMATS == TABLE_FORMATS
    assert choices.Q_BOUNDS == Q_BOUNDS
    from pate_cli.mechanisms.threshold import SCREENINGS
    assert choices.SCREENINGS == SCREENINGS
    assert choices.ORDERS_AUTO == AUTO
    from pate_cli.mechanisms.domains import ETA
    assert choices.ETA == ETA
    from pate_cli.sweep.api import MAX_POINTS
    assert choices.MAX_POINTS == MAX_POINTS
    from pate_cli.accounting.audit import CLAIMED
    assert choices.AUDITED == CLAIMED
    from pate_cli.sweep.calibrate import ACCOUNTINGS, CALIBRATED, DEFAULT_TOLERANCE
    assert (choices.CALIBRATED, choices.CALIBRATION_ACCOUNTINGS,
            choices.CALIBRATION_TOLERANCE) == (CALIBRATED, ACCOUNTINGS, DEFAULT_TOLERANCE)


@pytest.mark.parametrize("command", ["pate-analyze", "pate-report", "pate-sweep"])
def test_the_help_gives_etas_range(cli, command):
    """--eta's help says which values the exponential mechanisms take (a value outside
    is refused: "eta must lie in [1e-12, 300]")."""
    result = cli.run(command, "--help")
    assert result.code == 0
    assert "eta in [1e-12, 300]" in " ".join(result.out.split())


# --- progress ----------------------------------------------------------------------------

def test_analyze_reports_progress_per_chunk():
    votes = np.load(VOTES)[:1000]
    calls = []
    result = pate_cli.analyze(votes, "confident", chunk_size=300,
                              progress=lambda done, total: calls.append((done, total)))
    assert calls == [(300, 1000), (600, 1000), (900, 1000), (1000, 1000)]
    quiet = pate_cli.analyze(votes, "confident", chunk_size=300)
    assert quiet.to_dict() == result.to_dict()


def test_progress_forced_onto_a_pipe_prints_lines(cli):
    forced = cli.analyze(VOTES, "--progress", "-f", "json")
    assert forced.code == 0, forced.err
    lines = [line for line in forced.err.splitlines() if line.startswith("pate-analyze:")]
    assert lines[-1].startswith("pate-analyze: 9000/9000 queries (100%)")
    assert "queries/s" in lines[-1] and "left" in lines[-1]
    default = cli.analyze(VOTES, "-f", "json")  # captured stderr is no terminal
    assert "queries (" not in default.err
    assert json.loads(default.out) == json.loads(forced.out)
    assert "queries (" not in cli.analyze(VOTES, "--no-progress", "-f", "json").err


def on_a_terminal(*args: str, env: dict | None = None, delay: float | None = None) -> bytes:
    """What ``pate-analyze ARGS`` writes to stderr when stderr is a terminal (a pty);
    ``delay``: the seconds of work before a bar appears (``progress.DELAY``, set in the
    child) [default: the command's]."""
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    code = "from pate_cli.cli.analyze import main; main()"
    if delay is not None:
        code = f"from pate_cli.cli import progress; progress.DELAY = {delay!r}; {code}"
    process = subprocess.Popen([sys.executable, "-c", code, *args], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=slave,
                               env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100",
                                    **(env or {})})
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert process.wait(timeout=60) == 0
    return seen


def test_on_a_terminal_the_bar_waits_for_long_runs_unless_forced():
    """The bar waits ``DELAY`` seconds of work, then appears; ``--progress`` shows it at once.

    No wall-clock bound that load can break: the short run (under 0.1 s of work on quiet
    cores, the default ``DELAY`` being 2 s) waits for a ``DELAY`` of 60 s here, hundreds of
    times its quiet time; the run that shows the bar unforced has ``DELAY`` 0."""
    env = {"CI": ""}
    assert b"queries" not in on_a_terminal(str(VOTES), "-n", "500", env=env, delay=60)
    waited = on_a_terminal(str(VOTES), "-n", "500", env=env, delay=0)
    assert b"pate-analyze" in waited and b"500/500" in waited and b"queries/s" in waited
    forced = on_a_terminal(str(VOTES), "-f", "json", "--progress", env=env, delay=60)
    assert b"pate-analyze" in forced and b"9000/9000" in forced and b"queries/s" in forced


def test_no_progress_by_default_under_ci(monkeypatch):
    from pate_cli.cli.progress import wanted
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setenv("CI", "true")
    assert not wanted(None)
    monkeypatch.delenv("CI")
    assert wanted(None)
    assert wanted(True) and not wanted(False)


# --- chunks by elements ------------------------------------------------------------------

def test_default_chunk_is_bounded_in_elements():
    assert chunk_rows(None, 10) == CHUNK_ROWS == 8192
    assert chunk_rows(None, 1000) == READ_VALUES // 1000 == 1048
    assert chunk_rows(None, 10**7) == 1
    assert chunk_rows(None, 1000) * 1000 <= READ_VALUES
    assert chunk_rows(77, 1000) == 77  # an explicit size is kept


def test_wide_votes_give_the_same_numbers_whatever_the_chunk():
    rng = np.random.default_rng(7)
    classes, teachers = 1500, 250
    votes = np.zeros((1500, classes))
    top = rng.integers(0, classes, size=1500)
    votes[np.arange(1500), top] = rng.integers(100, 250, size=1500)
    votes[np.arange(1500), (top + 1) % classes] = teachers - votes[np.arange(1500), top]
    assert chunk_rows(None, classes) < 1500  # the default splits this file
    by_default = pate_cli.analyze(votes, "confident", accounting="expected")
    for size in (1, 333, 5000):
        other = pate_cli.analyze(votes, "confident", accounting="expected", chunk_size=size)
        assert other.to_dict() == by_default.to_dict()
        assert other.to_frame().equals(by_default.to_frame())


# --- issue 17 leftovers --------------------------------------------------------------------

def test_stdout_comes_before_the_error_line_on_one_pipe():
    """``pate-analyze ... --max-epsilon`` prints its summary, then ``Error:`` (exit 3):
    stdout is flushed before the error line, so ``2>&1`` keeps that order."""
    code = "from pate_cli.cli.analyze import main; main()"
    done = subprocess.run([sys.executable, "-c", code, str(VOTES), "-n", "50",
                           "--max-epsilon", "0.01"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, cwd=ROOT, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 3
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("input") and lines[-1].startswith("Error: epsilon")


def test_index_col_in_sweep_and_plot(cli, tmp_path):
    import pandas as pd
    votes = np.load(VOTES)[:200].astype(int)
    with_index = tmp_path / "votes.csv"
    pd.DataFrame(votes).to_csv(with_index)  # pandas' index as column 0
    plain = tmp_path / "plain.npy"
    np.save(plain, votes)
    refused = cli.sweep(with_index, "--sigma", "40", "-w", "1", "-q")
    assert refused.code == 2 and "--index-col 0" in refused.err
    rows = cli.sweep(with_index, "--index-col", "0", "--sigma", "40", "-w", "1", "-q")
    reference = cli.sweep(plain, "--sigma", "40", "-w", "1", "-q")
    assert rows.code == 0 and reference.code == 0
    numbers = [line.split(",")[2:14] for line in (rows.out, reference.out)]
    assert numbers[0] == numbers[1]
    best = cli.sweep(with_index, "--index-col", "0", "--sigma", "40", "-w", "1", "-q",
                     "--best", "50")
    assert best.code == 0 and "--index-col 0" in best.err
    figure = tmp_path / "selection.svg"
    assert cli.plot("selection", with_index, "--index-col", "0", "--params", "200,150",
                    "-o", figure).code == 0
    assert figure.stat().st_size > 0
    assert cli.plot("selection", with_index, "--params", "200,150", "-o", figure).code == 2


def test_analyze_help_is_short_and_keeps_an_example_per_section(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    result = cli.analyze("-h")
    lines = result.out.splitlines()
    # 75 lines, and one each for --sampling, --vote-change, --sampling-steps,
    # --predictions-layout, --columns and --outputs
    assert result.code == 0 and len(lines) <= 81 and max(map(len, lines)) <= 100
    for title in ("Input", "Mechanism", "Accounting", "Budget & CI", "Outputs",
                  "Individualized PATE", "Smooth sensitivity"):  # each with an example
        (line,) = [line for line in lines if line.startswith(f"  {title}:")]
        assert "pate-analyze " in line
    for choices_listed in ("lnmax, gnmax, confident", "upsampling, weighting or vanishing",
                           "table (default), json, csv, markdown", "classic (Mironov"):
        assert choices_listed in result.out
