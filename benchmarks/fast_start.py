"""Fast start (issue 14 item 4): how long a fresh process takes to start and answer.

Each figure is the wall time of a fresh ``python`` process, from spawn to exit, running:
``import pate_cli``; ``pate-analyze --help``, ``pate-sweep --help``, ``pate-plot --help``
and ``pate-analyze --version`` (through their ``main()``, as the console scripts do); a
10-query analysis of the shipped MNIST sample votes (table on stdout), end to end. A bare
``python -c pass`` is measured alongside, so that a slow machine shows in it. Repeated
``REPEATS`` times (interleaved); the best and the median are printed, the best being the
figure compared with the target (the others add the machine's other jobs).

Run alone as ``.venv/bin/python benchmarks/fast_start.py``; ``make bench`` prints it after
the accounting table (``run_benchmarks.py --cases fast-start`` prints only this).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VOTES = ROOT / "sample_votes" / "mnist_250_votes.npy"
REPEATS = 7

CASES = {  # name -> (python code, arguments, target seconds or None)
    "python -c pass (reference)": ("pass", [], None),
    "import pate_cli": ("import pate_cli", [], 0.3),
    "pate-analyze --help": ("from pate_cli.cli.analyze import main; main()", ["--help"], 0.3),
    "pate-sweep --help": ("from pate_cli.cli.sweep import main; main()", ["--help"], 0.3),
    "pate-plot --help": ("from pate_cli.cli.plot import main; main()", ["--help"], 0.3),
    "pate-analyze --version": ("from pate_cli.cli.analyze import main; main()",
                               ["--version"], 0.3),
    "pate-analyze, 10 queries": ("from pate_cli.cli.analyze import main; main()",
                                 [str(VOTES), "-n", "10"], 0.6),
}


def _once(code: str, args: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    begin = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - begin
    if done.returncode != 0:
        raise RuntimeError(f"{code} {args}: exit {done.returncode}: {done.stderr[-300:]!r}")
    return took


def measure(repeats: int = REPEATS) -> dict[str, list[float]]:
    """``{case: [seconds of each run]}``, the cases interleaved run by run."""
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(repeats):
        for name, (code, args, _target) in CASES.items():
            times[name].append(_once(code, args))
    return times


def report(times: dict[str, list[float]]) -> str:
    """The table: best and median seconds, the target and whether the best meets it."""
    rows = [["fast start (fresh process)", "best s", "median s", "target", "verdict"]]
    for name, runs in times.items():
        target = CASES[name][2]
        best = min(runs)
        verdict = "-" if target is None else ("met" if best <= target else "NOT met")
        rows.append([name, f"{best:.3f}", f"{statistics.median(runs):.3f}",
                     "-" if target is None else f"<= {target:g} s", verdict])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
             for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    load = os.getloadavg()
    lines.append(f"{len(next(iter(times.values())))} runs each; load average {load[0]:.2f} "
                 "(1 min) at the end.")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(measure()))
