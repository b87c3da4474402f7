"""Sparse (token) votes, math:sparse: the same numbers as the dense rows, the zero block
counted, the replay's zero block drawn without forming it, one-line refusals."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import log_ndtr, logsumexp, softmax

from pate_cli.accounting.gnmax import log_q_gnmax
from pate_cli.accounting.laplace import log_q_lnmax
from pate_cli.accounting.q_bound import log_q_integral
from pate_cli.mechanisms import NoiseSource
from pate_cli.mechanisms.noisy_argmax import noisy_argmax
from pate_cli.vote_rows import SparseVotes
from tests.synthetic import TOLERANCE, as_sparse


def token_votes(seed: int, queries: int, classes: int, teachers: int, stored: int = 6):
    """Integer votes of ``teachers`` over ``classes``, at most ``stored`` classes a row."""
    rng = np.random.default_rng(seed)
    dense = np.zeros((queries, classes), dtype=np.int64)
    for row in range(queries):
        chosen = rng.choice(classes, size=min(stored, classes), replace=False)
        dense[row, chosen] = rng.multinomial(teachers, rng.dirichlet(np.full(chosen.size, .4)))
    return dense


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), classes=st.integers(2, 60),
       sigma=st.floats(0.3, 200.0), teachers=st.integers(1, 300))
def test_zero_block_equals_the_dense_rows(seed, classes, sigma, teachers):
    dense = token_votes(seed, 20, classes, teachers)
    rows = as_sparse(dense)[0:20]
    assert np.array_equal(rows.dense(), dense)
    for dense_q, sparse_q in ((log_q_gnmax(dense, sigma=sigma), log_q_gnmax(rows, sigma=sigma)),
                              (log_q_lnmax(dense, scale=sigma), log_q_lnmax(rows, scale=sigma))):
        np.testing.assert_allclose(sparse_q, dense_q, rtol=TOLERANCE, atol=0)


def test_the_vocabulary_example_of_math_s14():
    """M 512, K 128,256, top counts 300 and 100, sigma 40: Prop. 7 gives q = 7.5e-3; the
    stored classes alone (invalid) give about 2e-4 (math:sparse prints 2.2e-4; the sum is
    Phi(-200 / (sqrt 2 x 40)) = 2.03e-4)."""
    votes = SparseVotes(np.array([0, 2]), np.array([0, 1]), np.array([300.0, 100.0]),
                        128_256, 2)
    q = math.exp(log_q_gnmax(votes[0:1], sigma=40.0)[0])
    assert q == pytest.approx(7.5e-3, rel=0.01)
    scale = math.sqrt(2.0) * 40.0
    stored_only = math.exp(log_ndtr(-200.0 / scale))
    assert stored_only == pytest.approx(2.03e-4, rel=0.01) and stored_only < q / 30
    # the zero block written out by hand
    by_hand = logsumexp([log_ndtr(-200 / scale), math.log(128_254) + log_ndtr(-300 / scale)])
    assert math.exp(by_hand) == pytest.approx(q, rel=1e-13)
    # math:integral's integral bound with the zero block: 1.8e-3
    integral = math.exp(log_q_integral(votes[0:1], sigma=40.0)[0])
    assert integral == pytest.approx(1.8e-3, rel=0.03) and integral < q


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), classes=st.integers(3, 80),
       stored=st.integers(1, 12), sigma=st.floats(0.5, 60.0))
def test_the_integral_bound_with_the_zero_block_equals_the_dense_rows(seed, classes,
                                                                       stored, sigma):
    dense = token_votes(seed, 12, classes, 40, stored)
    np.testing.assert_allclose(log_q_integral(as_sparse(dense)[0:12], sigma=sigma),
                               log_q_integral(dense, sigma=sigma), rtol=TOLERANCE, atol=0)


def test_a_zero_class_missing_rank_maps_to_its_class_id():
    votes = SparseVotes(np.array([0, 2]), np.array([1, 3]), np.array([4.0, 1.0]), 7, 2)
    rows = votes[0:1]
    ranks = np.arange(5)
    ids = [int(rows[[0]].missing_class(np.array([r]))[0]) for r in ranks]
    assert ids == [0, 2, 4, 5, 6]


def test_the_zero_block_replay_has_the_dense_frequencies():
    """One row over 12 classes (stored 2 and 7), Gaussian noise 3: 100,000 seeded replays'
    label frequencies against 100,000 dense draws' by a chi-square two-sample test; with
    the fixed seed the statistic is below the 1e-6 false-alarm quantile."""
    from scipy.stats import chi2
    classes, count = 12, 100_000
    dense = np.zeros((1, classes))
    dense[0, 2], dense[0, 7] = 5.0, 3.0
    votes = as_sparse(np.repeat(dense, count, axis=0))
    rows = votes[0:count]
    noise = NoiseSource(11)
    for kind in ("normal", "laplace"):
        draws = noise.draw(stream=9, kind=kind, start=0, count=count, width=4)
        sparse_labels = noisy_argmax(rows, draws, kind=kind, scale=3.0)
        dense_draws = noise.draw(stream=10, kind=kind, start=0, count=count, width=classes)
        dense_labels = np.argmax(dense + 3.0 * dense_draws, axis=1)
        a = np.bincount(sparse_labels, minlength=classes)
        b = np.bincount(dense_labels, minlength=classes)
        statistic = float((((a - b) ** 2) / (a + b)).sum())
        assert statistic < chi2.isf(1e-6, classes - 1), (kind, a, b)


@pytest.fixture(scope="module")
def vote_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tokens")
    dense = token_votes(5, 300, 400, 50)
    np.save(folder / "dense.npy", dense)
    sp.save_npz(folder / "csr.npz", sp.csr_matrix(dense))
    sp.save_npz(folder / "coo.npz", sp.coo_matrix(dense), compressed=False)
    rows, cols = np.nonzero(dense)
    frame = pd.DataFrame({"query": rows, "class": cols, "count": dense[rows, cols]})
    frame.to_csv(folder / "long.csv", index=False)
    frame.to_csv(folder / "long.tsv", index=False, sep="\t")
    frame.to_parquet(folder / "long.parquet")
    return folder


RUNS = [
    ["-m", "gnmax", "--sigma", "4", "--accounting", "expected"],
    ["-m", "lnmax", "--laplace-scale", "4"],
    ["-T", "35", "--sigma-threshold", "20", "--sigma", "6"],
    ["-T", "35", "--sigma-threshold", "20", "--sigma", "6", "--accounting", "expected",
     "--budget", "8"],
    ["-T", "35", "--sigma-threshold", "20", "--sigma", "6", "--accounting", "data-independent"],
    ["-m", "svt", "--svt-scale", "5", "--svt-cutoff", "20"],
    ["-m", "exponential", "--eta", "0.2", "--accounting", "expected"],
    ["-m", "gnmax", "--sigma", "4", "--accounting", "expected", "--q-bound", "integral"],
    ["-m", "confident-exponential", "-T", "35", "--sigma-threshold", "20", "--eta", "0.3"],
]


def _numbers(value, path=""):
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in ("input", "decisions", "read"):
                yield from _numbers(item, f"{path}.{key}")
    elif isinstance(value, list):
        for number, item in enumerate(value):
            yield from _numbers(item, f"{path}[{number}]")
    else:
        yield path, value


@pytest.mark.parametrize("args", RUNS, ids=lambda a: " ".join(a))
def test_dense_and_sparse_files_give_the_same_numbers(cli, vote_files, args, tmp_path):
    outputs = {}
    for name, extra in (("dense.npy", []), ("csr.npz", []), ("coo.npz", []),
                        ("long.csv", ["--classes", "400"]), ("long.tsv", ["--classes", "400"]),
                        ("long.parquet", ["--classes", "400"])):
        table = tmp_path / f"{name}.csv"
        result = cli.analyze(str(vote_files / name), *extra, *args, "-f", "json",
                             "--per-query", str(table))
        assert result.code == 0, result.err
        outputs[name] = (dict(_numbers(json.loads(result.out))), pd.read_csv(table))
    dense, dense_table = outputs.pop("dense.npy")
    for name, (summary, table) in outputs.items():
        assert summary.keys() == dense.keys()
        for key, value in dense.items():
            if isinstance(value, float):
                assert summary[key] == pytest.approx(value, rel=TOLERANCE, abs=1e-300), (name, key)
            else:
                assert summary[key] == value, (name, key)
        for column in dense_table.columns:
            if column == "label":  # drawn from another noise stream (noisy_argmax docstring)
                continue
            np.testing.assert_allclose(table[column], dense_table[column], rtol=TOLERANCE,
                                       err_msg=f"{name} {column}")


def test_sparse_runs_do_not_depend_on_chunks_or_workers(cli, vote_files, tmp_path):
    path = str(vote_files / "csr.npz")
    args = ["-T", "35", "--sigma-threshold", "20", "--sigma", "6", "-f", "json"]
    first = cli.analyze(path, *args, "--write-decisions", str(tmp_path / "a.csv"))
    again = cli.analyze(path, *args, "--workers", "2",
                        "--write-decisions", str(tmp_path / "b.csv"))
    assert first.code == again.code == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    strip = [json.loads(r.out) for r in (first, again)]
    for summary in strip:
        summary.pop("params", None)
        summary.pop("write_decisions", None)
    assert strip[0]["epsilon"] == strip[1]["epsilon"]
    from pate_cli import analyze
    from pate_cli.mechanisms import ConfidentGNMax
    mechanism = ConfidentGNMax(threshold=35, sigma_threshold=20, sigma=6)
    results = [analyze(path, mechanism=mechanism, chunk_size=size, per_query=True)
               for size in (7, 64, None)]
    for other in results[1:]:
        assert other.epsilon == results[0].epsilon
        assert (other.to_frame()["label"].fillna(-1)
                    == results[0].to_frame()["label"].fillna(-1)).all()


def test_sparse_decisions_read_back(cli, vote_files, tmp_path):
    path = str(vote_files / "csr.npz")
    args = ["-T", "35", "--sigma-threshold", "20", "--sigma", "6", "-f", "json"]
    written = cli.analyze(path, *args, "--write-decisions", str(tmp_path / "d.csv"))
    read = cli.analyze(path, *args, "--decisions", str(tmp_path / "d.csv"))
    assert json.loads(written.out)["epsilon"] == json.loads(read.out)["epsilon"]


@pytest.mark.parametrize("table, extra, message", [
    ("query,class,count\n0,1,3\n0,1,2\n1,0,5\n", ["--classes", "4"], "appears twice"),
    ("query,class,count\n0,1,5\n1,9,5\n", ["--classes", "4"], "outside the vocabulary"),
    ("query,class,count\n1,1,5\n0,2,5\n", ["--classes", "4"], "not ascending"),
    ("query,class,count\n0,1,5\n1,2,4\n", ["--classes", "4"], "query 1 sums to 4"),
    ("query,class,count\n0,1,5\n2,2,5\n", ["--classes", "4"], "query 1 has no rows"),
    ("query,class,count\n0,1,5\n1,2,-5\n", ["--classes", "4"], "negative"),
    ("query,class,count\n0,1,5\n1,2,5\n", [], "needs --classes"),
    ("query,class,count,output\n0,1,3\n0,2,2\n1,0,5\n", ["--classes", "4"], None),
    ("query,class,count,output\n0,1,3,0\n0,2,2,1\n1,0,5,1\n", ["--classes", "4"],
     "two outputs"),
])
def test_bad_long_tables_get_one_line(cli, tmp_path, table, extra, message):
    path = tmp_path / "bad.csv"
    path.write_text(table)
    result = cli.analyze(str(path), *extra)
    assert result.code == 2
    assert "Traceback" not in result.err
    lines = [line for line in result.err.splitlines() if line.startswith("Error")]
    assert len(lines) == 1
    if message is not None:
        assert message in lines[0], lines[0]


def test_sparse_refusals(cli, vote_files):
    path = str(vote_files / "csr.npz")
    for args, message in ((["-m", "interactive", "--student", path], "interactive"),
                          (["--individualized", "weighting"], "individualized")):
        result = cli.analyze(path, *args)
        assert result.code == 2, result.err
        assert message in result.err and "Traceback" not in result.err


def test_a_duplicate_in_a_coo_archive_is_refused(cli, tmp_path):
    matrix = sp.coo_matrix((np.array([3.0, 2.0, 5.0]), (np.array([0, 0, 1]), np.array([1, 1, 0]))),
                           shape=(2, 4))
    sp.save_npz(tmp_path / "dup.npz", matrix)
    result = cli.analyze(str(tmp_path / "dup.npz"))
    assert result.code == 2 and "query 0, class 1 appears twice" in result.err


def test_epsilon_per_output_is_each_outputs_own_run(tmp_path):
    """Each output's epsilon equals an expected-accounting run over its rows alone."""
    from pate_cli import analyze
    from pate_cli.mechanisms import ConfidentGNMax
    dense = token_votes(8, 120, 300, 50)
    rows, cols = np.nonzero(dense)
    lengths = np.array([10, 30, 5, 45, 30])
    output = np.repeat(np.arange(lengths.size), lengths)
    pd.DataFrame({"query": rows, "class": cols, "count": dense[rows, cols],
                  "output": output[rows]}).to_csv(tmp_path / "t.csv", index=False)
    mechanism = ConfidentGNMax(threshold=35, sigma_threshold=20, sigma=6)
    result = analyze(str(tmp_path / "t.csv"), classes=300, mechanism=mechanism,
                     accounting="expected")
    own = []
    for number in range(lengths.size):
        np.save(tmp_path / "i.npy", np.flatnonzero(output == number))
        own.append(analyze(dense, mechanism=mechanism, accounting="expected",
                           query_indices=str(tmp_path / "i.npy")).epsilon)
    summary = result.outputs
    assert summary["count"] == 5 and summary["completed"] == 5
    assert summary["tokens_per_output"] == {"min": 5, "median": 30, "max": 45}
    spread = summary["epsilon_per_output"]
    assert spread["min"] == pytest.approx(min(own), rel=TOLERANCE)
    assert spread["max"] == pytest.approx(max(own), rel=TOLERANCE)
    assert spread["median"] == pytest.approx(float(np.median(own)), rel=TOLERANCE)


def test_an_output_that_comes_back_is_refused(cli, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("query,class,count,output\n0,1,5,0\n1,1,5,1\n2,0,5,0\n")
    result = cli.analyze(str(path), "--classes", "3")
    assert result.code == 2 and "query 2 returns to output 0" in result.err


TOKENS = "sample_votes/tokens_zipf.npz"


@pytest.mark.parametrize("accounting", ["replay", "expected", "data-independent"])
@pytest.mark.parametrize("budget", [0.3, 2.0, 5.5, 9.0, 40.0])
def test_halting_at_outputs_never_cuts_one_nor_passes_the_budget(accounting, budget):
    """--halt-at output: the halt is an output's first token; the run up to it is within
    the budget; under expected accounting (every token charged as it would be), the run
    through the halted output's last token would pass the budget."""
    from pate_cli import analyze
    from pate_cli.inputs import load_votes
    from tests import ROOT
    path = str(ROOT / TOKENS)
    options = dict(threshold=70, sigma_threshold=30, sigma=15, accounting=accounting,
                   budget=budget, halt_at="output", per_query=False)
    result = analyze(path, "confident", **options)
    outputs = load_votes(path).outputs
    starts = np.flatnonzero(np.concatenate(([True], np.diff(outputs) != 0)))
    halted = result.budget.halted_at
    assert result.epsilon <= budget
    if halted is None:
        return
    assert halted in starts and result.queries == halted
    if accounting == "expected":
        end = starts[np.searchsorted(starts, halted) + 1] if halted < starts[-1] else outputs.size
        through = analyze(path, "confident", threshold=70, sigma_threshold=30, sigma=15,
                          accounting="expected", queries=int(end), per_query=False)
        # the halt is decided on the RDP figure (a reported PLD figure can be lower)
        rdp = through.epsilon if through.epsilon_rdp is None else through.epsilon_rdp
        assert rdp > budget * (1 - 1e-9)
    query_level = analyze(path, "confident", **{**options, "halt_at": "query"})
    assert query_level.budget.halted_at is None or halted <= query_level.budget.halted_at


def test_the_per_query_table_has_the_output_column(cli, tmp_path):
    from tests import ROOT
    table = tmp_path / "q.csv"
    result = cli.analyze(str(ROOT / TOKENS), "-T", "70", "--sigma-threshold", "30", "--sigma",
                         "15", "--per-query", str(table))
    assert result.code == 0, result.err
    frame = pd.read_csv(table)
    assert frame.columns[-1] == "output"
    assert frame["output"].is_monotonic_increasing and frame["output"].nunique() == 24


@pytest.mark.parametrize("args, message", [
    (["--halt-at", "output"], "needs --budget"),
    (["--halt-at", "output", "--budget", "3", "-m", "svt"], "-m svt or -m interactive)"),
])
def test_halt_at_output_refusals(cli, args, message):
    from tests import ROOT
    result = cli.analyze(str(ROOT / TOKENS), *args)
    assert result.code == 2 and message in result.err and "Traceback" not in result.err
    dense = cli.analyze(str(ROOT / "sample_votes/mnist_250_votes.npy"), "--halt-at", "output",
                        "--budget", "3")
    assert dense.code == 2 and "needs an output grouping" in dense.err


def test_the_report_and_the_plot_show_outputs(cli, tmp_path):
    from tests import ROOT
    args = [str(ROOT / TOKENS), "-T", "70", "--sigma-threshold", "30", "--sigma", "15",
            "--budget", "8", "--halt-at", "output"]
    report = cli.report(*args, "-o", str(tmp_path / "r.md"))
    assert report.code == 0, report.err
    text = (tmp_path / "r.md").read_text()
    assert "Outputs (generated sequences): 24," in text and "--halt-at output" in text
    table = tmp_path / "q.csv"
    assert cli.analyze(*args, "--per-query", str(table)).code == 0
    plotted = cli.plot("history", str(table), "--x", "output", "--budget", "8",
                       "-o", str(tmp_path / "h.svg"))
    assert plotted.code == 0, plotted.err
    assert "outputs (generated sequences)" in (tmp_path / "h.svg").read_text()
    plain = tmp_path / "plain.csv"
    assert cli.analyze(str(ROOT / "sample_votes/mnist_250_votes.npy"), "-n", "50",
                       "--per-query", str(plain)).code == 0
    refused = cli.plot("history", str(plain), "--x", "output", "-o", str(tmp_path / "p.svg"))
    assert refused.code == 2 and "no output column" in refused.err


def test_the_gumbel_zero_block_replay_has_the_softmax_frequencies():
    """Exponential mechanism on one row over 40 classes (stored 3 and 17), eta 0.5:
    100,000 seeded Gumbel-max replays against the softmax by a chi-square test; with the
    fixed seed the statistic is below the 1e-6 false-alarm quantile."""
    from scipy.stats import chi2
    classes, count, eta = 40, 100_000, 0.5
    dense = np.zeros((1, classes))
    dense[0, 3], dense[0, 17] = 6.0, 2.0
    rows = as_sparse(np.repeat(dense, count, axis=0))[0:count]
    draws = NoiseSource(5).draw(stream=9, kind="gumbel", start=0, count=count, width=4)
    labels = noisy_argmax(rows, draws, kind="gumbel", weight=eta)
    observed = np.bincount(labels, minlength=classes)
    expected = count * softmax(eta * dense[0])
    statistic = float(((observed - expected) ** 2 / expected).sum())
    assert statistic < chi2.isf(1e-6, classes - 1)


@pytest.mark.parametrize("args", [
    {"mechanism": "confident", "threshold": 70, "sigma_threshold": 30, "sigma": 15,
     "accounting": "expected"},
    {"mechanism": "gnmax", "sigma": 15, "accounting": "expected", "q_bound": "integral"},
    {"mechanism": "exponential", "eta": 0.2, "accounting": "expected"},
])
@pytest.mark.parametrize("sample", [TOKENS, "sample_votes/tokens_stdlib.npz"])
def test_the_shipped_token_sample_equals_its_dense_rows(args, sample):
    """The shipped token samples (the whole outputs among their first 300 tokens;
    vocabularies 32,000 and 8,192) against the same rows as a dense array: every figure
    within the tolerance."""
    from pate_cli import analyze
    from pate_cli.inputs import load_votes
    from pate_cli.inputs.output_ids import output_starts, whole_outputs
    from tests import ROOT
    votes = load_votes(ROOT / sample)
    rows = whole_outputs(output_starts(votes.outputs), 300, votes.queries)
    dense = votes.votes[0:rows].dense()
    sparse = analyze(votes, queries=rows, per_query=True, **args)
    plain = analyze(dense, per_query=True, **args)
    for key in ("epsilon", "epsilon_data_independent", "answered"):
        assert getattr(sparse, key) == pytest.approx(getattr(plain, key), rel=TOLERANCE)
    for column in ("log_q", "log_pr_answered", "epsilon", "epsilon_cumulative"):
        np.testing.assert_allclose(sparse.to_frame()[column], plain.to_frame()[column],
                                   rtol=TOLERANCE, err_msg=column)
