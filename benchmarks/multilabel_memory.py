"""Multi-label votes (issue "One pass, one row form", item 3): wall time and peak memory of
``pate-analyze --multilabel`` at 10^5 and 10^6 queries of 10 labels, without per-query
outputs and with ``--per-query FILE.csv``; the peak should not grow with the queries.

Three cases, each on votes generated on demand as a memory-mapped ``.npy`` under a
temporary directory (``--data-dir`` keeps them), never committed:

- ``binary``: per-label counts ``(queries, 10, 2)`` (int16) of 250 teachers, each label's
  agreement Beta(6, 1.5); Confident-GNMax, T=200, sigma1=150, sigma2=40 (the tutorial's);
- ``tau:1`` and ``powerset``: each of 20 teachers' 0/1 labels ``(queries, 20, 10)``
  (int8), a query's true labels flipped per teacher with a probability drawn from
  Beta(1.5, 8); GNMax, sigma=5.

``python benchmarks/multilabel_memory.py`` runs the 10^5 rows and the 10^6 rows
(``--small`` or ``PATE_BENCH_SMALL=1``: 10^5 only). Each case runs in a fresh child process
(this script with ``--child``) reporting its wall time (``analyze``, and the CSV written
with the table, after imports and a warm-up on 64 queries) and its peak resident memory
(``VmHWM``, see peak_memory.py), with the sha256 of its JSON summary and of its table (so
that two revisions can be compared byte for byte). Replay accounting, delta 1e-5, 298
default orders. A measurement, not a test.
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
from totals_memory import print_markdown  # noqa: E402

LABELS, COUNT_TEACHERS, PREDICTION_TEACHERS = 10, 250, 20
GENERATION_ELEMENTS = 10_000_000  # values generated at a time
CASES = {"binary": dict(mechanism="confident", threshold=200.0, sigma_threshold=150.0,
                        sigma=40.0),
         "tau:1": dict(mechanism="gnmax", sigma=5.0),
         "powerset": dict(mechanism="gnmax", sigma=5.0)}


def synthesize(path: str, queries: int, kind: str, seed: int = 3) -> None:
    """``counts`` (queries, labels, 2) or ``predictions`` (queries, teachers, labels),
    written chunk by chunk into a memory-mapped ``.npy`` (module docstring)."""
    from numpy.lib.format import open_memmap

    rng = np.random.default_rng(seed)
    counts = kind == "counts"
    shape = ((queries, LABELS, 2) if counts
             else (queries, PREDICTION_TEACHERS, LABELS))
    out = open_memmap(path + ".part", mode="w+", dtype=np.int16 if counts else np.int8,
                      shape=shape)
    rows = max(1, GENERATION_ELEMENTS // (shape[1] * shape[2]))
    for start in range(0, queries, rows):
        count = min(queries, start + rows) - start
        truth = rng.integers(0, 2, size=(count, 1, LABELS))
        if counts:
            agree = np.round(COUNT_TEACHERS * rng.beta(6.0, 1.5, size=(count, LABELS)))
            positive = np.where(truth[:, 0], agree, COUNT_TEACHERS - agree)
            out[start:start + count] = np.stack([COUNT_TEACHERS - positive, positive], -1)
        else:
            flip = rng.random((count, PREDICTION_TEACHERS, LABELS)) < rng.beta(
                1.5, 8.0, size=(count, 1, 1))
            out[start:start + count] = truth ^ flip
    out.flush()
    del out
    os.replace(path + ".part", path)


def child(path: str, variant: str, table: bool) -> None:
    """One case in this process: ``pate_cli.analyze`` as pate-analyze runs it, with the
    per-query table streamed to a CSV file when ``table``."""
    import resource
    import warnings

    import pate_cli
    from pate_cli.outputs.files import per_query_stream_chunks
    from pate_cli.outputs.writing import write_outputs

    warnings.simplefilter("ignore")
    options = dict(CASES[variant])
    mechanism = options.pop("mechanism")
    votes = np.load(path, mmap_mode="r")
    given = {"votes": path} if variant == "binary" else {"predictions": path}
    warm = ({"votes": np.asarray(votes[:64])} if variant == "binary"
            else {"predictions": np.asarray(votes[:64])})
    pate_cli.analyze(warm.pop("votes", None), mechanism, multilabel=variant, **warm,
                     **options)
    used = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pate_multilabel_") as scratch:
        result = pate_cli.analyze(given.pop("votes", None), mechanism, multilabel=variant,
                                  per_query="stream" if table else False, **given, **options)
        digest = "-"
        if table:
            out = os.path.join(scratch, "q.csv")
            write_outputs({out: per_query_stream_chunks(result.iter_frames(), out)})
            seconds = time.perf_counter() - start
            with open(out, "rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()[:12]
        else:
            seconds = time.perf_counter() - start
    now = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (now.ru_utime - used.ru_utime) + (now.ru_stime - used.ru_stime)
    summary = result.to_dict()
    summary.pop("version", None)
    summary.get("input", {}).pop("path", None)  # the generated file's temporary directory
    print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_mb": peak_mb(),
                      "epsilon": result.epsilon, "table_sha256": digest,
                      "summary_sha256": hashlib.sha256(json.dumps(
                          summary, sort_keys=True).encode()).hexdigest()[:12]}))


def spawn(path: str, variant: str, table: bool) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--child", path, variant,
               str(int(table))]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=3, metavar=("PATH", "VARIANT", "TABLE"))
    parser.add_argument("--small", action="store_true",
                        default=bool(os.environ.get("PATE_BENCH_SMALL")),
                        help="the 10^5 rows only")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--data-dir", help="keep the generated files here")
    args = parser.parse_args(argv)
    if args.child:
        path, variant, table = args.child
        child(path, variant, table == "1")
        return 0
    sizes = (10**5,) if args.small else (10**5, 10**6)
    rows = []
    with tempfile.TemporaryDirectory(prefix="pate_multilabel_") as scratch:
        folder = args.data_dir or scratch
        os.makedirs(folder, exist_ok=True)
        for variant in args.cases:
            kind = "counts" if variant == "binary" else "predictions"
            for queries in sizes:
                path = os.path.join(folder, f"{kind}_{queries}x{LABELS}.npy")
                if not os.path.exists(path):
                    synthesize(path, queries, kind)
                for table in (False, True):
                    record = spawn(path, variant, table)
                    rows.append((variant, f"{queries:.0e}", "per-query CSV" if table
                                 else "totals", f"{record['seconds']:.2f}",
                                 f"{record['peak_mb']:.0f}", record["summary_sha256"],
                                 record["table_sha256"]))
                    print(" | ".join(rows[-1]), flush=True)
    print_markdown(("variant", "queries", "mode", "seconds", "peak MB", "summary sha256",
                    "table sha256"), rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
