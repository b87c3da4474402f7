"""The improved conversion (with its total-variation shortcut) against dp_accounting's
``compute_epsilon``, and the side-by-side ``epsilon_improved`` of every summary."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.composition import cumulative_epsilon
from pate_cli.accounting.conversion import (
    ROUNDING_MARGIN,
    Conversion,
    epsilons_at_deltas,
    rdp_to_epsilon,
    tv_limit,
)
from pate_cli.analysis.api import analyze
from pate_cli.orders import default_orders
from pate_cli.rounding import ceil_text

rdp_accountant = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")

curves = st.lists(st.floats(min_value=0.0, max_value=50.0), min_size=3, max_size=30)
deltas = st.sampled_from([1e-3, 1e-5, 1e-6, 1e-8, 0.1])


@settings(max_examples=300, deadline=None)
@given(curves, deltas, st.floats(min_value=1e-12, max_value=1.0))
def test_improved_matches_dp_accounting(values, delta, scale):
    orders = np.linspace(1.5, 200.0, len(values))
    rdp = np.sort(np.asarray(values) * scale)
    expected, expected_order = rdp_accountant.compute_epsilon(orders, rdp, delta)
    epsilon, order = rdp_to_epsilon(rdp, orders=orders, delta=delta, conversion="improved")
    if float(epsilon) == 0.0 and expected > 0:
        # the total-variation shortcut's boundary: math:conversion's rdp <= limit against
        # dp_accounting's strict test (tv_limit's docstring), a curve exactly on it
        assert np.any(rdp == tv_limit(delta)), (rdp, tv_limit(delta))
        return
    near = np.abs(rdp - tv_limit(delta)) <= 2.0 * ROUNDING_MARGIN * tv_limit(delta)
    if float(epsilon) > 0.0 and expected == 0.0 and near.any():
        # within the margin of the shortcut's limit: no 0 (the curve may be a few ulps
        # below its exact value, minimise_over_orders)
        return
    assert float(epsilon) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    if expected > 0:
        assert float(order) == expected_order


@settings(max_examples=200, deadline=None)
@given(curves, deltas)
def test_classic_matches_mironov_by_hand(values, delta):
    orders = np.linspace(1.5, 200.0, len(values))
    rdp = np.asarray(values)
    by_hand = min(r + np.log(1 / delta) / (a - 1) for r, a in zip(rdp, orders, strict=True))
    epsilon, _ = rdp_to_epsilon(rdp, orders=orders, delta=delta, conversion="classic")
    assert float(epsilon) == pytest.approx(by_hand, rel=1e-12)


def test_total_variation_shortcut_gives_zero_on_near_zero_curves():
    orders = default_orders()
    delta = 1e-5
    rdp = np.full(orders.size, 0.5 * delta * delta)  # below 1 - exp(-rdp) <= delta^2
    improved, _ = rdp_to_epsilon(rdp, orders=orders, delta=delta, conversion="improved")
    classic, _ = rdp_to_epsilon(rdp, orders=orders, delta=delta, conversion="classic")
    assert float(improved) == 0.0 and float(classic) > 0.02
    limit = tv_limit(delta)
    assert np.isclose(1 - np.exp(-limit), delta * delta, rtol=1e-12)
    # the reference agrees on the same curve
    assert rdp_accountant.compute_epsilon(orders, rdp, delta)[0] == 0
    # running sums (composition's pruned path) agree with converting each sum alone
    conversion = Conversion.of(orders=orders, delta=delta, conversion="improved")
    rows = np.tile(0.3 * delta * delta * np.linspace(1.0, 2.0, orders.size), (4, 1))
    sums = np.cumsum(rows, axis=0)
    epsilon, _, _ = cumulative_epsilon(rows.copy(), np.zeros(orders.size), conversion)
    alone = [float(rdp_to_epsilon(row, orders=orders, delta=delta,
                                  conversion="improved")[0]) for row in sums]
    assert list(epsilon) == alone and alone[0] == 0.0 and alone[-1] > 0.0


def test_summary_reports_both_conversions(cli):
    votes = "sample_votes/mnist_250_votes.npy"
    classic = analyze(votes, "confident", queries=200)
    improved = analyze(votes, "confident", queries=200, conversion="improved")
    summary = classic.to_dict()
    assert summary["conversion"] == "classic"
    assert summary["epsilon_improved"] == pytest.approx(improved.epsilon, rel=1e-12)
    assert summary["epsilon_improved"] <= summary["epsilon"]
    assert improved.to_dict()["epsilon_improved"] == improved.epsilon
    done = cli.analyze(votes, "-n", "200")
    assert (f"epsilon improved  {ceil_text(improved.epsilon)} (improved conversion; "
            "data-dependent, unsanitised)") in done.out
    done = cli.analyze(votes, "-n", "200", "-f", "markdown")
    assert f"| epsilon improved | {ceil_text(improved.epsilon)}" in done.out


@settings(max_examples=100, deadline=None)
@given(curves, st.lists(st.floats(min_value=1e-300, max_value=0.999), min_size=1, max_size=40),
       st.floats(min_value=1e-12, max_value=1.0), st.sampled_from(["classic", "improved"]))
def test_epsilons_at_many_deltas_are_each_deltas_conversion(values, many, scale, conversion):
    """One array operation for many deltas (the attack risk's curve) gives each delta's
    figure bit for bit."""
    orders = np.linspace(1.5, 200.0, len(values))
    rdp = np.asarray(values) * scale
    at_once = epsilons_at_deltas(rdp, orders=orders, deltas=many, conversion=conversion)
    one_by_one = [float(rdp_to_epsilon(rdp, orders=orders, delta=delta,
                                       conversion=conversion)[0]) for delta in many]
    assert at_once.tolist() == one_by_one


def test_epsilons_at_many_deltas_refuse_what_one_refuses():
    orders = default_orders()
    with pytest.raises(ValueError, match="delta"):
        epsilons_at_deltas(orders * 0.01, orders=orders, deltas=[1e-5, 1.0])
    with pytest.raises(ValueError, match="conversion"):
        epsilons_at_deltas(orders * 0.01, orders=orders, deltas=[1e-5], conversion="exact")
    with pytest.raises(ValueError, match="orders"):
        epsilons_at_deltas(np.ones(3), orders=orders, deltas=[1e-5])
