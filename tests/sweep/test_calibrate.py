"""pate-calibrate: the answer meets the target, is tight, reproduces; errors exit 2."""

from __future__ import annotations

import contextlib
import json
import shlex
import warnings

import pytest

import pate_cli
from pate_cli.analysis import analyze
from pate_cli.errors import InputError, OptionError
from pate_cli.rounding import ceil_text
from pate_cli.sweep.calibrate import calibrate
from tests import ROOT

VOTES = str(ROOT / "sample_votes" / "mnist_250_votes.npy")
LABELS = str(ROOT / "sample_votes" / "mnist_250_labels.npy")


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _epsilon(mechanism, accounting, params, queries=640):
    with _quiet():
        return analyze(VOTES, mechanism, accounting=accounting, queries=queries,
                       **params).epsilon


@pytest.mark.parametrize("mechanism, target, accounting, scale_all", [
    ("gnmax", 2.0, "data-independent", False),
    ("lnmax", 8.0, "data-independent", False),
    ("confident", 2.0, "data-independent", False),
    ("confident", 1.0, "data-independent", True),
    ("confident", 1.5, "expected", False),
])
def test_answer_meets_the_target_and_is_tight(mechanism, target, accounting, scale_all):
    with _quiet():
        found = calibrate(VOTES, mechanism, target_epsilon=target, accounting=accounting,
                          scale_all=scale_all, queries=640)
    assert found.epsilon <= target
    # Independent re-analysis at the reported parameters gives the same epsilon.
    assert _epsilon(mechanism, accounting, found.params) == found.epsilon
    # Tightness: a noise smaller by twice the step tolerance exceeds the target.
    factor = 1 - 2 * found.tolerance
    smaller = ({key: value * factor for key, value in found.params.items()} if scale_all
               else {**found.params, found.parameter: found.value * factor})
    assert _epsilon(mechanism, accounting, smaller) > target
    assert found.above is not None and found.above[1] > target
    assert found.value / found.above[0] <= 1 + found.tolerance


def test_gnmax_data_independent_against_the_closed_form():
    """GNMax's data-independent RDP is q * alpha / sigma^2 (MATH.md s.2), so the RDP figure
    is min_alpha q alpha / sigma^2 + log(1/delta)/(alpha-1). With dp_accounting the figure
    is the smaller of that and the PLD accountant's, which is never below the exact one:
    q answers of sensitivity sqrt(2) compose to one Gaussian with mu = sqrt(2 q)/sigma,
    whose delta at epsilon is Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth
    and Su 2019). The answer meets E; a 0.2% smaller sigma does not."""
    import numpy as np
    from scipy.optimize import brentq
    from scipy.stats import norm

    from pate_cli.orders import default_orders
    orders = default_orders()
    with _quiet():
        found = calibrate(VOTES, "gnmax", target_epsilon=3.0, queries=100)
        smaller = pate_cli.analyze(VOTES, "gnmax", sigma=found.value * 0.998, queries=100,
                                   accounting="data-independent")

    def rdp_figure(sigma):
        return float(np.min(100 * orders / sigma**2 + np.log(1e5) / (orders - 1)))

    def exact(sigma):
        mu = np.sqrt(200.0) / sigma
        gap = lambda eps: (norm.cdf(-eps / mu + mu / 2)  # noqa: E731
                           - np.exp(eps) * norm.cdf(-eps / mu - mu / 2) - 1e-5)
        return brentq(gap, 0.0, 50.0, xtol=1e-12)

    assert exact(found.value) <= found.epsilon <= 3.0 < smaller.epsilon
    assert found.epsilon <= rdp_figure(found.value) * (1 + 1e-12)
    if found.result.data_independent_method == "rdp":
        assert rdp_figure(found.value) == pytest.approx(found.epsilon, rel=1e-12)
    else:  # the PLD figure: within 1% of the exact composition
        assert found.epsilon == pytest.approx(exact(found.value), rel=0.01)


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
    (["-m", "lnmax", "-T", "100"], "-m lnmax does not use --threshold"),
    (["--accounting", "replay"], "Invalid value for '--accounting'"),
])
def test_refused_options(cli, args, message):
    done = cli.calibrate(VOTES, "--target-epsilon", "2", "-n", "50", *args)
    assert done.code == 2
    assert message in done.err and len(done.err.strip().splitlines()) == 1


def test_option_errors_in_the_api():
    with pytest.raises(OptionError, match="solves -m gnmax, lnmax, confident"):
        calibrate(VOTES, "svt", target_epsilon=1.0)


def test_json_keys_and_the_command_reproduces(cli):
    done = cli.calibrate(VOTES, "--target-epsilon", "2", "-n", "640", "--labels", LABELS,
                         "-T", "200", "--sigma-threshold", "150", "-f", "json")
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
    words = shlex.split(summary["command"])
    assert words[0] == "pate-analyze"
    again = cli.analyze(*words[1:], "-f", "json")
    assert again.code == 0, again.err
    assert json.loads(again.out)["epsilon"] == summary["epsilon"]


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


def test_target_met_at_the_smallest_noise():
    """A generous target: the range's smallest noise already meets it."""
    with _quiet():
        found = calibrate(VOTES, "gnmax", target_epsilon=1e6, queries=10)
    assert found.value == pytest.approx(0.25) and found.above is None
    assert found.epsilon <= 1e6


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


def test_each_printed_figure_names_its_accountant_and_order(cli):
    """Issue 30: a PLD figure was printed "(order 10.5)", the RDP figure's order."""
    args = (VOTES, "-T", "200", "--sigma-threshold", "150", "--target-epsilon", "2",
            "-n", "640")
    summary = json.loads(cli.calibrate(*args, "-f", "json").out)
    assert summary["epsilon_method"] in ("rdp", "pld")
    again = json.loads(cli.analyze(*shlex.split(summary["command"])[1:], "-f", "json").out)
    assert again["epsilon"] == summary["epsilon"]
    assert again["epsilon_method"] == summary["epsilon_method"]
    assert again["epsilon_rdp"] == summary["epsilon_rdp"]
    lines = dict(line.split(None, 1) if not line.startswith("epsilon RDP") else
                 ("epsilon RDP", line[len("epsilon RDP"):].strip())
                 for line in cli.calibrate(*args).out.splitlines())
    if summary["epsilon_method"] == "pld":
        assert lines["epsilon"].startswith(f"{ceil_text(summary['epsilon'])} (privacy-loss "
                                           "distribution accountant)")
        assert "order" not in lines["epsilon"]
        assert lines["epsilon RDP"].startswith(
            f"{ceil_text(summary['epsilon_rdp'])} (classic conversion, order "
            f"{summary['order']:g})")
    else:
        assert lines["epsilon"].startswith(f"{ceil_text(summary['epsilon'])} (RDP, classic "
                                           f"conversion, order {summary['order']:g})")


def test_without_dp_accounting_the_answer_says_it_is_the_rdp_one(cli, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "dp_accounting", None)  # import fails
    done = cli.calibrate(VOTES, "-m", "gnmax", "--target-epsilon", "2", "-n", "640",
                         "-f", "json")
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    assert summary["epsilon_method"] == "rdp" and summary["epsilon_rdp"] == summary["epsilon"]
    note = ("Warning: dp_accounting is not installed: the epsilon is the RDP accountant's; "
            "the privacy-loss-distribution accountant's is tighter")
    assert done.err.startswith(note) and "pip install 'pate_cli[accounting]'" in done.err
    assert any(text.startswith("dp_accounting is not installed") for text in
               summary["warnings"])
    table = cli.calibrate(VOTES, "-m", "gnmax", "--target-epsilon", "2", "-n", "640")
    assert f"(RDP, classic conversion, order {summary['order']:g})" in table.out
    # LNMax has no Gaussian step: nothing to say
    lnmax = cli.calibrate(VOTES, "-m", "lnmax", "--target-epsilon", "8", "-n", "100")
    assert lnmax.code == 0 and lnmax.err == ""
