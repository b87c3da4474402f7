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
    assert "epsilon           71.5270 at delta 1e-05 (RDP, order 1.61761)" in done.out


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


def test_cutoff_auto_says_its_epsilon_is_for_a_cutoff_fixed_in_advance(cli):
    """The cut-offs tried replay the same noise draws: no composition covers the choice,
    and --tuning refuses -m svt, so the warning must not send the reader there."""
    done = cli.analyze(MNIST, "-m", "svt", "--target-epsilon", "8", "--svt-cutoff", "auto")
    assert done.code == 0, done.err
    warning = next(line for line in done.err.splitlines() if "--svt-cutoff auto" in line)
    assert "--tuning" not in warning
    assert "holds for a cut-off fixed in advance, not for one chosen on these votes" in warning
    assert "before looking at the private votes" in warning and "held-out" in warning
    svt_line = next(line for line in done.out.splitlines() if line.startswith("svt "))
    assert "cut-off 2 (auto: chosen on these votes)" in svt_line
    fixed = cli.analyze(MNIST, "-m", "svt", "--target-epsilon", "8", "--svt-cutoff", "2")
    assert "auto" not in next(line for line in fixed.out.splitlines() if line.startswith("svt "))


def test_a_report_refuses_a_searched_cutoff(cli, tmp_path):
    """A report publishes a guarantee; the automatic choice is not covered by it: refused
    as an option and as a summary that recorded it (exit 2, one line), a fixed one is not."""
    out = tmp_path / "r.md"
    done = cli.report(MNIST, "-m", "svt", "--target-epsilon", "8", "--svt-cutoff", "auto",
                      "-o", out)
    assert done.code == 2 and len(done.err.strip().splitlines()) == 1
    assert ("--svt-cutoff auto: a report publishes a guarantee, and the automatic choice on "
            "these votes is not covered by it; give the cut-off explicitly") in done.err
    assert not out.exists()
    summary = tmp_path / "auto.json"
    assert cli.analyze(MNIST, "-m", "svt", "--target-epsilon", "8", "--svt-cutoff", "auto",
                       "-f", "json", "-o", summary).code == 0
    done = cli.report("--from", summary, "-o", out)
    assert done.code == 2 and len(done.err.strip().splitlines()) == 1
    assert "its cut-off is from --svt-cutoff auto" in done.err and not out.exists()
    done = cli.report(MNIST, "-m", "svt", "--target-epsilon", "8", "--svt-cutoff", "2",
                      "-o", out)
    assert done.code == 0, done.err
    assert out.exists()


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


def test_epsilon_rdp_is_the_rdp_figure_where_the_rdp_route_gave_epsilon(cli):
    """json.md: ``epsilon_rdp`` is the RDP figure; ``null`` only beside the pure-DP one."""
    rdp = json.loads(cli.analyze(MNIST, "-m", "svt", "-f", "json").out)
    assert rdp["epsilon_method"] == "rdp" and rdp["epsilon_rdp"] == rdp["epsilon"]
    pure = json.loads(cli.analyze(MNIST, "-m", "svt", "--target-epsilon", "8", "--svt-cutoff",
                                  "2", "-f", "json").out)
    assert pure["epsilon_method"] == "pure" and pure["epsilon_rdp"] is None
