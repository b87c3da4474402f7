"""Token votes (issue 28 item 6): wall time and peak memory of pate-analyze on sparse votes
over a language model's vocabulary.

Tokens x vocabulary 128,256 (Llama 3's), 16 stored classes per token, 512 teachers:
10^6 tokens (``make bench``); 10^7 with ``--large`` or ``PATE_BENCH_LARGE=1``. Each token's
16 classes are spread over the vocabulary and its counts are Dirichlet shares of the 512
votes with a dominant first share (Dirichlet(8, 0.3, ..., 0.3)); generated on demand, a
chunk at a time, as an uncompressed ``scipy.sparse.save_npz``-layout CSR archive under a
temporary directory (``--data-dir`` keeps it), never committed. Confident-GNMax, T=300,
sigma1=200, sigma2=40, delta 1e-5, 298 orders, under expected accounting and replay, and
the replay with its per-query table; and the one-pass rows: ``pate-analyze`` on the same
votes with outputs of 100 tokens, plain and with ``--budget 1e9 --halt-at output
--per-query q.parquet --write-decisions d.npz`` (their ratio, target at most 1.5x). Each
case runs in a fresh child process (this script
with ``--child``) reporting its wall time (``analyze`` and the table written, after
imports) and peak resident memory (``VmHWM``, see peak_memory.py). Targets (issue 28):
10^6 tokens within 30 s and under 1 GB; 10^7 within 300 s and under 1 GB. A measurement,
not a test.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peak_memory import peak_mb  # noqa: E402

VOCABULARY, STORED, TEACHERS = 128_256, 16, 512
ROWS_AT_ONCE = 1 << 18
TARGETS = {10**6: (30.0, 1024.0), 10**7: (300.0, 1024.0)}
ARGS = ["-T", "300", "--sigma-threshold", "200", "--sigma", "40"]
OUTPUT_TOKENS = 100
# The one-pass row (issue 44): the same run plain and with a budget that halts at whole
# outputs, a streamed per-query table and written decisions; target at most 1.5x.
FULL = ["--budget", "1e9", "--halt-at", "output", "--per-query", "{scratch}/q.parquet",
        "--write-decisions", "{scratch}/d.npz"]
ONE_PASS_RATIO = 1.5


def _member(archive: zipfile.ZipFile, name: str, dtype, shape, fill) -> None:
    """Write one uncompressed ``.npy`` member whose rows ``fill(lo, hi)`` gives."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                 "fortran_order": False, "shape": shape})
    with archive.open(name, "w", force_zip64=True) as out:
        out.write(header.getvalue())
        for part in fill():
            out.write(np.ascontiguousarray(part, dtype=dtype).tobytes())


def write_tokens(path: str, tokens: int, seed: int = 0) -> None:
    """The benchmark's token votes (module docstring), a chunk of rows at a time."""
    def rows(kind):
        rng = np.random.default_rng(seed)  # the same draws for classes and counts
        for lo in range(0, tokens, ROWS_AT_ONCE):
            count = min(ROWS_AT_ONCE, tokens - lo)
            classes = (np.sort(rng.integers(0, VOCABULARY - STORED, size=(count, STORED)),
                               axis=1) + np.arange(STORED))
            share = rng.dirichlet(np.r_[8.0, np.full(STORED - 1, 0.3)], size=count)
            counts = np.floor(share * (TEACHERS - STORED)).astype(np.int32) + 1
            counts[:, 0] += TEACHERS - counts.sum(axis=1)
            yield (classes if kind == "indices" else counts).reshape(-1)

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        _member(archive, "indices.npy", np.int32, (tokens * STORED,), lambda: rows("indices"))
        _member(archive, "indptr.npy", np.int64, (tokens + 1,),
                lambda: [np.arange(tokens + 1, dtype=np.int64) * STORED])
        _member(archive, "format.npy", "S3", (), lambda: [np.array(b"csr")])
        _member(archive, "shape.npy", np.int64, (2,),
                lambda: [np.array([tokens, VOCABULARY])])
        _member(archive, "data.npy", np.int32, (tokens * STORED,), lambda: rows("data"))
        # outputs of OUTPUT_TOKENS tokens each (the generated sequences)
        _member(archive, "output.npy", np.int64, (tokens,),
                lambda: [np.arange(tokens, dtype=np.int64) // OUTPUT_TOKENS])


def child(path: str, accounting: str, table: str | None) -> None:
    from pate_cli import analyze
    from pate_cli.outputs.files import per_query_stream_chunks
    began = time.perf_counter()
    result = analyze(path, "confident", threshold=300, sigma_threshold=200, sigma=40,
                     accounting=accounting, per_query="stream" if table else False)
    if table:
        with open(table, "wb") as out:
            for piece in per_query_stream_chunks(result.iter_frames(), table):
                out.write(piece)
    print(json.dumps({"seconds": time.perf_counter() - began, "peak_mb": peak_mb(),
                      "epsilon": result.epsilon}))


def command_child(path: str, scratch: str, full: bool) -> None:
    """pate-analyze as a user runs it (imports done first), timed, with its peak memory."""
    from pate_cli.cli.analyze import main as analyze_main
    args = [path, *ARGS, "-f", "json", "-o", os.path.join(scratch, "s.json")]
    if full:
        args += [word.format(scratch=scratch) for word in FULL]
    began = time.perf_counter()
    try:
        analyze_main(args)
    except SystemExit as done:
        if done.code:
            raise
    print(json.dumps({"seconds": time.perf_counter() - began, "peak_mb": peak_mb()}))


def one_pass_rows(path: str, scratch: str, tokens: int) -> None:
    """The plain run and the run with a halt at outputs, a table and decisions, each in a
    fresh child, and their ratio."""
    figures = {}
    for full in (False, True):
        report = subprocess.run(
            [sys.executable, __file__, "--command-child", path, scratch, str(int(full))],
            check=True, capture_output=True, text=True)
        figures[full] = json.loads(report.stdout.strip().splitlines()[-1])
    for full in (False, True):
        name = "outputs + halt/table/dec" if full else "outputs, plain"
        print(f"{tokens:>10,} {name:<22} {figures[full]['seconds']:>8.1f} "
              f"{figures[full]['peak_mb']:>8.0f}")
    ratio = figures[True]["seconds"] / figures[False]["seconds"]
    print(f"{tokens:>10,} {'ratio':<22} {ratio:>8.2f} {'':>8} "
          f"{'met' if ratio <= ONE_PASS_RATIO else 'NOT met':>14} (<= {ONE_PASS_RATIO}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="add 10^7 tokens")
    parser.add_argument("--data-dir", help="keep the generated archives here")
    parser.add_argument("--child", nargs=3, metavar=("PATH", "ACCOUNTING", "TABLE"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--command-child", nargs=3, metavar=("PATH", "SCRATCH", "FULL"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--one-pass", action="store_true",
                        help="only the one-pass rows (plain against halt/table/decisions)")
    options = parser.parse_args()
    if options.command_child:
        path, scratch, full = options.command_child
        command_child(path, scratch, full == "1")
        return
    if options.child:
        path, accounting, table = options.child
        child(path, accounting, None if table == "-" else table)
        return
    sizes = [10**6] + ([10**7] if options.large or os.environ.get("PATE_BENCH_LARGE") else [])
    with tempfile.TemporaryDirectory() as scratch:
        folder = options.data_dir or scratch
        os.makedirs(folder, exist_ok=True)
        print(f"{'tokens':>10} {'run':<22} {'seconds':>8} {'peak MB':>8} {'target':>14}")
        for tokens in sizes:
            path = os.path.join(folder, f"tokens_{tokens}.npz")
            if not os.path.exists(path):
                write_tokens(path, tokens)
            one_pass_rows(path, scratch, tokens)
            if options.one_pass:
                continue
            for accounting, table in (("expected", "-"), ("replay", "-"),
                                      ("replay", os.path.join(scratch, "q.csv"))):
                report = subprocess.run(
                    [sys.executable, __file__, "--child", path, accounting, table],
                    check=True, capture_output=True, text=True)
                figures = json.loads(report.stdout.strip().splitlines()[-1])
                seconds, memory = TARGETS[tokens]
                name = accounting + (" + --per-query" if table != "-" else "")
                met = figures["seconds"] <= seconds and figures["peak_mb"] <= memory
                print(f"{tokens:>10,} {name:<22} {figures['seconds']:>8.1f} "
                      f"{figures['peak_mb']:>8.0f} {'met' if met else 'NOT met':>14}")


if __name__ == "__main__":
    main()
