"""Benchmark pate_cli's accounting (Confident-GNMax against a per-query loop, and more).

Run as ``.venv/bin/python benchmarks/run_benchmarks.py`` (``make bench``); ``--quick`` uses
small sizes for a smoke test; ``--cases NAME ...`` runs only some cases (``--list`` names
them). The script prints one table measured in one run, each row with its target and
"met" / "NOT met". It never asserts anything about timings: it is a measurement, not a
test. Besides the Confident-GNMax rows it measures the smooth-sensitivity report
(``analyze`` + ``sanitization.sanitize_analysis``) on the 2018 paper's Table 2 votes and on
a Glyph-shaped file, an SVT-PATE replay, Interactive-GNMax and an individualized
(upsampling, five privacy groups) run.

How it works:

* The parent process writes two synthetic vote files (``.npy``) to a temporary directory,
  in chunks through ``numpy.lib.format.open_memmap`` so that generation stays light on
  memory. Votes are realistic rather than uniform: per query a true class and a teacher
  agreement drawn from a Beta distribution, the rest of the probability mass spread over
  the classes by a sparse Dirichlet (a few confusable classes), then a multinomial draw
  of the teachers' votes. The true classes are saved next to each file (``*_truth.npy``,
  used to build a synthetic student for Interactive-GNMax). The directory is removed at
  the end.
* Every case runs in a fresh child process (this script with ``--case NAME``), so that the
  peak resident memory (``VmHWM``, see peak_memory.py) the child reports belongs to that
  case alone. The child prints one JSON line, which the parent collects.
* Package cases time ``pate_cli.load_votes(path)`` (memory-mapped ``.npy``, validated and
  hashed) plus the analysis (and the sanitisation), after the imports and a tiny warm-up
  call on the first rows.
* The baseline is a per-query Python loop over the same formulas (math:gnmax and math:threshold,
  6, 7), vectorised over orders only, written here from the spec without the package's
  kernels. It runs on the first queries of each file and its time is extrapolated
  linearly to the full file; its final epsilon is checked against the package's on the
  same queries.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib.format import open_memmap
from scipy.special import log_ndtr, logsumexp

DELTA = 1e-5
FAST_START = "fast-start"  # import / --help / 10-query times (benchmarks/fast_start.py)
SEED = 20240611
GENERATION_CHUNK = 100_000
AGREEMENT_TOLERANCE = 1e-9
WARM_ROWS = 64

# ../shared/paper_votes beside the repository; PATE_SHARED=/path/to/shared points elsewhere.
_SHARED = os.environ.get("PATE_SHARED") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "shared")
PAPER_VOTES = os.path.join(_SHARED, "paper_votes")
# Table 2 of the 2018 paper: dataset -> (queries, threshold, sigma_threshold, sigma, delta)
TABLE2 = {
    "MNIST": (640, 200.0, 150.0, 40.0, 1e-5),
    "Adult": (1500, 300.0, 200.0, 40.0, 1e-5),
    "SVHN": (8500, 300.0, 200.0, 40.0, 1e-6),
}
QUICK_TABLE2_DIVISOR = 5  # a tenth fails C6 on Adult (order 37.5)
# Smooth sensitivity on the Glyph-like file: its first 12,000 queries, delta 1e-8.
SS_GLYPH_QUERIES = 12_000
SS_GLYPH_DELTA = 1e-8
# SVT-PATE on the 1,000,000 x 10 file. With 250 teachers the largest distance to
# instability is 124, and the threshold w chosen from delta is 1 + 4 lam log(...) (about
# 204 at lam = 2: every query unstable). An explicit lower w is refused (its failure
# probability delta2 exceeds delta), so lam = 0.5 (w about 51.7) is used, with a cut-off
# high enough that the replay runs through the whole file (some 63,000 unstable queries).
SVT_SCALE = 0.5
SVT_CUTOFF = 100_000
SVT_THRESHOLD = None  # chosen from delta
# Interactive-GNMax on the Glyph-like file.
INTERACTIVE = dict(threshold=1000.0, sigma_threshold=500.0, sigma=100.0, confidence=0.9)
STUDENT_BOOST = 12.0  # the true class's logit gets + Uniform(0, STUDENT_BOOST)
# Individualized PATE (upsampling): five privacy groups.
GROUP_NAMES = ("g1", "g2", "g3", "g4", "g5")
GROUP_BUDGETS = (1.0, 2.0, 3.0, 4.0, 5.0)
# pate-sweep on the Glyph-like file: 10 sigma x 4 T x 5 sigma1 = 200 points, 5 replays each,
# replay accounting with labels; "alone" times pate_cli.analyze for every 20th point.
SWEEP_GRID = {"sigma": tuple(range(60, 151, 10)), "threshold": (1000, 1300, 1600, 1900),
              "sigma_threshold": (300, 400, 500, 600, 700)}
SWEEP_REPEATS = 5
SWEEP_ALONE_EVERY = 20


@dataclass(frozen=True)
class Dataset:
    """A synthetic vote file and the Confident-GNMax parameters it is analysed with.

    ``agreement`` are the Beta(a, b) parameters of the share of teachers voting for the
    true class; ``confusion`` is the Dirichlet concentration spreading the remaining
    share over the classes (small = concentrated on a few confusable classes).
    ``loop_queries`` is how many leading queries the per-query baseline is timed on.
    """

    label: str
    queries: int
    classes: int
    teachers: int
    agreement: tuple[float, float]
    confusion: float
    threshold: float
    sigma_threshold: float
    sigma: float
    loop_queries: int
    seed: int

    @property
    def filename(self) -> str:
        return f"{self.label}.npy"

    @property
    def shape(self) -> str:
        return f"{self.queries:,} x {self.classes}"


def datasets(quick: bool) -> dict[str, Dataset]:
    """The two benchmark files: Glyph-like (many classes, low agreement) and 1M x 10."""
    glyph = dict(classes=150, teachers=5000, agreement=(2.0, 3.0), confusion=0.2,
                 threshold=1000.0, sigma_threshold=500.0, sigma=100.0, seed=SEED)
    large = dict(classes=10, teachers=250, agreement=(6.0, 1.5), confusion=0.5,
                 threshold=200.0, sigma_threshold=150.0, sigma=40.0, seed=SEED + 1)
    if quick:
        return {"glyph": Dataset("glyph", queries=2_000, loop_queries=500, **glyph),
                "large": Dataset("large", queries=50_000, loop_queries=5_000, **large)}
    return {"glyph": Dataset("glyph", queries=25_000, loop_queries=2_000, **glyph),
            "large": Dataset("large", queries=1_000_000, loop_queries=20_000, **large)}


# Case name -> (dataset key or None, what runs). "loop" is the per-query baseline.
CASES = {
    "glyph-expected": ("glyph", "expected"),
    "glyph-replay": ("glyph", "replay"),
    "glyph-integral": ("glyph", "integral"),
    "glyph-loop": ("glyph", "loop"),
    "glyph-numpy": ("glyph", "numpy"),
    "large-expected": ("large", "expected"),
    "large-replay": ("large", "replay"),
    "large-loop": ("large", "loop"),
    "ss-table2": (None, "table2"),
    "ss-glyph": ("glyph", "smooth"),
    "svt-large": ("large", "svt"),
    "interactive-glyph": ("glyph", "interactive"),
    "individualized-glyph": ("glyph", "individualized"),
    "sweep-glyph-alone": ("glyph", "sweep-alone"),
    "sweep-glyph-w1": ("glyph", "sweep-1"),
    "sweep-glyph-w2": ("glyph", "sweep-2"),
}


# --- synthetic votes ----------------------------------------------------------------------

def truth_path(path: str) -> str:
    """Where ``synthesize`` saves the true class of each query of ``path``."""
    return path[: -len(".npy")] + "_truth.npy"


def synthesize(path: str, spec: Dataset) -> None:
    """Write ``spec.queries`` synthetic vote histograms (int32) to ``path`` in chunks, and
    the true classes (int64) to ``truth_path(path)``."""
    rng = np.random.default_rng(spec.seed)
    out = open_memmap(path, mode="w+", dtype=np.int32, shape=(spec.queries, spec.classes))
    truths = open_memmap(truth_path(path), mode="w+", dtype=np.int64, shape=(spec.queries,))
    for start in range(0, spec.queries, GENERATION_CHUNK):
        count = min(GENERATION_CHUNK, spec.queries - start)
        truth = rng.integers(spec.classes, size=count)
        agreement = rng.beta(*spec.agreement, size=count)
        confusion = rng.dirichlet(np.full(spec.classes, spec.confusion), size=count)
        probabilities = confusion * (1.0 - agreement)[:, None]
        probabilities[np.arange(count), truth] += agreement
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        out[start : start + count] = rng.multinomial(spec.teachers, probabilities)
        truths[start : start + count] = truth
    out.flush()
    truths.flush()
    del out, truths


# --- the baseline: a per-query loop, vectorised over orders only --------------------------

def baseline_orders() -> np.ndarray:
    """The 2018 paper's 298 orders (math:conversion), written out independently."""
    return np.concatenate((np.arange(2, 101, 0.5), np.logspace(2, np.log10(500), 100)))


def _log1mexp_scalar(x: float) -> float:
    """``log(1 - exp(x))`` for one ``x <= 0`` (math:gnmax)."""
    if x == 0.0:
        return -math.inf
    return math.log1p(-math.exp(x)) if x < -1.0 else math.log(-math.expm1(x))


def _loop_log_q(votes: np.ndarray, sigma: float) -> float:
    """Bound on log q for one histogram (math:gnmax, Proposition 7)."""
    top = int(np.argmax(votes))
    others = np.delete(votes, top)
    terms = log_ndtr(-(votes[top] - others) / (math.sqrt(2.0) * sigma))
    return min(float(logsumexp(terms)), math.log(1.0 - 1.0 / votes.size))


def _loop_rdp_gnmax(log_q: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """Data-dependent RDP curve of one GNMax step given its log q (math:gnmax)."""
    independent = orders / sigma**2
    if log_q == -math.inf:
        return np.zeros_like(orders)
    mu2 = sigma * math.sqrt(-log_q)
    mu1 = mu2 + 1.0
    e1 = mu1 / sigma**2
    e2 = mu2 / sigma**2
    applies = (mu2 > 1.0 and -log_q > e2 and log_q <= (mu2 - 1.0) * e2 - mu2 * (
        math.log(1.0 + 1.0 / (mu1 - 1.0)) + math.log(1.0 + 1.0 / (mu2 - 1.0))))
    if not applies:
        return independent
    log_1mq = _log1mexp_scalar(log_q)
    steps = orders - 1.0
    log_a = steps * (log_1mq - _log1mexp_scalar((log_q + e2) * (1.0 - 1.0 / mu2)))
    log_b = steps * (e1 - log_q / (mu1 - 1.0))
    dependent = np.logaddexp(log_1mq + log_a, log_q + log_b) / steps
    return np.where(mu1 > orders, np.minimum(independent, dependent), independent)


def per_query_loop(votes, spec: Dataset, orders: np.ndarray, delta: float = DELTA):
    """Expected-accounting Confident-GNMax epsilon, one query at a time.

    For each query: log q of the answer step (math:gnmax), the threshold step's
    ``log pr_answered`` and its RDP (math:threshold), the answer step's RDP weighted by
    ``pr_answered`` (math:costs), added to a running total; the total is converted once at the
    end with the classic conversion (math:conversion). Returns ``(epsilon, order)``.
    """
    total = np.zeros_like(orders)
    for row in votes:
        counts = np.asarray(row, dtype=np.float64)
        log_q = _loop_log_q(counts, spec.sigma)
        log_pr = float(log_ndtr((np.rint(counts.max()) - spec.threshold)
                                / spec.sigma_threshold))
        log_q_sel = min(log_pr, _log1mexp_scalar(log_pr))
        rdp_sel = _loop_rdp_gnmax(log_q_sel, math.sqrt(2.0) * spec.sigma_threshold, orders)
        rdp_answer = _loop_rdp_gnmax(log_q, spec.sigma, orders)
        total += rdp_sel + math.exp(log_pr) * rdp_answer
    candidates = total + math.log(1.0 / delta) / (orders - 1.0)
    best = int(np.argmin(candidates))
    return float(candidates[best]), float(orders[best])


# --- child: one case in a fresh process ----------------------------------------------------

def _peak_mb() -> float:
    """Peak resident set size of this process so far, MB (``peak_memory.peak_mb``)."""
    from peak_memory import peak_mb

    return peak_mb()


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (a sweep's worker pool)."""
    return sum(usage.ru_utime + usage.ru_stime for usage in
               (resource.getrusage(resource.RUSAGE_SELF),
                resource.getrusage(resource.RUSAGE_CHILDREN)))


def _analyze(pate_cli, source, spec: Dataset, accounting: str, **options):
    """``analyze`` totals only (``per_query=False``), as pate-analyze runs without a table."""
    options.setdefault("per_query", False)
    return pate_cli.analyze(source, "confident", threshold=spec.threshold,
                            sigma_threshold=spec.sigma_threshold, sigma=spec.sigma,
                            accounting=accounting, delta=DELTA, **options)


def _timed(run, warm) -> dict:
    """Call ``warm()`` (first-call costs, tiny), then time ``run()``; ``run`` returns a
    dict of facts, merged with wall time, CPU time and the process's peak memory."""
    warnings.simplefilter("ignore")  # e.g. OrderGridWarning; reported epsilon is unchanged
    try:
        warm()
    except ValueError:  # e.g. a smooth-sensitivity refusal on the few warm-up rows
        pass
    cpu = _cpu_seconds()
    begin = time.perf_counter()
    facts = run()
    wall = time.perf_counter() - begin
    return {"wall": wall, "cpu": _cpu_seconds() - cpu, "peak_mb": _peak_mb(), **facts}


def _warm_rows(path: str) -> np.ndarray:
    return np.asarray(np.load(path, mmap_mode="r")[:WARM_ROWS], dtype=np.float64)


def run_package_case(spec: Dataset, path: str, accounting: str) -> dict:
    """Time ``load_votes`` + ``analyze`` on the whole file; report peak memory.
    ``integral``: expected accounting with ``q_bound="integral"`` (math:integral)."""
    import pate_cli

    options = {}
    if accounting == "integral":
        accounting, options = "expected", {"q_bound": "integral"}

    def run():
        begin = time.perf_counter()
        vote_set = pate_cli.load_votes(path)
        load = time.perf_counter() - begin
        result = _analyze(pate_cli, vote_set, spec, accounting, **options)
        return {"load": load, "queries": spec.queries, "epsilon": result.epsilon,
                "order": result.order, "answered": result.answered_total}

    return _timed(run, lambda: _analyze(pate_cli, _warm_rows(path), spec, accounting,
                                        **options))


def run_loop_case(spec: Dataset, path: str) -> dict:
    """Time the per-query loop on the leading queries; check it against the package."""
    count = spec.loop_queries
    orders = baseline_orders()
    cpu = _cpu_seconds()
    begin = time.perf_counter()
    votes = np.asarray(np.load(path, mmap_mode="r")[:count], dtype=np.float64)
    epsilon, order = per_query_loop(votes, spec, orders)
    wall = time.perf_counter() - begin
    cpu = _cpu_seconds() - cpu
    peak = _peak_mb()  # before the package is even imported

    import pate_cli

    warnings.simplefilter("ignore")
    # the loop charges the papers' threshold-step curve (math:threshold), the package's
    # --screening gaussian (its default is the exact curve of math:screening, smaller)
    reference = _analyze(pate_cli, pate_cli.load_votes(path), spec, "expected", queries=count,
                         screening="gaussian")
    relative = abs(epsilon - reference.epsilon) / abs(reference.epsilon)
    return {"wall": wall * spec.queries / count, "wall_subset": wall, "cpu": cpu,
            "peak_mb": peak, "queries": count, "epsilon": epsilon, "order": order,
            "package_epsilon": reference.epsilon, "package_order": reference.order,
            "relative_difference": relative}


def run_numpy_case(spec: Dataset, path: str) -> dict:
    """Time the bare numpy pass (``numpy_pass.py``) on the whole file; check it against
    the package."""
    from numpy_pass import numpy_pass

    orders = baseline_orders()
    cpu = _cpu_seconds()
    begin = time.perf_counter()
    votes = np.asarray(np.load(path, mmap_mode="r"), dtype=np.float64)
    epsilon, order = numpy_pass(votes, threshold=spec.threshold,
                                sigma_threshold=spec.sigma_threshold, sigma=spec.sigma,
                                orders=orders, delta=DELTA)
    wall = time.perf_counter() - begin
    cpu, peak = _cpu_seconds() - cpu, _peak_mb()

    import pate_cli

    warnings.simplefilter("ignore")
    reference = _analyze(pate_cli, pate_cli.load_votes(path), spec, "expected",
                         screening="gaussian")  # the pass's threshold-step curve, as the loop's
    return {"wall": wall, "cpu": cpu, "peak_mb": peak, "queries": spec.queries,
            "epsilon": epsilon, "order": order, "package_epsilon": reference.epsilon,
            "relative_difference": abs(epsilon - reference.epsilon) / reference.epsilon}


def _sanitized(pate_cli, source, *, queries, threshold, sigma_threshold, sigma, delta):
    """The user's path: ``analyze`` (expected accounting) then ``sanitize_analysis``."""
    from pate_cli.analysis import sanitize_analysis

    votes = source.votes if isinstance(source, pate_cli.VoteSet) else source
    result = pate_cli.analyze(source, "confident", threshold=threshold,
                              sigma_threshold=sigma_threshold, sigma=sigma,
                              accounting="expected", delta=delta, queries=queries)
    report = sanitize_analysis(result, votes)
    return {"queries": result.queries, "classes": result.classes,
            "answered": result.answered_total,
            "eps_independent": result.epsilon_data_independent,
            "eps_dependent": result.epsilon, "order": report.order, "beta": report.beta,
            "sigma_ss": report.sigma_ss, "smooth_sensitivity": report.smooth_sensitivity,
            "eps_after": report.epsilon_after, "noise_std": report.noise_std}


def table2_settings(quick: bool) -> dict[str, tuple]:
    """Table 2's datasets -> (path, queries, threshold, sigma_threshold, sigma, delta)."""
    divisor = QUICK_TABLE2_DIVISOR if quick else 1
    return {name: (os.path.join(PAPER_VOTES, f"{name.lower()}_250_teachers.npy"),
                   queries // divisor, *rest)
            for name, (queries, *rest) in TABLE2.items()}


def run_table2_case(quick: bool) -> dict:
    """The three Table 2 rows in one process: load + analyze + sanitize, timed together."""
    import pate_cli

    settings = table2_settings(quick)

    def one(path, queries, threshold, sigma_threshold, sigma, delta):
        return _sanitized(pate_cli, pate_cli.load_votes(path), queries=queries,
                          threshold=threshold, sigma_threshold=sigma_threshold, sigma=sigma,
                          delta=delta)

    def run():
        rows = {}
        for name, setting in settings.items():
            begin = time.perf_counter()
            rows[name] = {**one(*setting), "wall": time.perf_counter() - begin}
        return {"queries": sum(r["queries"] for r in rows.values()), "rows": rows}

    def warm():
        path, _, *rest = settings["MNIST"]
        one(path, WARM_ROWS, *rest)

    return _timed(run, warm)


def run_smooth_case(spec: Dataset, path: str, quick: bool) -> dict:
    """Smooth sensitivity on the first ``SS_GLYPH_QUERIES`` queries of the Glyph file."""
    import pate_cli

    queries = min(SS_GLYPH_QUERIES, spec.queries)
    options = dict(threshold=spec.threshold, sigma_threshold=spec.sigma_threshold,
                   sigma=spec.sigma, delta=SS_GLYPH_DELTA)

    def run():
        return _sanitized(pate_cli, pate_cli.load_votes(path), queries=queries, **options)

    return _timed(run, lambda: _sanitized(pate_cli, _warm_rows(path), queries=WARM_ROWS,
                                          **options))


def run_svt_case(spec: Dataset, path: str) -> dict:
    """SVT-PATE replay on the whole file."""
    import pate_cli
    from pate_cli.mechanisms import SVTPATE

    mechanism = SVTPATE(scale=SVT_SCALE, cutoff=SVT_CUTOFF, threshold=SVT_THRESHOLD)

    def run():
        result = pate_cli.analyze(pate_cli.load_votes(path), mechanism, delta=DELTA)
        return {"queries": result.queries, "epsilon": result.epsilon,
                "answered": result.answered_total, "unstable": result.svt.unstable,
                "threshold": result.svt.threshold}

    return _timed(run, lambda: pate_cli.analyze(_warm_rows(path), mechanism, delta=DELTA))


def synthetic_student(truth: np.ndarray, classes: int, seed: int) -> np.ndarray:
    """Student probabilities: softmax of N(0, 1) logits, the true class's raised by
    Uniform(0, ``STUDENT_BOOST``); rows sum to 1."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(truth.size, classes))
    logits[np.arange(truth.size), truth] += rng.uniform(0.0, STUDENT_BOOST, size=truth.size)
    logits -= logits.max(axis=1, keepdims=True)
    student = np.exp(logits)
    student /= student.sum(axis=1, keepdims=True)
    return student


def run_interactive_case(spec: Dataset, path: str) -> dict:
    """Interactive-GNMax, expected accounting, with a synthetic student."""
    import pate_cli
    from pate_cli.analysis import analyze_votes
    from pate_cli.mechanisms import InteractiveGNMax

    mechanism = InteractiveGNMax(teachers=spec.teachers, **INTERACTIVE)
    student = synthetic_student(np.load(truth_path(path)), spec.classes, spec.seed + 2)

    def run():
        votes = pate_cli.load_votes(path).votes
        result = analyze_votes(votes, mechanism, student=student, accounting="expected",
                               delta=DELTA)
        return {"queries": result.queries, "epsilon": result.epsilon,
                "order": result.order, "answered": result.answered_total,
                "confident_students": int(np.count_nonzero(
                    student.max(axis=1) > mechanism.confidence))}

    return _timed(run, lambda: analyze_votes(_warm_rows(path), mechanism,
                                             student=student[:WARM_ROWS],
                                             accounting="expected", delta=DELTA))


def run_individualized_case(spec: Dataset, path: str) -> dict:
    """Individualized PATE, upsampling, five privacy groups, expected accounting."""
    import pate_cli
    from pate_cli.analysis import analyze_individualized, derive_parameters
    from pate_cli.inputs import PrivacyGroups
    from pate_cli.mechanisms import ConfidentGNMax

    mechanism = ConfidentGNMax(threshold=spec.threshold, sigma_threshold=spec.sigma_threshold,
                               sigma=spec.sigma)
    groups = PrivacyGroups(names=GROUP_NAMES, budgets=np.array(GROUP_BUDGETS))

    def analyze(votes, teachers, source=None):
        parameters = derive_parameters(groups, variant="upsampling")
        return analyze_individualized(votes, mechanism, parameters, accounting="expected",
                                      teachers=teachers, delta=DELTA, source=source,
                                      per_query=False)  # as glyph-expected: totals only

    def run():
        vote_set = pate_cli.load_votes(path)
        result = analyze(vote_set.votes, vote_set.teachers, vote_set)
        return {"queries": result.queries, "epsilon": result.epsilon, "order": result.order,
                "groups": [(row["group"], row["upsampling"], row["epsilon"])
                           for row in result.groups.groups]}

    return _timed(run, lambda: analyze(_warm_rows(path), spec.teachers))


def _sweep_points(path: str, spec: Dataset):
    """The benchmark grid as pate-sweep plans it (parameters resolved, grid order)."""
    import pate_cli
    from pate_cli.sweep.points import SweepSettings, plan_points, source_for

    vote_set = pate_cli.load_votes(path, labels=truth_path(path))
    source = source_for(path, sha256=vote_set.sha256, labels=truth_path(path), student=None)
    settings = SweepSettings(accounting="replay", delta=DELTA, repeats=SWEEP_REPEATS)
    grids = {name: tuple(float(v) for v in values) for name, values in SWEEP_GRID.items()}
    return plan_points([source], ["confident"], grids, settings=settings,
                       shapes={source.path: (vote_set.queries, vote_set.teachers, None)})


def run_sweep_case(spec: Dataset, path: str, workers: int) -> dict:
    """pate-sweep's engine (what the command runs after parsing options) on the grid."""
    import hashlib

    from pate_cli.sweep.executors import local_pool
    from pate_cli.sweep.points import run_points
    from pate_cli.sweep.table import table_bytes

    def run():
        points = _sweep_points(path, spec)
        rows = [None] * len(points)
        if workers == 1:
            for position, row in run_points(points):
                rows[position] = row
        else:
            with local_pool(workers) as executor:  # pate-sweep --workers N's pool
                for position, row in run_points(points, executor=executor,
                                                in_flight=4 * workers):
                    rows[position] = row
        digest = hashlib.sha256(table_bytes(rows, fmt="csv")).hexdigest()
        return {"queries": spec.queries, "points": len(points), "workers": workers,
                "rows_sha256": digest,
                "analysed": spec.queries * len(points) * SWEEP_REPEATS}

    return _timed(run, lambda: None)


def run_sweep_alone_case(spec: Dataset, path: str) -> dict:
    """The same analyses run alone: ``pate_cli.analyze`` per seed for every 20th point."""
    import pate_cli

    points = _sweep_points(path, spec)[::SWEEP_ALONE_EVERY]

    def run():
        for point in points:
            vote_set = pate_cli.load_votes(path, labels=truth_path(path))
            for seed in range(SWEEP_REPEATS):
                pate_cli.analyze(vote_set, "confident", delta=DELTA, seed=seed,
                                 **dict(point.params))
        return {"queries": spec.queries, "points": len(points),
                "analysed": spec.queries * len(points) * SWEEP_REPEATS}

    return _timed(run, lambda: pate_cli.analyze(_warm_rows(path), "confident",
                                                teachers=spec.teachers))


def run_child(case: str, data_dir: str, quick: bool) -> None:
    """Entry point of ``--case``: run one case and print its JSON line."""
    key, what = CASES[case]
    spec = datasets(quick)[key] if key else None
    path = os.path.join(data_dir, spec.filename) if spec else None
    if what == "loop":
        record = run_loop_case(spec, path)
    elif what == "numpy":
        record = run_numpy_case(spec, path)
    elif what == "table2":
        record = run_table2_case(quick)
    elif what == "smooth":
        record = run_smooth_case(spec, path, quick)
    elif what == "svt":
        record = run_svt_case(spec, path)
    elif what == "interactive":
        record = run_interactive_case(spec, path)
    elif what == "individualized":
        record = run_individualized_case(spec, path)
    elif what == "sweep-alone":
        record = run_sweep_alone_case(spec, path)
    elif what in ("sweep-1", "sweep-2"):
        record = run_sweep_case(spec, path, workers=int(what[-1]))
    else:
        record = run_package_case(spec, path, what)
    record["case"] = case
    print(json.dumps(record), flush=True)


# --- parent: generate, run every case, print the table --------------------------------------

def spawn(case: str, data_dir: str, quick: bool) -> dict:
    """Run one case in a fresh interpreter and return its JSON record."""
    command = [sys.executable, os.path.abspath(__file__), "--case", case, "--data", data_dir]
    if quick:
        command.append("--quick")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise RuntimeError(f"case {case} failed with exit status {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _format_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    def line(cells):
        return "  ".join(cell.ljust(w) if i in (0, len(cells) - 2) else cell.rjust(w)
                         for i, (cell, w) in enumerate(zip(cells, widths, strict=True)))
    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def _case_title(case: str, specs: dict[str, Dataset], quick: bool) -> str:
    key, what = CASES[case]
    if what == "table2":
        sizes = " + ".join(f"{name} {setting[1]:,}"
                           for name, setting in table2_settings(quick).items())
        return f"Table 2 paper votes ({sizes}): analyze + sanitize"
    spec = specs[key]
    name = "Glyph-like" if spec.label == "glyph" else "large, mmap .npy"
    if what == "loop":
        return f"{name}: per-query loop, expected (extrapolated from {spec.loop_queries:,} q)"
    if what == "smooth":
        return (f"{name}: first {min(SS_GLYPH_QUERIES, spec.queries):,} q, analyze + "
                f"sanitize (delta {SS_GLYPH_DELTA:g})")
    if what == "svt":
        return f"{name}: SVT-PATE replay (lam {SVT_SCALE:g}, cut-off {SVT_CUTOFF:,})"
    if what == "interactive":
        return f"{name}: Interactive-GNMax, expected"
    if what == "individualized":
        return f"{name}: individualized, {len(GROUP_NAMES)} groups, upsampling, expected"
    if what == "sweep-alone":
        return (f"{name}: analyze alone, every {SWEEP_ALONE_EVERY}th sweep point x "
                f"{SWEEP_REPEATS} seeds")
    if what.startswith("sweep-"):
        workers = what[-1]
        return (f"{name}: pate-sweep 200 points x {SWEEP_REPEATS} replays, --workers "
                f"{workers}")
    return f"{name}: pate_cli, {what}"


def _shape(case: str, record: dict, specs: dict[str, Dataset], quick: bool) -> tuple[str, str]:
    """``queries x classes`` and teachers of a row."""
    key, what = CASES[case]
    if what == "table2":
        return f"{record['queries']:,} x 10/2/10", "250"
    spec = specs[key]
    queries = record["queries"] if what not in ("loop",) else spec.queries
    return f"{queries:,} x {spec.classes}", f"{spec.teachers:,}"


def _checks(case: str, records: dict[str, dict]) -> list[tuple[str, bool | None]]:
    """The issue's targets for a row: (text, passed), passed None when not measurable."""
    record = records[case]
    wall, peak = record["wall"], record["peak_mb"]

    def faster_than_loop(key):
        loop = records.get(f"{key}-loop")
        if loop is None:
            return ">= 8x loop (loop not run)", None
        return ">= 8x loop", loop["wall"] / wall >= 8.0

    memory = ("< 1 GB", peak < 1024.0)
    if case == "glyph-expected":
        bare = records.get("glyph-numpy")
        return [("< 0.5 s", wall < 0.5), faster_than_loop("glyph"),
                ("<= 2x a bare numpy pass", None if bare is None
                 else wall <= 2.0 * bare["wall"])]
    if case == "large-expected":
        return [("< 5 s", wall < 5.0), memory, faster_than_loop("large")]
    if case == "glyph-integral":
        union = records.get("glyph-expected")
        if union is None:
            return [("<= 3x --q-bound union (glyph-expected not run)", None)]
        return [("<= 3x --q-bound union", wall <= 3.0 * union["wall"])]
    if case == "large-replay":
        return [("< 5 s", wall < 5.0), memory]
    if case == "ss-table2":
        return [("< 2 s in total", wall < 2.0)]
    if case == "ss-glyph":
        return [("< 10 s", wall < 10.0), memory]
    if case == "svt-large":
        return [("< 5 s", wall < 5.0)]
    if case == "interactive-glyph":
        return [("< 2 s", wall < 2.0)]
    if case == "sweep-glyph-w1":
        alone = records.get("sweep-glyph-alone")
        if alone is None:
            return [("<= 1.2x alone per point (alone not run)", None)]
        ratio = (wall / record["points"]) / (alone["wall"] / alone["points"])
        return [("<= 1.2x alone per point", ratio <= 1.2)]
    if case == "sweep-glyph-w2":
        one = records.get("sweep-glyph-w1")
        if one is None:
            return [(">= 1.7x --workers 1 (w1 not run)", None)]
        return [(">= 1.7x --workers 1", one["wall"] / wall >= 1.7),
                ("rows identical to --workers 1", one["rows_sha256"] == record["rows_sha256"])]
    if case == "individualized-glyph":
        single = records.get("glyph-expected")
        if single is None:
            return [("< 2x plain analyze (glyph-expected not run)", None)]
        return [("< 2x plain analyze", wall / single["wall"] < 2.0)]
    return []


def _verdict(checks: list[tuple[str, bool | None]], quick: bool) -> str:
    if not checks:
        return "-"
    if quick:
        return "n/a (quick sizes)"
    known = [ok for _, ok in checks if ok is not None]
    if not known:
        return "n/a"
    return "met" if all(known) else "NOT met"


def _compared(case: str, records: dict[str, dict]) -> str:
    key, what = CASES[case]
    record = records[case]
    if what == "loop":
        return "1.0 (baseline)"
    if what == "numpy":
        return f"bare numpy pass (epsilon within {record['relative_difference']:.1e})"
    if what.startswith("sweep-"):
        per_point = record["wall"] / record["points"]
        text = f"{record['points'] / record['wall']:.2f} points/s, {per_point:.3f} s/point"
        alone = records.get("sweep-glyph-alone")
        if what == "sweep-1" and alone is not None:
            text += f", {per_point / (alone['wall'] / alone['points']):.2f}x alone"
        one = records.get("sweep-glyph-w1")
        if what == "sweep-2" and one is not None:
            text += f", speed-up {one['wall'] / record['wall']:.2f}x"
        return text
    if what == "integral" and "glyph-expected" in records:
        return f"{record['wall'] / records['glyph-expected']['wall']:.2f}x union"
    if what == "individualized" and "glyph-expected" in records:
        return f"{record['wall'] / records['glyph-expected']['wall']:.2f}x plain analyze"
    loop = records.get(f"{key}-loop")
    text = ""
    if what in ("expected", "replay") and loop is not None:
        text = f"{loop['wall'] / record['wall']:.1f}x faster than loop"
    bare = records.get(f"{key}-numpy")
    if what == "expected" and bare is not None:
        text += f"{', ' if text else ''}{record['wall'] / bare['wall']:.2f}x numpy pass"
    return text or "-"


def _notes(records: dict[str, dict], specs: dict[str, Dataset], skipped: list[str]) -> None:
    print("Notes: wall time of pate_cli rows = load_votes (validate + sha256 of the file) "
          "+ analysis (+ sanitisation);")
    print("  analysis rows and the individualized row run totals only (per_query=False), as "
          "pate-analyze does without --per-query;")
    print("  298 default orders, classic conversion; Confident-GNMax parameters per file:")
    for spec in specs.values():
        print(f"  {spec.label}: T={spec.threshold:g}, sigma_threshold={spec.sigma_threshold:g}, "
              f"sigma={spec.sigma:g}, delta={DELTA:g}"
              + (f" (smooth sensitivity: delta {SS_GLYPH_DELTA:g})" if spec.label == "glyph"
                 else ""))
    print("  Per-query loop rows: baseline time is extrapolated linearly from the first N "
          "queries (N in the case name);")
    print("  their peak memory is that of the subset run. Speed-ups of replay rows compare "
          "with the same")
    print("  expected-accounting loop (a replay also draws the noise).")
    for note in skipped:
        print(f"  {note}")
    for case, record in records.items():
        what = CASES[case][1]
        if what in ("expected", "replay", "integral"):
            print(f"  {case}: epsilon {record['epsilon']:.6g} at order {record['order']:g}, "
                  f"answered {record['answered']:,.1f}, load_votes {record['load']:.3f} s")
        elif what in ("table2", "smooth"):
            rows = record["rows"] if what == "table2" else {"Glyph-like": record}
            for name, r in rows.items():
                timing = f", {r['wall']:.3f} s" if what == "table2" else ""
                print(f"  {case} {name}: {r['queries']:,} q{timing}, answered "
                      f"{r['answered']:.1f}, eps data-independent {r['eps_independent']:.2f}, "
                      f"data-dependent {r['eps_dependent']:.3f}, order {r['order']:g}, "
                      f"beta {r['beta']:.4f}, sigma_ss {r['sigma_ss']:.3f}, smooth sens. "
                      f"{r['smooth_sensitivity']:.5f}, sanitised {r['eps_after']:.3f} +/- "
                      f"{r['noise_std']:.3f}")
        elif what == "svt":
            print(f"  {case}: threshold w {record['threshold']:.2f} (chosen from delta; on 1M "
                  f"queries lam 2 gives w ~204 > the largest distance 124, all unstable),")
            print(f"    {record['unstable']:,} unstable, {record['answered']:,.0f} released, "
                  f"epsilon {record['epsilon']:.6g} (at the cut-off)")
        elif what == "interactive":
            print(f"  {case}: T={INTERACTIVE['threshold']:g}, sigma_threshold="
                  f"{INTERACTIVE['sigma_threshold']:g}, sigma={INTERACTIVE['sigma']:g}, "
                  f"confidence {INTERACTIVE['confidence']:g}; student: softmax of N(0,1) "
                  f"logits + U(0,{STUDENT_BOOST:g}) on the true class")
            print(f"    ({record['confident_students']:,} queries above the confidence); "
                  f"epsilon {record['epsilon']:.6g} at order {record['order']:g}, "
                  f"teacher-answered {record['answered']:,.1f}")
        elif what == "individualized":
            groups = ", ".join(f"{name} (x{up:g}) {eps:.4g}"
                               for name, up, eps in record["groups"])
            print(f"  {case}: budgets {', '.join(f'{b:g}' for b in GROUP_BUDGETS)}; epsilon "
                  f"per group (upsampling): {groups}")


def report(records: dict[str, dict], specs: dict[str, Dataset], quick: bool,
           skipped: list[str]) -> None:
    """Print the table, notes, baseline agreement lines and noise notes."""
    header = ["case", "queries x classes", "teachers", "wall time s", "queries/s",
              "peak memory MB", "compared with", "target", "verdict"]
    rows = []
    for case, record in records.items():
        checks = _checks(case, records)
        shape, teachers = _shape(case, record, specs, quick)
        queries = record["queries"] if CASES[case][1] != "loop" else \
            specs[CASES[case][0]].queries
        queries = record.get("analysed", queries)  # sweeps: queries x points x replays
        rows.append([_case_title(case, specs, quick), shape, teachers,
                     f"{record['wall']:.3f}", f"{queries / record['wall']:,.0f}",
                     f"{record['peak_mb']:.0f}", _compared(case, records),
                     "; ".join(text for text, _ in checks) or "-", _verdict(checks, quick)])
    print(_format_table(header, rows))
    print()
    _notes(records, specs, skipped)
    print()
    for key, spec in specs.items():
        record = records.get(f"{key}-loop")
        if record is None:
            continue
        same = record["relative_difference"] <= AGREEMENT_TOLERANCE
        print(f"Baseline agreement ({spec.label}, first {record['queries']:,} queries): "
              f"loop epsilon {record['epsilon']:.12g} (order {record['order']:g}), "
              f"pate_cli {record['package_epsilon']:.12g} (order {record['package_order']:g}), "
              f"relative difference {record['relative_difference']:.1e} -> "
              f"{'agree' if same else 'DISAGREE'} to {AGREEMENT_TOLERANCE:g}")
    print()
    starved = [case for case, r in records.items() if r["wall"] > 0 and
               r.get("wall_subset", r["wall"]) > 1.25 * r["cpu"] + 0.02]
    load = os.getloadavg()
    print(f"Machine: {os.cpu_count()} cores, load average {load[0]:.2f} / {load[1]:.2f} / "
          f"{load[2]:.2f} (1/5/15 min) at the end; another job may share the machine.")
    if starved:
        print(f"  Timings may be noisy: wall time exceeded CPU time by >25% in {', '.join(starved)}"
              " (the process was waiting, e.g. for a CPU or the disk).")
    else:
        print("  Wall time stayed within 25% of CPU time in every case (little sign of "
              "contention).")


def run_parent(quick: bool, cases: list[str]) -> None:
    """Generate the vote files, run each case in its own process, print the results."""
    fast = FAST_START in cases
    cases = [case for case in cases if case != FAST_START]
    if cases:
        _run_cases(quick, cases)
    if fast:
        import fast_start  # beside this file (benchmarks/ is on sys.path when run)

        print()
        print(fast_start.report(fast_start.measure(3 if quick else fast_start.REPEATS)))


def _run_cases(quick: bool, cases: list[str]) -> None:
    skipped = []
    if "ss-table2" in cases:
        missing = [path for path, *_ in table2_settings(quick).values()
                   if not os.path.isfile(path)]
        if missing:
            cases = [case for case in cases if case != "ss-table2"]
            skipped.append(f"ss-table2 skipped: paper votes absent ({', '.join(missing)})")
    needed = {CASES[case][0] for case in cases} - {None}
    specs = {key: spec for key, spec in datasets(quick).items() if key in needed}
    data_dir = tempfile.mkdtemp(prefix="pate_bench_")
    try:
        begin = time.perf_counter()
        for spec in specs.values():
            synthesize(os.path.join(data_dir, spec.filename), spec)
        print(f"pate_cli benchmark{' (quick mode)' if quick else ''}: synthetic votes written "
              f"in {time.perf_counter() - begin:.1f} s; each case runs in a fresh process.\n")
        records = {case: spawn(case, data_dir, quick) for case in cases}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    report(records, specs, quick, skipped)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (2,000 x 150, 50,000 x 10, a fifth of Table 2), "
                             "for a smoke test")
    parser.add_argument("--cases", nargs="+", choices=[*CASES, FAST_START], metavar="NAME",
                        help="run only these cases, e.g. --cases ss-table2 ss-glyph "
                             "(default: all; --list names them)")
    parser.add_argument("--list", action="store_true", help="list the case names and exit")
    parser.add_argument("--readme", type=Path, metavar="FILE",
                        help="also write the printed table into FILE, between its lines "
                             f"{README_START!r} and {README_END!r} (make bench: "
                             "benchmarks/README.md)")
    parser.add_argument("--case", choices=sorted(CASES), help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join([*CASES, FAST_START]))
    elif args.case:
        if not args.data:
            parser.error("--case needs --data")
        run_child(args.case, args.data, args.quick)
    else:
        selected = [case for case in [*CASES, FAST_START]
                    if args.cases is None or case in args.cases]
        if args.readme is None:
            run_parent(args.quick, selected)
            return
        printed = io.StringIO()
        with contextlib.redirect_stdout(_Tee(sys.stdout, printed)):
            run_parent(args.quick, selected)
        write_readme(args.readme, printed.getvalue())


README_START = "<!-- make bench: start -->"
README_END = "<!-- make bench: end -->"


class _Tee(io.TextIOBase):
    """Writes to every stream it is given (the terminal and a buffer)."""

    def __init__(self, *streams) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


def write_readme(path: Path, printed: str) -> None:
    """Replace what lies between the markers of ``path`` with this run's printed table."""
    text = path.read_text(encoding="utf-8")
    if README_START not in text or README_END not in text:
        raise SystemExit(f"{path}: no {README_START} ... {README_END} section to replace")
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    stamp = time.strftime("%Y-%m-%d")
    body = (f"\nThe last `make bench` ({stamp}, {os.cpu_count()} cores), as it printed:\n\n"
            f"```text\n{printed.rstrip()}\n```\n\n")
    path.write_text(head + README_START + body + README_END + tail, encoding="utf-8")


if __name__ == "__main__":
    main()
