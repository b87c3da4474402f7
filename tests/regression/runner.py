"""Run one regression case in-process and collect what it printed and wrote."""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from pathlib import Path

from .cases import CASES

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
# Figures are pinned for the matplotlib version that drew them (named in this file).
MATPLOTLIB = "matplotlib-version"


def _entry(command: str):
    if command == "pate-analyze":
        from pate_cli.cli.analyze import main
    elif command == "pate-sweep":
        from pate_cli.cli.sweep import main
    elif command == "pate-calibrate":
        from pate_cli.cli.calibrate import main
    else:
        from pate_cli.cli.plot import main
    return main


def run_case(name: str, workdir: Path) -> dict[str, bytes]:
    """Outputs of case ``name`` (``exit``, ``stdout``, ``stderr`` and each written file)."""
    command, args, files = CASES[name]
    paths = {key: workdir / filename for key, filename in files.items()}
    argv = [a.format(**{k: str(p) for k, p in paths.items()}) if "{" in a else a
            for a in args]
    out, err = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    os.chdir(ROOT)
    try:
        # Raw Python warning lines depend on the interpreter's once-per-place registry;
        # only the commands' own one-line output is pinned.
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _entry(command)(argv)
        code = 0
    except SystemExit as done:
        code = done.code
    finally:
        os.chdir(previous)
    outputs = {"exit": f"{code}\n".encode(), "stdout": out.getvalue().encode(),
               "stderr": err.getvalue().replace(str(workdir), "{workdir}").encode()}
    for key, path in paths.items():
        outputs[files[key]] = path.read_bytes() if path.exists() else b"<missing>"
    return outputs
