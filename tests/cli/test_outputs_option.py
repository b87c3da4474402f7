"""``--outputs FILE`` on pate-analyze and pate-report: the output grouping for any input
(dense votes, ``--predictions``, sparse), the same JSON ``outputs``, epsilon, halt and
per-query ``output`` column as the same votes stored sparse with their grouping inside; each
bad file refused in one line, exit 2, nothing written."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from tests.synthetic import TOLERANCE

LENGTHS = [9, 14, 6, 21, 11, 17, 8, 14]  # tokens per output: 100 queries
TEACHERS, VOCABULARY = 30, 40


def _predictions() -> np.ndarray:
    """(tokens x teachers) predicted token ids: most teachers agree, some do not."""
    rng = np.random.default_rng(5)
    queries = sum(LENGTHS)
    favourite = rng.integers(VOCABULARY, size=queries)
    agree = rng.uniform(0.3, 1.0, size=queries)
    votes = np.where(rng.uniform(size=(queries, TEACHERS)) < agree[:, None],
                     favourite[:, None], rng.integers(VOCABULARY, size=(queries, TEACHERS)))
    return votes.astype(np.int64)


def _histogram(predictions: np.ndarray) -> np.ndarray:
    rows = np.repeat(np.arange(predictions.shape[0]), predictions.shape[1])
    dense = np.zeros((predictions.shape[0], VOCABULARY), dtype=np.int64)
    np.add.at(dense, (rows, predictions.ravel()), 1)
    return dense


@pytest.fixture
def files(tmp_path):
    """The same token votes as predictions, dense counts and a grouped sparse archive, and
    their output ids as .npy and .csv."""
    predictions = _predictions()
    dense = _histogram(predictions)
    ids = np.repeat(np.arange(len(LENGTHS)) * 3 + 10, LENGTHS)  # ids need not be 0, 1, ...
    np.save(tmp_path / "preds.npy", predictions)
    np.save(tmp_path / "dense.npy", dense)
    np.save(tmp_path / "outs.npy", ids)
    (tmp_path / "outs.csv").write_text("output\n" + "\n".join(map(str, ids)) + "\n")
    sp.save_npz(tmp_path / "tokens.npz", sp.csr_matrix(dense))
    with np.load(tmp_path / "tokens.npz") as archive:
        members = dict(archive)
    np.savez(tmp_path / "tokens.npz", **members, output=ids)
    return tmp_path


RUNS = [
    ["-T", "20", "--sigma-threshold", "8", "--sigma", "4"],
    ["-T", "20", "--sigma-threshold", "8", "--sigma", "4", "--accounting", "expected",
     "--budget", "9", "--halt-at", "output"],
    ["-m", "gnmax", "--sigma", "6", "--budget", "9", "--halt-at", "output"],
    ["-m", "lnmax", "--laplace-scale", "4", "--accounting", "data-independent",
     "--budget", "15", "--halt-at", "output"],
]


def _run(cli, folder, *args) -> tuple[dict, pd.DataFrame]:
    table = folder / "q.csv"
    result = cli.analyze(*args, "-f", "json", "--per-query", str(table))
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    summary.pop("input")
    summary.pop("read")  # how the votes were read: the comparison's point
    return summary, pd.read_csv(table)


@pytest.mark.parametrize("args", RUNS, ids=lambda a: " ".join(a))
def test_dense_votes_with_outputs_match_the_grouped_sparse_archive(cli, files, args):
    dense, dense_table = _run(cli, files, files / "dense.npy", "--outputs", files / "outs.npy",
                              *args)
    sparse, sparse_table = _run(cli, files, files / "tokens.npz", *args)
    assert dense["outputs"]["count"] == len(LENGTHS)
    assert dense["outputs"]["tokens_per_output"] == {"min": 6, "median": 12.5, "max": 21}
    assert dense["budget"] is None or dense["budget"]["halt_at"] == "output"
    assert dense.keys() == sparse.keys()
    for key in ("epsilon", "answered", "queries", "budget", "outputs"):
        _assert_close(dense[key], sparse[key], key)
    assert dense_table.columns[-1] == sparse_table.columns[-1] == "output"
    np.testing.assert_array_equal(dense_table["output"], sparse_table["output"])
    np.testing.assert_allclose(dense_table["epsilon_cumulative"],
                               sparse_table["epsilon_cumulative"], rtol=TOLERANCE)


def _assert_close(dense, sparse, key: str) -> None:
    if isinstance(dense, dict):
        assert dense.keys() == sparse.keys(), key
        for name, value in dense.items():
            _assert_close(value, sparse[name], f"{key}.{name}")
    elif isinstance(dense, float):
        assert sparse == pytest.approx(dense, rel=TOLERANCE, abs=1e-300), key
    else:
        assert dense == sparse, key


def test_a_halt_at_output_on_dense_votes_stops_at_an_output(cli, files):
    summary, table = _run(cli, files, files / "dense.npy", "--outputs", files / "outs.npy",
                          *RUNS[1])
    halted = summary["budget"]["halted_at"]
    starts = np.cumsum([0, *LENGTHS])
    assert halted in starts[1:-1] and summary["outputs"]["completed"] == list(starts).index(halted)
    assert len(table) == halted and summary["epsilon"] <= 9
    query_level, _ = _run(cli, files, files / "dense.npy", *RUNS[1][:-2])
    assert query_level["budget"]["halted_at"] > halted  # the query-level budget cuts one
    text = cli.analyze(files / "dense.npy", "--outputs", files / "outs.npy", *RUNS[1]).out
    completed = summary["outputs"]["completed"]
    assert f"halted before output {completed} (0-based; its first query is {halted})," in text


def test_predictions_with_outputs_give_the_dense_votes_numbers(cli, files):
    for args in RUNS[1:3]:
        by_predictions = _run(cli, files, "--predictions", files / "preds.npy", "--classes",
                              str(VOCABULARY), "--outputs", files / "outs.npy", *args)
        by_votes = _run(cli, files, files / "dense.npy", "--outputs", files / "outs.npy", *args)
        assert by_predictions[0] == by_votes[0]
        pd.testing.assert_frame_equal(by_predictions[1], by_votes[1])


def test_npy_and_csv_outputs_give_the_same_bytes(cli, files):
    runs = [cli.analyze(files / "dense.npy", "--outputs", files / name, *RUNS[1], "-f", "json")
            for name in ("outs.npy", "outs.csv")]
    assert runs[0].code == 0 and _but_files(runs[0].out) == _but_files(runs[1].out)
    assert json.loads(runs[1].out)["files"]["outputs"]["path"] == str(files / "outs.csv")


def _but_files(printed: str) -> dict:
    """A JSON summary without ``files`` (the provenance of the files given)."""
    return {key: value for key, value in json.loads(printed).items() if key != "files"}


def test_the_grouping_inside_the_votes_may_be_repeated_not_contradicted(cli, files):
    own = cli.analyze(files / "tokens.npz", *RUNS[1], "-f", "json")
    again = cli.analyze(files / "tokens.npz", "--outputs", files / "outs.csv", *RUNS[1],
                        "-f", "json")
    assert again.code == 0 and _but_files(again.out) == _but_files(own.out)
    np.save(files / "other.npy", np.repeat(np.arange(4), 25))
    refused = cli.analyze(files / "tokens.npz", "--outputs", files / "other.npy")
    assert refused.code == 2 and refused.err == (
        f"Error: {files / 'other.npy'}: --outputs gives query 0 output 0, but the votes "
        f"({files / 'tokens.npz'}) hold their own grouping, with output 10 (give one grouping: "
        "drop --outputs, or the votes' own)\n")


BAD = [
    (np.arange(99) // 20, "has 99 output ids, but the votes ({votes}) have 100 queries"),
    (np.where(np.arange(100) == 40, np.nan, np.arange(100) // 20),
     "query 40 has output nan, not a whole-number id"),
    (np.arange(100) / 7, "query 1 has output 0.14285714285714285, not a whole-number id"),
    (np.where(np.arange(100) == 3, -2, 0), "query 3 has output -2; outputs are ids >= 0"),
    (np.where((np.arange(100) >= 30) & (np.arange(100) < 60), 1, 0),
     "query 60 returns to output 0 after another output (an output's queries must be "
     "consecutive rows)"),
    (np.zeros((100, 2)), "expected one output id per query (a single column), got shape "
                         "(100, 2)"),
]


@pytest.mark.parametrize("command", ["analyze", "report"])
@pytest.mark.parametrize(("ids", "message"), BAD, ids=[m[:30] for _, m in BAD])
def test_each_bad_outputs_file_exits_2_and_writes_nothing(cli, files, command, ids, message):
    bad = files / "bad.npy"
    np.save(bad, ids)
    votes = files / "dense.npy"
    written = files / ("summary.json" if command == "analyze" else "report.md")
    extra = ["--per-query", str(files / "table.csv")] if command == "analyze" else []
    result = getattr(cli, command)(votes, "--outputs", bad, "--budget", "5", "--halt-at",
                                   "output", "-o", written, *extra)
    assert result.code == 2
    assert result.err == f"Error: {bad}: {message.format(votes=votes)}" + (
        " (one output id per row of the votes)\n" if message.startswith("has 99") else "\n")
    assert not written.exists() and not (files / "table.csv").exists()
    assert not (files / "report_files").exists()


def test_the_outputs_file_is_an_input_no_output_may_overwrite(cli, files):
    outs = files / "outs.npy"
    before = outs.read_bytes()
    result = cli.analyze(files / "dense.npy", "--outputs", outs, "--per-query", outs)
    assert result.code == 2 and "is the input --outputs" in result.err
    assert outs.read_bytes() == before


def test_halt_at_output_without_a_grouping_names_outputs(cli, files):
    result = cli.analyze(files / "dense.npy", "--budget", "5", "--halt-at", "output")
    assert result.code == 2 and "needs an output grouping (--outputs FILE, " in result.err


def test_the_report_states_the_outputs_of_dense_votes(cli, files):
    report = files / "r.md"
    result = cli.report(files / "dense.npy", "--outputs", files / "outs.npy", *RUNS[1],
                        "-o", report)
    assert result.code == 0, result.err
    text = report.read_text()
    assert "Outputs (generated sequences): 8, of 6 / 12.5 / 21 tokens" in text
    assert "--outputs" in text and (files / "r_files" / "outputs.svg").exists()
    # each output's own epsilon says its accountant and, data-dependent, that it is not
    # for publication (it said neither); a data-independent run's says RDP alone
    assert "(its tokens' cost alone; RDP; data-dependent, unsanitised: not for " in text
    independent = files / "i.md"
    assert cli.report(files / "dense.npy", "--outputs", files / "outs.npy", *RUNS[3],
                      "-o", independent).code == 0
    assert "(its tokens' cost alone; RDP) " in independent.read_text()


def test_queries_cutting_an_output_leave_it_not_completed(cli):
    """-n 990 ends inside output 23 (25 tokens): 23 outputs are processed whole (it said
    24, and counted the outputs and their tokens over the cut rows: a 15-token output)."""
    from tests import SAMPLES

    args = [str(SAMPLES / "tokens_stdlib.npz"), "-T", "90", "--sigma-threshold", "50",
            "--sigma", "25", "--accounting", "expected", "-f", "json"]
    whole = json.loads(cli.analyze(*args).out)["outputs"]
    cut = json.loads(cli.analyze(*args, "-n", "990").out)["outputs"]
    assert cut["completed"] == 23 < whole["completed"] == whole["count"]
    assert (cut["count"], cut["tokens_per_output"]) == (whole["count"],
                                                         whole["tokens_per_output"])


def test_the_reports_command_leaves_out_outputs_the_votes_file_carries(cli, tmp_path):
    """An archive with its own output ids: the rebuilt pate-analyze command needs no
    --outputs (it printed an OUTPUTS.npy placeholder that named no file); from a summary,
    whose source is not recorded, the placeholder's note says when to leave it out."""
    from tests import SAMPLES

    args = [str(SAMPLES / "tokens_stdlib.npz"), "-m", "gnmax", "--sigma", "25", "-n", "400"]
    report = tmp_path / "r.md"
    assert cli.report(*args, "-o", report).code == 0
    assert "--outputs" not in report.read_text().split("## Reproduction")[1]
    summary, again = tmp_path / "s.json", tmp_path / "f.md"
    assert cli.analyze(*args, "-f", "json", "-o", summary).code == 0
    assert cli.report("--from", summary, "-o", again).code == 0
    assert "leave it out where the votes file carries its own" in again.read_text()


def test_queries_inside_an_output_keep_the_outputs_before_it_whole(cli, files):
    """``-n 15`` ends inside the second output (queries 9 to 22): the run analyses the
    first 9 queries, and says so in one Warning line; inside the first output: exit 2."""
    args = (files / "tokens.npz", "-T", "20", "--sigma-threshold", "8", "--sigma", "4",
            "--budget", "30", "--halt-at", "output", "-f", "json")
    done = cli.analyze(*args, "-n", "15")
    assert done.code == 0 and json.loads(done.out)["queries"] == 9
    assert done.err == ("Warning: -n 15 ends inside output 13 (queries 9 to 22): the run "
                        "analyses the first 9 queries, the outputs before it whole (a "
                        "generation is never cut)\n")
    refused = cli.analyze(*args, "-n", "5")
    assert refused.code == 2 and refused.out == ""
    assert refused.err.startswith("Error: -n 5 ends inside output 10 (queries 0 to 8): give "
                                  "-n 9 or more") and refused.err.count("\n") == 1
