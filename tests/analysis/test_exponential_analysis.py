"""The exponential mechanisms through the analysis (math:costs with math:exponential's answer step):
totals against the per-query curves summed one query at a time (mpmath for the answer
step, scipy for the threshold step), for every accounting mode."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import log_ndtr

import pate_cli
from pate_cli.analysis import analyze_votes
from pate_cli.mechanisms import ConfidentExponential, Exponential
from tests import scalar_reference as ref
from tests.accounting.test_exponential import mp_log_q, mp_rdp

ORDERS = np.array([2.0, 3.0, 5.0, 8.0, 14.0, 20.0, 32.0, 50.0])


def votes_of(seed=0, queries=60, classes=4, teachers=30):
    draws = np.random.default_rng(seed)
    return np.stack([np.bincount(draws.integers(0, classes, teachers), minlength=classes)
                     for _ in range(queries)]).astype(np.float64)


def answer_curve(row, eta):
    log_q = float(mp_log_q(row, eta))
    return [float(mp_rdp(log_q, eta, order)) for order in ORDERS]


def selection_curve(row, mechanism):
    """math:threshold one query at a time: q_sel into math:gnmax's bound at sqrt(2) sigma1, capped
    by math:independent's alpha / (2 sigma1^2) (the cap the package applies)."""
    log_pr = float(log_ndtr((np.rint(row.max()) - mechanism.threshold)
                            / mechanism.sigma_threshold))
    log_q = min(log_pr, ref.log1mexp(log_pr))
    sigma = math.sqrt(2) * mechanism.sigma_threshold
    return log_pr, [min(ref.rdp_gnmax(log_q, sigma, order), order / (2 * sigma**2 / 2))
                    for order in ORDERS]


@pytest.mark.parametrize("accounting", ["replay", "expected", "data-independent"])
def test_exponential_totals_are_the_sum_of_per_query_curves(accounting):
    votes = votes_of(1)
    eta = 0.4
    result = analyze_votes(votes, Exponential(eta=eta), orders=ORDERS, accounting=accounting)
    if accounting == "data-independent":
        eps0 = 2 * eta
        expected = [votes.shape[0] * min(eps0, a * eps0**2 / 8) for a in ORDERS]
    else:
        expected = np.sum([answer_curve(row, eta) for row in votes], axis=0)
    np.testing.assert_allclose(result.rdp_total, expected, rtol=1e-9)
    assert result.answered_total == votes.shape[0]
    epsilon, order = ref.epsilon_classic(list(result.rdp_total), list(ORDERS), 1e-5)
    assert result.epsilon == pytest.approx(epsilon, rel=1e-12) and result.order == order


@pytest.mark.parametrize("accounting", ["replay", "expected"])
def test_confident_exponential_composes_selection_and_answer(accounting):
    votes = votes_of(2, queries=80)
    mechanism = ConfidentExponential(threshold=14.0, sigma_threshold=5.0, eta=0.3)
    result = analyze_votes(votes, mechanism, orders=ORDERS, accounting=accounting)
    total = np.zeros(ORDERS.size)
    for i, row in enumerate(votes):
        log_pr, selection = selection_curve(row, mechanism)
        weight = math.exp(log_pr) if accounting == "expected" else float(result.answered[i])
        total += np.array(selection) + weight * np.array(answer_curve(row, mechanism.eta))
    np.testing.assert_allclose(result.rdp_total, total, rtol=1e-8)
    if accounting == "replay":
        assert 0 < result.answered_total < votes.shape[0]


def test_data_dependent_never_above_data_independent_on_shipped_votes():
    votes = np.load("sample_votes/mnist_250_votes.npy")[:400]
    for name, options in (("exponential", {}), ("confident-exponential", {})):
        for eta in (0.01, 0.05, 0.3):
            dependent = pate_cli.analyze(votes, name, eta=eta, accounting="expected",
                                         **options)
            independent = pate_cli.analyze(votes, name, eta=eta,
                                           accounting="data-independent", **options)
            assert dependent.epsilon <= independent.epsilon * (1 + 1e-12)
