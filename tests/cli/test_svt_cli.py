"""``pate-analyze -m svt`` on the command line (issue 13 item 5): ``--svt-cutoff auto``,
the one ``Warning:`` line of a run that answers little, the ``svt`` JSON keys."""

from __future__ import annotations

import json

import pytest

MNIST = "sample_votes/mnist_250_votes.npy"


def test_defaults_on_mnist_print_one_warning_with_a_suggestion_and_no_grid_note(cli):
    done = cli.analyze(MNIST, "-m", "svt")
    assert done.code == 0
    lines = [line for line in done.err.splitlines() if line.startswith("Warning: ")]
    assert len(lines) == 1 and lines[0].startswith("Warning: SVT-PATE answered 0 of 9000")
    assert "--svt-scale 1.38" in lines[0] and "--target-epsilon 145" in lines[0]
    assert "grid" not in done.err
    assert "epsilon           71.5270 at delta 1e-05 (order 1.61761)" in done.out


def test_cutoff_auto_from_the_command_line_records_the_choice(cli):
    done = cli.analyze(MNIST, "-m", "svt", "--target-epsilon", "8", "--svt-cutoff", "auto",
                       "-f", "json")
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    svt = summary["svt"]
    assert svt["cutoff_from_search"] is True and svt["cutoff"] == 2
    assert summary["params"]["svt_cutoff"] == 2 and summary["answered"] == 32
    assert svt["bound"] == "pure" and summary["order"] is None
    assert summary["epsilon"] == pytest.approx(8.0, rel=1e-12)
    assert "Warning: --svt-cutoff auto chose cut-off 2" in done.err


@pytest.mark.parametrize("args, message", [
    (["--svt-cutoff", "auto"], "--svt-cutoff auto needs --target-epsilon"),
    (["--svt-cutoff", "auto", "--svt-scale", "1"], "--svt-cutoff auto needs --target-epsilon"),
    (["--svt-cutoff", "0"], "'0' is not a positive integer or 'auto'"),
    (["--svt-cutoff", "2.5"], "'2.5' is not a positive integer or 'auto'"),
    (["--svt-cutoff", "many"], "'many' is not a positive integer or 'auto'"),
])
def test_bad_cutoffs_are_one_error_line(cli, args, message):
    done = cli.analyze(MNIST, "-m", "svt", *args)
    assert done.code == 2 and done.out == ""
    assert done.err.count("\n") == 1 and done.err.startswith("Error: ") and message in done.err


def test_a_run_that_answers_enough_prints_no_warning(cli):
    done = cli.analyze(MNIST, "-n", "2000", "-m", "svt", "--svt-scale", "0.5",
                       "--svt-cutoff", "100")
    assert done.code == 0 and done.err == ""
    assert "answered          745 of 2000 queries" in done.out
    assert "(pure-DP bound c*eps0)" in done.out
