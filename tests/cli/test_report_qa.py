"""pate-report's statement says what the run did: no internal references, the smooth-
sensitivity headline labels the data-dependent figure, Markdown links to its figures
whatever the report's name."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from urllib.parse import unquote

import numpy as np
import pytest

from pate_cli.inputs.tables import NOT_NULL, REPORT_KEYS, SUMMARY_KINDS
from tests import SAMPLES
from tests.multilabel_sample import write_multilabel_sample

pytest.importorskip("jinja2")

VOTES = str(SAMPLES / "mnist_250_votes.npy")


@pytest.mark.parametrize("name", ["r.md", "r.html"])
def test_no_internal_references(cli, tmp_path, name):
    """The tuning section pointed at an internal spec tag (math:tuning)."""
    report = tmp_path / name
    assert cli.report(VOTES, "-n", "100", "-o", report).code == 0
    text = report.read_text(encoding="utf-8")
    assert "docs/explanation/tuning.md" in text
    assert not re.search(r"math:|MATH\.md|CLI\.md", text)


def test_smooth_headline_under_expected_accounting_publishes_the_bound(cli, tmp_path):
    """Expected accounting's release sanitises an average run's figure: the headline
    publishes the data-independent bound (it published the release, said to be "not a
    guarantee" in the same sentence), the release is named an estimate, and the warning
    box stands beside the unsanitised figure."""
    report = tmp_path / "r.md"
    assert cli.report(VOTES, "-n", "300", "--accounting", "expected",
                      "--smooth-sensitivity", "-o", report).code == 0
    text = report.read_text(encoding="utf-8")
    headline = text.split("## Guarantee")[1].split("\n\n")[1]
    assert "a data-independent bound that holds whatever a run answers" in headline
    assert "sanitised release, \u03b5 = " in headline and "an estimate for an average run" \
        in headline
    assert ("**Warning: data-dependent, unsanitised figure.** The data-dependent \u03b5 = "
            in text and "even the sanitised release is an average run's estimate" in text)
    assert "| sanitised \u03b5 (an average run's estimate, not a guarantee) |" in text


def test_markdown_figure_links_survive_spaces_and_parentheses(cli, tmp_path):
    folder = tmp_path / "d \u00fc"
    folder.mkdir()
    votes = folder / "v (1).npy"
    shutil.copyfile(VOTES, votes)
    report = folder / "my report (v1).md"
    assert cli.report(votes, "-n", "100", "-o", report).code == 0
    text = report.read_text(encoding="utf-8")
    links = re.findall(r"!\[[^\]]*\]\(([^()\s]+)\)", text)  # a destination ends at ( ) or space
    assert len(links) == text.count("![") >= 2
    for link in links:
        assert (folder / unquote(link)).is_file(), link
    markdown = pytest.importorskip("markdown")
    html = markdown.markdown(text)
    sources = re.findall(r'<img alt="[^"]*" src="([^"]+)"', html)
    assert sorted(unquote(source) for source in sources) == sorted(map(unquote, links))


@pytest.fixture(scope="module")
def summary_file(tmp_path_factory):
    from pate_cli.cli.analyze import main

    path = tmp_path_factory.mktemp("summary") / "run.json"
    with pytest.raises(SystemExit) as done:
        main([VOTES, "-n", "100", "-f", "json", "-o", str(path)])
    assert done.value.code == 0
    return path


@pytest.mark.parametrize("key, value, message", [
    ("delta", 5, "'delta' must be a number in (0, 1), got 5"),
    ("delta", 0, "'delta' must be a number in (0, 1), got 0"),
    ("epsilon", float("nan"), "'epsilon' must be a finite number >= 0, got NaN"),
    ("epsilon", -1, "'epsilon' must be a finite number >= 0, got -1"),
    ("epsilon", None, "'epsilon' must be a finite number >= 0, got null"),
    ("epsilon", "abc", "'epsilon' must be a finite number >= 0, got \"abc\""),
    ("epsilon", True, "'epsilon' must be a finite number >= 0, got true"),
    ("epsilon_data_independent", float("inf"),
     "'epsilon_data_independent' must be a finite number >= 0, got Infinity"),
    ("epsilon_data_independent_pld", -1,
     "'epsilon_data_independent_pld' must be a finite number >= 0, got -1"),
    ("epsilon_data_independent_pld", "abc",
     "'epsilon_data_independent_pld' must be a finite number >= 0, got \"abc\""),
    ("epsilon_data_independent_worst", -2,
     "'epsilon_data_independent_worst' must be a finite number >= 0, got -2"),
    ("params", [1, 2], "'params' must be a JSON object, got [1, 2]"),
    ("input", 3, "'input' must be a JSON object, got 3"),
    ("mechanism", ["gnmax"], "'mechanism' must be a name"),
    ("queries", 1e300, "'queries' must be a whole number >= 0, got 1e+300"),
    ("queries", -3, "'queries' must be a whole number >= 0, got -3"),
    ("queries", 10 ** 30, "'queries' must be a whole number >= 0"),
    ("tool", "pate-calibrate", "is the JSON of pate-calibrate, not a pate-analyze summary"),
    ("tool", 7, "'tool' is 7, not \"pate-analyze\""),
    # nested fields a report states or redraws from (they gave 'could not convert string
    # to float', 'sigma must be a positive number' without the file, or 'Budget ε = x')
    ("params.sigma", "x", "'params.sigma' must be a finite number, got \"x\""),
    ("params.sigma", -5, "'params.sigma' must be a number > 0, got -5"),
    ("params.threshold", float("nan"), "'params.threshold' must be a finite number, got NaN"),
    ("input.teachers", "x", "'input.teachers' must be a finite number, got \"x\""),
    ("input.teachers", 0, "'input.teachers' must be a number > 0, got 0"),
    ("budget.limit", "x", "'budget.limit' must be a finite number, got \"x\""),
    ("params.sigma", 10 ** 400, "'params.sigma' must be a finite number, got 1000"),
    ("epsilon", 10 ** 400, "'epsilon' must be a finite number >= 0, got 1000"),
])
def test_from_checks_the_summary(cli, tmp_path, summary_file, key, value, message):
    """A damaged summary is refused in one line naming the file and the field (it printed
    'at δ = 5', or NaN, or crashed with exit 1)."""
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    if key == "budget.limit":
        summary["budget"] = {"limit": 1.0, "halted_at": None, "remaining": 0.5}
    *path, last = key.split(".")
    place = summary
    for part in path:
        place = place[part]
    place[last] = value
    damaged, report = tmp_path / "damaged.json", tmp_path / "r.md"
    damaged.write_text(json.dumps(summary), encoding="utf-8")
    result = cli.report("--from", damaged, "-o", report)
    assert result.code == 2, result.err
    assert result.err.startswith(f"Error: {damaged}: {message}")
    assert len(result.err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == [damaged]


def damaged_summaries(summary: dict):
    """``(key, value, summary)``: ``summary`` with one key the report or a plot reads
    removed (``...``) or of another JSON type (null where one is required)."""
    for key in REPORT_KEYS:
        yield key, ..., {name: value for name, value in summary.items() if name != key}
    for key in ("epsilon_data_independent", "epsilon_data_independent_worst_pld",
                "epsilon_rdp"):
        yield key, [1], {**summary, key: [1]}
    for key, kind in SUMMARY_KINDS.items():
        wrong = {"a JSON object": [[1], "x"], "a JSON list": [{}, 3], "a name": [[1], 3]}.get(
            kind, [[1], {}, "x", -1])
        for value in wrong:
            yield key, value, {**summary, key: value}
    for key in NOT_NULL:
        yield key, None, {**summary, key: None}


def test_from_checks_every_key_it_reads(cli, tmp_path, summary_file):
    """A summary lacking a key, or holding a list or null where a number or an object
    belongs, was 'Error: unexpected KeyError: 'params'' (exit 1): now one line naming the
    file and the key (exit 2), nothing written."""
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    damaged, report = tmp_path / "damaged.json", tmp_path / "r.html"
    for key, value, broken in damaged_summaries(summary):
        damaged.write_text(json.dumps(broken), encoding="utf-8")
        result = cli.report("--from", damaged, "-o", report)
        assert result.code == 2, (key, value, result.err)
        assert result.err.startswith(f"Error: {damaged}: ") and f"'{key}" in result.err, (
            key, value, result.err)
        assert len(result.err.strip().splitlines()) == 1
        assert list(tmp_path.iterdir()) == [damaged]


def test_from_takes_a_null_order_only_for_a_pure_epsilon(cli, tmp_path, summary_file):
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    damaged, report = tmp_path / "damaged.json", tmp_path / "r.md"
    damaged.write_text(json.dumps({**summary, "order": None}), encoding="utf-8")
    result = cli.report("--from", damaged, "-o", report)
    assert result.code == 2 and "'order' must be a number (null only for a pure-DP epsilon)" \
        in result.err
    svt = tmp_path / "svt.json"
    assert cli.analyze(VOTES, "-n", "100", "-m", "svt", "--svt-scale", "1.4", "--svt-cutoff",
                       "10", "-f", "json", "-o", svt).code == 0
    assert json.loads(svt.read_text(encoding="utf-8"))["order"] is None  # a pure-DP epsilon
    assert cli.report("--from", svt, "-o", report).code == 0


def test_from_refuses_a_calibration(cli, tmp_path):
    calibration, report = tmp_path / "cal.json", tmp_path / "r.md"
    assert cli.calibrate(VOTES, "-n", "100", "--target-epsilon", "2", "-f", "json",
                         "-o", calibration).code == 0
    result = cli.report("--from", calibration, "-o", report)
    assert result.code == 2 and "not a pate-analyze summary" in result.err
    assert not report.exists()


@pytest.fixture(scope="module")
def multilabel_files(tmp_path_factory):
    """Three labels of the shipped MNIST teachers' predictions (docs/tutorials/multilabel.md)."""
    folder = tmp_path_factory.mktemp("multilabel")
    write_multilabel_sample(folder)
    return folder


@pytest.mark.parametrize("variant, squared", [("binary", 6), ("tau:1", 4), ("powerset", 2)])
def test_multilabel_report_states_its_sensitivity_and_counts_labels(
        cli, tmp_path, multilabel_files, variant, squared):
    """It said one vote moves (L2 sensitivity √2) and 'queries answered 900' of 300."""
    report, summary = tmp_path / "r.md", tmp_path / "s.json"
    run = ["--predictions", multilabel_files / "ml_pred.npy", "--multilabel", variant,
           "-m", "gnmax", "--sigma", "40", "--labels", multilabel_files / "ml_truth.npy"]
    assert cli.report(*run, "-o", report).code == 0
    assert cli.analyze(*run, "-f", "json", "-o", summary).code == 0
    facts = json.loads(summary.read_text(encoding="utf-8"))
    assert facts["multilabel"]["sensitivity_squared"] == squared
    text = report.read_text(encoding="utf-8")
    unit = text.split("**Privacy unit:**")[1].split("\n")[0]
    root = f"{squared ** 0.5:.4f}".rstrip("0").rstrip(".")
    assert f"L2 sensitivity \u221a{squared} \u2248 {root}" in unit
    assert "one vote" not in unit and "\u221a2 for the argmax" not in unit
    assert "| queries analysed | 300 |" in text
    assert f"| labels answered, of 900 (queries \u00d7 labels) | {facts['answered']} |" in text
    assert "queries answered" not in text
    assert f"answers {facts['answered']} of the 900 labels" in text


def _analyze_command(report) -> list[str]:
    import shlex

    text = report.read_text(encoding="utf-8")
    return shlex.split(text.split("The numbers alone")[1].split("```")[1])


PREDICTIONS = str(SAMPLES / "mnist_250_predictions.npy")
STUDENT = str(SAMPLES / "mnist_250_student.npy")
ROUNDS = str(SAMPLES / "mnist_250_rounds.csv")
REPRODUCED = [
    ["--predictions", PREDICTIONS, "-n", "200", "--q-bound", "integral", "--order", "9",
     "--conversion", "improved", "--seed", "3"],
    [VOTES, "-n", "200", "-m", "interactive", "--student", STUDENT],
    [VOTES, "--rounds", ROUNDS],
    [VOTES, "-n", "200", "--accounting", "data-independent", "--sampling", "poisson:0.3",
     "--vote-change", "add", "-m", "gnmax", "--sigma", "40", "--tuning", "negbin:10,0.5"],
    [VOTES, "-n", "200", "--accounting", "data-independent", "--sampling",
     "without-replacement:250/1000", "--sampling-steps", "independent", "--tuning",
     "geometric:20", "--orders", "2,4,8.5"],
    [VOTES, "-n", "2000", "-m", "gnmax", "--sigma", "40", "--budget", "1", "--add-rdp",
     str(SAMPLES.parent / "tests" / "regression" / "gan_rdp.csv")],
    [VOTES, "-n", "200", "-m", "lnmax", "--teachers", "260"],
]


@pytest.mark.parametrize("run", REPRODUCED, ids=range(len(REPRODUCED)))
def test_the_printed_pate_analyze_command_reproduces_the_run(cli, tmp_path, run):
    """It dropped --predictions, --student, --rounds (as '-m rounds --rounds 2'),
    --q-bound, --tuning, --sampling, --add-rdp, --teachers and --orders."""
    report, first, again = tmp_path / "r.md", tmp_path / "a.json", tmp_path / "b.json"
    assert cli.report(*run, "-o", report).code == 0
    words = _analyze_command(report)
    assert words[0] == "pate-analyze" and "STUDENT.npy" not in words
    assert cli.analyze(*run, "-f", "json", "-o", first).code == 0
    assert cli.analyze(*words[1:], "-f", "json", "-o", again).code == 0
    ran, rerun = (json.loads(path.read_text(encoding="utf-8")) for path in (first, again))
    for key in ("epsilon", "epsilon_data_independent", "queries", "answered", "order",
                "q_bound", "tuning", "sampling", "add_rdp", "budget", "rounds", "orders",
                "outcomes", "input"):
        assert ran.get(key) == rerun.get(key), key


def test_from_a_summary_names_what_it_does_not_record(cli, tmp_path):
    """--from gives the files the summary records (``files``: path and sha256) by their
    paths; a summary without them (an earlier version's) gets a placeholder and a
    sentence, not a wrong command; paths are shell-quoted."""
    folder = tmp_path / "d \u00fc"
    folder.mkdir()
    votes = folder / "v (1).npy"
    shutil.copyfile(VOTES, votes)
    summary, report = tmp_path / "s.json", tmp_path / "r.md"
    labels = SAMPLES / "mnist_250_labels.npy"
    run = [votes, "-n", "200", "-m", "interactive", "--student", STUDENT, "--labels", labels]
    assert cli.analyze(*run, "-f", "json", "-o", summary).code == 0
    recorded = json.loads(summary.read_text())["files"]
    assert recorded["student"] == {"path": str(STUDENT), "sha256": hashlib.sha256(
        open(STUDENT, "rb").read()).hexdigest()} and recorded["labels"]["path"] == str(labels)
    assert cli.report("--from", summary, "-o", report).code == 0
    words = _analyze_command(report)
    assert words[words.index("--student") + 1] == str(STUDENT)
    assert words[words.index("--labels") + 1] == str(labels)
    assert "was read as VOTES" not in report.read_text(encoding="utf-8")  # read says
    older = {key: value for key, value in json.loads(summary.read_text()).items()
             if key not in ("files", "read")}  # a summary written before both
    summary.write_text(json.dumps(older))
    assert cli.report("--from", summary, "-o", report).code == 0
    text = report.read_text(encoding="utf-8")
    words = _analyze_command(report)
    assert words[1] == str(votes) and f"'{votes}'" in text
    assert words[words.index("--student") + 1] == "STUDENT.npy"
    assert words[words.index("--labels") + 1] == "LABELS.npy"
    assert "STUDENT.npy: the student's probabilities (the summary does not record" in text
    assert "was read as VOTES or as --predictions FILE" in text
    assert "-m interactive" in " ".join(words) and "--teachers" in words


def test_a_rounds_file_records_the_students_it_names(cli, tmp_path):
    """Provenance reaches the files a rounds file names: each interactive round's student,
    shown beside the rounds file as given, with the sha256 of its bytes."""
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copyfile(STUDENT, folder / "s.npy")
    (folder / "r.csv").write_text("rows,mechanism,student\n0:100,confident,\n"
                                  "100:300,interactive,s.npy\n")
    summary = json.loads(cli.analyze(VOTES, "--rounds", folder / "r.csv", "-f", "json").out)
    assert summary["files"]["rounds_student_1"] == {
        "path": str(folder / "s.npy"),
        "sha256": hashlib.sha256((folder / "s.npy").read_bytes()).hexdigest()}
    assert "rounds_student_0" not in summary["files"]


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="no /dev/fd on this platform")
def test_a_rounds_file_given_as_a_pipe_is_read_once(cli):
    """A rounds file given as a pipe (``<(...)``, a /dev/fd path) is read by the run alone:
    recording its students' provenance does not read it again (which gave 'the file is
    empty'); its own sha256 is null, as for any pipe."""
    read, write = os.pipe()
    os.write(write, b"rows,mechanism\n0:100,confident\n100:300,gnmax\n")
    os.close(write)
    try:
        run = cli.analyze(VOTES, "--rounds", f"/dev/fd/{read}", "-f", "json")
    finally:
        os.close(read)
    assert run.code == 0, run.err
    assert json.loads(run.out)["files"] == {"rounds": {"path": f"/dev/fd/{read}",
                                                       "sha256": None}}


def test_the_wording_of_small_and_budget_runs(cli, tmp_path):
    """'1 query' (it said '1 queries'), a space after the remaining budget's full stop in
    HTML, and the warning that the halt point is data-dependent only after a halt."""
    one, expected = tmp_path / "one.md", tmp_path / "expected.md"
    assert cli.report(VOTES, "-n", "1", "-o", one).code == 0
    assert cli.report(VOTES, "-n", "1", "--accounting", "expected", "-o", expected).code == 0
    assert "1 query;" in one.read_text() and "1 queries" not in one.read_text()
    text = expected.read_text()
    assert "1 query, expected accounting" in text and "(the query answered" in text
    assert "1 queries" not in text
    never, halted = tmp_path / "never.html", tmp_path / "halted.html"
    assert cli.report(VOTES, "-n", "300", "--budget", "1000", "-o", never).code == 0
    assert cli.report(VOTES, "-n", "300", "--budget", "1", "-o", halted).code == 0
    assert re.search(r"\(unsanitised\): [0-9.]+\. \n?Answered: ", never.read_text())
    warning = "The halt point is chosen from the data-dependent cost"
    assert warning not in never.read_text() and warning in halted.read_text()


def test_a_caption_leaves_out_unset_parameters_and_names_svts_figure(cli, tmp_path):
    """SVT-PATE's summary holds svt_threshold and target_epsilon null: the caption said
    'svt_threshold=None', and called the pure-DP table figure RDP."""
    table, summary, figure = tmp_path / "q.csv", tmp_path / "s.json", tmp_path / "f.svg"
    assert cli.analyze(VOTES, "-n", "500", "-m", "svt", "--svt-scale", "0.5", "--svt-cutoff",
                       "100", "--per-query", table, "-f", "json", "-o", summary).code == 0
    assert cli.plot("history", table, "--summary", summary, "-o", figure).code == 0
    caption = " ".join(re.findall(r"<!-- (.*?) -->", figure.read_text()))
    assert "(svt_scale=0.5, svt_cutoff=100)" in caption and "None" not in caption
    assert "the per-query table's pure-DP figure" in caption
    # the cut-off not met: the table's last figure is not the run's guarantee (pate-plot
    # refused the pair; drawn, it must say what the curve is)
    assert ("the cut-off not met, it is the guarantee had the run stopped there "
            "(data-dependent, unsanitised: not for publication); the run's guarantee is "
            "400.0000") in caption


@pytest.mark.parametrize(("key", "value"), [
    ("groups.0.epsilon_data_independent", "x"), ("groups.0.epsilon_data_independent", -1),
    ("baseline.epsilon_data_independent", -3)])
def test_from_checks_an_individualized_summarys_figures(cli, tmp_path, key, value):
    """The figures a report of an individualized run states (each group's, the uniform
    run's): a damaged one is one line naming it (a TypeError or KeyError exited 1, or the
    report printed 'x')."""
    from pate_cli.cli.analyze import main

    path = tmp_path / "run.json"
    with pytest.raises(SystemExit):
        main([VOTES, "-n", "100", "--individualized", "upsampling", "--groups",
              str(SAMPLES / "mnist_250_groups.csv"), "-f", "json", "-o", str(path)])
    summary = json.loads(path.read_text(encoding="utf-8"))
    *parts, last = key.split(".")
    place = summary
    for part in parts:
        place = place[int(part)] if part.isdigit() else place[part]
    place[last] = value
    path.write_text(json.dumps(summary), encoding="utf-8")
    result = cli.report("--from", path, "-o", tmp_path / "r.md")
    assert result.code == 2 and f"'{key}' must be a finite number >= 0" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_a_report_draws_the_history_of_a_run_halted_before_its_first_query(cli, tmp_path):
    """It said 'No figures: the per-query table was not available'."""
    out = tmp_path / "r.md"
    assert cli.report(VOTES, "-n", "50", "--budget", "0.01", "-o", out).code == 0
    assert "(r_files/history.svg)" in out.read_text()
    assert "No query in the table: the run halted before its first." in (
        tmp_path / "r_files" / "history.svg").read_text()


def test_each_groups_vacuous_risk_is_said(cli, tmp_path):
    """Budgets of 100 to 300 at sigma 10: every group's bounds round to 1."""
    groups, out = tmp_path / "groups.csv", tmp_path / "r.md"
    groups.write_text("group,budget,share\nhigh,100,0.34\naverage,200,0.432\nlow,300,0.228\n")
    assert cli.report(VOTES, "-m", "gnmax", "--sigma", "10", "-n", "3000", "--individualized",
                      "upsampling", "--groups", groups, "-o", out).code == 0
    assert out.read_text().count("; vacuous: every bound rounds to 1") == 3


def test_an_svt_tables_partition_caption_names_its_pure_dp_charges(cli, tmp_path):
    table, summary, figure = tmp_path / "q.csv", tmp_path / "s.json", tmp_path / "f.svg"
    assert cli.analyze(VOTES, "-n", "300", "-m", "svt", "--svt-scale", "0.5", "--svt-cutoff",
                       "100", "--per-query", table, "-f", "json", "-o", summary).code == 0
    assert cli.plot("partition", table, "--summary", summary, "-o", figure).code == 0
    caption = " ".join(re.findall(r"<!-- (.*?) -->", figure.read_text()))
    assert "(SVT-PATE's: its pure-DP charges)" in caption


def test_a_report_of_a_summary_whose_groups_lack_their_figures(cli, tmp_path):
    """A summary written before group rows held their data-independent figures (and the
    baseline the uniform run's): reported with the uniform run's figure alone, as then."""
    from pate_cli.cli.analyze import main

    path = tmp_path / "run.json"
    with pytest.raises(SystemExit):
        main([VOTES, "-n", "100", "--individualized", "upsampling", "--groups",
              str(SAMPLES / "mnist_250_groups.csv"), "-f", "json", "-o", str(path)])
    summary = json.loads(path.read_text(encoding="utf-8"))
    for row in summary["groups"]:
        del row["epsilon_data_independent"], row["epsilon_data_independent_if_continued"]
    uniform = summary["baseline"].pop("epsilon_data_independent")
    summary["epsilon_data_independent"] = uniform
    for key in ("order_data_independent", "epsilon_data_independent_worst"):
        summary[key] = summary["baseline"].pop(key)
    path.write_text(json.dumps(summary), encoding="utf-8")
    result = cli.report("--from", path, "-o", tmp_path / "r.md")
    assert result.code == 0, result.err
    text = (tmp_path / "r.md").read_text()
    assert "the largest)" not in text and "uniform run's data-independent" in text


def test_multilabel_tau_is_not_labelled_data_dependent():
    """tau's cost is alpha Delta_s^2 / sigma^2 in every accounting: its replayed figure is
    the data-independent one, not 'unsanitised: not for publication' (powerset and
    binary have data-dependent bounds)."""
    from pate_cli.outputs.report_statement import data_dependence

    base = {"accounting": "replay", "mechanism": "gnmax"}
    assert data_dependence({**base, "multilabel": {"variant": "tau", "tau": 1}}) == (
        False, False)
    for variant in ("powerset", "binary"):
        assert data_dependence({**base, "multilabel": {"variant": variant}})[0]
    assert data_dependence(base)[0]


@pytest.mark.parametrize("how", [["--index-col", "0"], ["--predictions"]])
def test_from_a_summary_the_command_reads_the_votes_as_the_run_did(cli, tmp_path, how):
    """A run reading a CSV with --index-col 0 (or --predictions) was rebuilt without it, so the
    Reproduction command failed or read another histogram (review R38): read records
    how the votes were read, and the rebuilt command gives the run's epsilon."""
    if how == ["--index-col", "0"]:
        votes = tmp_path / "indexed.csv"
        rows = np.load(VOTES)[:120]
        votes.write_text("id," + ",".join(f"c{k}" for k in range(10)) + "\n" + "".join(
            f"{1000 + n}," + ",".join(map(str, row)) + "\n" for n, row in enumerate(rows)))
        run = [votes, *how]
    else:
        run = ["--predictions", SAMPLES / "mnist_250_predictions.npy", "-n", "120"]
    summary, report = tmp_path / "s.json", tmp_path / "r.md"
    assert cli.analyze(*run, "-f", "json", "-o", summary).code == 0
    assert cli.report("--from", summary, "-o", report).code == 0
    words = _analyze_command(report)
    assert how[0] in words and "was read as VOTES" not in report.read_text(encoding="utf-8")
    again = cli.analyze(*words[1:], "-f", "json")
    assert again.code == 0, again.err
    assert json.loads(again.out)["epsilon"] == json.loads(summary.read_text())["epsilon"]


def test_a_long_order_grid_is_written_out_in_the_reproduction_command(cli, tmp_path):
    """``--orders 2:64:0.5`` (125 orders) gave ``--orders ORDERS`` and a note, though the
    run had the grid (review R42): the command writes it as pate-sweep's orders column does,
    and reruns to the same epsilon."""
    report = tmp_path / "r.md"
    assert cli.report(VOTES, "-n", "300", "--orders", "2:64:0.5", "-o", report).code == 0
    words = _analyze_command(report)
    assert words[words.index("--orders") + 1] == "2:64:0.5"
    assert "ORDERS" not in report.read_text(encoding="utf-8")
    again = cli.analyze(*words[1:], "-f", "json")
    direct = cli.analyze(VOTES, "-n", "300", "--orders", "2:64:0.5", "-f", "json")
    assert json.loads(again.out)["epsilon"] == json.loads(direct.out)["epsilon"]
