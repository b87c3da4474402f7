"""Totals without tables (issue 14 item 1): wall time and peak memory of pate-analyze's
totals-only mode, of --per-query FILE.csv (the table streamed by a second pass) and of a
budget run (``budget``: --budget 10^9, which never binds, so every block is summed; and
``budget/2``: a budget half the run's epsilon, which halts about half way), on 10^6, 10^7
and 10^8 x 10 and 10^5 x 1,000 vote files; and (issue 27) two families whose votes do not
repeat, so that no figure rests on repetition: ``soft`` (averaged teacher probabilities x
250 as float32, every row distinct: 10^6 x 10; 3x10^7 x 10 with ``--large``; 10^8 x 10 with
``--huge``) and ``wide`` (5 rows over 5x10^6 classes, 200 classes voted per row: the
vocabulary-sized histograms of language-model votes).

``python benchmarks/totals_memory.py`` (``make bench`` runs the 10^6 x 10 and 10^5 x 1,000
rows; ``make bench-large`` or ``PATE_BENCH_LARGE=1`` adds 10^7; ``make bench-huge`` or
``PATE_BENCH_HUGE=1`` adds 10^8, totals only: its CSV table would be ~16 GB). The vote files
are generated on demand as memory-mapped ``.npy`` under a temporary directory
(``--data-dir`` to keep them) and never committed. Each case runs in a fresh child process
(this script with ``--child``), which reports its wall time (``load_votes`` + ``analyze``,
and the CSV written for ``per-query``, after imports and a warm-up on 64 rows) and its peak
resident memory (``VmHWM``, interpreter and libraries included; see peak_memory.py).
Confident-GNMax, T=200, sigma1=150, sigma2=40, 250 teachers, delta 1e-5, 298 default
orders. A measurement, not a test: nothing is asserted except that both modes print the
same JSON summary.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peak_memory import peak_mb  # noqa: E402

TEACHERS = 250
GENERATION_ELEMENTS = 10_000_000  # vote values generated at a time
# Issue 14's targets (seconds, peak MB; None: no limit), by (queries, classes, accounting,
# mode). The per-query row's seconds limit is 3x the totals run's (filled in at run time).
TARGETS = {(10**7, 10, "expected", "totals"): (8.0, 500.0),
           # issue 27: memory bounded by the chunk for any votes (soft: every row distinct)
           ("soft", 3 * 10**7, 10, "expected", "totals"): (None, 450.0),
           ("soft", 10**8, 10, "expected", "totals"): (150.0, 1024.0),
           ("soft", 10**7, 10, "expected", "per-query"): (None, 1024.0),
           ("wide", 5, 5 * 10**6, "expected", "per-query"): (None, 1024.0),
           (10**8, 10, "expected", "totals"): (80.0, 1024.0),
           (10**8, 10, "replay", "totals"): (80.0, 1024.0),
           (10**7, 10, "expected", "per-query"): ("3x", 1024.0),
           (10**5, 1000, "expected", "totals"): (None, 1024.0)}
# Sizes whose per-query CSV is not written (about 160 bytes of text per query).
TOTALS_ONLY_FROM = 10**8


def synthesize(path: str, queries: int, classes: int = 10, seed: int = 14,
               family: str = "repeat") -> None:
    """Votes with a plurality class of Beta(6, 1.5) agreement, written chunk by chunk
    into a memory-mapped ``.npy``: teachers' votes, the rest spread at random (``repeat``,
    int16), their averaged probabilities x 250, the rest by a flat Dirichlet, no two rows
    alike (``soft``, float32), or 200 voted classes of a vocabulary (``wide``)."""
    from numpy.lib.format import open_memmap

    if family == "wide":
        return synthesize_wide(path, queries, classes, seed)
    rng = np.random.default_rng(seed)
    dtype = np.float32 if family == "soft" else np.int16
    out = open_memmap(path + ".part", mode="w+", dtype=dtype, shape=(queries, classes))
    rows = max(1, GENERATION_ELEMENTS // classes)
    for start in range(0, queries, rows):
        count = min(queries, start + rows) - start
        make = _soft_rows if family == "soft" else _vote_rows
        out[start:start + count] = make(rng, count, classes)
    out.flush()
    del out
    os.replace(path + ".part", path)


def _vote_rows(rng, count: int, classes: int) -> np.ndarray:
    top = rng.integers(0, classes, size=count)
    agree = np.round(TEACHERS * rng.beta(6.0, 1.5, size=count)).astype(np.int64)
    rest = rng.multinomial(TEACHERS - agree, np.full(classes, 1.0 / classes))
    rest[np.arange(count), top] += agree
    return rest


def _soft_rows(rng, count: int, classes: int) -> np.ndarray:
    share = rng.beta(6.0, 1.5, size=count)
    spread = rng.dirichlet(np.ones(classes), size=count) * (1.0 - share)[:, None]
    spread[np.arange(count), rng.integers(0, classes, size=count)] += share
    return (TEACHERS * spread).astype(np.float32)


def synthesize_wide(path: str, queries: int, classes: int, seed: int) -> None:
    """Rows over a vocabulary of ``classes``: 200 classes voted, one of them by 50 more
    teachers (int16, zeros elsewhere)."""
    from numpy.lib.format import open_memmap

    rng = np.random.default_rng(seed)
    out = open_memmap(path + ".part", mode="w+", dtype=np.int16, shape=(queries, classes))
    for row in range(queries):
        voted = rng.choice(classes, size=200, replace=False)
        values = np.ones(200, dtype=np.int16)
        values[0] += TEACHERS - 200
        out[row, voted] = values
    out.flush()
    del out
    os.replace(path + ".part", path)


def child(path: str, accounting: str, mode: str, budget: float | None = None) -> None:
    """One case in this process: ``totals`` (pate-analyze without per-query outputs),
    ``per-query`` (pate-analyze --per-query FILE.csv: the totals, then the table streamed
    to a CSV file by a second pass) or ``budget`` (totals of a run with ``budget``)."""
    import warnings

    import pate_cli
    from pate_cli.outputs.files import per_query_stream_chunks
    from pate_cli.outputs.writing import write_outputs

    warnings.simplefilter("ignore")
    options = dict(threshold=200.0, sigma_threshold=150.0, sigma=40.0,
                   accounting=accounting)
    votes = np.load(path, mmap_mode="r")
    # soft rows sum to 250 up to float32 rounding: their teachers are given
    given = TEACHERS if os.path.basename(path).startswith("soft") else None
    pate_cli.analyze(np.asarray(votes[:64]), "confident", per_query=False,
                     teachers=TEACHERS, **options)
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pate_table_") as scratch:
        if mode in ("totals", "budget"):
            result = pate_cli.analyze(pate_cli.load_votes(path, teachers=given),
                                      "confident", per_query=False, budget=budget, **options)
        else:
            result = pate_cli.analyze(pate_cli.load_votes(path, teachers=given),
                                      "confident", per_query="stream", **options)
            table = os.path.join(scratch, "q.csv")
            write_outputs({table: per_query_stream_chunks(result.iter_frames(), table)})
        seconds = time.perf_counter() - start
    now = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (now.ru_utime - used.ru_utime) + (now.ru_stime - used.ru_stime)
    summary = json.dumps(result.to_dict(), sort_keys=True)
    peak = peak_mb()
    print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_mb": peak,
                      "epsilon": result.epsilon,
                      "halted_at": None if result.budget is None else result.budget.halted_at,
                      "summary_sha256": hashlib.sha256(summary.encode()).hexdigest()}))


def spawn(path: str, accounting: str, mode: str, budget: float | None = None) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--child", path, accounting, mode,
               repr(budget)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _verdict(key: tuple, record: dict, totals_seconds: float) -> str:
    if key not in TARGETS:
        return ""
    seconds, megabytes = TARGETS[key]
    limit = 3 * totals_seconds if seconds == "3x" else seconds
    met = (limit is None or record["seconds"] <= limit) and record["peak_mb"] < megabytes
    shown = "" if limit is None else f"<= {limit:.1f} s" + (" (3x totals)" if seconds == "3x"
                                                            else "") + ", "
    return f"{shown}< {megabytes:g} MB: {'met' if met else 'NOT met'}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=4, metavar=("PATH", "ACCOUNTING", "MODE", "BUDGET"))
    parser.add_argument("--large", action="store_true",
                        default=bool(os.environ.get("PATE_BENCH_LARGE")),
                        help="add the 10^7 x 10 rows")
    parser.add_argument("--huge", action="store_true",
                        default=bool(os.environ.get("PATE_BENCH_HUGE")),
                        help="add the 10^8 x 10 rows (totals only; a 2 GB file)")
    parser.add_argument("--data-dir", help="keep the generated files here")
    args = parser.parse_args(argv)
    if args.child:
        path, accounting, mode, budget = args.child
        child(path, accounting, mode, None if budget == "None" else float(budget))
        return 0
    cases = [("repeat", 10**6, 10), ("repeat", 10**5, 1000), ("soft", 10**6, 10),
             ("wide", 5, 5 * 10**6)] + (
        [("repeat", 10**7, 10), ("soft", 10**7, 10), ("soft", 3 * 10**7, 10)]
        if args.large or args.huge else []) + (
        [("repeat", 10**8, 10), ("soft", 10**8, 10)] if args.huge else [])
    with tempfile.TemporaryDirectory(prefix="pate_totals_") as scratch:
        folder = args.data_dir or scratch
        os.makedirs(folder, exist_ok=True)
        rows = []
        for family, queries, classes in cases:
            name = "votes" if family == "repeat" else family
            path = os.path.join(folder, f"{name}_{queries}x{classes}.npy")
            if not os.path.exists(path):
                synthesize(path, queries, classes, family=family)
            for accounting in ("expected", "replay") if family != "wide" else ("expected",):
                modes = (("totals",) if queries >= TOTALS_ONLY_FROM
                         or (family == "soft" and queries > 10**7)
                         else ("totals", "per-query"))
                measured = {mode: spawn(path, accounting, mode) for mode in modes}
                digests = {record["summary_sha256"] for record in measured.values()}
                same = "-" if len(modes) == 1 else "same" if len(digests) == 1 else "DIFFERENT"
                totals = measured["totals"]
                if classes == 10 and family == "repeat":  # budget runs: never binding,
                    measured["budget"] = spawn(path, accounting, "budget", 1e9)  # half way
                    measured["budget/2"] = spawn(path, accounting, "budget",
                                                 0.5 * totals["epsilon"])
                for mode, record in measured.items():
                    key = ((queries, classes, accounting, mode) if family == "repeat"
                           else (family, queries, classes, accounting, mode))
                    target = _verdict(key, record, totals["seconds"])
                    if mode.startswith("budget"):
                        target = (f"{record['seconds'] / totals['seconds']:.1f}x totals, "
                                  f"halted at {record['halted_at']}")
                    if family == "soft" and queries > 10**6 and mode == "totals":
                        base = next((row for row in rows if row[0] == "soft 1e+06 x 10"
                                     and row[1] == accounting and row[2] == "totals"), None)
                        if base is not None:
                            target += (f"; {record['peak_mb'] - float(base[4]):+.0f} MB "
                                       "against 10^6 (target <= +150 MB)")
                    rows.append((f"{'' if family == 'repeat' else family + ' '}"
                                 f"{queries:.0e} x {classes}", accounting, mode,
                                 f"{record['seconds']:.2f}", f"{record['peak_mb']:.0f}",
                                 "-" if mode.startswith("budget") else same, target))
                    print(" | ".join(rows[-1]), flush=True)
    print_markdown(("queries", "accounting", "mode", "seconds", "peak MB", "summary",
                    "target"), rows)
    return 0


def print_markdown(header: tuple, rows: list) -> None:
    """A blank line, then ``rows`` under ``header`` as a Markdown table."""
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    raise SystemExit(main())
