"""The cost table with math:screening's exact threshold curve: which counts it ranges over,
the cap of math:threshold's curve, and ``--screening`` at the command line."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from pate_cli import analyze, build_mechanism
from pate_cli.accounting.threshold import rdp_threshold, rdp_threshold_data_independent
from pate_cli.analysis.steps import mechanism_steps, screening_counts
from pate_cli.cli.analyze import analyze as analyze_command
from pate_cli.orders import default_orders
from tests import ROOT

VOTES = str(ROOT / "sample_votes" / "mnist_250_votes.npy")
STUDENT = str(ROOT / "sample_votes" / "mnist_250_student.npy")
ORDERS = default_orders()
LOG_PR = np.log(np.linspace(1e-12, 1 - 1e-12, 400))


@pytest.mark.parametrize("name, kind, low", [("confident", "integer", 0.0),
                                             ("interactive", "real", -125.0)])
def test_data_dependent_never_above_data_independent(name, kind, low):
    mechanism = build_mechanism(name, teachers=250, integer_votes=True)
    assert screening_counts(mechanism) == (kind, low, 250.0)
    selection, _ = mechanism_steps(mechanism)
    independent = selection.independent(ORDERS)
    dependent = selection.rdp(np.unique(LOG_PR), ORDERS)
    assert np.all(dependent <= independent[None, :])
    assert np.all(independent < rdp_threshold_data_independent(sigma_threshold=150,
                                                                  orders=ORDERS))


def test_gaussian_screening_is_the_earlier_curve_bit_for_bit():
    mechanism = build_mechanism("confident", teachers=250, screening="gaussian")
    selection, _ = mechanism_steps(mechanism)
    assert np.array_equal(selection.rdp(LOG_PR, ORDERS),
                          rdp_threshold(LOG_PR, sigma_threshold=150, orders=ORDERS))
    assert np.array_equal(selection.independent(ORDERS),
                          rdp_threshold_data_independent(sigma_threshold=150, orders=ORDERS))


def test_weighted_votes_use_the_real_count_bound():
    votes = np.load(VOTES)[:50] * 0.5 + 0.05  # fractional counts, rows at most 250
    exact = analyze(votes, "confident", teachers=250, accounting="data-independent")
    whole = analyze(np.load(VOTES)[:50], "confident", accounting="data-independent")
    assert screening_counts(exact.mechanism)[0] == "real"
    assert screening_counts(whole.mechanism)[0] == "integer"


@pytest.mark.parametrize("accounting", ["replay", "expected"])
def test_runs_stay_below_their_data_independent_figure(accounting):
    for name, extra in (("confident", {}), ("interactive", {"student": STUDENT})):
        result = analyze(VOTES, name, queries=500, accounting=accounting, **extra)
        summary = result.to_dict()
        assert summary["params"]["screening"] == "exact"
        assert result.epsilon <= summary["epsilon_data_independent"]


def test_bad_screening_is_a_one_line_usage_error():
    done = CliRunner().invoke(analyze_command, [VOTES, "-n", "10", "--screening", "laplace"])
    assert done.exit_code == 2
    assert "Invalid value for '--screening'" in done.output
    with pytest.raises(ValueError, match="screening must be one of exact, gaussian"):
        build_mechanism("confident", teachers=250, screening="laplace")
