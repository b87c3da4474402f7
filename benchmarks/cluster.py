"""One analysis on a Dask cluster (issue 14 item 5): the totals of Confident-GNMax over a
10^6 x 10 vote file (``make bench``; 10^7 x 10 with ``--large`` / ``make bench-large``)
(and of a budget run whose budget never binds, its blocks summed apart) counted in this
process on one thread, on this process's threads (``--workers``), and by a
2-worker loopback ``LocalCluster`` (``--scheduler``; one thread per worker process, the
workers reading the ``.npy`` by path). Prints wall times, the speed-up over one thread
and whether the JSON summaries are the same bytes. The cluster's start-up is measured apart
(a long-lived cluster pays it once). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from totals_memory import print_markdown, synthesize  # noqa: E402

OPTIONS = dict(threshold=200.0, sigma_threshold=150.0, sigma=40.0)
TARGET_SPEEDUP = 1.6


def timed(function, repeats: int = 2):
    """The best wall time of ``repeats`` calls, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true",
                        default=bool(os.environ.get("PATE_BENCH_LARGE")))
    parser.add_argument("--data-dir", help="keep the generated file here")
    parser.add_argument("--trim", action="store_true",
                        help="keep Dask's default MALLOC_TRIM_THRESHOLD_ for the workers")
    args = parser.parse_args(argv)
    import dask
    from distributed import Client, LocalCluster

    import pate_cli

    # Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536, which also turns off
    # glibc's adaptive mmap threshold: every numpy temporary over 128 kB is then mapped and
    # unmapped anew (about 20% more CPU per chunk here). docs/explanation/numerics.md says so for
    # clusters.
    if not args.trim:
        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})

    warnings.simplefilter("ignore")
    queries = 10**7 if args.large else 10**6
    with tempfile.TemporaryDirectory(prefix="pate_cluster_") as scratch:
        folder = args.data_dir or scratch
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"votes_{queries}x10.npy")
        if not os.path.exists(path):
            synthesize(path, queries, 10)
        rows = []
        # budget runs (a budget that never binds): their blocks are summed there
        for accounting, budget in (("expected", None), ("replay", None), ("expected", 1e9)):
            def run(**where):
                return pate_cli.analyze(path, "confident", accounting=accounting,  # noqa: B023
                                        per_query=False, budget=budget,  # noqa: B023
                                        **OPTIONS, **where)
            one, base = timed(lambda: run(workers=1))
            threads, local = timed(lambda: run(workers=2))
            start = time.perf_counter()
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                startup = time.perf_counter() - start
                dask, remote = timed(lambda: run(executor=client))  # noqa: B023
            same = json.dumps(base.to_dict()) == json.dumps(local.to_dict()) \
                == json.dumps(remote.to_dict())
            speedup = one / dask
            rows.append((f"{queries:.0e} x 10",
                         accounting + ("" if budget is None else f", --budget {budget:g}"),
                         f"{one:.2f}",
                         f"{threads:.2f} ({one / threads:.2f}x)",
                         f"{dask:.2f} ({speedup:.2f}x)", f"{startup:.1f}",
                         "same" if same else "DIFFERENT",
                         "-" if budget is not None else f">= {TARGET_SPEEDUP}x: "
                         f"{'met' if speedup >= TARGET_SPEEDUP else 'NOT met'}"))
            print(" | ".join(rows[-1]), flush=True)
    print_markdown(("queries", "accounting", "1 thread s", "2 threads s",
                    "2-worker LocalCluster s", "cluster start s", "summary", "target"), rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
