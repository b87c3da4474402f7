"""--smooth-sensitivity on sparse (token) votes (math:smooth with the zero block of math:sparse):
the same report as the dense rows, the same bytes whatever the chunk size."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from tests import ROOT
from tests.accounting.test_sparse_walks import sparse_rows
from tests.synthetic import TOLERANCE

TOKENS = ROOT / "sample_votes/tokens_zipf.npz"
TEACHERS = 50

RUNS = [
    ["-m", "gnmax", "--sigma", "4", "--accounting", "expected"],
    ["-T", "35", "--sigma-threshold", "12", "--sigma", "6"],
    ["-T", "35", "--sigma-threshold", "12", "--sigma", "6", "--accounting", "expected"],
    ["-T", "35", "--sigma-threshold", "12", "--sigma", "6", "--query-indices", "picked.npy"],
]


@pytest.fixture(scope="module")
def vote_files(tmp_path_factory):
    """Per vocabulary K: 250 rows of 50 teachers (a third unanimous, a third tied at the
    top, a third spread over at most 6 classes), dense and as a CSR archive."""
    folder = tmp_path_factory.mktemp("sparse_ss")
    for classes in (7, 400, 3000):
        dense = sparse_rows(np.random.default_rng(classes), 250, classes, TEACHERS, 6)
        np.save(folder / f"dense{classes}.npy", dense)
        sp.save_npz(folder / f"sparse{classes}.npz", sp.csr_matrix(dense))
    np.save(folder / "picked.npy", np.random.default_rng(1).permutation(250)[:180])
    return folder


def _run(cli, path, args, folder, history):
    args = [str(folder / a) if a.endswith(".npy") else a for a in args]
    result = cli.analyze(str(path), *args, "--smooth-sensitivity", "--ss-history",
                         str(history), "--ss-every", "60", "-f", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)["smooth_sensitivity"], pd.read_csv(history)


@pytest.mark.parametrize("classes", [7, 400, 3000])
@pytest.mark.parametrize("args", RUNS, ids=lambda a: " ".join(a))
def test_the_sparse_report_equals_the_dense_one(cli, vote_files, tmp_path, classes, args):
    """Every number of the JSON smooth_sensitivity block and of the --ss-history rows,
    sparse archive against the dense array, within 1e-12 relative."""
    sparse, sparse_rows_ = _run(cli, vote_files / f"sparse{classes}.npz", args, vote_files,
                                tmp_path / "s.csv")
    dense, dense_rows = _run(cli, vote_files / f"dense{classes}.npy", args, vote_files,
                             tmp_path / "d.csv")
    assert sparse.keys() == dense.keys() and sparse["conditions"] == dense["conditions"]
    assert sparse["smooth_sensitivity"] > 0 and sparse["sanitized_epsilon"] is not None
    for key, value in dense.items():
        if key != "conditions":
            assert sparse[key] == pytest.approx(value, rel=TOLERANCE, abs=0), key
    assert list(sparse_rows_.columns) == list(dense_rows.columns)
    assert len(dense_rows) >= 3
    for column in dense_rows.columns:
        np.testing.assert_allclose(sparse_rows_[column], dense_rows[column], rtol=TOLERANCE,
                                   atol=0, err_msg=column)


def test_both_steps_depend_on_the_data_in_the_compared_runs(vote_files):
    """The runs above walk: the answer step's and (Confident) the threshold step's bounds
    depend on the data, so their local sensitivities are compared, not skipped."""
    from pate_cli import analyze
    for args in ({"mechanism": "gnmax", "sigma": 4, "accounting": "expected"},
                 {"threshold": 35, "sigma_threshold": 12, "sigma": 6}):
        report = analyze(str(vote_files / "sparse3000.npz"), smooth_sensitivity=True,
                         **args).smooth_sensitivity
        assert not report.answer_data_independent
        assert "threshold" not in args or not report.selection_data_independent


def test_chunk_sizes_give_the_same_bytes(vote_files):
    """chunk_size 7, 64 or the default: the same JSON summary and --ss-history bytes (the
    release reads sparse votes in its own chunks, whatever the analysis' chunk size)."""
    from pate_cli import analyze
    from pate_cli.outputs.summary_json import smooth_sensitivity_history
    outputs = []
    for size in (7, 64, None):
        result = analyze(str(vote_files / "sparse400.npz"), "confident", threshold=35,
                         sigma_threshold=12, sigma=6, accounting="expected",
                         smooth_sensitivity=True, ss_every=40, chunk_size=size)
        summary = result.to_dict()
        summary["params"].pop("chunk_size", None)
        assert summary["smooth_sensitivity"]["sanitized_epsilon"] is not None
        outputs.append((json.dumps(summary, sort_keys=True),
                        json.dumps(smooth_sensitivity_history(result.smooth_sensitivity))))
    assert outputs[0] == outputs[1] == outputs[2]


@pytest.mark.parametrize("args", [
    {"mechanism": "confident", "threshold": 70, "sigma_threshold": 25, "sigma": 10,
     "accounting": "expected"},
    {"mechanism": "confident", "threshold": 70, "sigma_threshold": 25, "sigma": 12},
    {"mechanism": "gnmax", "sigma": 5, "accounting": "expected"},
])
def test_the_shipped_token_sample_equals_its_dense_rows(args):
    """sample_votes/tokens_zipf.npz (the whole outputs among its first 300 tokens,
    vocabulary 32,000) against the same rows as a dense array: the GNSS report within 1e-12
    (the Python API)."""
    from pate_cli import analyze
    from pate_cli.inputs import load_votes
    from pate_cli.inputs.output_ids import output_starts, whole_outputs
    votes = load_votes(TOKENS)
    rows = whole_outputs(output_starts(votes.outputs), 300, votes.queries)
    dense = votes.votes[0:rows].dense()
    sparse = analyze(votes, queries=rows, smooth_sensitivity=True, ss_every=100, **args)
    plain = analyze(dense, smooth_sensitivity=True, ss_every=100, **args)
    mine, theirs = sparse.smooth_sensitivity, plain.smooth_sensitivity
    assert not mine.answer_data_independent and mine.sanitized_epsilon is not None
    assert len(mine.checkpoints) == len(theirs.checkpoints) == 3
    for point, other in zip(mine.checkpoints, theirs.checkpoints, strict=True):
        for key in ("order", "beta", "smooth_sensitivity", "sigma_ss", "epsilon_before",
                    "epsilon_after", "noise_std", "answered"):
            assert getattr(point, key) == pytest.approx(getattr(other, key), rel=TOLERANCE)
    assert mine.sanitized_epsilon == pytest.approx(theirs.sanitized_epsilon, rel=TOLERANCE)


def test_the_report_sanitises_token_votes(cli, tmp_path):
    """pate-report on the token sample with --smooth-sensitivity publishes the sanitised
    figure pate-analyze computes."""
    args = [str(TOKENS), "-T", "70", "--sigma-threshold", "25", "--sigma", "10",
            "--accounting", "expected", "--smooth-sensitivity"]
    report = cli.report(*args, "-o", str(tmp_path / "r.md"))
    assert report.code == 0, report.err
    analysed = cli.analyze(*args, "-f", "json")
    published = json.loads(analysed.out)["smooth_sensitivity"]["sanitized_epsilon"]
    text = (tmp_path / "r.md").read_text()
    assert "sanitised" in text and f"{published:.4f}"[:-1] in text


def test_the_release_reads_a_chunk_at_a_time(tmp_path, monkeypatch):
    """10,000 sparse rows over K = 2^40 (no dense row could be formed): the release reads
    the file a chunk of at most 4,096 rows at a time, each row once, also for rows picked
    by --query-indices."""
    from pate_cli import analyze
    from pate_cli.inputs.rows import AnalysedRows
    dense = sparse_rows(np.random.default_rng(3), 10_000, 16, 200, 4)
    matrix = sp.csr_matrix(dense)
    classes = 2**40
    spread = matrix.indices.astype(np.int64) * (classes // 16)
    sp.save_npz(tmp_path / "wide.npz",
                sp.csr_matrix((matrix.data, spread, matrix.indptr), shape=(10_000, classes)))
    np.save(tmp_path / "picked.npy", np.arange(10_000)[::-1][:9_000])
    reads = []
    read = AnalysedRows.read
    monkeypatch.setattr(AnalysedRows, "read",
                        lambda self, *span: reads.append(read(self, *span)) or reads[-1])
    for extra in ({}, {"query_indices": str(tmp_path / "picked.npy")}):
        reads.clear()
        result = analyze(str(tmp_path / "wide.npz"), "confident", threshold=140,
                         sigma_threshold=50, sigma=10, smooth_sensitivity=True, **extra)
        assert not result.smooth_sensitivity.answer_data_independent
        queries = 9_000 if extra else 10_000
        assert result.smooth_sensitivity.queries == queries
        assert sum(len(r) for r in reads) == queries and max(len(r) for r in reads) <= 4096


def test_bounds_that_never_depend_on_the_votes_release_epsilon_as_it_is(cli):
    """The shipped token sample under Confident: neither step's data-dependent bound ever
    helps at the order, so every local sensitivity is 0 and the epsilon is public as it
    is: no noise, no release cost (it printed "+/- nan", and its JSON failed on inf)."""
    import json

    args = ("sample_votes/tokens_zipf.npz", "-m", "confident", "--smooth-sensitivity")
    done = cli.analyze(*args, "-f", "json")
    assert done.code == 0, done.err
    report = json.loads(done.out)["smooth_sensitivity"]
    assert report["smooth_sensitivity"] == report["noise_std"] == report["sigma_ss"] == 0.0
    assert (report["sanitized_epsilon"] == report["epsilon_after"]
            == report["epsilon_before"])
    assert "nan" not in cli.analyze(*args).out


@pytest.mark.parametrize("mechanism", ["confident", "interactive"])
@pytest.mark.parametrize("accounting", ["replay", "expected"])
def test_the_release_starts_from_the_runs_epsilon(mechanism, accounting):
    """The release charges the threshold step as the run does (each query's curve capped
    by the exact data-independent one, math:screening), so its epsilon before the release
    is the run's at the same order; under --screening gaussian it is the papers' figure,
    and the exact cap only lowers it."""
    from pate_cli import analyze

    given = dict(queries=640, accounting=accounting, smooth_sensitivity=True)
    if mechanism == "interactive":
        given["student"] = "sample_votes/mnist_250_student.npy"
    votes = "sample_votes/mnist_250_votes.npy"
    run = analyze(votes, mechanism, **given)
    papers = analyze(votes, mechanism, screening="gaussian", **given)
    for result in (run, papers):
        report = result.smooth_sensitivity
        assert report.order == result.order
        assert report.epsilon_before == pytest.approx(result.epsilon, rel=1e-12)
    held = analyze(votes, mechanism, screening="gaussian", **given, order=run.order)
    assert run.smooth_sensitivity.epsilon_before < held.smooth_sensitivity.epsilon_before
    assert run.smooth_sensitivity.noise_std == held.smooth_sensitivity.noise_std
