"""pate-calibrate: the command's table and JSON, its reproducing command, its refusals
(exit 2, one line) and warnings (the search itself: tests/sweep/test_calibrate.py)."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest

from pate_cli import calibrate
from pate_cli.errors import InputError
from pate_cli.rounding import ceil_text
from tests import ROOT

VOTES = str(ROOT / "sample_votes" / "mnist_250_votes.npy")
LABELS = str(ROOT / "sample_votes" / "mnist_250_labels.npy")


def test_infeasible_target_exits_2_with_one_line(cli):
    done = cli.calibrate(VOTES, "-T", "200", "--sigma-threshold", "10",
                         "--target-epsilon", "0.5", "-n", "640")
    assert done.code == 2
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: no sigma up to 250000 meets")
    with pytest.raises(InputError, match="meets epsilon"):
        calibrate(VOTES, "gnmax", target_epsilon=1e-4, queries=640)


@pytest.mark.parametrize("args, message", [
    (["-m", "gnmax", "--sigma", "40"], "--sigma is what pate-calibrate solves for"),
    (["-m", "gnmax", "--scale-all"], "--scale-all applies to -m confident"),
    (["-m", "lnmax", "-T", "100"], "-T/--threshold applies to -m confident, interactive, "
     "confident-exponential, not -m lnmax"),
    (["-m", "gnmax", "--screening", "gaussian"], "--screening gaussian applies to the "
     "threshold step of -m confident, interactive, confident-exponential, not -m gnmax"),
    (["--accounting", "replay"], "Invalid value for '--accounting'"),
    (["--predictions-layout", "teachers-first"],
     "--predictions-layout applies to --predictions FILE"),  # was ignored
])
def test_refused_options(cli, args, message):
    done = cli.calibrate(VOTES, "--target-epsilon", "2", "-n", "50", *args)
    assert done.code == 2
    assert message in done.err and len(done.err.strip().splitlines()) == 1


def test_json_keys_printed_figures_and_the_command_reproduces(cli):
    """The JSON's keys; the command it gives reproduces the epsilon, its method and the RDP
    figure; and (issue 30: a PLD figure was printed "(order 10.5)", the RDP figure's order)
    each printed figure names its accountant and order."""
    args = (VOTES, "--target-epsilon", "2", "-n", "640", "--labels", LABELS, "-T", "200",
            "--sigma-threshold", "150")
    done = cli.calibrate(*args, "-f", "json")
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    for key in ("tool", "version", "input", "mechanism", "target_epsilon", "solved", "params",
                "accounting", "conversion", "delta", "seed", "epsilon", "order", "above",
                "answered", "answered_expected", "label_accuracy", "command", "warnings"):
        assert key in summary
    assert summary["tool"] == "pate-calibrate" and len(summary["input"]["sha256"]) == 64
    assert summary["epsilon"] <= 2.0 and summary["accounting"] == "data-independent"
    assert summary["params"]["threshold"] == 200 and summary["solved"]["parameter"] == "sigma"
    assert 0 < summary["label_accuracy"] <= 1
    assert summary["answered"] <= 640 and 0 < summary["answered_expected"] <= 640
    assert summary["epsilon_method"] in ("rdp", "pld")
    words = shlex.split(summary["command"])
    assert words[0] == "pate-analyze"
    done = cli.analyze(*words[1:], "-f", "json")
    assert done.code == 0, done.err
    again = json.loads(done.out)
    # Confident composes the replay's answers: the calibration meets the bound for any run
    assert summary["every_query_answered"] and again["epsilon"] < summary["epsilon"]
    assert summary["epsilon"] == min(again["epsilon_data_independent_worst"],
                                     again["epsilon_data_independent_worst_pld"])
    assert summary["epsilon_rdp"] == again["epsilon_data_independent_worst"]
    plain = cli.calibrate(VOTES, "-m", "gnmax", "--target-epsilon", "2", "-n", "640", "-f",
                          "json")
    plain = json.loads(plain.out)
    again = json.loads(cli.analyze(*shlex.split(plain["command"])[1:], "-f", "json").out)
    assert not plain["every_query_answered"]
    assert (again["epsilon"], again["epsilon_method"], again["epsilon_rdp"]) == (
        plain["epsilon"], plain["epsilon_method"], plain["epsilon_rdp"])
    lines = dict(line.split(None, 1) if not line.startswith("epsilon RDP") else
                 ("epsilon RDP", line[len("epsilon RDP"):].strip())
                 for line in cli.calibrate(*args).out.splitlines())
    if summary["epsilon_method"] == "pld":
        assert lines["epsilon"].startswith(f"{ceil_text(summary['epsilon'])} (privacy-loss "
                                           "distribution accountant, every query answered: "
                                           "the bound for any run)")
        assert "order" not in lines["epsilon"]
        assert lines["epsilon RDP"].startswith(
            f"{ceil_text(summary['epsilon_rdp'])} (classic conversion, order "
            f"{summary['order']:g})")
    else:
        assert lines["epsilon"].startswith(f"{ceil_text(summary['epsilon'])} (RDP, classic "
                                           f"conversion, order {summary['order']:g})")


def test_expected_accounting_warns_once(cli):
    done = cli.calibrate(VOTES, "-m", "gnmax", "--target-epsilon", "1", "-n", "200",
                         "--accounting", "expected")
    assert done.code == 0, done.err
    lines = done.err.splitlines()
    assert all(line.startswith("Warning: ") for line in lines)
    assert sum("data-dependent release" in line for line in lines) == 1
    # GNMax's data-dependent epsilon is not monotone in sigma (less noise makes the
    # plurality surer): the search says so in one line.
    assert sum("not monotone in the sigma" in line for line in lines) == 1
    assert "epsilon" in done.out and "pate-analyze" in done.out
    quiet = cli.calibrate(VOTES, "-m", "gnmax", "--target-epsilon", "1", "-n", "200")
    assert quiet.code == 0 and quiet.err == ""


def test_command_reproduces_with_predictions_orders_and_options(cli):
    predictions = str(ROOT / "sample_votes" / "mnist_250_predictions.npy")
    done = cli.calibrate("--predictions", predictions, "-m", "gnmax", "--target-epsilon", "3",
                         "-n", "300", "--orders", "2:64:1", "--conversion", "improved",
                         "--seed", "3", "-f", "json")
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    assert "--orders 2:64:1" in summary["command"] and "--seed 3" in summary["command"]
    again = cli.analyze(*shlex.split(summary["command"])[1:], "-f", "json")
    assert again.code == 0, again.err
    assert json.loads(again.out)["epsilon"] == summary["epsilon"] <= 3


def test_version_help_and_completion(cli, monkeypatch):
    import pate_cli

    assert cli.calibrate("--version").out == f"pate-calibrate {pate_cli.__version__}\n"
    monkeypatch.setenv("COLUMNS", "100")
    done = cli.calibrate("-h")
    assert done.code == 0
    assert "_PATE_CALIBRATE_COMPLETE=bash_source pate-calibrate" in done.out
    assert max(map(len, done.out.splitlines())) <= 100
    for title in ("Target", "Input", "Accounting", "Outputs"):
        assert f"\n  {title}" in done.out
    missing = cli.calibrate(VOTES)
    assert missing.code == 2 and "--target-epsilon" in missing.err


def test_without_dp_accounting_the_answer_is_the_same(cli, monkeypatch):
    """The Gaussian steps' exact figure needs no extra: the same answer, and no note."""
    import sys

    args = (VOTES, "-m", "gnmax", "--target-epsilon", "2", "-n", "640", "-f", "json")
    with_extra = json.loads(cli.calibrate(*args).out)
    monkeypatch.setitem(sys.modules, "dp_accounting", None)  # import fails
    done = cli.calibrate(*args)
    assert done.code == 0 and done.err == "", done.err
    summary = json.loads(done.out)
    assert summary["epsilon_method"] == "pld" and summary["epsilon"] < summary["epsilon_rdp"]
    assert summary["solved"] == with_extra["solved"] and summary["epsilon"] == with_extra[
        "epsilon"]
    # LNMax has no Gaussian step: nothing to say
    lnmax = cli.calibrate(VOTES, "-m", "lnmax", "--target-epsilon", "8", "-n", "100")
    assert lnmax.code == 0 and lnmax.err == ""


def test_attack_risk_targets_are_met_and_reproduced(cli):
    # TPR at FPR 0.01 at most 0.05: GNMax's data-independent curve is mu-GDP, so the answer
    # is the sigma where Phi(mu - Phi^-1(0.99)) = 0.05, mu = sqrt(640) sqrt(2) / sigma
    from scipy.special import ndtri

    done = cli.calibrate(VOTES, "-m", "gnmax", "--target-tpr", "0.05", "--at-fpr", "0.01",
                         "-n", "640", "-f", "json")
    assert done.code == 0, done.err
    found = json.loads(done.out)
    assert found["target"] == {"quantity": "tpr", "value": 0.05, "at_fpr": 0.01}
    assert found["target_epsilon"] is None
    assert found["reached"] <= 0.05 < found["above"]["figure"]
    assert found["above"]["epsilon"] is None
    assert found["risk"]["source"] == "pld" and not found["risk"]["data_dependent"]
    closed_form = 640**0.5 * 2**0.5 / (ndtri(0.99) + ndtri(0.05))
    assert found["solved"]["value"] == pytest.approx(closed_form, rel=2e-3)
    again = cli.analyze(*shlex.split(found["command"])[1:], "-f", "json")
    risk = json.loads(again.out)["risk"]
    assert risk["mu"] == found["risk"]["mu"]
    table = cli.calibrate(VOTES, "-m", "gnmax", "--target-advantage", "0.1", "-n", "640")
    assert table.code == 0
    line = next(line for line in table.out.splitlines() if line.startswith("attack risk"))
    assert "advantage <= 0.1000 (PLD, mu" in line and "gives 0.1001" in line
    assert table.out.startswith("target       advantage 0.1 (data-independent accounting)")


@pytest.mark.parametrize("args, message", [
    ([], "give one target"),
    (["--target-epsilon", "2", "--target-advantage", "0.1"], "not --target-epsilon and"),
    (["--target-tpr", "0.05"], "--target-tpr and --at-fpr go together"),
    (["--at-fpr", "0.05", "--target-advantage", "0.1"], "go together"),
    (["--target-tpr", "0.01", "--at-fpr", "0.01"], "--target-tpr must lie in (--at-fpr, 1]"),
    (["--target-advantage", "1"], "Invalid value for '--target-advantage'"),
])
def test_refused_targets(cli, args, message):
    done = cli.calibrate(VOTES, "-m", "gnmax", "-n", "50", *args)
    assert done.code == 2
    assert message in done.err and len(done.err.strip().splitlines()) == 1


@pytest.mark.parametrize("threshold, accepted", [("-5", True), ("0", True), ("nan", False),
                                                  ("inf", False)])
def test_threshold_takes_what_pate_analyze_takes(cli, threshold, accepted):
    """-T is any finite number, as pate-analyze and pate-sweep take it (a negative T lets
    nearly every query pass the threshold step); pate-calibrate refused it as 'must be
    positive'."""
    args = ("-m", "confident", "-T", threshold, "--sigma-threshold", "150")
    analyzed = cli.analyze(VOTES, "--sigma", "40", "-n", "50", *args)
    calibrated = cli.calibrate(VOTES, "--target-epsilon", "2", "-n", "50", *args)
    for done in (analyzed, calibrated):
        assert (done.code == 0) is accepted, done.err
    if not accepted:
        assert "threshold must be a finite number" in calibrated.err
        assert len(calibrated.err.strip().splitlines()) == 1


def test_scale_all_needs_a_positive_threshold(cli):
    """-T -50 with --scale-all was scaled to -152.457 without a word."""
    done = cli.calibrate(VOTES, "--target-epsilon", "2", "-n", "50", "-m", "confident",
                         "--scale-all", "-T", "-50")
    assert done.code == 2 and "--scale-all scales T with the noise: give a positive -T" in done.err


def test_scale_all_meets_a_bound_that_does_not_read_the_votes(cli, tmp_path):
    """Each candidate of --scale-all moves T and sigma1, so its replay answers other
    queries; the calibration meets the bound for any run (every query answered), which
    reads no vote: the same factor on other votes of the same teachers, and no warning
    (it used to meet each candidate's replay's count, a data-dependent choice)."""
    other = tmp_path / "other.npy"
    np.save(other, np.load(VOTES)[640:1280])
    factors = []
    for votes in (VOTES, other):
        done = cli.calibrate(votes, "--target-epsilon", "3", "-n", "640", "-T", "150",
                             "--sigma-threshold", "100", "--scale-all", "-f", "json")
        assert done.code == 0 and "Warning" not in done.err, done.err
        factors.append(json.loads(done.out)["solved"]["value"])
    assert factors[0] == factors[1]


@pytest.mark.parametrize("options, advice", [
    (("-T", "1e300"), "give a -T of at most M = 4"),
    (("-m", "confident-exponential", "-T", "10"), "give a -T of at most M = 4"),
    (("--scale-all",), "give -T (at most M) and let pate-calibrate solve sigma instead of "
                       "--scale-all"),
])
def test_a_threshold_above_m_is_advised_on_the_options_given(cli, tmp_path, options, advice):
    """-T above M without --scale-all was told to 'let pate-calibrate solve sigma instead
    of --scale-all', an option not given."""
    votes = tmp_path / "small.npy"
    np.save(votes, np.array([[3, 1, 0], [2, 2, 0], [4, 0, 0]] * 20))
    target = "2" if "--scale-all" in options else "20"
    result = cli.calibrate(votes, "--target-epsilon", target, *options)
    assert result.code == 0, result.err
    notes = [line for line in result.err.splitlines() if "above the 4 teachers" in line]
    assert len(notes) == 1 and notes[0].startswith("Warning: ") and notes[0].endswith(advice)
    assert ("--scale-all" in notes[0]) == ("--scale-all" in options)


def test_a_target_of_more_decimals_is_printed_as_given_and_compared_at_them(cli):
    """A target four decimals do not hold (1.99939) prints as given, and the figures beside
    it at its five decimals: the one reached never above it, the next noise's above it (it
    printed ``target epsilon 1.9994`` with ``sigma 71.3522 gives 1.9994``); parameters print
    as the command gives them."""
    done = cli.calibrate(VOTES, "-m", "gnmax", "--target-epsilon", "1.99939", "-n", "640",
                         "--tolerance", "1e-6")
    assert done.code == 0, done.err
    lines = {key: value.strip() for key, value in (line.split("  ", 1)
                                                    for line in done.out.splitlines())}
    assert lines["target"].startswith("epsilon 1.99939 at delta")
    reached, above = lines["epsilon"].split()[0], lines["epsilon"].split()[-1]
    assert len(reached.split(".")[1]) == 5 and float(reached) <= 1.99939 < float(above)
    sigma = lines["command"].split("--sigma ")[1].split()[0]
    assert lines["mechanism"] == f"gnmax (sigma={sigma})"
