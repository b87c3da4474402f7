"""Benchmark the smooth-sensitivity sanitisation (MATH.md section 10).

Run as ``.venv/bin/python benchmarks/bench_smooth_sensitivity.py``. It prints, and never
asserts, wall time and peak memory of:

* ``table2``: the 2018 paper's Table 2 rows (first 640 MNIST, 1500 Adult, 8500 SVHN
  queries of ``/work/shared/paper_votes/*_250_teachers.npy``, Confident-GNMax, expected
  accounting). The order is the one the classic conversion picks for the data-dependent
  epsilon over the default 298-order grid (``analyze_votes``); the timing covers that
  analysis and the sanitisation.
* ``glyph``: a synthetic Glyph-shaped file (12,000 queries x 150 classes, 5,000 teachers,
  T=1000, sigma1=500, sigma2=100, delta=1e-8), votes drawn as in ``run_benchmarks.py``
  (Beta teacher agreement, sparse Dirichlet confusion, multinomial votes).

Each case runs in a fresh child process (``--case NAME``) so that its peak resident set
size (``ru_maxrss``) is its own; it includes the interpreter and the libraries.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

PAPER_VOTES = "/work/shared/paper_votes"
# dataset -> (queries, threshold, sigma_threshold, sigma, delta)
TABLE2 = {
    "MNIST": (640, 200.0, 150.0, 40.0, 1e-5),
    "SVHN": (8500, 300.0, 200.0, 40.0, 1e-6),
    "Adult": (1500, 300.0, 200.0, 40.0, 1e-5),
}
GLYPH = dict(queries=12_000, classes=150, teachers=5000, threshold=1000.0,
             sigma_threshold=500.0, sigma=100.0, delta=1e-8, seed=20240611)
TARGETS = {"table2": (2.0, None), "glyph": (10.0, 1024.0)}  # seconds, MB


def _row(name, votes, threshold, sigma_threshold, sigma, delta):
    """One Table-2-shaped row: expected accounting, order from the classic conversion."""
    from pate_cli.accounting.smooth_sensitivity import sanitize_confident
    from pate_cli.analysis import analyze_votes
    from pate_cli.mechanisms import ConfidentGNMax

    mechanism = ConfidentGNMax(threshold=threshold, sigma_threshold=sigma_threshold,
                               sigma=sigma)
    teachers = int(votes[0].sum())
    analysis = analyze_votes(votes, mechanism, accounting="expected", delta=delta)
    result = sanitize_confident(votes, teachers=teachers, threshold=threshold,
                                sigma_threshold=sigma_threshold, sigma=sigma,
                                order=analysis.order, delta=delta,
                                weights=analysis.answered, seed=0)
    return {"dataset": name, "queries": int(votes.shape[0]),
            "answered": analysis.answered_total,
            "eps_independent": analysis.epsilon_data_independent,
            "eps_dependent": analysis.epsilon, "order": result.order, "beta": result.beta,
            "sigma_ss": result.sigma_ss, "smooth_sensitivity": result.smooth_sensitivity,
            "eps_before": result.epsilon_before, "eps_after": result.epsilon_after,
            "noise_std": result.noise_std, "c5": result.c5, "c6": result.c6,
            "refusal": result.refusal}


def _glyph_votes() -> np.ndarray:
    g = GLYPH
    rng = np.random.default_rng(g["seed"])
    n, k = g["queries"], g["classes"]
    truth = rng.integers(k, size=n)
    agreement = rng.beta(2.0, 3.0, size=n)
    confusion = rng.dirichlet(np.full(k, 0.2), size=n)
    probabilities = confusion * (1.0 - agreement)[:, None]
    probabilities[np.arange(n), truth] += agreement
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    return rng.multinomial(g["teachers"], probabilities).astype(np.float64)


def run_case(case: str) -> dict:
    """Run one case in this process and return its measurements."""
    import pate_cli.accounting.smooth_sensitivity  # noqa: F401  (imports outside the timing)
    import pate_cli.analysis  # noqa: F401

    if case == "table2":
        loaded = {}
        for name, (queries, *_rest) in TABLE2.items():
            path = os.path.join(PAPER_VOTES, f"{name.lower()}_250_teachers.npy")
            loaded[name] = np.load(path, mmap_mode="r")[:queries]
        start = time.perf_counter()
        rows = [_row(name, loaded[name], *TABLE2[name][1:]) for name in TABLE2]
        wall = time.perf_counter() - start
    elif case == "glyph":
        votes = _glyph_votes()
        start = time.perf_counter()
        g = GLYPH
        rows = [_row("Glyph (synthetic)", votes, g["threshold"], g["sigma_threshold"],
                     g["sigma"], g["delta"])]
        wall = time.perf_counter() - start
    else:
        raise SystemExit(f"unknown case {case!r}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {"case": case, "wall": wall, "peak_mb": peak, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", help="run one case in this process (internal)")
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case)))
        return
    cases = ["glyph"]
    if os.path.isdir(PAPER_VOTES):
        cases.insert(0, "table2")
    else:
        print(f"{PAPER_VOTES} is absent: skipping the Table 2 rows")
    results = []
    for case in cases:
        out = subprocess.run([sys.executable, __file__, "--case", case], check=True,
                             capture_output=True, text=True)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))

    header = (f"{'dataset':<18} {'queries':>7} {'E[answ]':>8} {'eps DI':>8} {'eps DD':>7} "
              f"{'order':>6} {'beta':>7} {'sigma_ss':>8} {'SS':>8}  sanitised eps")
    print(header)
    print("-" * len(header))
    for result in results:
        for r in result["rows"]:
            note = "" if r["refusal"] is None else f"  [{r['refusal']}]"
            print(f"{r['dataset']:<18} {r['queries']:>7} {r['answered']:>8.1f} "
                  f"{r['eps_independent']:>8.2f} {r['eps_dependent']:>7.3f} "
                  f"{r['order']:>6.2f} {r['beta']:>7.4f} {r['sigma_ss']:>8.3f} "
                  f"{r['smooth_sensitivity']:>8.5f}  {r['eps_after']:.3f} +/- "
                  f"{r['noise_std']:.3f}{note}")
    print()
    for result in results:
        limit_s, limit_mb = TARGETS[result["case"]]
        time_ok = "met" if result["wall"] < limit_s else "NOT met"
        line = (f"{result['case']:<7} wall {result['wall']:6.2f} s (target < {limit_s:g} s: "
                f"{time_ok}), peak RSS {result['peak_mb']:7.1f} MB")
        if limit_mb is not None:
            mem_ok = "met" if result["peak_mb"] < limit_mb else "NOT met"
            line += f" (target < {limit_mb:g} MB: {mem_ok})"
        print(line)
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
