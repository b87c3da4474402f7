"""Inputs taken at their word that should not have been, and failures shown as the
user's mistake that were not: each case through the command as a user meets it.

- ``--teachers`` below the voters of a predictions file's rows (refused as for votes);
- file names that are not UTF-8 in the text outputs; a matplotlib failure on a per-query
  table shown as bad input;
- a labels ``.npy`` given as ``--decisions``; pate-calibrate's ``files``; the relative
  step a calibration reached; summaries edited by hand given to ``pate-report --from``.
"""

from __future__ import annotations

import numpy as np

import pate_cli
from pate_cli.errors import InputError
from tests import SAMPLES
from tests.hostile.test_issue30_cases import one_error

PREDICTIONS = SAMPLES / "mnist_250_predictions.npy"
GROUPS = SAMPLES / "mnist_250_groups.csv"
TEACHER_GROUPS = SAMPLES / "mnist_250_teacher_groups.csv"


# --- --teachers below the voters of predictions ---------------------------------------------

def test_predictions_with_more_voters_than_teachers_are_refused(cli):
    line = one_error(cli.analyze("--predictions", PREDICTIONS, "--teachers", 10),
                     "mnist_250_predictions.npy: query 0 has 250 votes",
                     "more than --teachers 10", "weights exceed 1")
    assert "--individualized weighting" in line
    one_error(cli.calibrate("--predictions", PREDICTIONS, "--teachers", 10, "-m", "gnmax",
                            "--target-epsilon", 2), "more than --teachers 10")
    one_error(cli.report("--predictions", PREDICTIONS, "--teachers", 10, "-o",
                         "unused.html"), "more than --teachers 10")
    try:
        pate_cli.analyze(predictions=PREDICTIONS, teachers=10)
    except InputError as error:
        assert "more than --teachers 10" in str(error)
    else:
        raise AssertionError("the API took 250 voters under teachers=10")


def test_predictions_with_abstentions_pass_under_teachers(cli, tmp_path):
    predictions = np.load(PREDICTIONS)[:300].copy()
    predictions[:, 200:] = -1  # 200 voters per query
    path = tmp_path / "partial.npy"
    np.save(path, predictions)
    assert cli.analyze("--predictions", path, "--teachers", 200, "-f", "json").code == 0
    one_error(cli.analyze("--predictions", path, "--teachers", 199), "query 0 has 200 votes",
              "more than --teachers 199")


def test_teacher_groups_count_the_predictions_columns(cli):
    result = cli.analyze("--predictions", PREDICTIONS, "--teachers", 300, "--groups", GROUPS,
                         "--teacher-groups", TEACHER_GROUPS, "--individualized", "weighting",
                         "-m", "gnmax", "-f", "json")
    assert result.code == 0, result.err


# --- file names that are not UTF-8; errors raised inside matplotlib --------------------------

def not_utf8_votes(directory):
    """The MNIST sample votes under a name holding the byte 0xff (not UTF-8)."""
    import os
    path = os.path.join(os.fsdecode(bytes(directory)), os.fsdecode(b"b\xffd.npy"))
    np.save(path, np.load(SAMPLES / "mnist_250_votes.npy")[:100])
    return path


def test_text_outputs_take_a_file_name_that_is_not_utf8(cli, tmp_path, monkeypatch):
    votes = not_utf8_votes(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = cli.analyze(votes, "-f", "csv")
    assert result.code == 0, result.err
    assert "b\\udcffd.npy" in result.out
    for output in ("r.html", "r.md"):
        result = cli.report(votes, "-o", output)
        assert result.code == 0, result.err
        assert "b\\udcffd.npy" in (tmp_path / output).read_text(encoding="utf-8")
    for output in ("s.csv", "s.parquet"):
        result = cli.sweep(votes, "-o", output, "--no-progress")
        assert result.code == 0, result.err
    assert "b\\udcffd.npy" in (tmp_path / "s.csv").read_text(encoding="utf-8")
    result = cli.analyze(votes, "--per-query", "q.parquet")
    assert result.code == 0, result.err


def test_a_history_too_large_to_draw_is_refused_naming_the_cell(cli, tmp_path):
    import pandas as pd
    table = tmp_path / "q.csv"
    assert cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", 20, "--per-query",
                       table).code == 0
    frame = pd.read_csv(table)
    frame["epsilon_cumulative"] = 1e308
    frame.to_csv(table, index=False)
    line = one_error(cli.plot("history", table, "-o", tmp_path / "x.png"), "q.csv: row 0",
                     "'epsilon_cumulative'", "too large to draw")
    assert "arange" not in line
    assert not (tmp_path / "x.png").exists()


def test_a_value_error_raised_inside_matplotlib_is_unexpected(capsys):
    import click

    from pate_cli.cli.errors import EXIT_UNEXPECTED, run_command

    @click.command()
    def draw():
        from matplotlib.colors import to_rgba
        to_rgba("not a colour")  # a ValueError raised inside matplotlib

    @click.command()
    def check():
        raise ValueError("--sigma must be positive")  # a check of ours: the user's mistake

    assert run_command(draw, []) == EXIT_UNEXPECTED
    assert "Error: unexpected ValueError" in capsys.readouterr().err
    assert run_command(check, []) == 2
    assert capsys.readouterr().err.strip() == "Error: --sigma must be positive"


# --- the numbers docs/commands/pate-plot.md gives for the paper's MNIST votes ----------------

def test_pate_plot_page_gives_the_mnist_paper_figures_of_its_command(cli, paper_votes):
    import json

    from pate_cli.rounding import ceil_text
    from tests import ROOT
    page = " ".join((ROOT / "docs" / "commands" / "pate-plot.md").read_text().split())
    command = [paper_votes / "mnist_250_teachers.npy", "-n", 640, "--accounting", "expected",
               "-T", 200, "--sigma-threshold", 150, "--sigma", 40, "-f", "json"]
    exact = json.loads(cli.analyze(*command).out)
    gaussian = json.loads(cli.analyze(*command, "--screening", "gaussian").out)
    assert f"{exact['answered']:.1f} expected answers" in page
    assert (f"({ceil_text(exact['epsilon'])} at {exact['answered']:.1f} expected answers with the "
            "default exact") in page, exact["epsilon"]
    assert f"{ceil_text(gaussian['epsilon'])} with `--screening gaussian`" in page


# --- pate-calibrate: the files read, the relative step reached ------------------------------

def test_calibrate_json_records_the_labels_file(cli):
    import json
    labels = SAMPLES / "mnist_250_labels.npy"
    result = cli.calibrate(SAMPLES / "mnist_250_votes.npy", "-m", "gnmax", "--target-epsilon",
                           2, "-n", 200, "--labels", labels, "-f", "json")
    assert result.code == 0, result.err
    analyzed = cli.analyze(SAMPLES / "mnist_250_votes.npy", "-m", "gnmax", "-n", 200,
                           "--labels", labels, "-f", "json")
    files = json.loads(result.out)["files"]
    assert files == json.loads(analyzed.out)["files"]
    assert files["labels"]["path"] == str(labels)
    without = cli.calibrate(SAMPLES / "mnist_250_votes.npy", "-m", "gnmax", "--target-epsilon",
                            2, "-n", 200, "-f", "json")
    assert json.loads(without.out)["files"] is None


def test_calibrate_states_the_relative_step_it_reached(cli):
    import json
    args = [SAMPLES / "mnist_250_votes.npy", "-m", "gnmax", "--target-epsilon", 2, "-n", 640,
            "--tolerance", "1e-300"]
    result = cli.calibrate(*args)
    assert result.code == 0, result.err
    assert "relative step 1e-300" not in result.out
    assert "relative step 1.4e-06" in result.out, result.out
    notes = [line for line in result.err.splitlines() if line.startswith("Warning: ")]
    assert any("--tolerance 1e-300 is below what the search can reach" in line
               for line in notes), result.err
    summary = json.loads(cli.calibrate(*args, "-f", "json").out)
    assert summary["tolerance"] == 1e-300
    assert 1e-6 < summary["relative_step"] < 2e-6
    default = json.loads(cli.calibrate(*args[:-2], "-f", "json").out)
    assert 0 < default["relative_step"] <= 1e-3


# --- a binary task's labels given as --decisions --------------------------------------------

def test_a_labels_npy_of_two_classes_given_as_decisions_is_noted(cli, tmp_path):
    import pandas as pd
    adult = SAMPLES / "adult_250_votes.npy"
    written = tmp_path / "ad.csv"
    assert cli.analyze(adult, "-n", 200, "-m", "gnmax", "--sigma", 40, "--write-decisions",
                       written).code == 0
    labels = pd.read_csv(written, comment="#")["label"].to_numpy(dtype=np.int64)
    np.save(tmp_path / "labels.npy", labels)
    np.save(tmp_path / "mask.npy", np.ones(200, dtype=bool))
    run = [adult, "-n", 200, "-T", 150, "--sigma-threshold", 50, "--sigma", 40, "-f", "json"]
    result = cli.analyze(*run, "--decisions", tmp_path / "labels.npy")
    assert result.code == 0, result.err
    notes = [line for line in result.err.splitlines() if line.startswith("Warning: ")]
    expected = (f"labels.npy: its 0/1 int64 values are read as an answered mask "
                f"({int(labels.sum())} of 200 queries answered); they may be the released "
                "labels of a run that answered every query with classes 0 and 1 of 2 only")
    assert any(expected in line for line in notes), result.err
    quiet = cli.analyze(*run, "--decisions", tmp_path / "mask.npy")
    assert quiet.code == 0 and "answered mask" not in quiet.err, quiet.err
    mnist = cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", 200, "--decisions",
                        tmp_path / "labels.npy", "-f", "json")
    # 10 classes: noted too (labels of classes 0 and 1 only are as ambiguous there)
    assert mnist.code == 0 and "0 and 1 of 10 only" in mnist.err


# --- smaller: --ss-history's extension, --orders' help, a given --confidence, --from ---------

def test_ss_history_extension_is_refused_in_its_own_words(cli, tmp_path):
    line = one_error(cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", 50,
                                 "--smooth-sensitivity", "--ss-history", tmp_path / "h.txt"),
                     "h.txt: unknown extension for --ss-history",
                     ".csv, .json, .jsonl, .parquet")
    assert "per-query" not in line
    help_text = " ".join(cli.analyze("--help").out.split())
    assert ".csv, .json, .jsonl or .parquet" in help_text
    assert "[default: 298]" not in help_text
    assert "[default: grid of 298]" in help_text


def test_a_given_confidence_gets_no_hint_about_defaults(cli):
    line = one_error(cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", 50, "-m", "interactive",
                                 "--student", SAMPLES / "mnist_250_student.npy",
                                 "--confidence", "nan"), "confidence must be a finite number")
    assert "defaults scale" not in line


def test_report_from_refuses_a_hand_edited_risk_or_seed(cli, tmp_path):
    import json
    summary = json.loads(cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", 50,
                                     "-f", "json").out)
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps({**summary, "risk_data_independent": "x"}))
    one_error(cli.report("--from", edited, "-o", tmp_path / "r.md"),
              "'risk_data_independent' is not an attack risk of pate-analyze (not an object)")
    edited.write_text(json.dumps(summary).replace('"seed": 0', '"seed": 1e999'))
    one_error(cli.report("--from", edited, "-o", tmp_path / "r.md"),
              "'seed' must be a whole number >= 0, got Infinity")
    assert not (tmp_path / "r.md").exists()


def test_a_csv_with_an_unclosed_quote_is_refused_naming_the_file(cli, tmp_path):
    broken = tmp_path / "broken.csv"
    broken.write_text('query,class\n0,"1\n')
    one_error(cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", 50, "--labels", broken),
              "broken.csv: not a valid CSV (", "EOF inside string")
    one_error(cli.analyze("--predictions", PREDICTIONS, "-n", 50, "--groups", GROUPS,
                          "--individualized", "weighting", "-m", "gnmax", "--teacher-groups",
                          broken), "broken.csv: not a valid CSV (")


def test_a_markdown_report_named_not_utf8_links_its_figures(cli, tmp_path):
    import os
    output = os.path.join(os.fsdecode(bytes(tmp_path)), os.fsdecode(b"r\xff.md"))
    result = cli.report(SAMPLES / "mnist_250_votes.npy", "-n", 50, "-o", output)
    assert result.code == 0, result.err
    text = open(output, encoding="utf-8").read()
    assert "](r%FF_files/history.svg)" in text
    assert os.path.isfile(os.path.join(output[:-3] + "_files", "history.svg"))
