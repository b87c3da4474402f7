"""``--write-decisions`` and ``--decisions`` at the command line (cli:decisions)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests import SAMPLES

VOTES = SAMPLES / "mnist_250_votes.npy"
LABELS = SAMPLES / "mnist_250_labels.npy"
STUDENT = SAMPLES / "mnist_250_student.npy"
EXTRA = {"gnmax": [], "lnmax": [], "confident": [], "svt": ["--svt-scale", "0.5",
                                                               "--svt-cutoff", "5"],
         "interactive": ["--student", STUDENT]}


def summary_without_decisions(out: str) -> dict:
    summary = json.loads(out)
    summary.pop("decisions")
    return summary


@pytest.mark.parametrize("mechanism", list(EXTRA))
@pytest.mark.parametrize("extension", [".csv", ".jsonl", ".npz"])
def test_write_then_read_gives_the_same_summary(cli, tmp_path, mechanism, extension):
    path = tmp_path / f"d{extension}"
    common = [VOTES, "-n", 400, "-m", mechanism, *EXTRA[mechanism], "--labels", LABELS,
              "-f", "json"]
    first = cli.analyze(*common, "--write-decisions", path)
    assert first.code == 0, first.err
    second = cli.analyze(*common, "--decisions", path)
    assert second.code == 0, second.err
    assert summary_without_decisions(first.out) == summary_without_decisions(second.out)
    recorded = json.loads(second.out)["decisions"]
    assert recorded["rows"] == 400 and recorded["path"] == str(path)
    assert len(recorded["sha256"]) == 64
    # the same decisions give the same bytes
    again = tmp_path / f"again{extension}"
    assert cli.analyze(*common, "--write-decisions", again).code == 0
    assert again.read_bytes() == path.read_bytes()


def test_budget_run_writes_rows_up_to_the_halt_and_reads_back(cli, tmp_path):
    path = tmp_path / "d.csv"
    common = [VOTES, "--budget", 2, "-f", "json"]
    first = cli.analyze(*common, "--write-decisions", path)
    summary = json.loads(first.out)
    halted = summary["budget"]["halted_at"]
    lines = path.read_text().splitlines()
    assert lines[0] == "# mechanism: confident" and lines[1] == "query,outcome,label"
    assert len(lines) - 2 == halted
    second = cli.analyze(*common, "--decisions", path)
    assert summary_without_decisions(first.out) == summary_without_decisions(second.out)


@pytest.mark.parametrize("extension", [".csv", ".npz"])
def test_a_budget_run_that_halts_at_once_writes_no_rows_and_reads_them_back(
        cli, tmp_path, extension):
    """A budget below the first query's cost: the decisions file has its header and no
    rows, and the run from it is the same run (it was refused: "has no rows"). Nothing
    released: no data-independent cost either."""
    path = tmp_path / f"d{extension}"
    common = [VOTES, "--budget", "0.01", "-f", "json"]
    first = cli.analyze(*common, "--write-decisions", path)
    assert first.code == 0, first.err
    summary = json.loads(first.out)
    assert summary["budget"]["halted_at"] == 0 and summary["queries"] == 0
    assert summary["epsilon"] == 0.0 and summary["epsilon_data_independent"] == 0.0
    second = cli.analyze(*common, "--decisions", path)
    assert second.code == 0, second.err
    assert summary_without_decisions(first.out) == summary_without_decisions(second.out)
    assert json.loads(second.out)["decisions"]["rows"] == 0


def test_csv_rows(cli, tmp_path):
    path = tmp_path / "d.csv"
    assert cli.analyze(VOTES, "-n", 5, "-m", "gnmax", "--write-decisions", path).code == 0
    rows = path.read_text().splitlines()[2:]
    assert [row.split(",")[0] for row in rows] == ["0", "1", "2", "3", "4"]
    assert all(row.split(",")[1] == "answered" and row.split(",")[2] for row in rows)


def test_npy_masks_and_labels(cli, tmp_path):
    released = tmp_path / "labels.npy"
    mask = tmp_path / "mask.npy"
    made = tmp_path / "d.npz"
    common = [VOTES, "-n", 300, "--labels", LABELS, "-f", "json"]
    first = json.loads(cli.analyze(*common, "--write-decisions", made).out)
    with np.load(made) as archive:
        np.save(released, archive["label"])
        np.save(mask, archive["label"] >= 0)
    by_labels = json.loads(cli.analyze(*common, "--decisions", released).out)
    assert by_labels["epsilon"] == first["epsilon"]
    assert by_labels["label_accuracy"] == first["label_accuracy"]
    by_mask = json.loads(cli.analyze(*common, "--decisions", mask).out)
    assert by_mask["epsilon"] == first["epsilon"] and by_mask["label_accuracy"] is None
    # one per file row also works with --queries
    np.save(mask, np.zeros(9000, dtype=bool))
    nothing = json.loads(cli.analyze(*common, "--decisions", mask).out)
    assert nothing["answered"] == 0


def _csv(path, rows, mechanism="confident"):
    text = "" if mechanism is None else f"# mechanism: {mechanism}\n"
    path.write_text(text + "query,outcome,label\n" + "".join(f"{r}\n" for r in rows))
    return path


BAD = {
    "length": (lambda p: _csv(p, ["0,answered,1", "1,refused,"]), "2 decisions, but the "
               "analysis has 3 queries"),
    "out of range": (lambda p: _csv(p, ["0,answered,1", "1,refused,", "9000,refused,"]),
                     "row 3: query 9000 is outside 0..8999"),
    "repeated": (lambda p: _csv(p, ["0,answered,1", "0,refused,", "2,refused,"]),
                 "row 2: query 0 is listed twice"),
    "order": (lambda p: _csv(p, ["0,answered,1", "2,refused,", "1,refused,"]),
              "row 2: query 2, but the analysis processes query 1 there"),
    "outcome": (lambda p: _csv(p, ["0,answered,1", "1,student,", "2,refused,"]),
                "row 2: outcome 'student' is not one -m confident can produce"),
    "label range": (lambda p: _csv(p, ["0,answered,10", "1,refused,", "2,refused,"]),
                    "row 1: label 10 is outside the classes 0..9"),
    "refused label": (lambda p: _csv(p, ["0,answered,1", "1,refused,3", "2,refused,"]),
                      "row 2: a label on a query with outcome 'refused'"),
    "mechanism": (lambda p: _csv(p, ["0,answered,1", "1,answered,3", "2,answered,1"],
                                 "gnmax"),
                  "decisions made by -m gnmax, but the analysis is -m confident"),
    "no rows": (lambda p: _csv(p, []), "0 decisions, but the analysis has 3 queries"),
    "header": (lambda p: (p.write_text("q,o,l\n0,answered,1\n"), p)[1],
               "expected the header query,outcome,label"),
    "mask length": (lambda p: (np.save(p.with_suffix(".npy"), np.ones(5, dtype=bool)),
                               p.with_suffix(".npy"))[1],
                    "5 decisions, but the analysis has 3 queries"),
    "jsonl": (lambda p: (p.with_suffix(".jsonl").write_text('{"query": 0, "outcome": '
                                                            '"answered", "label": 1.5}\n'),
                         p.with_suffix(".jsonl"))[1],
              "line 1: label 1.5 is not a class number"),
    "extension": (lambda p: (p.with_suffix(".txt").write_text("x"), p.with_suffix(".txt"))[1],
                  "unknown extension for a decisions file"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_decisions_exit_2_with_one_line_and_no_output(cli, tmp_path, case):
    make, message = BAD[case]
    path = make(tmp_path / "d.csv")
    out = tmp_path / "summary.json"
    written = tmp_path / "w.csv"
    result = cli.analyze(VOTES, "-n", 3, "--decisions", path, "-o", out,
                         "--write-decisions", written, "--per-query", tmp_path / "q.csv")
    assert result.code == 2
    assert "Traceback" not in result.err
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.err
    assert str(path) in lines[0] and message in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_the_recorded_mechanism_name_is_case_insensitive(cli, tmp_path):
    """Mechanism names are case-insensitive everywhere, the decisions file's too."""
    path = _csv(tmp_path / "d.csv", ["0,answered,1", "1,refused,", "2,answered,1"],
                "Confident")
    assert cli.analyze(VOTES, "-n", 3, "--decisions", path).code == 0


def test_decisions_with_expected_accounting_is_refused(cli, tmp_path):
    path = _csv(tmp_path / "d.csv", ["0,answered,1"])
    result = cli.analyze(VOTES, "-n", 1, "--decisions", path, "--accounting", "expected")
    assert result.code == 2
    assert result.err.startswith("Error: --decisions gives the run's own decisions")


def test_write_decisions_extension_checked_before_work(cli, tmp_path):
    result = cli.analyze(VOTES, "-n", 3, "--write-decisions", tmp_path / "d.parquet")
    assert result.code == 2 and "unknown extension for --write-decisions" in result.err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("mechanism, options", [
    ("confident", ["--accounting", "expected"]), ("gnmax", []),
    ("lnmax", ["--labels", LABELS]), ("interactive", ["--student", STUDENT]),
    ("svt", ["--svt-scale", "0.5", "--svt-cutoff", "20"]),
    ("confident", ["--budget", "2", "--query-indices", SAMPLES / "mnist_250_labels.npy"]),
])
@pytest.mark.parametrize("extension", [".csv", ".jsonl", ".npz"])
def test_streamed_decisions_are_the_bytes_of_the_decisions_held_whole(
        cli, tmp_path, mechanism, options, extension):
    """A single run's --write-decisions is written a piece of the second pass at a time
    (bounded memory); the bytes are those of the decisions held in memory (label())."""
    import pate_cli
    from tests.decision_files import decisions_bytes

    if "--query-indices" in options:  # a reordered subset: every 7th row, reversed
        indices = tmp_path / "indices.txt"
        indices.write_text("\n".join(str(i) for i in range(8999, 0, -7)) + "\n")
        options = ["--budget", "2", "--query-indices", indices]
    path = tmp_path / f"d{extension}"
    done = cli.analyze(VOTES, "-m", mechanism, *options, "--write-decisions", path)
    assert done.code == 0, done.err
    keywords = {"accounting": "expected"} if "expected" in options else {}
    if "--budget" in options:
        keywords.update(budget=2.0, query_indices=str(options[-1]))
    if mechanism == "interactive":
        keywords["student"] = str(STUDENT)
    if mechanism == "lnmax":
        keywords["labels"] = str(LABELS)
    if mechanism == "svt":  # stable, unstable and halted queries (the cut-off binds)
        keywords.update(svt_scale=0.5, svt_cutoff=20)
    whole = pate_cli.label(str(VOTES), mechanism, **keywords)
    assert path.read_bytes() == decisions_bytes(whole, str(path))


def test_decisions_past_the_budgets_halt_are_said_not_charged(cli, tmp_path):
    """A budget run accounts given decisions to its halt (the documented rule); decisions
    going on after it were not charged, which said nothing (0.4958 printed where the file's
    50 decisions cost 0.5891): one Warning line and a JSON note say so."""
    mask = tmp_path / "mask.npy"
    np.save(mask, np.arange(50) % 2 == 0)  # a boolean mask (an integer one is noted)
    whole = json.loads(cli.analyze(VOTES, "-n", 50, "--decisions", mask, "-f", "json").out)
    halted = cli.analyze(VOTES, "-n", 50, "--decisions", mask, "--budget",
                         whole["epsilon"] * 0.9, "-f", "json")
    assert halted.code == 0, halted.err
    summary = json.loads(halted.out)
    stop = summary["budget"]["halted_at"]
    after = 50 - stop
    note = (f"--budget {whole['epsilon'] * 0.9:g} halts before the run's query {stop} (vote "
            f"row {stop}): the {after} decisions from it on ({(after + (stop % 2 == 0)) // 2} "
            "answered) are not charged")
    assert [line for line in halted.err.splitlines() if line.startswith("Warning")] == [
        next(f"Warning: {text}" for text in summary["warnings"] if text.startswith(note))]
    assert summary["epsilon"] < whole["epsilon"]
    kept = cli.analyze(VOTES, "-n", 50, "--decisions", mask, "--budget",
                       whole["epsilon_data_independent"], "-f", "json")  # never binding
    assert kept.code == 0 and json.loads(kept.out)["epsilon"] == whole["epsilon"], kept.err


def test_the_accounting_line_names_the_decisions_file_not_a_seed(cli, tmp_path):
    """With --decisions the seed draws nothing but a smooth-sensitivity release's noise, yet
    the summary said ``replay, classic conversion, seed 0`` (review R38): it names the file,
    and the seed only beside a release. The JSON keeps ``seed`` (and the figures ignore it)."""
    path = tmp_path / "d.csv"
    assert cli.analyze(VOTES, "-n", 300, "--write-decisions", path).code == 0
    line = "accounting        replay, classic conversion, the decisions of " + str(path) + "\n"
    assert line in cli.analyze(VOTES, "-n", 300, "--decisions", path).out
    released = cli.analyze(VOTES, "-n", 300, "--decisions", path, "--smooth-sensitivity",
                           "--seed", 5).out
    assert f"the decisions of {path}, seed 5 (the release's noise)\n" in released
    seeded = [json.loads(cli.analyze(VOTES, "-n", 300, "--decisions", path, "-f", "json",
                                     "--seed", seed).out) for seed in (0, 7)]
    assert [summary.pop("seed") for summary in seeded] == [0, 7]
    assert seeded[0] == seeded[1]


def test_decisions_given_as_an_object_are_named_so():
    """Decisions given to the API (no file) read "given decisions", not "the decisions of
    None"."""
    import pate_cli
    from pate_cli.outputs.summary import render

    votes = np.load(VOTES)[:200]
    made = pate_cli.analyze(votes, decisions=pate_cli.label(votes))
    lines = render(made.to_dict(), "table").splitlines()
    assert "accounting        replay, classic conversion, given decisions" in lines
