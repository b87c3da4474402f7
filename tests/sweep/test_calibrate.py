"""calibrate: the answer meets the target, is tight and never above it; the search's
refusals; its JSON (``Calibration.to_dict``) and reproducing command."""

from __future__ import annotations

import contextlib
import shlex
import warnings

import numpy as np
import pytest

import pate_cli
from pate_cli.analysis import analyze
from pate_cli.errors import OptionError
from pate_cli.sweep.calibrate import calibrate
from tests import ROOT

VOTES = str(ROOT / "sample_votes" / "mnist_250_votes.npy")


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _epsilon(mechanism, accounting, params, queries=640):
    """The run's epsilon; a data-independent run of a selecting aggregator's bound for any
    run (every query answered), which the calibration meets."""
    with _quiet():
        result = analyze(VOTES, mechanism, accounting=accounting, queries=queries, **params)
    worst, pld = result.epsilon_data_independent_worst, result.epsilon_data_independent_worst_pld
    if accounting != "data-independent" or worst is None:
        return result.epsilon
    return worst if pld is None else min(worst, pld)


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
    """GNMax's data-independent RDP is q * alpha / sigma^2 (math:independent), so the RDP figure
    is min_alpha q alpha / sigma^2 + log(1/delta)/(alpha-1). The figure is the smaller of
    that and the exact one, rounded up:
    q answers of sensitivity sqrt(2) compose to one Gaussian with mu = sqrt(2 q)/sigma,
    whose delta at epsilon is Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth
    and Su 2019). The answer meets E; a 0.2% smaller sigma does not. The order grid is
    given as math:conversion's default grid itself, which the command leaves out."""
    import numpy as np
    from scipy.optimize import brentq
    from scipy.stats import norm

    from pate_cli.orders import default_orders
    orders = default_orders()
    with _quiet():
        found = calibrate(VOTES, "gnmax", target_epsilon=3.0, queries=100, orders=orders)
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
    assert found.epsilon < rdp_figure(found.value)
    assert found.result.data_independent_method == "pld"
    assert found.epsilon == pytest.approx(exact(found.value), rel=1e-9)
    assert "--orders" not in found.command()


def test_option_errors_in_the_api():
    with pytest.raises(OptionError, match="solves -m gnmax, lnmax, confident"):
        calibrate(VOTES, "svt", target_epsilon=1.0)


@pytest.mark.parametrize("target, message", [
    (dict(target_epsilon="x"), "--target-epsilon must be a number, got 'x'"),
    (dict(target_tpr=0.5, at_fpr="0.1"), "--at-fpr must be a number, got '0.1'"),
    (dict(target_advantage=True), "--target-advantage must be a number, got True"),
])
def test_a_target_that_is_not_a_number_is_one_line(target, message):
    """It was Python's "must be real number, not str" from ``math.isfinite``."""
    with pytest.raises(OptionError, match=message):
        calibrate(VOTES, "gnmax", **target)


def test_target_met_at_the_smallest_noise():
    """A generous target: the range's smallest noise already meets it."""
    with _quiet():
        found = calibrate(VOTES, "gnmax", target_epsilon=1e6, queries=10)
    assert found.value == pytest.approx(0.25) and found.above is None
    assert found.epsilon <= 1e6
    # said: a smaller noise may meet it too (the answer is the range's edge)
    assert any("met at the search's smallest sigma, 0.25 (0.001 M)" in note
               for note in found.warnings), found.warnings
    found = calibrate(VOTES, "exponential", target_epsilon=1e6, queries=10)
    assert any("met at the search's largest eta, 4 (1 / 0.001 M)" in note
               for note in found.warnings), found.warnings


def test_public_name_json_and_a_grid_given_as_numbers():
    """``pate_cli.calibrate`` is the search; ``to_dict`` holds the answer's figures; an
    order grid given as numbers is written compactly in the command (and reproduces; the
    default grid given so is left out: test_gnmax_data_independent_against_the_closed_form)."""
    assert pate_cli.calibrate is calibrate
    with _quiet():
        found = pate_cli.calibrate(VOTES, "gnmax", target_epsilon=3.0, queries=100,
                                   orders=np.arange(2.0, 65.0))
    summary = found.to_dict("votes.npy")
    assert isinstance(found, pate_cli.Calibration)
    assert summary["epsilon"] == found.epsilon <= summary["target_epsilon"] == 3.0
    assert summary["solved"] == {"parameter": "sigma", "value": found.value,
                                 "scale_all": False}
    assert summary["params"] == {"sigma": found.value}
    assert summary["analyses"] == found.analyses and summary["input"]["queries"] == 9000
    words = shlex.split(summary["command"])
    assert words[:2] == ["pate-analyze", "votes.npy"]
    assert words[words.index("--orders") + 1] == "2:64:1"
    with _quiet():
        again = analyze(VOTES, "gnmax", sigma=found.value, queries=100,
                        accounting="data-independent", orders=np.arange(2.0, 65.0))
    assert again.epsilon == found.epsilon


@pytest.mark.parametrize("steps", [0, -3, 2.5, True])
def test_max_steps_below_one_is_refused_before_any_analysis(steps):
    """``max_steps=0`` ran and then said "no answer within 0 analyses (raise --tolerance)"
    (review R41)."""
    with pytest.raises(OptionError, match="max_steps must be a whole number of at least 1"):
        calibrate(VOTES, "gnmax", target_epsilon=2, queries=50, max_steps=steps)
