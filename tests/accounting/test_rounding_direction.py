"""Upper bounds stay above the exact value in their last bits (50-digit references): running
sums of many queries, the improved conversion's cancellation and its epsilon-0 shortcut,
the RDP values handed on, and a sampled run against the unsampled one."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from pate_cli import analyze
from pate_cli.accounting.conversion import Conversion, rdp_to_epsilon
from pate_cli.numerics import ROUNDING_MARGIN, summed_margin
from tests.precision import digits

_digits = digits(50)
DELTA = 1e-5


def _exact(value: float) -> mpmath.mpf:
    return mpmath.mpf(Fraction(value).numerator) / Fraction(value).denominator


def test_the_margin_grows_with_the_terms_summed():
    assert summed_margin(0) == summed_margin(4080) == ROUNDING_MARGIN
    assert summed_margin(200_000) == pytest.approx(2 * 200_016 * 2.0 ** -53)


def test_a_budget_over_identical_queries_halts_before_the_exact_sum_passes_it():
    """200,000 equal data-independent costs added one by one drift 2.6e-12 below their
    exact sum (rounding to nearest, always the same way): the halt and the epsilon at it
    are raised for it (it once let query 196,608 through at exactly the budget)."""
    votes = np.zeros((200_000, 3), np.int16)
    votes[:, 0], votes[:, 1] = 8, 2
    eta, budget = 0.3333333333333333, 21856.846258742018
    result = analyze(votes, mechanism="exponential", eta=eta, accounting="data-independent",
                     budget=budget, order=2.0, delta=DELTA, per_query=False)
    per_query = 2 * (2 * _exact(eta)) ** 2 / 8  # order 2 (math:exponential)
    spent = result.queries * per_query + mpmath.log(1 / _exact(DELTA))
    assert result.queries < 196_608
    assert result.epsilon <= budget
    assert _exact(result.epsilon) >= spent
    assert spent + per_query > budget or result.budget.halted_at is None


def test_every_running_figure_of_a_long_table_is_above_its_exact_value():
    votes = np.zeros((200_000, 3), np.int16)
    votes[:, 0], votes[:, 1] = 8, 2
    result = analyze(votes, mechanism="gnmax", sigma=3.0, accounting="data-independent",
                     order=2.0, delta=DELTA, per_query="stream")
    frame = result.to_frame()
    rows = [0, 4_079, 99_999, 174_263, 199_999]
    for row in rows:
        exact = (row + 1) * mpmath.mpf(2) / 9 + mpmath.log(1 / _exact(DELTA))
        assert _exact(float(frame["epsilon_cumulative"].iat[row])) >= exact, row


def test_the_improved_conversion_where_rdp_and_offset_cancel():
    """At delta 0.45 the offset (-0.588) nearly cancels the RDP: what is left is a few ulps
    of each, which a relative raise of it cannot cover (it printed 0.49% low)."""
    sigma = 1.8446124406054152
    epsilon, _ = rdp_to_epsilon(np.array([2 / sigma**2]), orders=[2.0], delta=0.45,
                                conversion="improved")
    exact = (2 / _exact(sigma) ** 2 + mpmath.log(mpmath.mpf(1) / 2)
             - mpmath.log(_exact(0.45) * 2))
    assert 0 < exact < 1e-14
    assert _exact(float(epsilon)) >= exact


def test_the_epsilon_0_shortcut_needs_the_rdp_clear_of_its_limit():
    """An RDP a few ulps from the improved conversion's limit -log(1 - delta^2) may be
    above it exactly: no 0 there (this one is, by 2e-17 relative: it gave epsilon 0 where
    the formula gives 140)."""
    eta = 1.3608276349135642e-05
    result = analyze(np.array([[8, 2, 0]]), mechanism="exponential", eta=eta,
                     accounting="data-independent", conversion="improved", order=1.08,
                     delta=DELTA, per_query=False)
    rdp = _exact(1.08) * (2 * _exact(eta)) ** 2 / 8  # math:exponential, one query
    assert rdp > -mpmath.log(1 - _exact(DELTA) ** 2)
    assert result.to_dict()["epsilon_rdp"] > 1.0
    clear = Conversion.of(orders=[1.08], delta=DELTA, conversion="improved")
    assert float(clear.epsilon(np.array([9.9e-11]))[0]) == 0.0


def test_rdp_at_the_best_order_is_handed_on_raised():
    votes = np.zeros((10, 3), np.int64)
    votes[:, 0], votes[:, 1] = 8, 2
    result = analyze(votes, mechanism="gnmax", sigma=7.0, accounting="data-independent",
                     order=8.5, delta=DELTA, per_query=False)
    assert Fraction(result.rdp_at_order["answer"]) >= Fraction(85, 49)


def test_a_sampled_bound_for_any_run_is_never_above_the_unsampled_one():
    """Sampling at a rate that amplifies nothing: the joint curve less the threshold's,
    added back, was an ulp above the unsampled figure."""
    votes = np.load("sample_votes/mnist_250_votes.npy")[:200]
    common = dict(accounting="data-independent", delta=DELTA)
    unsampled = analyze(votes, mechanism="confident", **common)
    for rate in ("poisson:0.999999", "without-replacement:999/1000"):
        sampled = analyze(votes, mechanism="confident", sampling=rate,
                          sampling_steps="shared", **common)
        assert (sampled.epsilon_data_independent_worst
                <= unsampled.epsilon_data_independent_worst), rate


@pytest.mark.parametrize("name, steps, rate", [
    ("confident", "shared", "poisson:0.3"), ("confident", "independent", "poisson:0.3"),
    ("gnmax", "shared", "poisson:0.3"), ("lnmax", "shared", "poisson:0.3"),
    ("confident", "shared", "poisson:0.9999")])  # (where the joint curve meets its cap)
def test_a_sampled_bound_is_the_smaller_of_the_sampled_and_the_unsampled_composition(
        name, steps, rate):
    """Both compositions bound the run; a sampled step is never composed with an
    unsampled one (one subset feeds Confident's two steps: mixing an amplified threshold
    with the unamplified answer need not bound the joint cost)."""
    from pate_cli.analysis.steps import data_independent_curve, mechanism_steps
    from pate_cli.mechanisms import build_mechanism
    from pate_cli.mechanisms.sampled import SampledMechanism, parse_sampling

    noise = {} if name == "lnmax" else {"sigma": 1.0} | (
        {"sigma_threshold": 1.0} if name == "confident" else {})
    inner = build_mechanism(name, teachers=250, **noise)
    sampled = SampledMechanism(inner, parse_sampling(rate, "move", steps))
    orders = np.concatenate((np.arange(1.1, 2.0, 0.1), np.arange(2.0, 101.0, 0.5)))
    counts = dict(answered=7, queries=11, orders=orders)

    def composed(selection, answer):
        curve = 7 * answer.independent(orders)
        return curve if selection is None else curve + 11 * selection.independent(orders)

    selection, answer = mechanism_steps(sampled)
    expected = np.minimum(composed(selection, answer), composed(*mechanism_steps(inner)))
    np.testing.assert_array_equal(data_independent_curve(selection, answer, **counts),
                                  expected)


def test_the_mu_of_a_gaussian_statement_is_not_below_its_value():
    """sqrt(20)/40 was stored an ulp low (review R20): the mu-GDP a reader takes is a bound."""
    votes = np.tile([7, 3, 0], (10, 1))
    result = analyze(votes, mechanism="gnmax", sigma=40.0, accounting="data-independent",
                     delta=DELTA, per_query=False)
    mu = result.to_dict()["risk"]["mu"]
    assert _exact(mu) >= mpmath.sqrt(20) / 40  # 10 answers at sensitivity sqrt(2)


def test_svt_delta2_is_not_below_its_formula_nor_delta1_above_the_rest():
    from pate_cli.accounting.svt import svt_guarantee

    scale, cutoff, queries, delta = 10.0, 100, 500, 1e-5
    guarantee = svt_guarantee(scale=scale, cutoff=cutoff, queries=queries, delta=delta)
    x = mpmath.exp(-(_exact(guarantee.threshold) - 1) / (4 * _exact(scale)))
    exact = queries * x / 2 + (cutoff + 1) * x * x / 2  # math:svt
    assert _exact(guarantee.delta2) >= exact
    assert _exact(guarantee.delta1) + _exact(guarantee.delta2) <= _exact(delta)


def test_a_long_budget_run_keeps_its_figures_in_order():
    """Past 4,080 queries a walked run's epsilon carries the larger raise of its running
    sums: its data-independent figures are raised alike (the bound for any run sat 3.4e-12
    below the run's own figure; review R22)."""
    votes = np.tile(np.array([[8, 2, 0]], np.int64), (20_000, 1))
    summary = analyze(votes, mechanism="confident", threshold=0.0, sigma_threshold=1.0,
                      sigma=40.0, accounting="data-independent", budget=1e5, delta=DELTA,
                      add_rdp=np.full(298, 1.0), per_query=False).to_dict()
    assert summary["epsilon"] <= summary["epsilon_data_independent"] \
        <= summary["epsilon_data_independent_worst"]


@pytest.mark.parametrize("queries", [3000, 20_000])
@pytest.mark.parametrize("mechanism", [dict(mechanism="gnmax", sigma=40.0),
                                       dict(mechanism="exponential", eta=0.05),
                                       dict(mechanism="confident", threshold=200.0,
                                            sigma_threshold=150.0, sigma=40.0)])
@pytest.mark.parametrize("walk", [dict(budget=1e12), dict(outputs="runs of 50"),
                                  dict(outputs="runs of 50", budget=1e12, halt_at="output")])
def test_figures_print_in_order_where_the_data_dependent_curve_is_the_bound(
        queries, mechanism, walk):
    """Votes spread evenly: each query's data-dependent curve is the data-independent one, so
    the run's three figures are equal before rounding. A walked run's sums and the bounds'
    products round apart (exponential, 3,000 queries: the bound for any run printed 3.3e-13
    below the data-independent figure); each bound is raised to the figure below it."""
    votes = np.full((queries, 10), 25, np.int64)
    if "outputs" in walk:
        walk = {**walk, "outputs": np.arange(queries) // 50}
    for accounting in ("replay", "expected", "data-independent"):
        result = analyze(votes, teachers=250.0, accounting=accounting, delta=DELTA,
                         per_query=False, **mechanism, **walk)
        worst = result.epsilon_data_independent_worst
        assert result.epsilon <= result.epsilon_data_independent
        assert worst is None or result.epsilon_data_independent <= worst
